"""Lookalikes of more than one step: ``nn1crosoft`` is ``microsoft`` with ``m`` written ``nn``
and ``i`` written ``1``; ``gitlhub`` is ``github`` with a letter slipped in.

A name is folded the way a reader's eye folds it (digits and letters that pass for others, and
letter pairs that pass for one letter: ``rn`` and ``nn`` for ``m``, ``vv`` for ``w``, ``cl``
for ``d``), and compared with the folded names of the protected brands, allowing one more edit
(an insertion, a deletion, a substitution or a swap). Pure and offline.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from urlvet.lookalike import edit_distance_at_most_one, has_one_character_swap
from urlvet.lookalike.spelling import ascii_translation

__all__ = ["StepIndex", "fold_letters", "fold_pairs"]

_LETTERS = ascii_translation({"0": "o", "1": "l", "i": "l", "3": "e", "5": "s", "q": "g", "|": "l"})
_PAIRS = (("rn", "m"), ("nn", "m"), ("vv", "w"), ("cl", "d"))

MIN_NAME = 5
"""Brand names shorter than this are left to the near-miss rule: two steps from a short name
reach too many real words."""
SLIPPED_LETTER_MIN = 6
"""A name this long or longer is matched in a subdomain label with one letter slipped in
(``gitlhub``)."""
LETTER_EDIT_MIN = 7
"""A name folded letter by letter must be this long to allow one more edit (``rnicrosofft``);
``kirana`` is ``klarna`` folded and swapped, a real word."""
PAIR_EXACT_MIN = 6
"""A name folded with a letter pair must be this long to match exactly (``anneli`` folds to
``ameli``)."""
PAIR_EDIT_MIN = 7
"""A name folded with a letter pair must be this long to allow one more edit (``cannon`` is
``canon`` with ``nn`` folded and a letter dropped: a real word)."""


def fold_letters(text: str) -> str:
    """``text`` with each digit or letter that passes for another replaced by it."""
    return text.translate(_LETTERS)


def fold_pairs(text: str) -> str:
    """The letter pairs that pass for one letter replaced by it, then :func:`fold_letters`
    (pairs first: the ``cl`` of ``circle`` is no ``d``, although ``i`` folds to ``l``)."""
    return fold_letters(_single_letters(text))


def _single_letters(text: str) -> str:
    """``text`` with each letter pair that passes for one letter replaced by it."""
    out = text
    for pair, letter in _PAIRS:
        out = out.replace(pair, letter)
    return out


def _within_one(a: str, b: str) -> bool:
    return edit_distance_at_most_one(a, b) or has_one_character_swap(a, b)


def _deletions(text: str) -> set[str]:
    return {text[:i] + text[i + 1 :] for i in range(len(text))}


@dataclass(frozen=True, slots=True)
class StepMatch:
    """A word that is a brand's name reached in more than one step."""

    word: str
    """The word as written in the host."""
    name: str
    """The brand name it imitates."""
    folded: str
    """The word as the eye folds it."""


class StepIndex:
    """The brand names, folded, by themselves and by each one-letter deletion."""

    __slots__ = ("_heads", "_keys", "_longest", "_names", "_tails")

    def __init__(self, names: Iterable[str]) -> None:
        self._names = frozenset(n for n in names if len(n) >= MIN_NAME and n.isascii())
        self._longest = max((len(n) for n in self._names), default=0)
        self._keys: dict[str, set[str]] = {}
        for name in self._names:
            for folded in {fold_letters(name), fold_pairs(name)}:
                for key in {folded} | _deletions(folded):
                    self._keys.setdefault(key, set()).add(name)
        # A deletion of a word keeps the word's head or its tail (see _keys_of): each key's
        # length with its first half, and with the rest, tells which deletions may be keys.
        self._heads = frozenset((len(k), k[: len(k) // 2]) for k in self._keys)
        self._tails = frozenset((len(k), k[len(k) // 2 :]) for k in self._keys)

    def _keys_of(self, folded: str) -> list[str]:
        """The keys among ``folded`` and its one-letter deletions.

        Deleting the letter at ``i`` keeps the first ``i`` letters and shifts the rest: a key
        of length ``m`` equal to one keeps the word's first ``m // 2`` letters when ``i`` is
        past them, else the word's letters after ``m // 2``. Only the deletions whose half
        some key shares are built; the others cannot be keys.
        """
        keys = self._keys
        found = [folded] if folded in keys else []
        size = len(folded)
        m = size - 1
        half = m // 2
        first = half if (m, folded[:half]) in self._heads else size
        last = half if (m, folded[half + 1 :]) in self._tails else 0
        for i in range(size):
            if i >= first or i < last:
                key = folded[:i] + folded[i + 1 :]
                if key in keys:
                    found.append(key)
        return found

    def match(
        self, word: str, whole_label: bool = True, subdomain: bool = False
    ) -> StepMatch | None:
        """The brand name ``word`` imitates in more than one step, or None.

        ``word`` itself a listed name is no match; nor is one plain edit from a name in the
        site's own label (UV303's), though a letter slipped into a long name in a subdomain
        label is (``gitlhub.com.example.net``: UV303 reads the site only). A word that is a
        part of a label (``nnicrosoft`` in ``nnicrosoft-login``) must fold to the name
        exactly: parts are often ordinary words one edit from some brand.
        """
        if not MIN_NAME <= len(word) <= self._longest + 1 or word in self._names:
            return None
        if not word.isascii():
            return None
        letters = fold_letters(word)
        singles = _single_letters(word)
        # fold_pairs(word), folded again only when a pair was replaced.
        paired = letters if singles == word else fold_letters(singles)
        # Without a letter pair in the word the two foldings agree: look once.
        variants = ((letters, False),) if letters == paired else ((letters, False), (paired, True))
        for folded, pairs in variants:
            keys = self._keys_of(folded)
            if not keys:
                continue  # most words: no name to compare
            candidates: set[str] = set()
            for key in keys:
                candidates |= self._keys[key]
            for name in sorted(candidates):
                if _accepts(word, folded, name, pairs, whole_label, subdomain):
                    return StepMatch(word, name, folded)
        return None


def _accepts(
    word: str, folded: str, name: str, pairs: bool, whole_label: bool, subdomain: bool
) -> bool:
    if _within_one(word, name):
        return subdomain and whole_label and len(word) > len(name) >= SLIPPED_LETTER_MIN
    target = fold_pairs(name) if pairs else fold_letters(name)
    if folded == target:
        return not pairs or fold_letters(word) == fold_letters(name) or len(name) >= PAIR_EXACT_MIN
    if not whole_label or not _within_one(folded, target):
        return False
    return len(name) >= (PAIR_EDIT_MIN if pairs else LETTER_EDIT_MIN)
