"""The protected domains compiled for matching: one ``_Target`` per domain, with its skeletons
and folds precomputed, and the hash tables (``_Tables``) the techniques look them up in."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from urlvet import confusables
from urlvet.errors import PolicyError
from urlvet.lookalike.spelling import _TOKEN_SPLIT, _folded, _quick_fold, folds
from urlvet.lookalike.words import (
    COMMON_WORD_BRANDS,
    MIN_COMBO_BRAND_LENGTH,
    MIN_COMBO_KEYWORD_TOKEN_LENGTH,
    MIN_EDIT_DISTANCE_LENGTH,
    MIN_EMBEDDED_LENGTH,
    MIN_FOLD_MATCH_LENGTH,
    MIN_NO_SEPARATOR_EMBEDDED_LENGTH,
    MIN_OTHER_SUFFIX_LENGTH,
)
from urlvet.url import (
    HostKind,
    InvalidURL,
    parse,
    site_of,
    to_unicode,
)


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


def _prefer_suffix(targets: tuple[_Target, ...], suffix: str) -> _Target:
    for t in targets:
        if t.suffix == suffix:
            return t
    for t in targets:
        if t.suffix == "com":
            return t
    return targets[0]
