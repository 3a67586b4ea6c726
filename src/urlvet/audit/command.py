"""What ``urlvet audit`` does once its options are parsed: open the output, pick the writer,
show progress and input problems on stderr, run the pipeline, write the baseline, and say
which exit code the run earns (0 clean, 1 findings at or above --fail-on, 2 input errors)."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, BinaryIO, TextIO

from urlvet.audit.options import AuditOptions
from urlvet.audit.output import RunInfo, make_writer
from urlvet.audit.output.baseline import Baseline, load_baseline, write_baseline
from urlvet.audit.output.progress import Progress
from urlvet.audit.pipeline import Auditor, Strategy
from urlvet.audit.report import Reporter, Summary
from urlvet.audit.sources import Diagnostic, Source, expand_paths
from urlvet.audit.split import plan_split, run_split
from urlvet.files import atomic_output
from urlvet.text import printable

if TYPE_CHECKING:
    from urlvet.policy import Policy

STDERR_DIAGNOSTICS = 50
"""Input problems shown on stderr; the rest are only in the report."""
PIPE_CLOSED_EXIT = 141
"""The exit code of an audit whose stdout reader went away (``| head``): 128 + SIGPIPE, as a
shell reports a filter that a closed pipe ended; never that of findings (1)."""


@dataclass(frozen=True)
class AuditRun:
    """One ``urlvet audit`` invocation, its options parsed."""

    paths: Sequence[str]
    """Files, directories, or '-' for stdin."""
    fmt: str = "text"
    """text, json, jsonl, sarif or github."""
    output: str | None = None
    """A file to write to instead of stdout ('-' is stdout)."""
    options: AuditOptions = field(default_factory=AuditOptions)
    """How to read and vet."""
    fail_on: str = "block"
    """block or warn: the decision from which a URL fails the run."""
    baseline: str | None = None
    """A baseline file whose findings do not fail the run."""
    write_baseline: str | None = None
    """Write every finding to this baseline file (the run then exits 0 unless input failed)."""
    exit_zero: bool = False
    """Exit 0 even when findings reach ``fail_on``."""
    colour: bool = False
    """Colour the text report (for a terminal)."""
    progress: bool = True
    """Show a progress line when stderr is a terminal."""
    verbosity: int = 0
    """-1: errors only on stderr (no notes, no input warnings); 1: the run's figures too."""


def run_audit(
    policy: Policy,
    run: AuditRun,
    stdout: BinaryIO,
    stderr: TextIO,
    strategy: Strategy | None = None,
) -> int:
    """Run the audit; returns the exit code.

    ``strategy``: how to vet, when the caller picks it (the command line's Spark strategy,
    say), which the audit closes once it has run. By default the audit picks one of its own (in process, in
    worker processes, a split audit, DNS on an event loop).

    Raises :class:`urlvet.errors.InputError` when the baseline cannot be read or written or the
    output cannot be opened, and :class:`urlvet.errors.UrlvetError` when a worker of a split
    audit fails.
    """
    auditor = Auditor(policy, run.options)
    baseline = load_baseline(run.baseline) if run.baseline else None
    if run.options.jobs > 1 and auditor.uses_dns and run.verbosity >= 0:
        stderr.write(
            "urlvet: note: --jobs applies to offline audits (--no-dns); "
            "with DNS, lookups run concurrently in one process\n"
        )
    sources = list(expand_paths(run.paths, run.options.stdin_name))
    report = partial(_write_report, policy, run, auditor, sources, baseline, strategy)
    to_file = bool(run.output and run.output != "-")
    try:
        if run.output and to_file:
            # Written beside its target and moved over it at the end: a run stopped part-way
            # (Ctrl-C, a failure) leaves no half report.
            with atomic_output(run.output) as out_file:
                return report(out_file, stderr, to_file)
        return report(stdout, stderr, to_file)
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, as other filters do, with the status
        # of a filter that a closed pipe ended (128 + SIGPIPE), not that of findings.
        with suppress(OSError, ValueError):  # no file descriptor under a test's runner
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return PIPE_CLOSED_EXIT


def _write_report(
    policy: Policy,
    run: AuditRun,
    auditor: Auditor,
    sources: list[Source],
    baseline: Baseline | None,
    strategy: Strategy | None,
    out_binary: BinaryIO,
    stderr: TextIO,
    to_file: bool,
) -> int:
    """Audit ``sources`` into ``out_binary`` in the run's format; returns the exit code."""
    from urlvet import __version__

    compiled = policy.compiled
    stream = io.TextIOWrapper(out_binary, encoding="utf-8", errors="backslashreplace", newline="\n")
    info = RunInfo(
        rules=compiled.rules,
        warn_at=compiled.warn_at,
        block_at=compiled.block_at,
        version=__version__,
        colour=run.fmt == "text" and run.colour and not to_file,
        baseline=baseline is not None,
        redacted=run.options.redact_secrets,
    )
    writer = make_writer(run.fmt, stream, info)
    progress = _progress(run, sources, stderr)
    reporter = Reporter(
        writer,
        fail_at=compiled.block_at if run.fail_on == "block" else compiled.warn_at,
        baseline=baseline,
        collect_baseline=run.write_baseline is not None,
        on_diagnostic=_diagnostic_printer(stderr, progress, errors_only=run.verbosity < 0),
    )
    shares = (
        plan_split(sources, run.fmt, run.options, offline=not auditor.uses_dns)
        if strategy is None
        else None
    )
    try:
        writer.start()
        if shares is not None:
            temp_dir = (
                os.path.dirname(os.path.abspath(run.output)) if run.output and to_file else None
            )
            summary = run_split(
                policy,
                run.options,
                shares,
                reporter,
                fmt=run.fmt,
                info=info,
                temp_dir=temp_dir,
                progress=progress,
            )
        else:
            summary = auditor.run(sources, reporter, progress, strategy)
        if progress is not None:
            progress.clear()
        if run.write_baseline is not None and reporter.collected is not None:
            summary.baseline_written = write_baseline(
                run.write_baseline, reporter.collected.values()
            )
        writer.finish(summary)
        stream.flush()
    finally:
        if progress is not None:
            progress.clear()
        stream.detach()  # the file (or stdout) is closed by its owner
    if run.verbosity > 0:
        stderr.write(f"urlvet: {_figures(summary)}\n")
    if summary.input_errors:
        return 2
    if run.write_baseline is not None:
        return 0
    return 1 if summary.failing and not run.exit_zero else 0


def _figures(summary: Summary) -> str:
    return (
        f"audited {summary.sources:,} files, {summary.lines:,} lines, {summary.urls:,} URLs "
        f"({summary.vetted:,} distinct keys vetted) in {summary.elapsed:.2f}s"
    )


def _progress(run: AuditRun, sources: list[Source], stderr: TextIO) -> Progress | None:
    if not (run.progress and stderr.isatty()):
        return None
    total = 0
    for s in sources:
        if s.path is not None and os.path.isfile(s.path):
            total += os.path.getsize(s.path)
    return Progress(stderr, total if all(s.path for s in sources) else None)


def _diagnostic_printer(
    stderr: TextIO, progress: Progress | None, errors_only: bool = False
) -> Callable[[Diagnostic], None]:
    shown = 0

    def on_diagnostic(diag: Diagnostic) -> None:
        nonlocal shown
        if errors_only and diag.level != "error":
            return
        shown += 1
        if shown > STDERR_DIAGNOSTICS + 1:
            return
        if progress is not None:
            progress.clear()
        if shown > STDERR_DIAGNOSTICS:
            stderr.write("urlvet: further input problems are only in the report\n")
            return
        stderr.write(f"urlvet: {diag.level}: {printable(str(diag), 500)}\n")

    return on_diagnostic
