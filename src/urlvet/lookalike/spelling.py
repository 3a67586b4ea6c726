"""Lookalike spellings: the folds of a skeleton (``0``->``o``, ``rn``->``m``...), the folding of
a label for brand search, one-edit comparisons and the classes of near misses that browsers
treat as likely false positives."""

from __future__ import annotations

import re

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


def ascii_translation(mapping: dict[str, str]) -> dict[int, str]:
    """A ``str.translate`` table for ``mapping`` that holds every ASCII character, those it
    does not map as themselves: the same translation, two to three times faster on ASCII
    text (a table without a character costs a failed look-up, an exception caught, for each
    one the text holds)."""
    table = {code: chr(code) for code in range(128)}
    table.update(str.maketrans(mapping))
    return table


_TOKEN_SPLIT = re.compile(r"[.\-]+")
_TOKEN = re.compile(r"[^.\-]+")

# Folds applied to a skeleton (which already maps 1/I->l and 0->O, and m->rn, which we undo so
# that an inserted or replaced "m" costs one edit, not two). The light fold keeps letters that
# a typo may also produce (paypcl.com is one substitution from paypal.com); the heavy fold merges
# the letters and pairs that homoglyph squatters swap (qooqle, vvikipedia, c1oudflare).
_HEAVY_PAIRS = (("vv", "w"), ("cl", "d"))
_HEAVY_CHARS = ascii_translation({"i": "l", "q": "g"})


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


_QUICK_CHARS = ascii_translation(_SPELLING_CHARS)


def _quick_fold(text: str) -> str:
    """:func:`fold_spelling`'s folded string, without the positions (the same string, faster:
    the pairs share no letter, so replacing them one after another scans as it does)."""
    for pair, single in _SPELLING_PAIRS.items():
        if pair in text:
            text = text.replace(pair, single)
    return text.translate(_QUICK_CHARS)
