"""The techniques that compare a host with a protected domain spelt out: the same name under
another suffix, near misses (one edit, a ``www`` glued on, a label cut by dots) and a protected
domain embedded in the host.

Each adds the brands (protected labels) it explains to ``brands``, so that a later, weaker
technique does not report the same brand again."""

from __future__ import annotations

from collections.abc import Iterable

from urlvet import confusables
from urlvet.lookalike.matches import LookalikeMatch, MatchKind
from urlvet.lookalike.spelling import (
    _TOKEN,
    _deletions,
    _describe_edit,
    edit_distance_at_most_one,
    fold,
    folds,
    has_one_character_swap,
    likely_false_positive_reason,
)
from urlvet.lookalike.targets import _each, _prefer_suffix, _sorted_tuple, _Tables, _Target
from urlvet.lookalike.words import (
    ACCOUNT_NAMESPACE_SUFFIXES,
    MIN_EDIT_DISTANCE_LENGTH,
    MIN_EMBEDDED_LENGTH,
    MIN_FOLD_MATCH_LENGTH,
    MIN_NO_SEPARATOR_EMBEDDED_LENGTH,
    MIN_OTHER_SUFFIX_LENGTH,
)


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
        for f in sorted(folds(sk)):
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
        # In a fixed order: the first fold found of a target is the one the evidence shows,
        # and a set's order changes from one process to the next.
        candidates = [(f, t) for t in dict.fromkeys(targets) for f in sorted(t.label_folds)]
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
        for sk in sorted(skel[i]):
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
