"""What every writer needs to know about the run, and small shared helpers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import quote

from urlvet.checks.base import Rule


@dataclass(frozen=True, slots=True)
class RunInfo:
    """The run's fixed facts, known before the first occurrence."""

    rules: tuple[Rule, ...]
    """The rules the policy runs, in code order (SARIF lists them up front)."""
    warn_at: int
    """The severity rank from which a finding warns."""
    block_at: int
    """The severity rank from which a finding blocks."""
    version: str = "0"
    """urlvet's version."""
    colour: bool = False
    """Colour for a terminal (text only)."""
    baseline: bool = False
    """A baseline is in use (writers show which findings it accepts)."""
    redacted: bool = True
    """Secrets in URLs and messages are redacted."""

    def level(self, severity_rank: int) -> str:
        """The decision one finding of this severity alone leads to: block, warn or allow."""
        if severity_rank >= self.block_at:
            return "block"
        if severity_rank >= self.warn_at:
            return "warn"
        return "allow"


def artifact_uri(name: str) -> tuple[str, bool]:
    """(URI, relative?) for a source name: a relative path is percent-encoded for use with a
    uriBaseId; an absolute one becomes a file: URI."""
    if name.startswith("/"):
        return "file://" + quote(name), False
    return quote(PurePosixPath(name).as_posix()), True
