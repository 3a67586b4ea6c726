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
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from urlvet import confusables
from urlvet.errors import InputError, PolicyError
from urlvet.url import HostKind, InvalidURL, ParsedURL, parse, site_of, to_unicode

__all__ = [
    "DEFAULT_KEYWORDS",
    "LookalikeIndex",
    "LookalikeMatch",
    "LookalikeReport",
    "MatchKind",
    "build_index",
    "default_index",
    "default_protected_domains",
    "edit_distance_at_most_one",
    "fold",
    "folds",
    "has_one_character_swap",
    "import_ranking_csv",
    "index_for_policy",
    "likely_false_positive_reason",
    "load_protected_domains",
    "render_policy_fragment",
]

# Words that phishing domains put beside a brand. Kept to sign-in, account, payment and support
# vocabulary: generic words ("shop", "news") pair with brands in legitimate names too often.
DEFAULT_KEYWORDS: tuple[str, ...] = (
    "account",
    "accounts",
    "activate",
    "activation",
    "admin",
    "auth",
    "authenticate",
    "billing",
    "confirm",
    "confirmation",
    "crypto",
    "customer",
    "helpdesk",
    "invoice",
    "login",
    "logon",
    "logout",
    "mfa",
    "online",
    "password",
    "payment",
    "recover",
    "recovery",
    "refund",
    "reset",
    "secure",
    "security",
    "service",
    "services",
    "signin",
    "signon",
    "signout",
    "sso",
    "support",
    "suspended",
    "unlock",
    "update",
    "validate",
    "verification",
    "verify",
    "wallet",
    "webmail",
)

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
    """Extra facts: the embedded text, the keyword, the folded forms compared."""


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


_PLAIN_HOST = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z][a-z0-9-]*[a-z0-9]")


def _ascii_host(domain: str) -> tuple[str, str | None, str | None]:
    """(A-label host, registrable domain, public suffix) of a domain name as a browser parses it."""
    text = domain.strip().rstrip(".").lower()
    if not text or any(c in text for c in "/:@?#\\ \t"):
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
    _host, registrable, suffix = _ascii_host(domain)
    if registrable is None or suffix is None:
        raise PolicyError(
            f"{domain!r} has no registrable domain (it is a public suffix or has an unknown TLD)"
        )
    label_ascii = _label_of(registrable, suffix)
    unicode = to_unicode(registrable)
    label = to_unicode(label_ascii)
    label_skeletons = confusables.skeletons(label)
    spelt_skeletons = tuple(
        min(confusables.skeletons(token)) for token in _TOKEN_SPLIT.split(unicode) if token
    )
    glued = unicode.replace(".", "").replace("-", "")
    return _Target(
        domain=registrable,
        unicode=unicode,
        label=label,
        label_ascii=label_ascii,
        suffix=suffix,
        skeletons=confusables.skeletons(unicode),
        label_skeletons=label_skeletons,
        label_folds=frozenset(f for s in label_skeletons for f in folds(s)),
        spelt_skeletons=spelt_skeletons,
        nosep_skeletons=confusables.skeletons(glued),
    )


def _sorted_tuple(values: Iterable[_Target]) -> tuple[_Target, ...]:
    return tuple(sorted(set(values), key=lambda t: t.domain))


# --- the index ----------------------------------------------------------------------------------


class LookalikeIndex:
    """Protected domains compiled for constant-time lookalike questions.

    Immutable after construction and safe to share between threads. :meth:`analyze` memoises
    its (pure) answers per host in a bounded cache, since several rules ask about the same URL.
    """

    __slots__ = (
        "_brand_lengths",
        "_brands_substring",
        "_brands_token",
        "_by_fold_deletion",
        "_by_label",
        "_by_label_skeleton",
        "_by_nosep",
        "_by_skeleton",
        "_domains",
        "_keywords",
        "_max_skeleton_labels",
        "_memo",
        "_target_for",
        "_targets",
        "keywords",
    )

    def __init__(self, domains: Iterable[str], keywords: Iterable[str] = DEFAULT_KEYWORDS):
        # Compiling allocates millions of small containers at once; the cyclic garbage collector
        # would rescan them again and again (it doubled the time for 100,000 domains). None of
        # them form cycles, so pause it for the build.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            self._compile(domains, keywords)
        finally:
            if gc_was_enabled:
                gc.enable()
        # Bounded memo caches of pure functions (thread-safe in CPython); not shared state that
        # changes any answer.
        self._memo = lru_cache(maxsize=4096)(self._analyze)
        self._target_for = lru_cache(maxsize=256)(_make_target)

    def _compile(self, domains: Iterable[str], keywords: Iterable[str]) -> None:
        targets: dict[str, _Target] = {}
        for domain in domains:
            target = _make_target(domain)
            targets.setdefault(target.domain, target)
        self._targets: tuple[_Target, ...] = tuple(sorted(targets.values(), key=lambda t: t.domain))
        self._domains: frozenset[str] = frozenset(targets)
        self.keywords: tuple[str, ...] = tuple(dict.fromkeys(k.lower() for k in keywords))
        """The combo-squatting keywords, as given."""
        self._keywords: tuple[str, ...] = tuple(
            dict.fromkeys(confusables.skeleton(k) for k in self.keywords)
        )

        by_skeleton: dict[str, list[_Target]] = defaultdict(list)
        by_label: dict[str, list[_Target]] = defaultdict(list)
        by_fold_deletion: dict[str, list[_Target]] = defaultdict(list)
        by_label_skeleton: dict[str, list[_Target]] = defaultdict(list)
        by_nosep: dict[str, list[_Target]] = defaultdict(list)
        brands_substring: dict[str, list[_Target]] = defaultdict(list)
        brands_token: dict[str, list[_Target]] = defaultdict(list)
        max_labels = 2
        for t in self._targets:
            for sk in t.skeletons:
                by_skeleton[sk].append(t)
                max_labels = max(max_labels, sk.count(".") + 1)
            if len(t.label) >= MIN_OTHER_SUFFIX_LENGTH:
                by_label[t.label].append(t)
            keys: set[str] = set()
            for f in t.label_folds:
                if len(f) < MIN_FOLD_MATCH_LENGTH:
                    continue
                keys.add(f)
                if len(f) >= MIN_EDIT_DISTANCE_LENGTH:
                    keys.update(_deletions(f))
            for key in keys:
                by_fold_deletion[key].append(t)
            if len(t.label) >= MIN_EMBEDDED_LENGTH:
                by_label_skeleton[t.spelt_skeletons[0]].append(t)
            for sk in t.label_skeletons:
                if len(sk) >= MIN_COMBO_BRAND_LENGTH:
                    brands_substring[sk].append(t)
                if len(sk) >= MIN_COMBO_TOKEN_BRAND_LENGTH:
                    brands_token[sk].append(t)
            if len(t.label) >= MIN_NO_SEPARATOR_EMBEDDED_LENGTH:
                for sk in t.nosep_skeletons:
                    by_nosep[sk].append(t)

        # Targets were visited in domain order and each is added to a key at most once, so every
        # bucket is already sorted and free of duplicates.
        self._by_skeleton = {k: tuple(v) for k, v in by_skeleton.items()}
        self._by_label = {k: tuple(v) for k, v in by_label.items()}
        self._by_fold_deletion = {k: tuple(v) for k, v in by_fold_deletion.items()}
        self._by_label_skeleton = {k: tuple(v) for k, v in by_label_skeleton.items()}
        self._by_nosep = {k: tuple(v) for k, v in by_nosep.items()}
        self._brands_substring = {k: tuple(v) for k, v in brands_substring.items()}
        self._brands_token = {k: tuple(v) for k, v in brands_token.items()}
        self._brand_lengths = tuple(sorted({len(k) for k in self._brands_substring}))
        self._max_skeleton_labels = max_labels

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

    def protected_parent(self, host: str, extra: str | None = None) -> str | None:
        """The protected domain ``host`` (A-label) is or is a subdomain of, or None.

        ``extra`` is one more protected registrable domain for this question (the server's).
        """
        labels = host.rstrip(".").lower().split(".")
        for i in range(len(labels)):
            parent = ".".join(labels[i:])
            if parent in self._domains or parent == extra:
                return parent
        return None

    def similar_protected_domain(self, host_unicode: str, extra: str | None = None) -> str | None:
        """The protected domain whose skeleton ``host_unicode`` (or a parent of it) shares.

        None when there is none, or when the host is that domain or a subdomain of it.
        Implements :class:`urlvet.confusables.TopDomainMatcher` (use :meth:`matcher` to bind
        ``extra``).
        """
        extra_target = self._extra_target(extra)
        for target in self._skeleton_matches(host_unicode.lower(), extra_target):
            if host_unicode == target.unicode or host_unicode.endswith("." + target.unicode):
                return None
            return target.domain
        return None

    def lookup_skeleton(self, skeleton: str, separators_removed: bool = False) -> tuple[str, ...]:
        """The protected domains with this whole-domain skeleton (``google.corn``), or, with
        ``separators_removed``, this skeleton of the domain without dots and hyphens
        (``googlecorn``)."""
        table = self._by_nosep if separators_removed else self._by_skeleton
        return tuple(t.domain for t in table.get(skeleton, ()))

    def matcher(self, extra: str | None = None) -> confusables.TopDomainMatcher:
        """This index with ``extra`` protected as well, as a display-safety top-domain matcher."""
        return _BoundMatcher(self, extra)

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
            _registrable_or_none(extra),
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
            _registrable_or_none(extra),
        )

    # -- matching --------------------------------------------------------------------------------

    def _extra_target(self, extra: str | None) -> _Target | None:
        if not extra or extra in self._domains:
            return None
        try:
            return self._target_for(extra)
        except PolicyError:
            return None

    def _skeleton_matches(self, host_unicode: str, extra: _Target | None) -> list[_Target]:
        found: list[_Target] = []
        for sk in confusables.skeletons(host_unicode):
            labels = sk.split(".")
            top = min(len(labels), self._max_skeleton_labels)
            for n in range(2, top + 1):
                key = ".".join(labels[-n:])
                found.extend(self._by_skeleton.get(key, ()))
                if extra is not None and key in extra.skeletons:
                    found.append(extra)
        return list(dict.fromkeys(found))

    def _analyze(
        self,
        host: str,
        host_unicode: str,
        registrable: str | None,
        suffix: str | None,
        extra_domain: str | None,
    ) -> LookalikeReport:
        protected = self.protected_parent(host, extra_domain)
        if protected is not None:
            return LookalikeReport(host=host, protected=protected)
        extra = self._extra_target(extra_domain)
        matches: list[LookalikeMatch] = []
        # Brands (protected labels) already explained by a stronger technique: one finding per
        # brand, in the order homoglyph, near miss / other suffix, embedding, combo.
        brands: set[str] = set()

        for t in self._skeleton_matches(host_unicode, extra):
            if t.label in brands:
                continue
            brands.add(t.label)
            matches.append(LookalikeMatch(MatchKind.HOMOGLYPH, t.domain, "same-skeleton"))

        label = None
        if registrable is not None and suffix is not None:
            label_ascii = _label_of(registrable, suffix)
            label = to_unicode(label_ascii).lower()
            matches.extend(self._other_suffix(label, suffix, extra, brands))
            matches.extend(self._near_miss(label, label_ascii, registrable, suffix, extra, brands))
        matches.extend(self._embedded(host_unicode, label, suffix, extra, brands))
        if label is not None and suffix is not None:
            matches.extend(self._combo(label, suffix, extra, brands))

        order = list(MatchKind)
        matches.sort(key=lambda m: (order.index(m.kind), m.target))
        return LookalikeReport(host=host, protected=None, matches=tuple(matches))

    def _other_suffix(
        self, label: str, suffix: str, extra: _Target | None, brands: set[str]
    ) -> list[LookalikeMatch]:
        if label in brands or len(label) < MIN_OTHER_SUFFIX_LENGTH:
            return []
        same_name = [t for t in self._by_label.get(label, ()) if t.suffix != suffix]
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

    def _near_miss(
        self,
        label: str,
        label_ascii: str,
        registrable: str,
        suffix: str,
        extra: _Target | None,
        brands: set[str],
    ) -> list[LookalikeMatch]:
        # protected label -> (technique, query form, protected form, targets with that label)
        found: dict[str, tuple[str, str, str, list[_Target]]] = {}
        queries = {f for sk in confusables.skeletons(label) for f in folds(sk)}
        for query in sorted(queries):
            if len(query) < MIN_FOLD_MATCH_LENGTH:
                continue
            targets: list[_Target] = list(self._by_fold_deletion.get(query, ()))
            if len(query) >= MIN_EDIT_DISTANCE_LENGTH:
                for d in _deletions(query):
                    targets.extend(self._by_fold_deletion.get(d, ()))
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
        self,
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
        out: list[LookalikeMatch] = []
        n = len(tokens)
        for i in range(n):
            candidates: list[tuple[_Target, str]] = []
            for sk in skel[i]:
                candidates.extend((t, "dotted") for t in self._by_label_skeleton.get(sk, ()))
                candidates.extend((t, "glued") for t in self._by_nosep.get(sk, ()))
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

    def _combo(
        self, label: str, suffix: str, extra: _Target | None, brands: set[str]
    ) -> list[LookalikeMatch]:
        out: list[LookalikeMatch] = []
        for sk in sorted(confusables.skeletons(label)):
            present = [k for k in self._keywords if k in sk]
            if not present:
                continue
            hits: list[tuple[int, str, tuple[_Target, ...]]] = []
            for length in self._brand_lengths:
                if length >= len(sk):
                    break
                for i in range(len(sk) - length + 1):
                    hit = self._brands_substring.get(sk[i : i + length])
                    if hit:
                        hits.append((i, sk[i : i + length], hit))
            pos = 0
            for token in sk.split("-"):
                hit = self._brands_token.get(token)
                if hit and token != sk:
                    hits.append((pos, token, hit))
                pos += len(token) + 1
            if extra is not None:
                for bsk in extra.label_skeletons:
                    i = sk.find(bsk)
                    if i >= 0 and bsk != sk and len(bsk) >= MIN_COMBO_TOKEN_BRAND_LENGTH:
                        hits.append((i, bsk, (extra,)))
            for start, brand, targets in hits:
                if brand in self._keywords:
                    continue  # login.gov is a brand, but "login" is what every combo contains
                target = _prefer_suffix(targets, suffix)
                if target.label in brands:
                    continue
                keyword = _keyword_beside(sk, start, brand, present)
                if keyword is None:
                    continue
                brands.add(target.label)
                out.append(
                    LookalikeMatch(
                        MatchKind.COMBO,
                        target.domain,
                        "brand-and-keyword",
                        None,
                        {"brand": target.label, "keyword": keyword},
                    )
                )
        return out


def _keyword_beside(text: str, start: int, brand: str, keywords: list[str]) -> str | None:
    """A keyword occurring in ``text`` apart from the brand at ``start`` (no overlap, neither
    contains the other), or None."""
    end = start + len(brand)
    for kw in keywords:
        if kw in brand or brand in kw:
            continue
        pos = text.find(kw)
        while pos >= 0:
            if pos + len(kw) <= start or pos >= end:
                return kw
            pos = text.find(kw, pos + 1)
    return None


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
    domains: Iterable[str], keywords: Iterable[str] = DEFAULT_KEYWORDS
) -> LookalikeIndex:
    """Compile protected domains (registrable domains, A- or U-label) into an index.

    A subdomain in the list protects its whole registrable domain. Raises
    :class:`~urlvet.errors.PolicyError` naming an entry that is not a usable domain.
    """
    return LookalikeIndex(domains, keywords)


_DATA_PACKAGE = "urlvet.data"
_DATA_FILE = "protected_domains.txt"


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
    """The index of the shipped protected domains, built on first use and then shared."""
    return build_index(default_protected_domains())


@cache
def index_for_policy(extra_domains: tuple[str, ...], use_default: bool = True) -> LookalikeIndex:
    """The index a policy needs: its own protected domains, plus the shipped list by default.

    Cached per argument tuple, so policies that differ elsewhere share one index. With no
    domains at all the index is empty (the rules then find nothing), never the default.
    """
    if not extra_domains:
        return default_index() if use_default else build_index(())
    base = default_protected_domains() if use_default else ()
    return build_index((*base, *extra_domains))


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


def import_ranking_csv(path: str | Path, top: int) -> list[str]:
    """The first ``top`` registrable domains of a ranking CSV (``rank,domain`` as Tranco and
    CrUX publish).

    Rows are read in rank order; hosts are reduced to their registrable domain and duplicates
    dropped, so the result may draw on more than ``top`` rows. A header row, blank lines and
    rows whose domain is not a usable name are skipped. Raises
    :class:`~urlvet.errors.InputError` when the file cannot be read or has no usable row.
    """
    if top <= 0:
        raise InputError(f"top must be a positive number of domains, got {top}")
    p = Path(path)
    rows: list[tuple[int, int, str]] = []
    try:
        with p.open(encoding="utf-8", newline="") as handle:
            for lineno, row in enumerate(csv.reader(handle), start=1):
                if len(row) < 2:
                    continue
                rank_text, name = row[0].strip(), row[1].strip()
                if not rank_text.isdigit():
                    continue  # header ("rank,domain") or a comment line
                rows.append((int(rank_text), lineno, name))
    except OSError as exc:
        raise InputError(f"{p}: cannot read the ranking: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{p}: not a rank,domain CSV file: {exc}") from exc
    rows.sort()
    out: dict[str, None] = {}
    for _rank, _lineno, name in rows:
        try:
            _host, registrable, _suffix = _ascii_host(name)
        except PolicyError:
            continue
        if registrable is None:
            continue
        out.setdefault(registrable)
        if len(out) >= top:
            break
    if not out:
        raise InputError(f"{p}: no rank,domain rows with a usable domain name")
    return list(out)


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
