"""Reporting: counting every occurrence, applying the baseline, handing each to a writer.

A :class:`Writer` renders (the formats are in :mod:`urlvet.audit.output`); the
:class:`Reporter` between the pipeline and the writer keeps the counts of the run's
:class:`Summary` and decides which occurrences fail it.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from operator import itemgetter
from typing import Protocol

from urlvet.audit.output.baseline import Baseline, BaselineEntry, fingerprint
from urlvet.audit.output.record import Record
from urlvet.audit.sources import Diagnostic, DiagnosticLevel, Occurrence, Reader
from urlvet.findings import Decision


class Writer(Protocol):
    """An output format. Gets every occurrence and diagnostic in input order.

    A writer may also have ``occurrences(occs, records)``: :meth:`occurrence` for each of
    a row of occurrences with no baseline (``accepted`` empty), at once; the reporter
    calls it where it can (else :func:`each_occurrence`)."""

    def start(self) -> None:
        """Called once before anything else."""

    def occurrence(self, occ: Occurrence, record: Record, accepted: frozenset[str]) -> None:
        """One URL occurrence; ``accepted`` holds the codes the baseline accepts here."""

    def diagnostic(self, diag: Diagnostic) -> None:
        """One input problem."""

    def finish(self, summary: Summary) -> None:
        """Called once at the end."""


_DECISIONS = ("block", "warn", "allow")
_LEVELS: tuple[DiagnosticLevel, ...] = ("error", "warning", "note")
_NO_CODES: frozenset[str] = frozenset()


def each_occurrence(writer: Writer, occs: list[Occurrence], records: list[Record]) -> None:
    """A writer's occurrences in a row, with no baseline, one at a time (see :class:`Writer`)."""
    write = writer.occurrence
    for occ, record in zip(occs, records, strict=True):
        write(occ, record, _NO_CODES)


@dataclass
class Summary:
    """The counts of a run: what was read, what was decided, what fails it."""

    sources: int = 0
    """Files (and stdin) read."""
    skipped_files: int = 0
    """Binary files found while walking directories, skipped quietly."""
    lines: int = 0
    """Lines read."""
    urls: int = 0
    """URL occurrences vetted."""
    vetted: int = 0
    """Keys vetted (cache misses): distinct (URL, server, message), bar cache evictions."""
    by_decision: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_DECISIONS, 0))
    """Occurrences per decision."""
    by_rule: dict[str, int] = field(default_factory=dict)
    """Occurrences per rule code."""
    rule_names: dict[str, str] = field(default_factory=dict)
    """Rule code -> name, for the codes in by_rule."""
    failing: int = 0
    """Occurrences at or above --fail-on whose findings the baseline does not accept."""
    accepted: int = 0
    """Occurrences with findings that the baseline accepts."""
    diagnostics: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_LEVELS, 0))
    """Diagnostics per level."""
    baseline_written: int | None = None
    """Findings written with --write-baseline."""
    elapsed: float = 0.0
    """Seconds the run took."""

    @property
    def input_errors(self) -> int:
        """Diagnostics that left input unaudited."""
        return self.diagnostics["error"]

    def add(self, part: Summary) -> None:
        """Count in the summary of the next part of the same run's input (a share of a split
        audit): the counts add up, and the codes come in the order a single run meets them."""
        self.sources += part.sources
        self.skipped_files += part.skipped_files
        self.lines += part.lines
        self.urls += part.urls
        self.vetted += part.vetted
        self.failing += part.failing
        self.accepted += part.accepted
        for decision, n in part.by_decision.items():
            self.by_decision[decision] = self.by_decision.get(decision, 0) + n
        for code, n in part.by_rule.items():
            self.by_rule[code] = self.by_rule.get(code, 0) + n
        for code, name in part.rule_names.items():
            self.rule_names.setdefault(code, name)
        for level, n in part.diagnostics.items():
            self.diagnostics[level] = self.diagnostics.get(level, 0) + n


_COMBO = itemgetter(Record._fields.index("decision"), Record._fields.index("codes"))
"""A record's (decision, codes), what the summary counts occurrences by."""
_TOP_RANK = itemgetter(Record._fields.index("top_rank"))


class Reporter:
    """Receives results in input order: counts them, applies the baseline, feeds the writer."""

    def __init__(
        self,
        writer: Writer,
        *,
        fail_at: int,
        baseline: Baseline | None = None,
        collect_baseline: bool = False,
        on_diagnostic: Callable[[Diagnostic], None] | None = None,
    ) -> None:
        """``fail_at``: the severity rank at which an unaccepted finding fails the run."""
        self.writer = writer
        self.fail_at = fail_at
        self.baseline = baseline
        self.summary = Summary()
        self.collected: dict[str, BaselineEntry] | None = {} if collect_baseline else None
        self.on_diagnostic = on_diagnostic
        # Occurrences per (decision, codes): one count per occurrence, the summary's
        # tallies from these at the end.
        self._combos: Counter[tuple[Decision, tuple[str, ...]]] = Counter()
        self._fingerprints = baseline is not None or collect_baseline
        self._write = writer.occurrence
        self._write_many: Callable[[list[Occurrence], list[Record]], None] = getattr(
            writer, "occurrences", None
        ) or partial(each_occurrence, writer)
        self._names: dict[str, str] = {}
        # (path, normalised URL, codes): what a record's fingerprints are computed from ->
        # (code, fingerprint) of each finding.
        self._fps: OrderedDict[tuple[str, str, tuple[str, ...]], tuple[tuple[str, str], ...]]
        self._fps = OrderedDict()

    def occurrence(self, occ: Occurrence, rec: Record) -> None:
        """Count one occurrence and write it."""
        combo = (rec.decision, rec.codes)
        combos = self._combos
        combos[combo] = combos.get(combo, 0) + 1
        accepted = _NO_CODES
        if rec.findings and self._fingerprints:
            accepted = self._baseline(occ, rec)
        if rec.top_rank >= self.fail_at and (not accepted or self._fails_despite(rec, accepted)):
            self.summary.failing += 1
        if accepted:
            self.summary.accepted += 1
        self._write(occ, rec, accepted)

    def occurrences(self, occs: list[Occurrence], recs: list[Record]) -> None:
        """Count and write occurrences in a row: :meth:`occurrence` for each, the writer
        given them at once when no baseline is read or written."""
        if self._fingerprints:
            for occ, rec in zip(occs, recs, strict=True):
                self.occurrence(occ, rec)
            return
        # Counted without a loop of our own: a million URLs a run.
        self._combos.update(map(_COMBO, recs))
        self.summary.failing += sum(map(self.fail_at.__le__, map(_TOP_RANK, recs)))
        self._write_many(occs, recs)

    def _fails_despite(self, rec: Record, accepted: frozenset[str]) -> bool:
        return any(f.severity.rank >= self.fail_at and f.code not in accepted for f in rec.findings)

    def _baseline(self, occ: Occurrence, rec: Record) -> frozenset[str]:
        url = rec.normalised_url
        key = (occ.path, url, rec.codes)
        fps = self._fps.get(key)
        if fps is None:
            fps = tuple((f.code, fingerprint(f.code, occ.path, url)) for f in rec.findings)
            self._fps[key] = fps
            if len(self._fps) > 4096:
                self._fps.popitem(last=False)
            if self.collected is not None:
                for code, fp in fps:
                    self.collected.setdefault(fp, BaselineEntry(fp, code, occ.path, url))
        if self.baseline is None:
            return _NO_CODES
        return frozenset(code for code, fp in fps if fp in self.baseline)

    def diagnostic(self, diag: Diagnostic) -> None:
        """Count one diagnostic, show it on stderr (through the callback) and write it."""
        self.summary.diagnostics[diag.level] += 1
        if self.on_diagnostic is not None:
            self.on_diagnostic(diag)
        self.writer.diagnostic(diag)

    def summarise(self, reader_stats: Reader, vetted: int, elapsed: float) -> Summary:
        """Complete the summary (the caller then lets the writer finish with it)."""
        s = self.summary
        s.sources = reader_stats.sources
        s.skipped_files = reader_stats.skipped_files
        s.lines = reader_stats.lines
        s.vetted = vetted
        s.elapsed = elapsed
        for (decision, codes), n in self._combos.items():
            s.urls += n
            s.by_decision[decision.value] += n
            for code in codes:
                s.by_rule[code] = s.by_rule.get(code, 0) + n
        from urlvet.checks import registry

        table = registry.rules()
        s.rule_names = {c: table[c].name if c in table else c for c in s.by_rule}
        return s
