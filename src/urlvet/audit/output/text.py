"""The text report: URLs with findings grouped by URL, then summary tables by decision and rule.

Only what a person can read is kept: the first :data:`MAX_GROUPS` URLs that warn or block,
each with its first :data:`MAX_LOCATIONS` locations and a count of the rest, and the first
:data:`MAX_DIAGNOSTICS` input problems. Everything else is counters, so memory stays flat
however long the input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from urlvet.audit.output.base import RunInfo
from urlvet.audit.output.record import Record
from urlvet.findings import Decision
from urlvet.text import printable

if TYPE_CHECKING:
    from urlvet.audit.report import Summary
    from urlvet.audit.sources import Diagnostic, Occurrence

MAX_GROUPS = 1000
MAX_LOCATIONS = 5
MAX_DIAGNOSTICS = 100

_COLOURS = {"block": "31", "warn": "33", "allow": "32", "error": "31", "warning": "33"}


@dataclass(slots=True)
class _Group:
    record: Record
    locations: list[str] = field(default_factory=list)
    count: int = 0


class TextWriter:
    """Writes the grouped text report when the run ends."""

    def __init__(self, stream: TextIO, info: RunInfo) -> None:
        self.stream = stream
        self.info = info
        # By what the report shows of a record (its URL, server, decision and findings),
        # never by its identity: an audit hands out one record object per URL or many (cut
        # from a template, made in another process), and the count must not depend on that.
        self._groups: dict[tuple[object, ...], _Group] = {}
        self._dropped: dict[str, int] = {"block": 0, "warn": 0}
        self._diagnostics: list[Diagnostic] = []
        self._more_diagnostics = 0

    def start(self) -> None:
        """Nothing to write before the end."""

    def occurrence(self, occ: Occurrence, record: Record, accepted: frozenset[str]) -> None:
        """Remember a URL that warns or blocks (unless the baseline accepts all it found)."""
        if record.decision is Decision.ALLOW:
            return
        if accepted and all(f.code in accepted for f in record.findings):
            return
        key = (record.url, record.server, record.decision, record.findings)
        group = self._groups.get(key)
        if group is None:
            if len(self._groups) >= MAX_GROUPS:
                self._dropped[record.decision.value] += 1
                return
            group = self._groups[key] = _Group(record)
        group.count += 1
        if len(group.locations) < MAX_LOCATIONS:
            group.locations.append(f"{occ.path}:{occ.line}:{occ.column}")

    def diagnostic(self, diag: Diagnostic) -> None:
        """Remember an input problem."""
        if len(self._diagnostics) < MAX_DIAGNOSTICS:
            self._diagnostics.append(diag)
        else:
            self._more_diagnostics += 1

    def finish(self, summary: Summary) -> None:
        """Write the groups, the input problems and the summary tables."""
        out: list[str] = []
        groups = sorted(
            self._groups.values(), key=lambda g: -g.record.decision.rank
        )  # stable: first seen first within a decision
        for g in groups:
            out.extend(self._group(g))
            out.append("")
        dropped = sum(self._dropped.values())
        if dropped:
            out.append(
                f"… and {dropped:,} more URLs with findings, not listed "
                "(use --format jsonl for every occurrence)"
            )
            out.append("")
        if self._diagnostics:
            out.append(self._bold("Input not audited:"))
            for d in self._diagnostics:
                out.append(f"  {self._paint(d.level, d.level)}  {printable(str(d))}")
            if self._more_diagnostics:
                out.append(f"  … and {self._more_diagnostics:,} more")
            out.append("")
        out.extend(self._summary(summary))
        self.stream.write("\n".join(out) + "\n")

    def _group(self, g: _Group) -> list[str]:
        rec = g.record
        decision = rec.decision.value
        lines = [
            f"{self._paint(decision.upper().ljust(5), decision, bold=True)}  {printable(rec.url)}"
        ]
        if rec.href is not None and rec.href != rec.url:
            lines.append(f"       opens  {printable(rec.href)}")
        if rec.server:
            lines.append(f"       server {printable(rec.server)}")
        for f in rec.findings:
            lines.append(
                f"  {self._bold(f.code)} {f.name} [{f.severity.value}]: {printable(f.message, 500)}"
            )
        more = g.count - len(g.locations)
        at = ", ".join(g.locations) + (f" … and {more:,} more" if more > 0 else "")
        times = f" ({g.count:,} times)" if g.count > 1 else ""
        lines.append(f"  at {printable(at, 2000)}{times}")
        return lines

    def _summary(self, s: Summary) -> list[str]:
        files = f"{s.sources:,} file{'s' if s.sources != 1 else ''}"
        head = (
            f"urlvet audit: {s.urls:,} URLs in {files}, {s.lines:,} lines; "
            f"{s.vetted:,} vetted (distinct), {s.elapsed:.2f}s"
        )
        out = [self._bold(head), ""]
        width = max(8, *(len(f"{n:,}") for n in s.by_decision.values()))
        out.append(f"  {'decision':<10}{'URLs':>{width}}")
        for decision in ("block", "warn", "allow"):
            n = s.by_decision.get(decision, 0)
            label = self._paint(decision.ljust(10), decision) if n else decision.ljust(10)
            out.append(f"  {label}{n:>{width},}")
        if s.by_rule:
            out.append("")
            name_w = max(len(n) for n in s.rule_names.values())
            out.append(f"  {'rule':<7}{'name':<{name_w + 2}}{'URLs':>{width}}")
            for code in sorted(s.by_rule, key=lambda c: (-s.by_rule[c], c)):
                name = s.rule_names.get(code, "")
                out.append(f"  {code:<7}{name:<{name_w + 2}}{s.by_rule[code]:>{width},}")
        notes = []
        if s.accepted:
            notes.append(f"{s.accepted:,} URLs with findings accepted by the baseline")
        if s.failing:
            notes.append(f"{s.failing:,} URLs fail the run")
        if s.diagnostics["error"]:
            notes.append(f"{s.diagnostics['error']:,} input errors (input left unaudited)")
        if s.diagnostics["warning"]:
            notes.append(f"{s.diagnostics['warning']:,} input warnings")
        if s.skipped_files:
            notes.append(f"{s.skipped_files:,} binary files skipped while walking directories")
        if s.baseline_written is not None:
            notes.append(f"baseline written with {s.baseline_written:,} findings")
        if notes:
            out.append("")
            out.extend(f"  {n}" for n in notes)
        return out

    def _paint(self, text: str, key: str, bold: bool = False) -> str:
        if not self.info.colour:
            return text
        code = _COLOURS.get(key, "0")
        return f"\x1b[{'1;' if bold else ''}{code}m{text}\x1b[0m"

    def _bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if self.info.colour else text
