"""The techniques that find a protected brand as a word of a host: combo squatting (a brand
beside a sign-in or payment word in the registrable label) and brand labels (a brand as a
label left of another site, with a second signal). Lookalike spellings are folded first."""

from __future__ import annotations

import re

from urlvet import confusables
from urlvet.lookalike.matches import LookalikeMatch, MatchKind
from urlvet.lookalike.spelling import _quick_fold, fold_spelling
from urlvet.lookalike.targets import _each, _prefer_suffix, _Tables, _Target
from urlvet.lookalike.words import (
    ACCOUNT_NAMESPACE_SUFFIXES,
    COMMON_WORD_BRANDS,
    MAX_BRAND_AND_WORD_OTHER,
    MIN_COMBO_KEYWORD_TOKEN_LENGTH,
    MIN_COMBO_TOKEN_BRAND_LENGTH,
    SHORT_KEYWORD_LENGTH,
)


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


def _unexplained(
    sp: _Spelling,
    start: int,
    end: int,
    targets: tuple[_Target, ...],
    suffix: str,
    brands: set[str],
) -> tuple[_Target, str, bool] | None:
    """The target a brand at ``[start, end)`` of a label names (the host's suffix preferred),
    the brand as written there and whether that spelling differs from the brand's (spelt to
    deceive); None when a stronger technique explained the brand already."""
    target = _prefer_suffix(targets, suffix)
    if target.label in brands:
        return None
    spelt = sp.original(start, end)
    return target, spelt, _is_spelt_differently(spelt, target)


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
    hits = _combo_hits(tables, sp, present, extra)
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
        unexplained = _unexplained(sp, start, end, targets, suffix, brands)
        if unexplained is None:
            continue
        target, spelt, lookalike = unexplained
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


_Hit = tuple[int, int, tuple[_Target, ...]]
"""Where a brand stands in a folded label (start, end) and the targets it names."""


def _combo_hits(
    tables: _Tables, sp: _Spelling, present: list[str], extra: _Target | None
) -> list[_Hit]:
    """Where a brand may stand in the folded label: inside a word when a keyword is present
    (brands that are not ordinary words), as a hyphen-separated word of it, glued to a
    keyword, and the server's own brand anywhere."""
    text = sp.folded
    hits: list[_Hit] = []
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
    return hits


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
        whole = _brand_targets(tables, text, extra, inside_word=False)
        if any(t.label in brands for t in whole):
            continue  # a protected name already reported (an embedded okta-emea.com)
        for start, end, glued in _label_candidates(tables, sp, whole_is_brand=bool(whole)):
            key = text[start:end]
            if len(key) < MIN_COMBO_TOKEN_BRAND_LENGTH or key in tables.keywords:
                continue
            targets = _brand_targets(tables, key, extra, inside_word=False)
            if not targets:
                continue
            unexplained = _unexplained(sp, start, end, targets, suffix, brands)
            if unexplained is None:
                continue
            target, spelt, lookalike = unexplained
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


def _label_candidates(
    tables: _Tables, sp: _Spelling, *, whole_is_brand: bool
) -> list[tuple[int, int, str | None]]:
    """Where a brand may stand in a label left of the site, with the keyword glued to it: the
    whole label; unless that is a brand, each hyphen-separated word, and each word less a
    keyword it starts or ends with (``appleid``)."""
    text = sp.folded
    candidates: list[tuple[int, int, str | None]] = [(0, len(text), None)]
    if whole_is_brand:
        return candidates
    present = _keywords_in(tables, text)
    for a, b in sp.tokens():
        if (a, b) != (0, len(text)):
            candidates.append((a, b, None))
        token = text[a:b]
        for kw in present:
            if len(token) > len(kw) and token.startswith(kw):
                candidates.append((a + len(kw), b, kw))
            elif len(token) > len(kw) and token.endswith(kw):
                candidates.append((a, b - len(kw), kw))
    return candidates
