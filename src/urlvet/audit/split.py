"""Split audits: large line-oriented inputs cut into shares, each audited whole by a worker.

With ``--jobs N`` offline, the process pool (:class:`~urlvet.audit.pipeline.ProcessPool`)
still reads, looks up and reports every URL in the main process, which caps it near the
speed of one process. For JSON Lines and JSON output there is no need: the output of a run
is the outputs of its parts, one after the other. So the inputs, taken as one stream of
bytes, are cut into contiguous shares at line starts, and ``N`` workers run the ordinary
one-process pipeline (reader, cache, in-process vetting, reporter, writer) on the shares, each
share written to a temporary file. The main process does no per-URL work: it plans the cuts
(counting the line breaks before each, so that line numbers go on), then appends the shares'
outputs to the real output in input order as they finish, adds up their summaries, and shows
their first input problems on stderr, so that the output, the summary, the exit code, stderr
and a written baseline are those of a one-process run. Only the count of keys vetted differs
(each worker has a cache of its own, a fraction of the run's budget).

There are several shares per worker (:data:`SHARES_PER_JOB`): a worker done with one takes
the next, so that a slower share does not hold the run up. Each worker keeps one Vetter for
all its shares, but every worker meets most hosts: what the engine works out once per host
(and per plain-URL shape) is worked out, and held, once per worker. On inputs where that is
a large part of the work, a split run costs more CPU in all than one process does.

A split audit is taken when (:func:`plan_split`): the format is jsonl or json, the audit is
offline, ``jobs`` > 1, every input is a regular uncompressed file, and there are at least
two shares of :data:`MIN_SHARE_BYTES`. Otherwise the pipeline runs as before.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from urlvet.audit.output.baseline import Baseline, BaselineEntry
from urlvet.audit.output.jsonl import JsonWriter
from urlvet.audit.pipeline import Auditor, InProcess, ProgressFn, RecordVetter
from urlvet.audit.report import Reporter, Summary
from urlvet.audit.sources import Diagnostic, Source, Span, file_kind
from urlvet.errors import UrlvetError

if TYPE_CHECKING:
    from multiprocessing import Queue
    from multiprocessing.process import BaseProcess

    from urlvet.audit.options import AuditOptions
    from urlvet.audit.output.base import RunInfo
    from urlvet.policy import Policy

MIN_SHARE_BYTES = 1 << 20
"""The least input worth a share of its own in a split audit (starting a worker costs about
0.1 s; vetting a MiB of URLs takes seconds)."""
SHARES_PER_JOB = 16
"""Shares per worker: a worker that is done with one takes the next, so that a share that
goes slower (denser in URLs, or a core busy with other work) does not hold the run up."""
SPLIT_FORMATS = ("jsonl", "json")
"""Formats whose output is the outputs of the input's parts one after the other."""
SHOWN_DIAGNOSTICS = 51
"""Input problems a worker sends back to be shown on stderr: more than the audit shows
(50), so that the parent also knows when to say that further ones are only in the report."""
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".lzma", ".zst", ".lz4", ".zip", ".br", ".z")
"""Inputs that may be read decompressed: they are never split by bytes."""
WORKER_CACHE_DIVISOR = 4
"""A worker's record cache budget is the audit's divided by this and by the number of
workers: each worker holds the engine's per-host caches of its own besides."""
_COUNT_CHUNK = 1 << 22
_FIND_CHUNK = 1 << 16
_PROGRESS_EVERY = 0.2

Share = tuple[Source, ...]
"""A worker's part of the input: whole files and byte ranges of files, in input order."""


# --- planning ------------------------------------------------------------------------------


def plan_split(
    sources: Sequence[Source],
    fmt: str,
    options: AuditOptions,
    *,
    offline: bool,
    min_share: int | None = None,
) -> list[Share] | None:
    """The shares of a split audit of ``sources``, or None when the audit is not split
    (see the module's docstring for when it is)."""
    min_share = MIN_SHARE_BYTES if min_share is None else min_share
    if fmt not in SPLIT_FORMATS or not offline or options.jobs < 2 or not sources:
        return None
    sizes: list[int] = []
    for source in sources:
        if source.path is None or source.span is not None:
            return None
        if source.path.lower().endswith(COMPRESSED_SUFFIXES):
            return None
        try:
            st = os.stat(source.path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        sizes.append(st.st_size)
    total = sum(sizes)
    count = min(options.jobs * SHARES_PER_JOB, total // max(1, min_share))
    if count < 2:
        return None
    targets = [total * k // count for k in range(1, count)]
    shares: list[list[Source]] = [[]]
    base = 0
    previous = -1  # the global offset of the last piece's start
    for source, size in zip(sources, sizes, strict=True):
        inside = [t - base for t in targets if base < t < base + size]
        pieces = _pieces(source, size, inside, options)
        for start, piece in pieces:
            offset = base + start
            if shares[-1] and any(previous < t <= offset for t in targets):
                shares.append([])
            shares[-1].append(piece)
            previous = offset
        base += size
    if len(shares) < 2:
        return None
    return [tuple(share) for share in shares]


def _pieces(
    source: Source, size: int, targets: list[int], options: AuditOptions
) -> list[tuple[int, Source]]:
    """(start, source) pieces of one file: cut at the first line start at or after each
    target, or the whole file when it is not cut (no target inside, binary, unreadable)."""
    if not targets:
        return [(0, source)]
    kind = file_kind(source, options)
    if kind is None or source.path is None:
        return [(0, source)]
    try:
        with open(source.path, "rb") as f:
            cuts, first_lines = _cut_file(f, size, targets)
    except OSError:
        return [(0, source)]
    if not cuts:
        return [(0, source)]
    starts = [0, *cuts]
    ends = [*cuts, size]
    lines = [1, *first_lines]
    return [
        (start, dataclasses.replace(source, span=Span(start, end, line, kind)))
        for start, end, line in zip(starts, ends, lines, strict=True)
    ]


def _cut_file(f: BinaryIO, size: int, targets: list[int]) -> tuple[list[int], list[int]]:
    """The cuts of a file (the first line start at or after each target, before ``size``)
    and the 1-based line number at each, in one pass over the bytes before the last cut.
    Read, not mapped: a file that shrinks meanwhile gives fewer cuts, never a crash."""
    cuts: list[int] = []
    lines: list[int] = []
    pos = 0
    line = 1
    for target in targets:
        if cuts and target <= cuts[-1]:
            continue  # a long line took it: the share ends at the next cut
        start = max(target - 1, 0)
        while pos < start:  # count the line breaks up to the target
            chunk = f.read(min(_COUNT_CHUNK, start - pos))
            if not chunk:
                return cuts, lines
            line += chunk.count(b"\n")
            pos += len(chunk)
        cut = size
        while pos < size:  # then find the next one
            chunk = f.read(min(_FIND_CHUNK, size - pos))
            if not chunk:
                return cuts, lines
            found = chunk.find(b"\n")
            if found >= 0:
                cut = pos + found + 1
                line += 1
                pos = f.seek(cut)
                break
            pos += len(chunk)
        if cut >= size:
            break
        cuts.append(cut)
        lines.append(line)
    return cuts, lines


# --- the workers ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Setup:
    """What every worker needs, picklable (any start method works)."""

    shares: tuple[Share, ...]
    outputs: tuple[str, ...]
    """Share i's output goes to outputs[i]."""
    policy: dict[str, Any]
    options: AuditOptions
    fmt: str
    info: RunInfo
    fail_at: int
    baseline: Baseline | None
    collect_baseline: bool
    parent: int


@dataclass(frozen=True)
class _ShareResult:
    """What a worker sends back once a share is written."""

    summary: Summary
    shown: list[Diagnostic]
    collected: list[BaselineEntry] | None


Message = tuple[str, int, Any]
"""(what, share index, payload) from a worker: progress, done or failed."""


def _work(setup: _Setup, tasks: Queue[int | None], results: Queue[Message]) -> None:
    """A worker: audits the shares it is sent, one after another, each into its output."""
    import signal

    # Ctrl-C reaches the whole process group: the parent stops the run and ends the workers,
    # with SIGTERM, which ends a worker at once (not the parent's way: see _sigterm_as_exit).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    index = -1
    try:
        from urlvet.engine import Vetter
        from urlvet.policy import Policy

        policy = Policy.model_validate(setup.policy)
        info = dataclasses.replace(setup.info, rules=policy.compiled.rules)
        vet = RecordVetter.for_options(Vetter(policy), setup.options)
        while (task := tasks.get()) is not None:
            index = task
            results.put(("done", index, _audit_share(setup, index, policy, info, vet, results)))
    except Exception as exc:  # the parent fails the run with this
        results.put(("failed", index, f"{type(exc).__name__}: {exc}"))


def _audit_share(
    setup: _Setup,
    index: int,
    policy: Policy,
    info: RunInfo,
    vet: RecordVetter,
    results: Queue[Message],
) -> _ShareResult:
    """The one-process audit of share ``index``, written to its output."""
    import io

    shown: list[Diagnostic] = []

    def keep(diag: Diagnostic) -> None:
        if len(shown) < SHOWN_DIAGNOSTICS:
            shown.append(diag)

    last = 0.0

    def progress(done_bytes: int, urls: int, name: str) -> None:
        nonlocal last
        if os.getppid() != setup.parent:  # the parent is gone: so is the run
            os._exit(3)
        now = time.monotonic()
        if now - last >= _PROGRESS_EVERY:
            last = now
            results.put(("progress", index, (done_bytes, urls, name)))

    with open(setup.outputs[index], "wb") as raw:
        stream = io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", newline="\n")
        writer = JsonWriter(stream, info, array=setup.fmt == "json", part=True)
        reporter = Reporter(
            writer,
            fail_at=setup.fail_at,
            baseline=setup.baseline,
            collect_baseline=setup.collect_baseline,
            on_diagnostic=keep,
        )
        summary = Auditor(policy, setup.options).run(
            setup.shares[index], reporter, progress, strategy=InProcess(vet)
        )
        writer.finish(summary)
        stream.flush()
    collected = list(reporter.collected.values()) if reporter.collected is not None else None
    return _ShareResult(summary, shown, collected)


# --- the parent ----------------------------------------------------------------------------


def run_split(
    policy: Policy,
    options: AuditOptions,
    shares: Sequence[Share],
    reporter: Reporter,
    *,
    fmt: str,
    info: RunInfo,
    temp_dir: str | None = None,
    progress: ProgressFn | None = None,
) -> Summary:
    """Audit ``shares`` (from :func:`plan_split`) in ``options.jobs`` workers (fewer when
    there are fewer shares), each taking the next share when it is done with one; the
    outputs go to the reporter's writer (a :class:`JsonWriter`) in input order, input
    problems to its ``on_diagnostic``. Returns the run's summary. Raises
    :class:`UrlvetError` when a worker fails or dies; the workers and the temporary files
    are gone when it returns or raises."""
    import multiprocessing

    writer = reporter.writer
    if not isinstance(writer, JsonWriter):
        raise TypeError("a split audit writes JSON Lines or JSON")
    started = time.perf_counter()
    context = multiprocessing.get_context()
    tasks: Queue[int | None] = context.Queue()
    results: Queue[Message] = context.Queue()
    jobs = min(options.jobs, len(shares))
    # Each worker loads the vetting data and keeps the engine's per-host caches of its own
    # besides its record cache: a smaller record cache pays for part of that.
    worker_options = dataclasses.replace(
        options,
        jobs=1,
        cache_size=max(1, options.cache_size // jobs),
        cache_bytes=max(1, options.cache_bytes // (WORKER_CACHE_DIVISOR * jobs)),
    )
    outputs: list[str] = []
    workers: list[BaseProcess] = []
    with _sigterm_as_exit():
        try:
            for _ in shares:
                try:
                    fd, path = tempfile.mkstemp(
                        prefix=".urlvet-share-", suffix=".part", dir=temp_dir
                    )
                except OSError as exc:
                    where = temp_dir or tempfile.gettempdir()
                    raise UrlvetError(
                        f"{where}: cannot create a temporary file for a share of the audit: "
                        f"{exc.strerror or exc}"
                    ) from None
                os.close(fd)
                outputs.append(path)
            setup = _Setup(
                shares=tuple(shares),
                outputs=tuple(outputs),
                policy=policy.model_dump(mode="json"),
                options=worker_options,
                fmt=fmt,
                info=dataclasses.replace(info, rules=()),
                fail_at=reporter.fail_at,
                baseline=reporter.baseline,
                collect_baseline=reporter.collected is not None,
                parent=os.getpid(),
            )
            for index in range(len(shares)):
                tasks.put(index)
            for _ in range(jobs):
                tasks.put(None)
            for _ in range(jobs):
                process = context.Process(target=_work, args=(setup, tasks, results), daemon=True)
                process.start()
                workers.append(process)
            summary = _gather(results, workers, outputs, reporter, writer, progress)
            for ended in workers:
                ended.join()
        finally:
            for worker in workers:
                if worker.is_alive():
                    worker.terminate()
            for worker in workers:
                worker.join()
            for box in (tasks, results):
                box.cancel_join_thread()
                box.close()
            for path in outputs:
                _remove(path)
    summary.elapsed = time.perf_counter() - started
    return summary


@contextmanager
def _sigterm_as_exit() -> Iterator[None]:
    """SIGTERM (a CI timeout, say) ends the run through its cleanup (workers ended, temporary
    files removed) instead of at once; as before after the block."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread can take signals
        return

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _gather(
    results: Queue[Message],
    workers: list[BaseProcess],
    outputs: list[str],
    reporter: Reporter,
    writer: JsonWriter,
    progress: ProgressFn | None,
) -> Summary:
    """Wait for the shares; append each to the output, in order, as soon as the ones before
    it are in; add up the summaries."""
    summary = Summary()
    finished: dict[int, _ShareResult] = {}
    seen: dict[int, tuple[int, int, str]] = {}
    next_share = 0
    while next_share < len(outputs):
        ended = False
        try:
            kind, index, payload = results.get(timeout=0.5)
        except queue.Empty:
            ended = _check_workers(results, workers, finished, seen)
        else:
            _take(kind, index, payload, finished, seen)
            if kind == "progress" and progress is not None:
                name = next((s[2] for _, s in sorted(seen.items()) if s[2]), "")
                progress(sum(s[0] for s in seen.values()), sum(s[1] for s in seen.values()), name)
        while next_share in finished:
            _merge(finished.pop(next_share), summary, reporter)
            with open(outputs[next_share], "rb") as f:
                writer.splice(f)
            _remove(outputs[next_share])
            next_share += 1
        if ended and next_share < len(outputs):  # never leave the output short
            raise UrlvetError("the audit workers ended before all of the input was audited")
    return summary


def _take(
    kind: str,
    index: int,
    payload: Any,
    finished: dict[int, _ShareResult],
    seen: dict[int, tuple[int, int, str]],
) -> None:
    if kind == "failed":
        raise UrlvetError(f"an audit worker process failed: {payload}")
    if kind == "done":
        finished[index] = payload
        summary: Summary = payload.summary
        seen[index] = (seen.get(index, (0, 0, ""))[0], summary.urls, "")
    else:
        seen[index] = payload


def _check_workers(
    results: Queue[Message],
    workers: list[BaseProcess],
    finished: dict[int, _ShareResult],
    seen: dict[int, tuple[int, int, str]],
) -> bool:
    """Fail the run when a worker died; True when every worker has ended (their last
    messages read)."""
    for worker in workers:
        if not worker.is_alive() and worker.exitcode != 0:
            # Killed, or out of memory: a worker that fails sends why and exits 0.
            raise UrlvetError(
                f"an audit worker process ended unexpectedly (exit code {worker.exitcode})"
            )
    if any(w.is_alive() for w in workers):
        return False
    # The workers' last messages are in the pipe once they have ended: read them first.
    while True:
        try:
            kind, index, payload = results.get(timeout=0.1)
        except queue.Empty:
            return True
        _take(kind, index, payload, finished, seen)


def _merge(part: _ShareResult, summary: Summary, reporter: Reporter) -> None:
    show: Callable[[Diagnostic], None] | None = reporter.on_diagnostic
    if show is not None:
        for diag in part.shown:
            show(diag)
    summary.add(part.summary)
    if reporter.collected is not None and part.collected is not None:
        for entry in part.collected:
            reporter.collected.setdefault(entry.fingerprint, entry)


def _remove(path: str) -> None:
    Path(path).unlink(missing_ok=True)
