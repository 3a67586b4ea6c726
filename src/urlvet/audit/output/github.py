"""GitHub Actions workflow-command annotations: one per URL that warns or blocks.

``::error file=urls.txt,line=3,col=1,title=UV201 non-public-address-literal::message``.
The message lists every finding of the URL; the URL's secrets are redacted, since workflow
logs are widely readable. Values are escaped as the runner expects: ``%``, CR and LF in the
message, and also ``:`` and ``,`` in properties. Findings the baseline accepts are not
annotated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from urlvet.audit.output.base import RunInfo
from urlvet.audit.output.record import Record
from urlvet.findings import Decision
from urlvet.text import printable

if TYPE_CHECKING:
    from urlvet.audit.report import Summary
    from urlvet.audit.sources import Diagnostic, Occurrence

_COMMANDS = {"block": "error", "warn": "warning"}


def escape_data(text: str) -> str:
    """Escape a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


class GithubWriter:
    """Streams one annotation per occurrence that warns or blocks."""

    def __init__(self, stream: TextIO, info: RunInfo) -> None:
        self.stream = stream
        self.info = info
        # Keyed by the record itself (immutable, compared by value): an annotation depends
        # on nothing else when no finding is accepted.
        self._messages: dict[Record, tuple[str, str, str]] = {}

    def start(self) -> None:
        """Nothing to write first."""

    def _parts(self, record: Record, accepted: frozenset[str]) -> tuple[str, str, str] | None:
        if not accepted:
            cached = self._messages.get(record)
            if cached is not None:
                return cached
        findings = [f for f in record.findings if f.code not in accepted]
        top = max((f.severity.rank for f in findings), default=-1)
        decision = self.info.level(top)
        command = _COMMANDS.get(decision)
        if command is None:
            return None
        first = findings[0]
        title = escape_property(f"{first.code} {first.name}")
        lines = [f"{decision.upper()}: {printable(record.url)}"]
        lines += [f"{f.code} {f.name} [{f.severity.value}]: {f.message}" for f in findings]
        parts = (command, title, escape_data("\n".join(lines)))
        if not accepted:
            if len(self._messages) > 4096:
                self._messages.clear()
            self._messages[record] = parts
        return parts

    def occurrence(self, occ: Occurrence, record: Record, accepted: frozenset[str]) -> None:
        """One annotation, if the URL warns or blocks."""
        if record.decision is Decision.ALLOW:
            return
        parts = self._parts(record, accepted)
        if parts is None:
            return
        command, title, message = parts
        self.stream.write(
            f"::{command} file={escape_property(occ.path)},line={occ.line},"
            f"col={occ.column},title={title}::{message}\n"
        )

    def diagnostic(self, diag: Diagnostic) -> None:
        """An annotation for an input problem."""
        command = "error" if diag.level == "error" else "warning"
        where = f"file={escape_property(diag.path)}"
        if diag.line is not None:
            where += f",line={diag.line}"
            if diag.column is not None:
                where += f",col={diag.column}"
        title = escape_property(f"urlvet input: {diag.code}")
        self.stream.write(f"::{command} {where},title={title}::{escape_data(diag.message)}\n")

    def finish(self, summary: Summary) -> None:
        """A notice with the counts."""
        d = summary.by_decision
        self.stream.write(
            escape_notice(
                f"urlvet audit: {summary.urls:,} URLs: {d.get('block', 0):,} block, "
                f"{d.get('warn', 0):,} warn, {d.get('allow', 0):,} allow; "
                f"{summary.failing:,} fail the run"
            )
        )


def escape_notice(text: str) -> str:
    """A ::notice:: command line."""
    return f"::notice title=urlvet::{escape_data(text)}\n"
