"""The lookalike index: which protected domain a host imitates, and how.

A :class:`LookalikeIndex` is compiled once per policy from the protected registrable domains
(:func:`build_index`). Every question about one host is then answered with a handful of hash
lookups whose number depends on the host's length, never on the length of the list:

* **homoglyph**: the host's skeleton (or a parent's) equals a protected domain's skeleton
  (``pаypal.com`` with a Cyrillic а, ``paypa1.com``);
* **near miss**: the label before the public suffix is one edit (substitution, insertion,
  deletion or swap of neighbours) away from a protected label once lookalike characters are
  folded (``0``->``o``, ``1``/``i``->``l``, ``rn``->``m``, ``vv``->``w``, ``cl``->``d``). A
  symmetric-delete index finds the candidates: each protected label is stored under itself and
  under each single-character deletion, and a host label is looked up the same way;
* **other suffix**: the same label under another public suffix (``paypal.com.co``, ``google.net``);
* **embedded**: a protected domain spelt inside the host with dots or hyphens
  (``accounts.google.com.evil.example``, ``accounts-google-com.evil.example``,
  ``googlecom-login.net``);
* **combo squatting**: a protected brand plus a sign-in or payment word
  (``paypal-secure.com``, ``github-login.com``).

Most hosts of a log are ordinary ASCII names in which no technique can find anything: a
screen (``_Screen``) tells them apart with the look-ups the techniques start from, and only
the other hosts are analysed by every technique.

A host that is a protected domain or a subdomain of one is never a lookalike. Chromium drops
some near misses as likely false positives (different suffix only, trailing digits, a changed
first character, an inserted hyphen); urlvet keeps them and marks them so the rule can warn
instead of block.

This module also loads protected-domain lists (YAML policy fragments or text files), imports
Tranco/CrUX ranking CSVs and renders a list back as a YAML policy fragment.
"""

from __future__ import annotations

import csv
import gc
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from urlvet import confusables
from urlvet.errors import InputError, PolicyError
from urlvet.memo import memo_size
from urlvet.url import (
    MAX_DOMAIN_LENGTH,
    HostKind,
    InvalidURL,
    ParsedURL,
    first_parent_dot,
    parse,
    site_of,
    to_unicode,
)

__all__ = [
    "ACCOUNT_NAMESPACE_SUFFIXES",
    "COMMON_WORD_BRANDS",
    "DEFAULT_KEYWORDS",
    "LookalikeIndex",
    "LookalikeMatch",
    "LookalikeReport",
    "MatchKind",
    "RankingImport",
    "build_index",
    "default_index",
    "default_protected_domains",
    "edit_distance_at_most_one",
    "fold",
    "fold_spelling",
    "folds",
    "has_one_character_swap",
    "import_ranking_csv",
    "index_for_policy",
    "likely_false_positive_reason",
    "load_protected_domains",
    "read_ranking_csv",
    "render_policy_fragment",
]

_DATA_PACKAGE = "urlvet.data"
_DATA_FILE = "protected_domains.txt"
_KEYWORD_FILE = "phishing_keywords.txt"
_COMMON_WORD_FILE = "common_word_brands.txt"


def _data_words(name: str) -> tuple[str, ...]:
    """The words of a shipped data file: the first word of each line, '#' starts a comment."""
    text = resources.files(_DATA_PACKAGE).joinpath(name).read_text(encoding="utf-8")
    words = (line.split("#", 1)[0].strip().lower() for line in text.splitlines())
    return tuple(dict.fromkeys(w for w in words if w))


DEFAULT_KEYWORDS: tuple[str, ...] = _data_words(_KEYWORD_FILE)
"""Words that phishing domains put beside a brand (``paypal-secure``, ``amazon-refunds``).
Read from ``data/phishing_keywords.txt``, which names the published lists each word comes
from (phishing_catcher, dnstwist's phishing dictionary, Garera et al. 2007...). Words brands
pair with their own names in legitimate domains ("drive", "pay", "live") are left out."""

COMMON_WORD_BRANDS: frozenset[str] = frozenset(_data_words(_COMMON_WORD_FILE))
"""Protected labels that are ordinary English words (``apple``, ``chase``, ``target``): they
are never looked for inside another word, and as a label of another site they need a second
signal and warn instead of blocking. From ``data/common_word_brands.txt``."""

SHORT_KEYWORD_LENGTH = 4
"""Keywords this short (``tax``, ``docs``, ``id``) count only as a whole word or glued to the
brand, never inside another word (``syntax``, ``paddock``)."""

ACCOUNT_NAMESPACE_SUFFIXES = frozenset({"github.io", "gitlab.io"})
"""Hosting suffixes whose labels are account names (``microsoft.github.io`` is the Microsoft
organisation's site): GitHub and GitLab give a brand's name to its owner, and brands publish
their pages there, so a protected name alone under them is not another owner's domain."""

# Characters and pairs that stand for letters in lookalike spellings (dr0pbox, rnicrosoft,
# vvellsfargo, netfl1x, 4mazon): folded before brands and keywords are looked for, as the
# near-miss rule folds them. 1 and i both fold to l, so "1" matches a brand's l or i.
_SPELLING_PAIRS = {"rn": "m", "vv": "w", "cl": "d"}
_SPELLING_CHARS = {
    "0": "o",
    "1": "l",
    "i": "l",
    "3": "e",
    "4": "a",
    "5": "s",
    "7": "t",
    "@": "a",
    "q": "g",
}


# Below these lengths (of the folded label) a one-letter change turns one real word into another
# far more often than it imitates a brand.
MIN_EDIT_DISTANCE_LENGTH = 5
MIN_FOLD_MATCH_LENGTH = 4
MIN_OTHER_SUFFIX_LENGTH = 3
MIN_EMBEDDED_LENGTH = 3
"""A protected label spelt with its suffix (``ibm.com``, ``ibm-com``) inside a host."""
MIN_NO_SEPARATOR_EMBEDDED_LENGTH = 5
"""A protected label glued to its suffix (``googlecom``): short ones occur in ordinary words."""
MIN_COMBO_BRAND_LENGTH = 5
"""A brand found anywhere inside a label; ``ebay-login`` style whole tokens need only 4."""
MIN_COMBO_TOKEN_BRAND_LENGTH = 4
MIN_COMBO_KEYWORD_TOKEN_LENGTH = 3
"""A three-letter brand counts as a whole word beside a keyword when its skeleton has four
characters (``msn``, whose m reads as rn: ``msn-support``), as Chromium measures; ``len-online``
does not."""

MAX_BRAND_AND_WORD_OTHER = 2
"""A protected brand as a whole word beside other words this short (``my-paypal``,
``apple-id``) is a combo without a keyword; brands own many longer ones
(``google-analytics``, ``paypal-community``). The server's own brand beside any word counts."""

_TOKEN_SPLIT = re.compile(r"[.\-]+")
_TOKEN = re.compile(r"[^.\-]+")

# Folds applied to a skeleton (which already maps 1/I->l and 0->O, and m->rn, which we undo so
# that an inserted or replaced "m" costs one edit, not two). The light fold keeps letters that
# a typo may also produce (paypcl.com is one substitution from paypal.com); the heavy fold merges
# the letters and pairs that homoglyph squatters swap (qooqle, vvikipedia, c1oudflare).
_HEAVY_PAIRS = (("vv", "w"), ("cl", "d"))
_HEAVY_CHARS = str.maketrans({"i": "l", "q": "g"})


class MatchKind(str, Enum):
    """How a host imitates a protected domain."""

    HOMOGLYPH = "homoglyph"
    NEAR_MISS = "near-miss"
    OTHER_SUFFIX = "other-suffix"
    EMBEDDED = "embedded"
    BRAND_LABEL = "brand-label"
    COMBO = "combo"


@dataclass(frozen=True, slots=True)
class LookalikeMatch:
    """One protected domain that a host imitates."""

    kind: MatchKind
    """The technique."""
    target: str
    """The protected registrable domain (A-label)."""
    how: str
    """A stable slug saying exactly what was found ('same-skeleton', 'one-substitution', ...)."""
    likely_false_positive: str | None = None
    """Set when the match is in a class browsers treat as a likely false positive: the slug of
    that class ('different-suffix', 'trailing-digits', 'first-character', 'inserted-hyphen',
    'end-embedding')."""
    detail: Mapping[str, str] = field(default_factory=dict)
    """Extra facts: the embedded text, the keyword, the folded forms compared, the brand as
    spelt (``spelt``) when lookalike characters stand for its letters."""
    stronger: bool = False
    """Set when a second signal makes the match more certain than its technique alone (a
    brand spelt with lookalike characters, a keyword under a hosting platform's suffix, a
    brand that is not an ordinary word): the rule reports it at a higher severity."""


@dataclass(frozen=True, slots=True)
class LookalikeReport:
    """Everything the index found about one host."""

    host: str
    """The host asked about (A-label)."""
    protected: str | None
    """The protected domain the host is, or is a subdomain of (then there are no matches)."""
    matches: tuple[LookalikeMatch, ...] = ()
    """Matches in a stable order: by kind, then target."""

    def of_kind(self, kind: MatchKind) -> tuple[LookalikeMatch, ...]:
        """The matches of one kind."""
        return tuple(m for m in self.matches if m.kind is kind)


@dataclass(frozen=True, slots=True, eq=False)
class _Target:
    """A protected domain with everything precomputed for matching.

    Compared and hashed by identity (one object per domain in an index): hashing every field
    would dominate the cost of compiling a large list.
    """

    domain: str
    unicode: str
    label: str
    """The label before the public suffix, U-label form."""
    label_ascii: str
    suffix: str
    skeletons: frozenset[str]
    label_skeletons: frozenset[str]
    label_folds: frozenset[str]
    spelt_skeletons: tuple[str, ...]
    """The skeleton of each token of the domain split at dots and hyphens, in order
    (``("google", "corn")``, ``("deutsche", "bank", "de")``): how it appears spelt out."""
    nosep_skeletons: frozenset[str]
    """Skeletons of label and suffix glued without dots ("googlecorn")."""
    brand_fold: str
    """The label with lookalike spellings folded (:func:`fold_spelling`), as combos and brand
    labels look for it."""


# --- small pure helpers -------------------------------------------------------------------------


def fold(skeleton: str, heavy: bool = True) -> str:
    """Fold a skeleton further, so that characters squatters interchange compare equal.

    Light: lower case (the skeleton's ``O`` for zero meets ``o``) and ``rn``->``m``. Heavy, in
    addition: ``vv``->``w``, ``cl``->``d``, ``i``->``l``, ``q``->``g``.
    """
    out = skeleton.lower().replace("rn", "m")
    if heavy:
        for pair, single in _HEAVY_PAIRS:
            out = out.replace(pair, single)
        out = out.translate(_HEAVY_CHARS)
    return out


def folds(skeleton: str) -> frozenset[str]:
    """The light and the heavy fold of a skeleton (often the same string)."""
    return frozenset((fold(skeleton, heavy=False), fold(skeleton, heavy=True)))


def fold_spelling(text: str) -> tuple[str, tuple[int, ...]]:
    """``text`` (lower case) with lookalike spellings folded, and where each folded character
    starts in ``text``.

    Digits and signs that stand for letters become those letters (0->o, 1->l, 3->e, 4->a,
    5->s, 7->t, @->a), pairs that pass for one letter become it (rn->m, vv->w, cl->d), and
    letters squatters swap merge (i->l, q->g). ``starts[k]`` is the index in ``text`` of the
    character(s) that folded character ``k`` came from, so a match in the folded text can be
    shown as it is written (``dr0pbox``). Hyphens and dots are kept.
    """
    out: list[str] = []
    starts: list[int] = []
    i, n = 0, len(text)
    while i < n:
        pair = _SPELLING_PAIRS.get(text[i : i + 2])
        if pair is not None:
            out.append(pair)
            starts.append(i)
            i += 2
            continue
        ch = text[i]
        out.append(_SPELLING_CHARS.get(ch, ch))
        starts.append(i)
        i += 1
    return "".join(out), tuple(starts)


def _folded(text: str) -> str:
    return fold_spelling(text)[0]


def _deletions(text: str) -> set[str]:
    return {text[:i] + text[i + 1 :] for i in range(len(text))}


def edit_distance_at_most_one(a: str, b: str) -> bool:
    """True when ``a`` becomes ``b`` with at most one insertion, deletion or substitution."""
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la == lb:
        return sum(1 for x, y in zip(a, b, strict=True) if x != y) <= 1
    if la > lb:
        a, b, la, lb = b, a, lb, la
    # b is a with one extra character somewhere.
    i = 0
    while i < la and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1 :]


def has_one_character_swap(a: str, b: str) -> bool:
    """True when ``b`` is ``a`` with exactly one pair of neighbouring characters swapped."""
    if len(a) != len(b) or a == b:
        return False
    diffs = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    if len(diffs) != 2 or diffs[1] != diffs[0] + 1:
        return False
    i, j = diffs
    return a[i] == b[j] and a[j] == b[i]


def _describe_edit(query: str, target: str) -> str:
    if len(query) > len(target):
        return "one-insertion"
    if len(query) < len(target):
        return "one-deletion"
    if has_one_character_swap(query, target):
        return "adjacent-swap"
    return "one-substitution"


def _first_different_char(longer: str, shorter: str) -> str:
    for x, y in zip(longer, shorter, strict=False):
        if x != y:
            return x
    return longer[len(shorter)] if len(longer) > len(shorter) else ""


def likely_false_positive_reason(
    navigated_label: str,
    navigated_domain: str,
    matched_label: str,
    matched_domain: str,
) -> str | None:
    """The class of likely false positive a near miss falls in, or None.

    The classes are those Chromium drops: the labels are equal and only the suffix differs, they
    differ only in trailing digits (``site45`` / ``site35``), only in the first character
    (``hank`` / ``tank``), or only by an inserted hyphen. Arguments are the labels before the
    public suffix and the registrable domains, in the same (A-label) form.
    """
    if navigated_label == matched_label:
        return "different-suffix"
    if navigated_label.rstrip("0123456789") == matched_label.rstrip("0123456789"):
        return "trailing-digits"
    nav, mat = navigated_domain, matched_domain
    if len(nav) == len(mat) and nav[1:] == mat[1:]:
        return "first-character"
    if (len(nav) < len(mat) and nav == mat[1:]) or (len(nav) > len(mat) and nav[1:] == mat):
        return "first-character"
    if len(nav) != len(mat):
        longer, shorter = (nav, mat) if len(nav) > len(mat) else (mat, nav)
        if _first_different_char(longer, shorter) == "-":
            return "inserted-hyphen"
    return None


_NOT_IN_DOMAIN = frozenset("/:@?#\\ \t")
_PLAIN_HOST = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z][a-z0-9-]*[a-z0-9]")


def _ascii_host(domain: str) -> tuple[str, str | None, str | None]:
    """(A-label host, registrable domain, public suffix) of a domain name as a browser parses it."""
    text = domain.strip().rstrip(".").lower()
    if not text or not _NOT_IN_DOMAIN.isdisjoint(text):
        raise PolicyError(f"{domain!r} is not a domain name")
    if _PLAIN_HOST.fullmatch(text) and "xn--" not in text and len(text) <= 253:
        # Lower-case LDH names are already what the URL parser would produce: skip it (list
        # compilation does this for every protected domain).
        registrable, suffix, _private = site_of(text)
        return text, registrable, suffix
    try:
        parsed = parse(f"https://{text}/")
    except InvalidURL as exc:
        raise PolicyError(f"{domain!r} is not a valid domain name: {exc}") from exc
    if parsed.host_kind is not HostKind.DOMAIN:
        raise PolicyError(f"{domain!r} is an IP address, not a domain name")
    return parsed.host.rstrip("."), parsed.registrable_domain, parsed.public_suffix


def _registrable_or_none(domain: str | None) -> str | None:
    """The registrable domain of ``domain``, or None when there is none to protect."""
    if not domain:
        return None
    try:
        return _ascii_host(domain)[1]
    except PolicyError:
        return None


def _label_of(registrable: str, suffix: str) -> str:
    return registrable[: -(len(suffix) + 1)]


def _make_target(domain: str) -> _Target:
    return _target_of(*_site_of_entry(domain))


def _site_of_entry(domain: str) -> tuple[str, str]:
    """(registrable domain, public suffix) of a protected-list entry; PolicyError when unusable."""
    _host, registrable, suffix = _ascii_host(domain)
    if registrable is None or suffix is None:
        raise PolicyError(
            f"{domain!r} has no registrable domain (it is a public suffix or has an unknown TLD)"
        )
    return registrable, suffix


def _target_of(registrable: str, suffix: str) -> _Target:
    label_ascii = _label_of(registrable, suffix)
    unicode = to_unicode(registrable)
    label = to_unicode(label_ascii)
    glued = unicode.replace(".", "").replace("-", "")
    tokens = [token for token in _TOKEN_SPLIT.split(unicode) if token]
    if unicode.isascii() and unicode.isprintable() and not unicode.endswith("."):
        # Nearly every protected domain is plain ASCII, whose one skeleton is a translate() of
        # the lower-cased name (what confusables.skeletons() computes for it); this saves a call
        # per string when compiling a long list.
        table = confusables.ascii_skeleton_table()
        label_skeletons = frozenset((label.lower().translate(table),))
        skeletons = frozenset((unicode.lower().translate(table),))
        spelt_skeletons = tuple(token.lower().translate(table) for token in tokens)
        nosep_skeletons = frozenset((glued.lower().translate(table),))
    else:
        label_skeletons = confusables.skeletons(label)
        skeletons = confusables.skeletons(unicode)
        spelt_skeletons = tuple(min(confusables.skeletons(token)) for token in tokens)
        nosep_skeletons = confusables.skeletons(glued)
    return _Target(
        domain=registrable,
        unicode=unicode,
        label=label,
        label_ascii=label_ascii,
        suffix=suffix,
        skeletons=skeletons,
        label_skeletons=label_skeletons,
        label_folds=frozenset(f for s in label_skeletons for f in folds(s)),
        spelt_skeletons=spelt_skeletons,
        nosep_skeletons=nosep_skeletons,
        brand_fold=_quick_fold(label if label.isascii() else min(label_skeletons)),
    )


def _sorted_tuple(values: Iterable[_Target]) -> tuple[_Target, ...]:
    return tuple(sorted(set(values), key=lambda t: t.domain))


# The order of a report's matches: by technique as MatchKind lists them, then by target.
_KIND_ORDER = {kind: i for i, kind in enumerate(MatchKind)}

_Bucket = _Target | tuple[_Target, ...]
"""The targets under one key of a table: the one target itself, or a tuple of two or more (in
domain order). Nine keys in ten have one target, and a tuple for each was most of the memory
of a large index and of the garbage collector's work on it (1.9 million tuples for 100,000
domains)."""
_Buckets = dict[str, _Bucket]


def _add(table: _Buckets, key: str, target: _Target) -> None:
    bucket = table.setdefault(key, target)
    if bucket is not target:
        table[key] = (bucket, target) if isinstance(bucket, _Target) else (*bucket, target)


def _each(bucket: _Bucket | None) -> tuple[_Target, ...]:
    """The targets of a bucket (or of a missing key), as a tuple."""
    if bucket is None:
        return ()
    return (bucket,) if isinstance(bucket, _Target) else bucket


@dataclass(frozen=True, slots=True, eq=False)
class _Tables:
    """The hash tables an index answers from, compiled once from its protected domains.

    Each bucket holds its targets in domain order, without duplicates.
    """

    keywords: dict[str, str]
    """Combo-squatting keywords with lookalike spellings folded -> the keyword as written."""
    by_skeleton: _Buckets
    """Whole-domain skeleton -> targets (homoglyphs)."""
    by_label: _Buckets
    """Label before the suffix -> targets (other suffix)."""
    by_fold_deletion: _Buckets
    """Folded label, and each of its one-character deletions -> targets (near misses)."""
    by_label_skeleton: _Buckets
    """Skeleton of the first spelt-out token -> targets (dotted embeddings)."""
    by_nosep: _Buckets
    """Skeleton of the domain without separators -> targets (glued embeddings)."""
    brand_folds: _Buckets
    """Protected label with lookalike spellings folded (:func:`fold_spelling`) -> targets:
    brands looked for in the labels of a host (combos, brand labels)."""
    brand_fold_lengths: tuple[int, ...]
    """Lengths of the brands that are looked for anywhere inside a label (five letters or
    more, not an ordinary word): the rest must stand as words of their own."""
    max_skeleton_labels: int
    max_fold_length: int = 0
    """The longest key of by_fold_deletion: a longer query, or one of its deletions, finds none."""


_QUICK_CHARS = str.maketrans(_SPELLING_CHARS)


def _quick_fold(text: str) -> str:
    """:func:`fold_spelling`'s folded string, without the positions (the same string, faster:
    the pairs share no letter, so replacing them one after another scans as it does)."""
    for pair, single in _SPELLING_PAIRS.items():
        if pair in text:
            text = text.replace(pair, single)
    return text.translate(_QUICK_CHARS)


def _brand_fold(t: _Target) -> str:
    """The protected label as :func:`fold_spelling` folds it."""
    return t.brand_fold


def _compile_tables(sites: Mapping[str, str], keywords: Iterable[str]) -> _Tables:
    """The tables for protected registrable domains (domain -> public suffix)."""
    by_skeleton: _Buckets = {}
    by_label: _Buckets = {}
    by_fold_deletion: _Buckets = {}
    by_label_skeleton: _Buckets = {}
    by_nosep: _Buckets = {}
    brand_folds: _Buckets = {}
    substring_lengths: set[int] = set()
    # Targets are visited in domain order and each goes into a bucket at most once, so every
    # bucket is in domain order and free of duplicates.
    add_deletion = by_fold_deletion.setdefault
    max_labels = 2
    max_fold = 0
    for domain in sorted(sites):
        t = _target_of(domain, sites[domain])
        for sk in t.skeletons:
            _add(by_skeleton, sk, t)
            max_labels = max(max_labels, sk.count(".") + 1)
        if len(t.label) >= MIN_OTHER_SUFFIX_LENGTH:
            _add(by_label, t.label, t)
        for f in t.label_folds:
            if len(f) < MIN_FOLD_MATCH_LENGTH:
                continue
            max_fold = max(max_fold, len(f))
            # The fold and its one-character deletions, without collecting them in a set first
            # (a set per domain was a third of compiling a long list): a key met twice for the
            # same target ("aab" less either "a") finds that target last in its bucket already.
            # _add is inlined, as this table gets two thirds of all the insertions.
            n = len(f) if len(f) >= MIN_EDIT_DISTANCE_LENGTH else 0
            for i in range(-1, n):
                key = f if i < 0 else f[:i] + f[i + 1 :]
                bucket = add_deletion(key, t)
                if bucket is t:
                    continue
                if isinstance(bucket, _Target):
                    by_fold_deletion[key] = (bucket, t)
                elif bucket[-1] is not t:
                    by_fold_deletion[key] = (*bucket, t)
        if len(t.label) >= MIN_EMBEDDED_LENGTH:
            _add(by_label_skeleton, t.spelt_skeletons[0], t)
        brand = _brand_fold(t)
        if len(brand) >= MIN_COMBO_KEYWORD_TOKEN_LENGTH:
            _add(brand_folds, brand, t)
            if len(brand) >= MIN_COMBO_BRAND_LENGTH and t.label not in COMMON_WORD_BRANDS:
                substring_lengths.add(len(brand))
        if len(t.label) >= MIN_NO_SEPARATOR_EMBEDDED_LENGTH:
            for sk in t.nosep_skeletons:
                _add(by_nosep, sk, t)
    folded_keywords = {_folded(k): k for k in reversed(tuple(keywords))}
    return _Tables(
        keywords=folded_keywords,
        by_skeleton=by_skeleton,
        by_label=by_label,
        by_fold_deletion=by_fold_deletion,
        by_label_skeleton=by_label_skeleton,
        by_nosep=by_nosep,
        brand_folds=brand_folds,
        brand_fold_lengths=tuple(sorted(substring_lengths)),
        max_skeleton_labels=max_labels,
        max_fold_length=max_fold,
    )


# --- the index ----------------------------------------------------------------------------------


class LookalikeIndex:
    """Protected domains compiled for constant-time lookalike questions.

    The list is read (and a bad entry reported) at construction. The hash tables are compiled
    then too, or, for a ``lazy`` index, on the first question that needs them: a host that is a
    protected domain or under one needs none, so a short run that meets only such hosts (or IP
    addresses) never pays for compiling the list, nor for loading ICU. Either way the answers
    are the same, the tables never change once compiled, and the index is safe to share between
    threads. :meth:`analyze` memoises its (pure) answers per host in a bounded cache, since
    hosts repeat across URLs.
    """

    __slots__ = (
        "_display_memo",
        "_domains",
        "_extra_domain",
        "_lock",
        "_memo",
        "_screen",
        "_sites",
        "_tables",
        "_target_for",
        "keywords",
    )

    def __init__(
        self,
        domains: Iterable[str],
        keywords: Iterable[str] = DEFAULT_KEYWORDS,
        *,
        lazy: bool = False,
    ):
        sites: dict[str, str] = {}
        for domain in domains:
            registrable, suffix = _site_of_entry(domain)
            sites.setdefault(registrable, suffix)
        self._sites = sites
        self._domains: frozenset[str] = frozenset(sites)
        self.keywords: tuple[str, ...] = tuple(dict.fromkeys(k.lower() for k in keywords))
        """The combo-squatting keywords, as given."""
        self._tables: _Tables | None = None
        self._screen: _Screen | None = None
        self._lock = threading.Lock()
        # Bounded memo caches of pure functions (thread-safe in CPython); not shared state that
        # changes any answer. Hosts repeat across URLs, and servers are few.
        self._memo = lru_cache(maxsize=memo_size(4096))(self._analyze)
        self._display_memo = lru_cache(maxsize=memo_size(1024))(self._display_safety)
        self._target_for = lru_cache(maxsize=memo_size(256))(_make_target)
        self._extra_domain = lru_cache(maxsize=memo_size(256))(_registrable_or_none)
        if not lazy:
            self._compiled()

    def _compiled(self) -> _Tables:
        """The tables, compiled by the first caller (others wait for it)."""
        tables = self._tables
        if tables is None:
            with self._lock:
                tables = self._tables
                if tables is None:
                    # Compiling allocates millions of small containers at once; the cyclic
                    # garbage collector would rescan them again and again (it doubled the time
                    # for 100,000 domains). None of them form cycles, so pause it meanwhile.
                    gc_was_enabled = gc.isenabled()
                    gc.disable()
                    try:
                        tables = _compile_tables(self._sites, self.keywords)
                    finally:
                        if gc_was_enabled:
                            gc.enable()
                    self._screen = _Screen(tables)
                    self._tables = tables
        return tables

    # -- public API ------------------------------------------------------------------------------

    @property
    def domains(self) -> frozenset[str]:
        """The protected registrable domains (A-label)."""
        return self._domains

    def __len__(self) -> int:
        return len(self._domains)

    def __contains__(self, domain: object) -> bool:
        return isinstance(domain, str) and domain.lower().rstrip(".") in self._domains

    def __repr__(self) -> str:
        return f"LookalikeIndex({len(self._domains)} protected domains)"

    def cache_clear(self) -> None:
        """Forget memoised answers (for benchmarks; answers never go stale)."""
        self._memo.cache_clear()
        self._display_memo.cache_clear()
        if self._screen is not None:
            self._screen.label_facts.cache_clear()

    def protected_parent(self, host: str, extra: str | None = None) -> str | None:
        """The protected domain ``host`` (A-label) is or is a subdomain of, or None.

        ``extra`` is one more protected registrable domain for this question (the server's).
        """
        # The host and its parents, longest first, as slices after each dot; from the first
        # one no longer than any listed domain (policy domains are at most MAX_DOMAIN_LENGTH).
        parent = host.rstrip(".").lower()
        limit = max(MAX_DOMAIN_LENGTH, len(extra or ""))
        if len(parent) > limit:
            dot = first_parent_dot(parent, limit)
            if dot < 0:
                return None
            parent = parent[dot + 1 :]
        dot = 0
        while dot >= 0:
            if parent in self._domains or parent == extra:
                return parent
            dot = parent.find(".")
            parent = parent[dot + 1 :]
        return None

    def similar_protected_domain(self, host_unicode: str, extra: str | None = None) -> str | None:
        """The protected domain whose skeleton ``host_unicode`` (or a parent of it) shares.

        None when there is none, or when the host is that domain or a subdomain of it.
        Implements :class:`urlvet.confusables.TopDomainMatcher` (use :meth:`matcher` to bind
        ``extra``).
        """
        extra_target = self._extra_target(extra)
        tables = self._compiled()
        for target in self._skeleton_matches(tables, host_unicode.lower(), extra_target):
            if host_unicode == target.unicode or host_unicode.endswith("." + target.unicode):
                return None
            return target.domain
        return None

    def lookup_skeleton(self, skeleton: str, separators_removed: bool = False) -> tuple[str, ...]:
        """The protected domains with this whole-domain skeleton (``google.corn``), or, with
        ``separators_removed``, this skeleton of the domain without dots and hyphens
        (``googlecorn``)."""
        tables = self._compiled()
        table = tables.by_nosep if separators_removed else tables.by_skeleton
        return tuple(t.domain for t in _each(table.get(skeleton)))

    def matcher(self, extra: str | None = None) -> confusables.TopDomainMatcher:
        """This index with ``extra`` protected as well, as a display-safety top-domain matcher."""
        return _BoundMatcher(self, extra)

    def display_safety(self, host: str, extra: str | None = None) -> confusables.DisplaySafety:
        """Whether ``host`` (A-label) may be shown in Unicode, judged against this index with
        ``extra`` protected as well: :func:`urlvet.confusables.display_safety` with
        :meth:`matcher`, memoised per host."""
        return self._display_memo(host, extra)

    def _display_safety(self, host: str, extra: str | None) -> confusables.DisplaySafety:
        return confusables.display_safety(host, self.matcher(extra))

    def analyze(self, url: ParsedURL, extra: str | None = None) -> LookalikeReport:
        """Which protected domains the URL's host imitates. ``extra``: the server's domain.

        Never raises: a host the index cannot reason about has no matches.
        """
        if url.host_kind is not HostKind.DOMAIN or not url.host:
            return LookalikeReport(host=url.host, protected=None)
        return self._memo(
            url.host.rstrip(".").lower(),
            url.host_unicode.rstrip(".").lower(),
            url.registrable_domain,
            url.public_suffix,
            url.suffix_is_private,
            self._extra_domain(extra),
        )

    def analyze_host(self, host: str, extra: str | None = None) -> LookalikeReport:
        """:meth:`analyze` for a bare host name (A- or U-label).

        Raises :class:`~urlvet.errors.InputError` when ``host`` is not a domain name.
        """
        try:
            ascii_host, registrable, suffix = _ascii_host(host)
        except PolicyError as exc:
            raise InputError(str(exc)) from exc
        return self._memo(
            ascii_host,
            to_unicode(ascii_host).lower(),
            registrable,
            suffix,
            site_of(ascii_host)[2],
            self._extra_domain(extra),
        )

    # -- matching --------------------------------------------------------------------------------

    def _extra_target(self, extra: str | None) -> _Target | None:
        if not extra or extra in self._domains:
            return None
        try:
            return self._target_for(extra)
        except PolicyError:
            return None

    @staticmethod
    def _skeleton_matches(
        tables: _Tables, host_unicode: str, extra: _Target | None
    ) -> list[_Target]:
        found: list[_Target] = []
        for sk in confusables.skeletons(host_unicode):
            labels = sk.split(".")
            top = min(len(labels), tables.max_skeleton_labels)
            for n in range(2, top + 1):
                key = ".".join(labels[-n:])
                found.extend(_each(tables.by_skeleton.get(key)))
                if extra is not None and key in extra.skeletons:
                    found.append(extra)
        return list(dict.fromkeys(found))

    def _analyze(
        self,
        host: str,
        host_unicode: str,
        registrable: str | None,
        suffix: str | None,
        private: bool,
        extra_domain: str | None,
    ) -> LookalikeReport:
        protected = self.protected_parent(host, extra_domain)
        if protected is not None:
            return LookalikeReport(host=host, protected=protected)
        tables = self._compiled()
        screen = self._screen
        assert screen is not None  # compiled with the tables
        if extra_domain is None and screen.screened_out(host, host_unicode, registrable, suffix):
            return LookalikeReport(host=host, protected=None)
        return self._matches(tables, host, host_unicode, registrable, suffix, private, extra_domain)

    def _matches(
        self,
        tables: _Tables,
        host: str,
        host_unicode: str,
        registrable: str | None,
        suffix: str | None,
        private: bool,
        extra_domain: str | None,
    ) -> LookalikeReport:
        """Every technique's matches for a host that is not protected (the analysis without
        the screen)."""
        extra = self._extra_target(extra_domain)
        matches: list[LookalikeMatch] = []
        # Brands (protected labels) already explained by a stronger technique: one finding per
        # brand, in the order homoglyph, near miss / other suffix, embedding, combo.
        brands: set[str] = set()

        for t in self._skeleton_matches(tables, host_unicode, extra):
            if t.label in brands:
                continue
            brands.add(t.label)
            matches.append(LookalikeMatch(MatchKind.HOMOGLYPH, t.domain, "same-skeleton"))

        label = None
        label_skeletons: frozenset[str] = frozenset()
        if registrable is not None and suffix is not None:
            label_ascii = _label_of(registrable, suffix)
            label = to_unicode(label_ascii).lower()
            # Near miss and combo both start from the label's skeletons: computed once.
            label_skeletons = confusables.skeletons(label)
            matches.extend(_other_suffix(tables, label, suffix, extra, brands))
            matches.extend(
                _near_miss(
                    tables, label, label_skeletons, label_ascii, registrable, suffix, extra, brands
                )
            )
            matches.extend(_www_glued(tables, label_skeletons, extra, brands))
            matches.extend(_split_by_dots(tables, host_unicode.lower(), suffix, extra, brands))
        matches.extend(_embedded(tables, host_unicode, label, suffix, extra, brands))
        if label is not None and registrable is not None and suffix is not None:
            matches.extend(_brand_labels(tables, host_unicode, registrable, suffix, extra, brands))
            matches.extend(_combo(tables, label, suffix, private, extra, brands))

        matches.sort(key=lambda m: (_KIND_ORDER[m.kind], m.target))
        return LookalikeReport(host=host, protected=None, matches=tuple(matches))


# --- the screen of plain hosts ------------------------------------------------------------------

SCREEN_GRAM = MIN_COMBO_BRAND_LENGTH
"""How much of a brand the screen looks for inside a label before looking for the brand: the
shortest brand looked for there."""
SCREEN_LABELS_KEPT = 4096
"""Labels left of a registrable domain (www, api, mail...) whose facts a screen keeps: the
same few lead most hosts of a log."""

_LDH_HOST = re.compile(r"[a-z0-9.-]+")
_LDH_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"


class _Screen:
    """Which hosts no technique can match: an early exit from the analysis for the ordinary
    names that are most of a log.

    A screened host is an ASCII name (lower case letters, digits, dots and hyphens, no
    ``xn--`` label) in which none of the look-ups the techniques start from finds a protected
    domain, asked without a server's domain. Every test here is a condition a technique needs
    before it can report anything (a key it looks up, a brand it compares, the second signal
    a brand label needs), read on the strings the technique reads: for such a name each
    skeleton is one ``translate`` of it (:func:`urlvet.confusables.skeletons`), which keeps its
    dots and hyphens where they are, and the spelling fold is :func:`_quick_fold`. Any doubt
    sends the host to the full analysis, so the screen only decides that there is nothing to
    find; a test compares it with the full analysis on the corpora.
    """

    __slots__ = (
        "_brand_starts",
        "_deletion_heads",
        "_deletion_tails",
        "_embedding_starts",
        "_inside_brands",
        "_keyword",
        "_longest_glued_part",
        "_skeleton",
        "_usable",
        "label_facts",
        "tables",
    )

    def __init__(self, tables: _Tables) -> None:
        self.tables = tables
        table = confusables.ascii_skeleton_table()
        self._skeleton = table
        # The host's skeleton split at dots and hyphens must be its labels' and tokens'
        # skeletons: separators kept, no character mapped to one or to nothing.
        self._usable = all(c.translate(table) == c for c in ".-") and all(
            c.translate(table) and not set(c.translate(table)) & {".", "-"} for c in _LDH_CHARS
        )
        # A query is one deletion away from a key of length m only if it shares the key's
        # first m // 2 characters or its rest (see _far_from_every_fold).
        heads: set[tuple[int, str]] = set()
        tails: set[tuple[int, str]] = set()
        for key in tables.by_fold_deletion:
            half = len(key) // 2
            heads.add((len(key), key[:half]))
            tails.add((len(key), key[half:]))
        self._deletion_heads = frozenset(heads)
        self._deletion_tails = frozenset(tails)
        self._embedding_starts = frozenset(tables.by_nosep).union(tables.by_label_skeleton)
        keywords = tables.keywords
        self._keyword = (
            re.compile("|".join(re.escape(k) for k in sorted(keywords))) if keywords else None
        )
        lengths = frozenset(tables.brand_fold_lengths)
        self._inside_brands = frozenset(
            key
            for key, bucket in tables.brand_folds.items()
            if len(key) in lengths and any(t.label not in COMMON_WORD_BRANDS for t in _each(bucket))
        )
        self._brand_starts = frozenset(b[:SCREEN_GRAM] for b in self._inside_brands)
        # A token glued of a keyword and a brand splits where each part is one of them.
        self._longest_glued_part = max(
            (len(k) for k in (*tables.keywords, *tables.brand_folds)), default=0
        )
        self.label_facts = lru_cache(maxsize=memo_size(SCREEN_LABELS_KEPT))(self._label_facts)

    def screened_out(
        self, host: str, host_unicode: str, registrable: str | None, suffix: str | None
    ) -> bool:
        """True when no technique can find a match for ``host`` (asked without a server's
        domain); False when one may, and for any host that is not an ordinary ASCII name."""
        if (
            not self._usable
            or host != host_unicode
            or "xn--" in host
            or not _LDH_HOST.fullmatch(host)
        ):
            return False
        tables = self.tables
        skeleton = host.translate(self._skeleton)
        labels = skeleton.split(".")
        # Homoglyph: the skeleton of the host's last labels.
        by_skeleton = tables.by_skeleton
        for n in range(2, min(len(labels), tables.max_skeleton_labels) + 1):
            if ".".join(labels[-n:]) in by_skeleton:
                return False
        if not self._no_embedding(_TOKEN.findall(skeleton)):
            return False
        if registrable is None or suffix is None:
            return True  # the other techniques read the label before the public suffix
        label = _label_of(registrable, suffix)
        if host != registrable and not host.endswith("." + registrable):
            return False
        if label in tables.by_label:
            return False  # the same name under another suffix
        in_suffix = suffix.count(".") + 1
        before = labels[: len(labels) - in_suffix]
        # Near miss and www glued: the label's folds.
        label_skeleton = before[-1]
        light = label_skeleton.lower().replace("rn", "m")  # fold(), light and heavy
        heavy = light
        for pair, single in _HEAVY_PAIRS:
            heavy = heavy.replace(pair, single)
        heavy = heavy.translate(_HEAVY_CHARS)
        for query in (light,) if light == heavy else (light, heavy):
            if query.startswith("www") or not self._far_from_every_fold(query):
                return False
        # Split by dots: the last labels before the suffix, joined and folded.
        by_fold_deletion = tables.by_fold_deletion
        for k in range(2, min(MAX_SPLIT_PIECES, len(before)) + 1):
            pieces = before[-k:]
            if not all(pieces):
                break
            joined = "".join(pieces)
            if len(joined) >= MIN_EDIT_DISTANCE_LENGTH and fold(joined) in by_fold_deletion:
                return False
        folded = _quick_fold(label)
        return self._no_combo(folded) and (
            host == registrable or self._no_brand_label(host, in_suffix + 1, folded)
        )

    def _no_embedding(self, tokens: list[str]) -> bool:
        """No token (skeleton) starts a protected domain spelt out (:func:`_embedded`)."""
        n = len(tokens)
        if n < 2 or self._embedding_starts.isdisjoint(tokens):
            return True
        by_label_skeleton = self.tables.by_label_skeleton
        by_nosep = self.tables.by_nosep
        for i, sk in enumerate(tokens):
            if sk in by_nosep:
                return False
            for t in _each(by_label_skeleton.get(sk)):
                spelt = t.spelt_skeletons
                if i + len(spelt) <= n and all(
                    spelt[j] == tokens[i + j] for j in range(1, len(spelt))
                ):
                    return False
        return True

    def _far_from_every_fold(self, query: str) -> bool:
        """No key of the near-miss table is ``query`` or one of its deletions (the keys
        :func:`_near_miss` looks up)."""
        tables = self.tables
        size = len(query)
        if size < MIN_FOLD_MATCH_LENGTH or size > tables.max_fold_length + 1:
            return True
        if query in tables.by_fold_deletion:
            return False
        if size < MIN_EDIT_DISTANCE_LENGTH:
            return True
        # A deletion at i keeps the query's first i characters and shifts the rest: a key of
        # length m equal to one keeps either its first m // 2 characters or the rest.
        m = size - 1
        half = m // 2
        # Only the deletions whose key may share the query's head, or its tail, are looked up.
        first = half if (m, query[:half]) in self._deletion_heads else size
        last = half if (m, query[half + 1 :]) in self._deletion_tails else 0
        by_fold_deletion = tables.by_fold_deletion
        return not any(
            query[:i] + query[i + 1 :] in by_fold_deletion
            for i in range(size)
            if i >= first or i < last
        )

    def _holds_keyword(self, text: str) -> bool:
        return self._keyword is not None and self._keyword.search(text) is not None

    def _glued_to_keyword(self, token: str) -> bool:
        """Whether ``token`` is a keyword glued to a brand, either way round (``appleid``)."""
        brand_folds = self.tables.brand_folds
        keywords = self.tables.keywords
        # Only the splits where both parts may be listed: every other split of a long token
        # cost a copy of it, its length squared in all.
        longest = self._longest_glued_part
        size = len(token)
        for p in range(max(1, size - longest), min(size, longest + 1)):
            head, rest = token[:p], token[p:]
            if (head in keywords and rest in brand_folds) or (
                rest in keywords and head in brand_folds
            ):
                return True
        return False

    def _no_combo(self, text: str) -> bool:
        """:func:`_combo` finds no brand in the registrable label ``text`` (its spelling
        folded): none as a hyphen-separated word of it; and, when it holds a keyword, none
        glued to a keyword or inside it."""
        brand_folds = self.tables.brand_folds
        # With a hyphen in the label, no word of it is the whole label.
        tokens = _WORD.findall(text) if "-" in text else [text]
        if "-" in text and any(token in brand_folds for token in tokens):
            return False
        if not self._holds_keyword(text):
            return True
        if any(self._glued_to_keyword(token) for token in tokens):
            return False
        starts = self._brand_starts
        inside = self._inside_brands
        lengths = self.tables.brand_fold_lengths
        n = len(text)
        for i in range(n - SCREEN_GRAM + 1):
            if text[i : i + SCREEN_GRAM] in starts and any(
                text[i : i + size] in inside for size in lengths if i + size <= n and size < n
            ):
                return False
        return True

    def _no_brand_label(self, host: str, in_site: int, folded_label: str) -> bool:
        """:func:`_brand_labels` finds nothing: no label left of the registrable domain holds
        a brand with a second signal (glued to a keyword, spelt to deceive, or a keyword
        word elsewhere in the name)."""
        parts = host.split(".")
        subdomains = [p for p in parts[: len(parts) - in_site][:MAX_BRAND_LABELS] if p]
        facts = []
        for sub in subdomains:
            found = self.label_facts(sub)
            if found is None:
                return False
            facts.append(found)
        needing = {key for brands, _words in facts for key in brands}
        if not needing:
            return True
        keywords = self.tables.keywords
        words = {w for w in folded_label.split("-") if w in keywords}
        words.update(w for _brands, own in facts for w in own)
        return not any(words - {key} for key in needing)

    def _label_facts(self, label: str) -> tuple[frozenset[str], frozenset[str]] | None:
        """What a label left of the registrable domain brings to :func:`_brand_labels`: None
        when it holds a brand that needs nothing more (glued to a keyword, or spelt unlike
        the brand); else the brands it holds, which need a keyword word elsewhere in the
        name, and its own keyword words."""
        tables = self.tables
        sp = _Spelling(label, None)
        text = sp.folded
        brands: set[str] = set()
        for a, b in [(0, len(text)), *sp.tokens()]:
            key = text[a:b]
            if self._glued_to_keyword(key):
                return None
            if len(key) < MIN_COMBO_TOKEN_BRAND_LENGTH or key in tables.keywords:
                continue
            bucket = tables.brand_folds.get(key)
            if bucket is None:
                continue
            spelt = sp.original(a, b)
            if any(_is_spelt_differently(spelt, t) for t in _each(bucket)):
                return None
            brands.add(key)
        words = frozenset(w for w in text.split("-") if w in tables.keywords)
        return frozenset(brands), words


# --- the techniques -----------------------------------------------------------------------------
# Each adds the brands (protected labels) it explains to ``brands``, so that a later, weaker
# technique does not report the same brand again.


def _other_suffix(
    tables: _Tables, label: str, suffix: str, extra: _Target | None, brands: set[str]
) -> list[LookalikeMatch]:
    if label in brands or len(label) < MIN_OTHER_SUFFIX_LENGTH:
        return []
    if suffix in ACCOUNT_NAMESPACE_SUFFIXES:
        return []
    same_name = [t for t in _each(tables.by_label.get(label)) if t.suffix != suffix]
    if extra is not None and extra.label == label and extra.suffix != suffix:
        same_name.append(extra)
    if not same_name:
        return []
    brands.add(label)
    target = _prefer_suffix(_sorted_tuple(same_name), suffix)
    return [
        LookalikeMatch(
            MatchKind.OTHER_SUFFIX,
            target.domain,
            "other-suffix",
            "different-suffix",
            {"suffix": suffix, "protected_suffix": target.suffix},
        )
    ]


def _www_glued(
    tables: _Tables, label_skeletons: frozenset[str], extra: _Target | None, brands: set[str]
) -> list[LookalikeMatch]:
    """``wwwpaypal.com``: a protected label behind a ``www`` whose dot went missing."""
    out: list[LookalikeMatch] = []
    for sk in sorted(label_skeletons):
        for f in folds(sk):
            # "www-paypal" is an embedding (a separator is there), reported as one later.
            rest = f[3:]
            if not f.startswith("www") or rest.startswith("-") or len(rest) < MIN_FOLD_MATCH_LENGTH:
                continue
            targets = [t for t in _each(tables.by_fold_deletion.get(rest)) if rest in t.label_folds]
            if extra is not None and rest in extra.label_folds:
                targets.append(extra)
            for t in _sorted_tuple(targets):
                if t.label in brands:
                    continue
                brands.add(t.label)
                out.append(
                    LookalikeMatch(
                        MatchKind.NEAR_MISS,
                        t.domain,
                        "www-glued",
                        None,
                        {"compared": rest, "protected_compared": rest},
                    )
                )
    return out


MAX_SPLIT_PIECES = 4
"""``pa.yp.al.com``: a protected label cut by dots into at most this many pieces."""


def _split_by_dots(
    tables: _Tables, host_unicode: str, suffix: str, extra: _Target | None, brands: set[str]
) -> list[LookalikeMatch]:
    """``pay.pal.com``, ``goo.gle.com``: a protected label cut into labels by inserted dots.

    The last labels before the suffix, joined, equal a protected label once folded.
    """
    labels = host_unicode.split(".")
    before = labels[: len(labels) - suffix.count(".") - 1]
    out: list[LookalikeMatch] = []
    longest = tables.max_fold_length
    if extra is not None:
        longest = max([longest, *(len(f) for f in extra.label_folds)])
    for k in range(2, min(MAX_SPLIT_PIECES, len(before)) + 1):
        pieces = before[-k:]
        if not all(pieces):
            break
        joined = "".join(pieces)
        if len(joined) < MIN_EDIT_DISTANCE_LENGTH:
            continue
        if joined.isascii():
            # Not through the skeleton cache: joined names rarely recur and would evict labels.
            joined_skeletons: Iterable[str] = (confusables.skeleton(joined.lower()),)
        else:
            joined_skeletons = sorted(confusables.skeletons(joined))
        for sk in joined_skeletons:
            # The heavy fold folds the light one further: equal light folds are equal heavy.
            f = fold(sk)
            if len(f) > longest:
                continue
            hit = tables.by_fold_deletion.get(f)
            own = extra is not None and f in extra.label_folds
            if hit is None and not own:
                continue
            targets = [t for t in _each(hit) if f in t.label_folds]
            if own and extra is not None:
                targets.append(extra)
            by_label: dict[str, list[_Target]] = {}
            for t in _sorted_tuple(targets):
                by_label.setdefault(t.label, []).append(t)
            for brand, same in by_label.items():
                if brand in brands:
                    continue
                brands.add(brand)
                t = _prefer_suffix(tuple(same), suffix)
                out.append(
                    LookalikeMatch(
                        MatchKind.NEAR_MISS,
                        t.domain,
                        "split-by-dots",
                        None if t.suffix == suffix else "different-suffix",
                        {"compared": ".".join(pieces), "protected_compared": f},
                    )
                )
    return out


def _near_miss(
    tables: _Tables,
    label: str,
    label_skeletons: frozenset[str],
    label_ascii: str,
    registrable: str,
    suffix: str,
    extra: _Target | None,
    brands: set[str],
) -> list[LookalikeMatch]:
    # protected label -> (technique, query form, protected form, targets with that label)
    found: dict[str, tuple[str, str, str, list[_Target]]] = {}
    by_fold_deletion = tables.by_fold_deletion
    queries = {f for sk in label_skeletons for f in folds(sk)}
    for query in sorted(queries):
        if len(query) < MIN_FOLD_MATCH_LENGTH:
            continue
        targets: list[_Target] = []
        if len(query) > tables.max_fold_length + 1:
            # Longer than any protected fold by two or more: no key can match, and the label's
            # deletions (quadratic in its length) are not worth building.
            keys: tuple[str, ...] = ()
        elif len(query) >= MIN_EDIT_DISTANCE_LENGTH:
            keys = (query, *_deletions(query))
        else:
            keys = (query,)
        for key in keys:
            bucket = by_fold_deletion.get(key)
            if bucket is None:
                continue
            if isinstance(bucket, _Target):
                targets.append(bucket)
            else:
                targets.extend(bucket)
        if extra is not None:
            targets.append(extra)
        candidates = [(f, t) for t in dict.fromkeys(targets) for f in t.label_folds]
        for folded, t in candidates:
            if t.label == label or t.label in brands:
                continue
            if folded == query:
                how = "character-fold"
            elif (
                len(folded) >= MIN_EDIT_DISTANCE_LENGTH
                and len(query) >= MIN_EDIT_DISTANCE_LENGTH
                and (
                    edit_distance_at_most_one(query, folded)
                    or has_one_character_swap(query, folded)
                )
            ):
                how = _describe_edit(query, folded)
            else:
                continue
            entry = found.get(t.label)
            if entry is None or (how == "character-fold" and entry[0] != how):
                found[t.label] = (how, query, folded, [t])
            elif entry[0] == how and t not in entry[3]:
                entry[3].append(t)
    out = []
    for brand, (how, query, folded, targets) in sorted(found.items()):
        brands.add(brand)
        t = _prefer_suffix(_sorted_tuple(targets), suffix)
        fp = None
        if how != "character-fold":
            fp = likely_false_positive_reason(label_ascii, registrable, t.label_ascii, t.domain)
        if fp is None and t.suffix != suffix:
            fp = "different-suffix"
        out.append(
            LookalikeMatch(
                MatchKind.NEAR_MISS,
                t.domain,
                how,
                fp,
                {"compared": query, "protected_compared": folded},
            )
        )
    return out


def _embedded(
    tables: _Tables,
    host_unicode: str,
    label: str | None,
    suffix: str | None,
    extra: _Target | None,
    brands: set[str],
) -> list[LookalikeMatch]:
    spans = [m.span() for m in _TOKEN.finditer(host_unicode)]
    tokens = [host_unicode[a:b] for a, b in spans]
    if len(tokens) < 2:
        return []
    skel: list[frozenset[str]] = [confusables.skeletons(t) for t in tokens]
    by_label_skeleton = tables.by_label_skeleton
    by_nosep = tables.by_nosep
    out: list[LookalikeMatch] = []
    n = len(tokens)
    for i in range(n):
        candidates: list[tuple[_Target, str]] = []
        for sk in skel[i]:
            # Most tokens are in neither table: test before building anything.
            dotted = by_label_skeleton.get(sk)
            if dotted is not None:
                candidates.extend((t, "dotted") for t in _each(dotted))
            glued = by_nosep.get(sk)
            if glued is not None:
                candidates.extend((t, "glued") for t in _each(glued))
            if extra is not None:
                if sk == extra.spelt_skeletons[0] and len(extra.label) >= MIN_EMBEDDED_LENGTH:
                    candidates.append((extra, "dotted"))
                if (
                    sk in extra.nosep_skeletons
                    and len(extra.label) >= MIN_NO_SEPARATOR_EMBEDDED_LENGTH
                ):
                    candidates.append((extra, "glued"))
        for t, style in candidates:
            # The same name under another suffix (google.com.mx) is the other-suffix rule's.
            if t.label in brands or (label is not None and t.label == label):
                continue
            if style == "dotted":
                spelt = t.spelt_skeletons
                if i + len(spelt) > n:
                    continue
                if not all(spelt[j] in skel[i + j] for j in range(1, len(spelt))):
                    continue
                end = i + len(spelt) - 1
            else:
                end = i
            brands.add(t.label)
            # A protected name ending exactly where the host's own suffix sits is the
            # "example-google.com" shape: a brand in a longer name, weaker than a spelt-out
            # target followed by more labels.
            at_end = suffix is not None and end == n - 1 and style == "dotted"
            embedded = host_unicode[spans[i][0] : spans[end][1]]
            out.append(
                LookalikeMatch(
                    MatchKind.EMBEDDED,
                    t.domain,
                    "end-embedding" if at_end else f"{style}-embedding",
                    "end-embedding" if at_end else None,
                    {"embedded": embedded},
                )
            )
    return out


class _Spelling:
    """A host label (lower case) with lookalike spellings folded, for brand and keyword search.

    Where each folded character came from is worked out only when a match is shown.
    """

    __slots__ = ("_source", "_starts", "folded", "written")

    def __init__(self, written: str, source: str | None) -> None:
        self.written = written
        # What was folded: the label itself, or (another script) its skeleton, which is only
        # comparable letter for letter when it has the label's length.
        self._source = source
        self.folded = _quick_fold(source if source is not None else written)
        self._starts: tuple[int, ...] | None = None

    @property
    def aligned(self) -> bool:
        """Whether folded positions can be traced back to the written label."""
        return self._source is None or len(self._source) == len(self.written)

    def original(self, start: int, end: int) -> str:
        """The written text that the folded span ``[start, end)`` came from (the whole label
        when the two cannot be aligned)."""
        if not self.aligned:
            return self.written
        if self._starts is None:
            self._starts = fold_spelling(self._source or self.written)[1]
        starts = self._starts
        a = starts[start]
        b = starts[end] if end < len(starts) else len(self.written)
        return self.written[a:b]

    def tokens(self) -> list[tuple[int, int]]:
        """Spans of the folded hyphen-separated words."""
        return [m.span() for m in _WORD.finditer(self.folded)]


_WORD = re.compile(r"[^-]+")


def _spelling(label: str) -> _Spelling:
    if label.isascii():
        return _Spelling(label, None)
    # Another script: through its skeleton, so that Cyrillic а is a.
    return _Spelling(label, min(confusables.skeletons(label)).lower())


def _keywords_in(tables: _Tables, text: str) -> list[str]:
    """The (folded) keywords written in ``text``; short ones are checked for word boundaries
    where they are used. (A loop of ``in`` tests beats one regular expression here.)"""
    return [k for k in tables.keywords if k in text]


def _is_spelt_differently(spelt: str, target: _Target) -> bool:
    return spelt != target.label and spelt != target.label_ascii


def _brand_targets(
    tables: _Tables, key: str, extra: _Target | None, *, inside_word: bool
) -> tuple[_Target, ...]:
    """The protected targets whose folded label is ``key``; inside a longer word only brands
    that are not ordinary words."""
    found = _each(tables.brand_folds.get(key))
    if extra is not None and key == extra.brand_fold:
        found = (*found, extra)
    if inside_word:
        found = tuple(t for t in found if t.label not in COMMON_WORD_BRANDS)
    return found


def _combo(
    tables: _Tables,
    label: str,
    suffix: str,
    private: bool,
    extra: _Target | None,
    brands: set[str],
) -> list[LookalikeMatch]:
    """A protected brand in the registrable label with a keyword, or beside another word.

    The label is searched with lookalike spellings folded (``amaz0n-refunds``): a brand found
    only through folding is spelt to deceive, which is the second signal a word beside it
    needs. Under a hosting platform's suffix (``paypal-resolution.netlify.app``) anyone may
    take the name, so a keyword there blocks and any other word warns.
    """
    sp = _spelling(label)
    text = sp.folded
    if any(t.label in brands for t in _brand_targets(tables, text, extra, inside_word=False)):
        return []  # the label is a protected name already reported (okta-emеа: a homoglyph)
    hosting = private and suffix not in ACCOUNT_NAMESPACE_SUFFIXES
    present = _keywords_in(tables, text)
    # (start, end, targets, glued keyword or None)
    hits: list[tuple[int, int, tuple[_Target, ...]]] = []
    if present:
        for length in tables.brand_fold_lengths:
            if length >= len(text):
                break
            for i in range(len(text) - length + 1):
                key = text[i : i + length]
                if key in tables.brand_folds:
                    targets = _brand_targets(tables, key, None, inside_word=True)
                    if targets:
                        hits.append((i, i + length, targets))
    spans = sp.tokens()
    for a, b in spans:
        token = text[a:b]
        if token == text:
            # The whole label: a brand alone is the near-miss or other-suffix rules' case,
            # unless a keyword is glued to it ("appleid", "securechase").
            pass
        elif len(token) >= MIN_COMBO_KEYWORD_TOKEN_LENGTH:
            targets = tuple(
                t
                for t in _brand_targets(tables, token, extra, inside_word=False)
                if len(min(t.label_skeletons)) >= MIN_COMBO_TOKEN_BRAND_LENGTH
            )
            if targets:
                hits.append((a, b, targets))
        for kw in present:
            if len(token) > len(kw) and (token.startswith(kw) or token.endswith(kw)):
                rest = (a + len(kw), b) if token.startswith(kw) else (a, b - len(kw))
                key = text[rest[0] : rest[1]]
                if len(key) >= MIN_COMBO_TOKEN_BRAND_LENGTH:
                    targets = _brand_targets(tables, key, extra, inside_word=False)
                    if targets:
                        hits.append((rest[0], rest[1], targets))
    if extra is not None and not any(extra in h[2] for h in hits):
        own = extra.brand_fold
        i = text.find(own)
        if i >= 0 and own != text and len(own) >= MIN_COMBO_TOKEN_BRAND_LENGTH:
            hits.append((i, i + len(own), (extra,)))

    out: list[LookalikeMatch] = []
    taken: list[tuple[int, int]] = []
    # Longest brand first: "microsoftonline-login" is one combo with microsoftonline, not a
    # second one with the microsoft inside it.
    for start, end, targets in sorted(hits, key=lambda h: (-(h[1] - h[0]), h[0])):
        brand = text[start:end]
        if brand in tables.keywords:
            continue  # login.gov is a brand, but "login" is what every combo contains
        if any(a <= start and end <= b for a, b in taken):
            continue
        target = _prefer_suffix(targets, suffix)
        if target.label in brands:
            continue
        spelt = sp.original(start, end)
        lookalike = _is_spelt_differently(spelt, target)
        keyword = _keyword_beside(text, start, end, present)
        word = None if keyword is not None else _word_beside(sp, start, end)
        if keyword is not None:
            # Under a hosting suffix the keyword blocks, unless the brand is an ordinary word.
            strong = hosting and target.label not in COMMON_WORD_BRANDS
            how, other, stronger = (
                "brand-and-keyword",
                tables.keywords[keyword],
                lookalike or strong,
            )
        elif word is None or end - start < MIN_COMBO_TOKEN_BRAND_LENGTH:
            continue
        elif (
            lookalike
            or target is extra
            or len(word) <= MAX_BRAND_AND_WORD_OTHER
            or (hosting and target.label not in COMMON_WORD_BRANDS)
        ):
            how, other, stronger = "brand-and-word", word, lookalike
        else:
            continue
        brands.add(target.label)
        taken.append((start, end))
        detail = {"brand": target.label, "keyword": other}
        if lookalike:
            detail["spelt"] = spelt
        if hosting:
            detail["hosting_suffix"] = suffix
        out.append(LookalikeMatch(MatchKind.COMBO, target.domain, how, None, detail, stronger))
    return out


def _word_beside(sp: _Spelling, start: int, end: int) -> str | None:
    """The other words of the label when the brand at ``[start, end)`` stands as a whole word
    (``my-paypal``, ``dr0pbox-transfer``), as written; None when it does not."""
    text = sp.folded
    if (start > 0 and text[start - 1] != "-") or (end < len(text) and text[end] != "-"):
        return None
    if not sp.aligned:
        before, after = text[:start], text[end:]
    else:
        before = sp.original(0, start) if start > 0 else ""
        after = sp.original(end, len(text)) if end < len(text) else ""
    other = "-".join(w for w in (before.strip("-"), after.strip("-")) if w)
    return other or None


def _keyword_beside(text: str, start: int, end: int, keywords: list[str]) -> str | None:
    """A keyword written in ``text`` apart from the brand at ``[start, end)`` (no overlap,
    neither contains the other), or None. A short keyword must stand as a word, or touch the
    brand (``appleid``): inside another word it is chance (``syntax``)."""
    brand = text[start:end]
    for kw in keywords:
        if kw in brand or brand in kw:
            continue
        pos = text.find(kw)
        while pos >= 0:
            after = pos + len(kw)
            apart = after <= start or pos >= end
            # A short keyword must start and end where a word does (or touch the brand).
            whole = len(kw) > SHORT_KEYWORD_LENGTH or (
                (pos == 0 or text[pos - 1] in "-." or pos == end)
                and (after == len(text) or text[after] in "-." or after == start)
            )
            if apart and whole:
                return kw
            pos = text.find(kw, pos + 1)
    return None


MAX_BRAND_LABELS = 12
"""Labels read from the left of a host for a brand (a screen shows no more; a host of
thousands of labels costs no more than one of twelve)."""


def _brand_labels(
    tables: _Tables,
    host_unicode: str,
    registrable: str,
    suffix: str,
    extra: _Target | None,
    brands: set[str],
) -> list[LookalikeMatch]:
    """A protected brand standing as a label left of another site (``login.amazon.order-
    status-check.net``, ``secure-chase.account-alerts.info``), with a second signal: a keyword
    anywhere in the host's name, or the brand spelt with lookalike characters.

    The brand must be the whole label, a whole hyphen-separated word of it, or glued to a
    keyword (``appleid``). Without a second signal a brand label is ordinary: a company's own
    GitHub Enterprise or Grafana (``github.acme.com``) is named after the product it runs.
    """
    labels = host_unicode.split(".")
    in_site = registrable.count(".") + 1
    in_suffix = suffix.count(".") + 1
    # The leftmost labels, which a person reads first, and the site's own name.
    subdomains = labels[: len(labels) - in_site][:MAX_BRAND_LABELS]
    if not subdomains:
        return []
    site_named = labels[len(labels) - in_site : len(labels) - in_suffix]
    read = [_spelling(label) for label in subdomains if label]
    named = [*read, *(_spelling(label) for label in site_named if label)]
    keyword_words = {
        sp.folded[a:b]: sp
        for sp in named
        for a, b in sp.tokens()
        if sp.folded[a:b] in tables.keywords
    }
    out: list[LookalikeMatch] = []
    for sp in read:
        text = sp.folded
        candidates: list[tuple[int, int, str | None]] = [(0, len(text), None)]
        whole = _brand_targets(tables, text, extra, inside_word=False)
        if any(t.label in brands for t in whole):
            continue  # a protected name already reported (an embedded okta-emea.com)
        present = _keywords_in(tables, text) if not whole else []
        for a, b in [] if whole else sp.tokens():
            if (a, b) != (0, len(text)):
                candidates.append((a, b, None))
            token = text[a:b]
            for kw in present:
                if len(token) > len(kw) and token.startswith(kw):
                    candidates.append((a + len(kw), b, kw))
                elif len(token) > len(kw) and token.endswith(kw):
                    candidates.append((a, b - len(kw), kw))
        for start, end, glued in candidates:
            key = text[start:end]
            if len(key) < MIN_COMBO_TOKEN_BRAND_LENGTH or key in tables.keywords:
                continue
            targets = _brand_targets(tables, key, extra, inside_word=False)
            if not targets:
                continue
            target = _prefer_suffix(targets, suffix)
            if target.label in brands:
                continue
            spelt = sp.original(start, end)
            lookalike = _is_spelt_differently(spelt, target)
            keyword = glued or next((k for k in keyword_words if k != key), None)
            if keyword is None and not lookalike:
                continue
            common = target.label in COMMON_WORD_BRANDS
            brands.add(target.label)
            detail = {"brand": target.label, "label": sp.written}
            if keyword is not None:
                detail["keyword"] = tables.keywords[keyword]
            if lookalike:
                detail["spelt"] = spelt
            if common:
                detail["common_word"] = "yes"
            out.append(
                LookalikeMatch(
                    MatchKind.BRAND_LABEL,
                    target.domain,
                    "brand-label",
                    None,
                    detail,
                    lookalike or not common,
                )
            )
    return out


def _prefer_suffix(targets: tuple[_Target, ...], suffix: str) -> _Target:
    for t in targets:
        if t.suffix == suffix:
            return t
    for t in targets:
        if t.suffix == "com":
            return t
    return targets[0]


@dataclass(frozen=True, slots=True)
class _BoundMatcher:
    index: LookalikeIndex
    extra: str | None

    def similar_protected_domain(self, host_unicode: str) -> str | None:
        return self.index.similar_protected_domain(host_unicode, self.extra)


# --- building, loading, importing ---------------------------------------------------------------


def build_index(
    domains: Iterable[str], keywords: Iterable[str] = DEFAULT_KEYWORDS, *, lazy: bool = False
) -> LookalikeIndex:
    """Compile protected domains (registrable domains, A- or U-label) into an index.

    A subdomain in the list protects its whole registrable domain. Raises
    :class:`~urlvet.errors.PolicyError` naming an entry that is not a usable domain. With
    ``lazy``, the matching tables are compiled on the first question that needs them rather
    than now (see :class:`LookalikeIndex`); the answers are the same.
    """
    return LookalikeIndex(domains, keywords, lazy=lazy)


def _parse_text_list(text: str, source: str) -> list[str]:
    out = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if any(c.isspace() for c in line):
            raise PolicyError(f"{source}:{lineno}: expected one domain per line, got {line!r}")
        out.append(line.lower())
    return out


def default_protected_domains() -> tuple[str, ...]:
    """The protected domains shipped with urlvet (kept equal to rules/protected-domains.yaml)."""
    text = resources.files(_DATA_PACKAGE).joinpath(_DATA_FILE).read_text(encoding="utf-8")
    return tuple(_parse_text_list(text, _DATA_FILE))


@cache
def default_index() -> LookalikeIndex:
    """The index of the shipped protected domains, built on first use and then shared.

    Lazy: a run that only meets protected domains and addresses (a one-off ``urlvet check``)
    never compiles it, nor loads ICU.
    """
    return build_index(default_protected_domains(), lazy=True)


@cache
def index_for_policy(extra_domains: tuple[str, ...], use_default: bool = True) -> LookalikeIndex:
    """The index a policy needs: its own protected domains, plus the shipped list by default.

    Cached per argument tuple, so policies that differ elsewhere share one index. With no
    domains at all the index is empty (the rules then find nothing), never the default.
    """
    if not extra_domains:
        return default_index() if use_default else build_index(())
    base = default_protected_domains() if use_default else ()
    # Lazy like the default index; a bad entry is still reported here, when the policy compiles.
    return build_index((*base, *extra_domains), lazy=True)


def load_protected_domains(path: str | Path) -> list[str]:
    """Read a protected-domain list: a YAML policy fragment or a text file.

    YAML (``.yaml``/``.yml``): a mapping with a ``protected_domains`` list of strings. Anything
    else: one domain per line, ``#`` starts a comment. Returns the domains lower-cased, in file
    order, without duplicates. Raises :class:`~urlvet.errors.PolicyError` naming the file.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise PolicyError(f"{p}: cannot read protected domains: {exc.strerror or exc}") from exc
    if p.suffix.lower() not in (".yaml", ".yml"):
        return list(dict.fromkeys(_parse_text_list(text, str(p))))

    import yaml

    try:
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise PolicyError(f"{p}{where}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or "protected_domains" not in data:
        raise PolicyError(f"{p}: expected a mapping with a 'protected_domains' list")
    items = data["protected_domains"]
    if not isinstance(items, list):
        raise PolicyError(f"{p}: 'protected_domains' must be a list of domain names")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            raise PolicyError(f"{p}: protected_domains[{i}] must be a domain name, got {item!r}")
        out.append(item.strip().lower().rstrip("."))
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class RankingImport:
    """What :func:`read_ranking_csv` took from a ranking, and what it skipped."""

    domains: list[str]
    """Registrable domains in rank order, without duplicates, at most ``top``."""
    malformed: int = 0
    """Rows that are neither ``rank,domain`` nor ``origin,rank`` (header and comments aside)."""
    unusable: int = 0
    """Rows read in rank order whose domain or origin names no registrable domain."""
    first_skipped: int | None = None
    """The line of the first row skipped for either reason."""

    @property
    def skipped(self) -> int:
        """Rows skipped for either reason."""
        return self.malformed + self.unusable


def import_ranking_csv(path: str | Path, top: int) -> list[str]:
    """The first ``top`` registrable domains of a ranking CSV: see :func:`read_ranking_csv`."""
    return read_ranking_csv(path, top).domains


def read_ranking_csv(path: str | Path, top: int) -> RankingImport:
    """The first ``top`` registrable domains of a ranking CSV, and the rows it skipped.

    Two forms are read, row by row: ``rank,domain`` as Tranco publishes it (``1,google.com``)
    and ``origin,rank`` as the Chrome UX Report publishes it (``https://www.google.com,1000``,
    with ranks in buckets: 1000, 5000, 10000...). Rows are taken in rank order (file order
    within a bucket); hosts and origins are reduced to their registrable domain and duplicates
    dropped, so the result may draw on more than ``top`` rows. A header row (a first row
    without a rank), blank lines and ``#`` comments are not rows; other rows that cannot be
    used are counted. Raises :class:`~urlvet.errors.InputError` when the file cannot be read
    or has no usable row.
    """
    if top <= 0:
        raise InputError(f"top must be a positive number of domains, got {top}")
    p = Path(path)
    rows: list[tuple[int, int, str]] = []
    malformed: list[int] = []
    try:
        with p.open(encoding="utf-8", newline="") as handle:
            for lineno, row in enumerate(csv.reader(handle), start=1):
                cells = [c.strip() for c in row]
                if not any(cells) or cells[0].startswith("#"):
                    continue
                entry = _ranking_row(cells)
                if entry is not None:
                    rows.append((entry[0], lineno, entry[1]))
                elif lineno > 1 or rows:  # the first row may be a header ("origin,rank")
                    malformed.append(lineno)
    except OSError as exc:
        raise InputError(f"{p}: cannot read the ranking: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{p}: not a rank,domain or origin,rank CSV file: {exc}") from exc
    rows.sort()
    out: dict[str, None] = {}
    unusable: list[int] = []
    for _rank, lineno, name in rows:
        registrable = _ranked_site(name)
        if registrable is None:
            unusable.append(lineno)
            continue
        out.setdefault(registrable)
        if len(out) >= top:
            break
    if not out:
        raise InputError(f"{p}: no rank,domain or origin,rank rows with a usable domain name")
    skipped = malformed + unusable
    return RankingImport(
        list(out), len(malformed), len(unusable), min(skipped) if skipped else None
    )


def _ranking_row(cells: list[str]) -> tuple[int, str] | None:
    """(rank, domain or origin) of a row in either form, or None."""
    if len(cells) < 2:
        return None
    if cells[0].isdigit() and cells[1]:
        return int(cells[0]), cells[1]  # Tranco: rank,domain
    if cells[1].isdigit() and "://" in cells[0]:
        return int(cells[1]), cells[0]  # CrUX: origin,rank
    return None


def _ranked_site(name: str) -> str | None:
    """The registrable domain of a ranked domain name or origin, or None."""
    if "://" not in name:
        try:
            return _ascii_host(name)[1]
        except PolicyError:
            return None
    try:
        parsed = parse(name)
    except InvalidURL:
        return None
    if parsed.scheme not in ("http", "https") or parsed.host_kind is not HostKind.DOMAIN:
        return None
    return parsed.registrable_domain


def render_policy_fragment(domains: Iterable[str], header: str | None = None) -> str:
    """A YAML policy fragment ``protected_domains: [...]`` for ``domains``, one per line.

    ``header`` becomes a ``#`` comment block at the top (say where the list came from).
    """
    lines: list[str] = []
    if header:
        lines.extend(f"# {line}".rstrip() for line in header.splitlines())
    lines.append("protected_domains:")
    for d in dict.fromkeys(domains):
        # Domain names never need YAML quoting (letters, digits, dots, hyphens), but U-labels
        # may, so quote those.
        lines.append(f"  - {d}" if re.fullmatch(r"[a-z0-9.\-]+", d) else f'  - "{d}"')
    return "\n".join(lines) + "\n"
