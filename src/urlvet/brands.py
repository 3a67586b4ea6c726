"""Brands by their other names: the product names and aliases phishing writes instead of a
brand's own name, read from ``data/brand_names.txt`` (each line names its source).

``office365-mailbox-verify.com`` names no protected domain, but every reader sees Microsoft in
it. The data says which names belong to which brand and which domains are the brand's own; the
functions here find those names among the words of a host or a path. Pure and offline.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

__all__ = ["BrandNames", "BrandWord", "brand_names", "find_brand", "words_of"]

_DATA_FILE = "brand_names.txt"
_WORD_SPLIT = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True, slots=True)
class BrandWord:
    """A brand's name found in some text."""

    brand: str
    """The brand (``microsoft``)."""
    name: str
    """The name as listed (``office365``)."""
    word: str
    """The word it was found in (``office365``, or ``teamsmeeting`` when glued to a lure)."""
    lure: str | None
    """The sign-in or lure word beside it, or None."""


@dataclass(frozen=True, slots=True)
class BrandNames:
    """The names of every brand, its own domains, and the lure words."""

    names: dict[str, str]
    """A name that means its brand alone (``onedrive`` -> microsoft)."""
    short: dict[str, str]
    """A name that is also an ordinary word (``teams``, ``square``): it counts only beside a
    lure word."""
    domains: dict[str, frozenset[str]]
    """Brand -> its own registrable domains."""
    lures: frozenset[str]
    """Words phishing puts beside a brand (with the shipped phishing keywords)."""
    glue_ends: tuple[_GlueEnds, _GlueEnds] = field(init=False, repr=False, compare=False)
    """For :attr:`names` and :attr:`short`: how a word glued of one of them and a lure word
    begins and ends (see :func:`_glued`), computed from the table."""

    def __post_init__(self) -> None:
        ends = (_glue_ends(self.names, self.lures), _glue_ends(self.short, self.lures))
        object.__setattr__(self, "glue_ends", ends)

    def owner_of(self, host: str) -> str | None:
        """The brand whose own domain ``host`` is, or is under, or None."""
        name = host.rstrip(".").lower()
        for brand, domains in self.domains.items():
            for domain in domains:
                if name == domain or name.endswith("." + domain):
                    return brand
        return None


GLUED_HEAD = 3
"""The shortest part that begins a glued word (``_glued`` cuts after the third letter)."""
GLUED_TAIL = 2
"""The shortest part that ends one (and cuts before the last two letters)."""


@dataclass(frozen=True, slots=True)
class _GlueEnds:
    """How the parts of a glued word begin and end: the first :data:`GLUED_HEAD` letters of
    the names and lure words that can begin one, the last :data:`GLUED_TAIL` of those that can
    end one. A word that begins or ends otherwise is glued of none of them, and its cuts need
    not be tried."""

    name_heads: frozenset[str]
    name_tails: frozenset[str]
    lure_heads: frozenset[str]
    lure_tails: frozenset[str]

    def may_join(self, head: str, tail: str) -> bool:
        """Whether a word that begins with ``head`` and ends with ``tail`` may be a name
        glued to a lure word, either way round."""
        return (head in self.name_heads and tail in self.lure_tails) or (
            head in self.lure_heads and tail in self.name_tails
        )


def _glue_ends(names: dict[str, str], lures: frozenset[str]) -> _GlueEnds:
    def heads(words: Iterable[str]) -> frozenset[str]:
        return frozenset(w[:GLUED_HEAD] for w in words if len(w) >= GLUED_HEAD)

    def tails(words: Iterable[str]) -> frozenset[str]:
        return frozenset(w[-GLUED_TAIL:] for w in words if len(w) >= GLUED_TAIL)

    return _GlueEnds(heads(names), tails(names), heads(lures), tails(lures))


def _family(brand: str) -> str:
    # "microsoft-short" lists the short names of "microsoft".
    return brand.removesuffix("-short")


def parse_brand_names(text: str, keywords: tuple[str, ...]) -> BrandNames:
    """The brand table from the text of ``brand_names.txt`` and the phishing keywords."""
    names: dict[str, str] = {}
    short: dict[str, str] = {}
    domains: dict[str, set[str]] = {}
    lures: set[str] = {k for k in keywords if "-" not in k}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        brand, owned, listed, _source = (part.strip() for part in line.split("|", 3))
        if brand == "lure":
            lures.update(listed.split())
            continue
        family = _family(brand)
        domains.setdefault(family, set()).update(owned.split())
        if listed.startswith("short:"):
            short.update(dict.fromkeys(listed.removeprefix("short:").split(), family))
        else:
            names.update(dict.fromkeys(listed.split(), family))
    return BrandNames(names, short, {b: frozenset(d) for b, d in domains.items()}, frozenset(lures))


@cache
def brand_names() -> BrandNames:
    """The shipped brand table."""
    from urlvet.lookalike import DEFAULT_KEYWORDS

    text = resources.files("urlvet.data").joinpath(_DATA_FILE).read_text(encoding="utf-8")
    return parse_brand_names(text, DEFAULT_KEYWORDS)


def words_of(text: str) -> list[str]:
    """The lower-case words of ``text`` (runs of letters and digits)."""
    lowered = text.lower()
    if lowered.isascii() and lowered.isalnum():
        return [lowered]  # one word, as most labels of a host are: no pattern to run
    return [w for w in _WORD_SPLIT.split(lowered) if w]


def _glued(word: str, table: BrandNames) -> tuple[str, str] | None:
    """(name, lure) when ``word`` is a name glued to a lure word (``teamsmeeting``,
    ``azureportal``, ``loginoffice365``)."""
    begins, ends_with = word[:GLUED_HEAD], word[-GLUED_TAIL:]
    for names, ends in zip((table.names, table.short), table.glue_ends, strict=True):
        if not ends.may_join(begins, ends_with):
            continue
        for cut in range(GLUED_HEAD, len(word) - 1):
            head, tail = word[:cut], word[cut:]
            if head in names and tail in table.lures:
                return head, tail
            if tail in names and head in table.lures:
                return tail, head
    return None


def find_brand(words: list[str], table: BrandNames, *, need_lure: bool) -> BrandWord | None:
    """The first brand name among ``words``, with a lure word beside it when there is one.

    A listed name counts as a whole word, or glued to a lure word; a short name (an ordinary
    word too) only with a lure word among ``words``. With ``need_lure``, a name without one
    does not count.
    """
    found: BrandWord | None = None
    lures = [w for w in words if w in table.lures]
    for word in words:
        # The lure is another word than the name (``docs`` is both a lure and a short name).
        lure = next((w for w in lures if w != word), None) if lures else None
        brand = table.names.get(word)
        if brand is not None:
            if lure is not None:
                return BrandWord(brand, word, word, lure)
            found = found or BrandWord(brand, word, word, None)
            continue
        if lure is not None and word in table.short:
            return BrandWord(table.short[word], word, word, lure)
        if len(word) > 5:
            glued = _glued(word, table)
            # A short name glued to a lure needs another lure beside it: `squaregift.com`,
            # `shareoffice.ch` are real, `teamsmeeting-invite.com` is not.
            if glued is not None and (glued[0] in table.names or lure is not None):
                name = glued[0]
                brand = table.names.get(name) or table.short[name]
                return BrandWord(brand, name, word, glued[1])
    if need_lure:
        return None
    return found
