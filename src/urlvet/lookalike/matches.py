"""What the lookalike index reports: the technique (:class:`MatchKind`), one imitated protected
domain (:class:`LookalikeMatch`) and everything found about one host (:class:`LookalikeReport`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum


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


# The order of a report's matches: by technique as MatchKind lists them, then by target.
_KIND_ORDER = {kind: i for i, kind in enumerate(MatchKind)}
