"""Split audits: large line-oriented inputs audited by workers that each take their own hosts.

With ``--jobs N`` offline, the process pool (:class:`~urlvet.audit.pipeline.ProcessPool`)
still reads, looks up and reports every URL in the main process, which caps it near the
speed of one process. For JSON Lines and JSON output there is no need: the output of a run
is the outputs of its parts, one after the other. So the inputs, taken as one stream of
bytes, are cut into contiguous shares at line starts (counting the line breaks before each
cut, so that line numbers go on), and ``N`` workers run the ordinary one-process pipeline
(reader, cache, in-process vetting, reporter, writer) on them: this process is worker 0, and
``N - 1`` worker processes are the others (one copy of the vetting data fewer than a main
process that only waits). The output of each share goes to the real output in input order as
soon as every worker is done with it; the summaries add up, and the shares' first input
problems are shown on stderr, so that the output, the summary, the exit code, stderr and a
written baseline are those of a one-process run. Only the count of keys vetted differs (each
worker has a cache of its own).

Each worker reads every share, in order, and audits only its own lines of it
(:class:`~urlvet.audit.sources.LineRoute`): those whose first URL's host hashes to it, until
a host has had many lines, after which its lines are dealt out by line number. What the
engine works out once per host and per plain-URL shape (the lookalike analysis, the host's
verdict) is then worked out, and held, by one worker, not by each: reading a line costs far
less than a host. A worker writes its part of a share to a file, one object a line, with the
order key of each object (its file's place in the share, its line); worker 0 merges the parts
of a share by those keys, between shares of its own and once it is done.

A split audit is taken when (:func:`plan_split`): the format is jsonl or json, the audit is
offline, ``jobs`` > 1, every input is a regular file named once, and there are at least two
shares of :data:`MIN_SHARE_BYTES`. Otherwise the pipeline runs as before. A compressed file
(gzip, bzip2, xz, zstd: known by its first bytes) is never cut: it is a piece of a share
whole, and each worker reads it decompressed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import shutil
import stat
import tempfile
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from urlvet.audit.output.baseline import Baseline, BaselineEntry
from urlvet.audit.output.jsonl import JsonWriter
from urlvet.audit.pipeline import (
    Auditor,
    InProcess,
    ProgressFn,
    RecordVetter,
    bulk_gc,
    bulk_gc_to_the_end,
    end_process,
    signals_held,
    worker_signals,
)
from urlvet.audit.report import Reporter, Summary
from urlvet.audit.sources import Diagnostic, LineRoute, Occurrence, Source, Span, file_kind
from urlvet.errors import UrlvetError

if TYPE_CHECKING:
    from multiprocessing import Queue
    from multiprocessing.process import BaseProcess

    from urlvet.audit.options import AuditOptions
    from urlvet.audit.output.base import RunInfo
    from urlvet.audit.output.record import Record
    from urlvet.policy import Policy

MIN_SHARE_BYTES = 1 << 20
"""The least input worth a share of its own in a split audit (starting a worker costs about
0.1 s; vetting a MiB of URLs takes seconds)."""
SHARES_PER_JOB = 16
"""Shares per worker: the output of a share is merged and written as soon as every worker is
done with it, so that the parts waiting on disk stay a small fraction of the output."""
SPLIT_FORMATS = ("jsonl", "json")
"""Formats whose output is the outputs of the input's parts one after the other."""
SHOWN_DIAGNOSTICS = 51
"""Input problems a worker sends back to be shown on stderr: more than the audit shows
(50), so that the parent also knows when to say that further ones are only in the report."""
WORKER_CACHE_DIVISOR = 4
"""A worker's record cache budget is the audit's divided by this and by the number of
workers: each worker holds the engine's per-host caches of its own besides."""
_END_WAIT = 5.0
"""Seconds a worker is given to end after SIGTERM before it is killed."""
_COUNT_CHUNK = 1 << 22
_FIND_CHUNK = 1 << 16
_PROGRESS_EVERY = 0.2
_SPLICE_BATCH = 4096
_SPLICE_BUFFER = 1 << 18

_NO_CODES: frozenset[str] = frozenset()

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
    if len({source.name for source in sources}) != len(sources):
        return None  # a file named twice: the workers place objects by their file's name
    sizes: list[int] = []
    for source in sources:
        if source.path is None or source.span is not None:
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
    folder: str
    """Where the workers write their parts: share i of worker j to :func:`_part_path`."""
    jobs: int
    policy: dict[str, Any]
    options: AuditOptions
    fmt: str
    info: RunInfo
    fail_at: int
    baseline: Baseline | None
    collect_baseline: bool
    parent: int


def _part_path(folder: str, share: int, worker: int) -> str:
    return os.path.join(folder, f"{share}.{worker}.part")


def _ordinals(share: Share) -> dict[str, int]:
    """The position of each source of a share by name (names are distinct: see plan_split)."""
    return {source.name: i for i, source in enumerate(share)}


def _order_key(ordinals: dict[str, int], path: str, line: int | None) -> int:
    """Where an object of a share's output stands: its source, then its line (0 for a
    problem with the file as a whole, which comes first)."""
    return (ordinals[path] << 40) | (line or 0)


@dataclass(frozen=True)
class _ShareResult:
    """What a worker sends back once its part of a share is written."""

    summary: Summary
    shown: list[Diagnostic]
    collected: list[BaselineEntry] | None
    keys: bytes
    """The order key of each object of the part (an ``array('Q')``), one a line."""
    first: dict[str, tuple[int, int]]
    """Rule code -> (order key, place among the record's codes) where the part first has it:
    the summary lists codes in the order a one-process run meets them."""


class _KeyedWriter(JsonWriter):
    """A part's JSON Lines writer that notes where each object stands in the share."""

    def __init__(self, stream: TextIO, info: RunInfo, share: Share) -> None:
        super().__init__(stream, info, part=True)
        self.keys = array("Q")
        self.first: dict[str, tuple[int, int]] = {}
        self._ordinals = _ordinals(share)
        self._last_path = ""
        self._base = 0
        self._met: set[tuple[str, ...]] = set()
        """Codes of records whose codes are all in ``first`` already."""

    def _key(self, path: str, line: int | None) -> int:
        if path is not self._last_path:
            self._last_path = path
            self._base = _order_key(self._ordinals, path, 0)
        return self._base | (line or 0)

    def occurrence(self, occ: Occurrence, record: Record, accepted: frozenset[str]) -> None:
        key = self._key(occ.path, occ.line)
        self.keys.append(key)
        if record.codes:
            first = self.first
            for place, code in enumerate(record.codes):
                if code not in first:
                    first[code] = (key, place)
        super().occurrence(occ, record, accepted)

    def occurrences(self, occs: list[Occurrence], records: list[Record]) -> None:
        if self.array or self.info.baseline:
            for occ, record in zip(occs, records, strict=True):
                self.occurrence(occ, record, _NO_CODES)
            return
        # JsonWriter.occurrences, with each object's order key noted in the same pass.
        keys = self.keys.append
        first = self.first
        met = self._met
        head = self._head
        path = self._path
        keyed = self._last_path
        base = self._base
        end = self._end
        write = self._write
        for occ, record in zip(occs, records, strict=True):
            if occ.path is not path:
                path = occ.path
                head = f'{{"type":"url","path":{json.dumps(path, ensure_ascii=True)},"line":'
            if occ.path is not keyed:
                keyed = occ.path
                base = _order_key(self._ordinals, keyed, 0)
            keys(at := base | (occ.line or 0))
            codes = record.codes
            if codes and codes not in met:
                met.add(codes)
                for place, code in enumerate(codes):
                    if code not in first:
                        first[code] = (at, place)
            write(
                f'{head}{occ.line},"column":{occ.column},"input":"{occ.kind}",{record.json}}}{end}'
            )
        self._head = head
        self._path = path
        self._last_path = keyed
        self._base = base

    def diagnostic(self, diag: Diagnostic) -> None:
        self.keys.append(self._key(diag.path, diag.line))
        super().diagnostic(diag)


Message = tuple[str, tuple[int, int], Any]
"""(what, (share, worker), payload) from a worker: progress, done or failed."""


class _Auditing:
    """One worker's audit: every share in turn, its own lines of each (:class:`LineRoute`),
    each share's part into its file, with one Vetter for all of them."""

    def __init__(self, setup: _Setup, worker: int, policy: Policy) -> None:
        from urlvet.engine import Vetter

        self.setup = setup
        self.worker = worker
        self.policy = policy
        self.info = dataclasses.replace(setup.info, rules=policy.compiled.rules)
        self.vet = RecordVetter.for_options(Vetter(policy), setup.options)
        self.route = LineRoute(worker, setup.jobs)  # one for all shares: hosts counted throughout

    def share(self, index: int, progress: ProgressFn) -> _ShareResult:
        """The one-process audit of this worker's lines of share ``index``, written to its
        part."""
        import io

        setup = self.setup
        shown: list[Diagnostic] = []

        def keep(diag: Diagnostic) -> None:
            if len(shown) < SHOWN_DIAGNOSTICS:
                shown.append(diag)

        share = setup.shares[index]
        with open(_part_path(setup.folder, index, self.worker), "wb") as raw:
            stream = io.TextIOWrapper(
                raw, encoding="utf-8", errors="backslashreplace", newline="\n"
            )
            writer = _KeyedWriter(stream, self.info, share)
            reporter = Reporter(
                writer,
                fail_at=setup.fail_at,
                baseline=setup.baseline,
                collect_baseline=setup.collect_baseline,
                on_diagnostic=keep,
            )
            summary = Auditor(self.policy, setup.options).run(
                share, reporter, progress, strategy=InProcess(self.vet), route=self.route
            )
            writer.finish(summary)
            stream.flush()
        collected = list(reporter.collected.values()) if reporter.collected is not None else None
        return _ShareResult(summary, shown, collected, writer.keys.tobytes(), writer.first)


def _work(setup: _Setup, worker: int, results: Queue[Message]) -> None:
    """Worker process ``worker`` (1 or more) of ``setup.jobs``: audits its part of every
    share and sends each share's result, or why it failed, to the parent (worker 0)."""

    # Ctrl-C reaches the whole process group: the parent stops the run and ends the workers,
    # with SIGTERM, which ends a worker at once (not the parent's way: see _sigterm_as_exit).
    worker_signals()
    share = -1
    try:
        from urlvet.policy import Policy

        auditing = _Auditing(setup, worker, Policy.model_validate(setup.policy))
        last = 0.0

        def progress(done_bytes: int, urls: int, name: str) -> None:
            nonlocal last
            if os.getppid() != setup.parent:  # the parent is gone: so is the run
                os._exit(3)
            now = time.monotonic()
            if now - last >= _PROGRESS_EVERY:
                last = now
                results.put(("progress", (share, worker), (done_bytes, urls, name)))

        bulk_gc_to_the_end()  # for all shares: the process ends with end_process
        for share in range(len(setup.shares)):
            results.put(("done", (share, worker), auditing.share(share, progress)))
    except Exception as exc:  # the parent fails the run with this
        results.put(("failed", (share, worker), f"{type(exc).__name__}: {exc}"))
        return
    results.close()
    results.join_thread()  # every result is in the pipe
    end_process(0)  # the parent waits for this process: its caches are not freed one by one


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
    """Audit ``shares`` (from :func:`plan_split`) with ``options.jobs`` workers, each reading
    every share and auditing its own lines of it: this process is worker 0 (so that a split
    audit holds one copy of the vetting data fewer), the others are worker processes. The
    outputs go to the reporter's writer (a :class:`JsonWriter`) in input order, share by
    share as every worker is done with it, input problems to its ``on_diagnostic``. Returns
    the run's summary. Raises :class:`UrlvetError` when a worker fails or dies; the worker
    processes and the temporary files are gone when it returns or raises."""
    import multiprocessing

    writer = reporter.writer
    if not isinstance(writer, JsonWriter):
        raise TypeError("a split audit writes JSON Lines or JSON")
    started = time.perf_counter()
    context = multiprocessing.get_context()
    results: Queue[Message] = context.Queue()
    jobs = options.jobs
    workers: list[BaseProcess] = []
    folder: str | None = None
    with _sigterm_as_exit():
        try:
            with signals_held():  # Ctrl-C between making the folder and noting it: left
                folder = _share_folder(temp_dir)
            setup = _Setup(
                shares=tuple(shares),
                folder=folder,
                jobs=jobs,
                policy=policy.model_dump(mode="json"),
                options=_worker_options(options),
                fmt=fmt,
                info=dataclasses.replace(info, rules=()),
                fail_at=reporter.fail_at,
                baseline=reporter.baseline,
                collect_baseline=reporter.collected is not None,
                parent=os.getpid(),
            )
            with signals_held():  # taken once every worker is started (and in the list)
                for worker in range(1, jobs):
                    process = context.Process(
                        target=_work, args=(setup, worker, results), daemon=True
                    )
                    process.start()
                    workers.append(process)
            gather = _Gather(setup, results, workers, reporter, writer, progress)
            auditing = _Auditing(setup, 0, policy)
            with bulk_gc():  # for all shares: see bulk_gc
                for share in range(len(shares)):
                    gather.take("done", (share, 0), _own_part(auditing, gather, share))
                    gather.poll()
                summary = gather.wait()
            for ended in workers:
                ended.join()
        finally:
            _end_workers(workers)
            results.cancel_join_thread()
            results.close()
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
    summary.elapsed = time.perf_counter() - started
    return summary


def _worker_options(options: AuditOptions) -> AuditOptions:
    """The options each worker of a split audit runs with."""
    jobs = options.jobs
    # Each worker loads the vetting data and keeps the engine's per-host caches of its own
    # besides its record cache: a smaller record cache pays for part of that.
    return dataclasses.replace(
        options,
        jobs=1,
        cache_size=max(1, options.cache_size // jobs),
        cache_bytes=max(1, options.cache_bytes // (WORKER_CACHE_DIVISOR * jobs)),
    )


def _share_folder(temp_dir: str | None) -> str:
    """A new temporary folder for the shares' outputs, in ``temp_dir`` (the system's when
    None). Raises :class:`UrlvetError` naming the place when it cannot be made."""
    try:
        return tempfile.mkdtemp(prefix=".urlvet-share-", dir=temp_dir)
    except OSError as exc:
        where = temp_dir or tempfile.gettempdir()
        raise UrlvetError(
            f"{where}: cannot create a temporary folder for the shares of the audit: "
            f"{exc.strerror or exc}"
        ) from None


def _own_part(auditing: _Auditing, gather: _Gather, share: int) -> _ShareResult:
    """This process's part (worker 0's) of ``share``; a failure is reported as a worker
    process's is."""
    try:
        return auditing.share(share, partial(gather.progress, (share, 0)))
    except (UrlvetError, OSError):
        raise
    except Exception as exc:
        raise UrlvetError(f"the audit failed: {type(exc).__name__}: {exc}") from exc


def _end_workers(workers: list[BaseProcess]) -> None:
    """End the worker processes still running and wait for each: never left waiting on one."""
    for started_worker in workers:
        if started_worker.is_alive():
            started_worker.terminate()
    for started_worker in workers:
        started_worker.join(timeout=_END_WAIT)
        if started_worker.is_alive():
            started_worker.kill()
            started_worker.join()


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


class _Gather:
    """The parent's side of a split audit: the workers' messages, the shares' results, and
    the output, written share by share in input order as every worker is done with one."""

    def __init__(
        self,
        setup: _Setup,
        results: Queue[Message],
        workers: list[BaseProcess],
        reporter: Reporter,
        writer: JsonWriter,
        progress: ProgressFn | None,
    ) -> None:
        self.setup = setup
        self.results = results
        self.workers = workers
        self.reporter = reporter
        self.writer = writer
        self.shown_progress = progress
        self.summary = Summary()
        self.finished: dict[tuple[int, int], _ShareResult] = {}
        self.seen: dict[tuple[int, int], tuple[int, int, str]] = {}
        self.next_share = 0

    def progress(self, where: tuple[int, int], done_bytes: int, urls: int, name: str) -> None:
        """A worker's progress on a share (this process's, or one a message brought)."""
        self.seen[where] = (done_bytes, urls, name)
        if self.shown_progress is not None:
            seen = self.seen
            name = next((s[2] for _, s in sorted(seen.items()) if s[2]), "")
            # Every worker reads every byte: the bytes read are their mean.
            done = sum(s[0] for s in seen.values()) // self.setup.jobs
            self.shown_progress(done, sum(s[1] for s in seen.values()), name)

    def take(self, kind: str, where: tuple[int, int], payload: Any) -> None:
        """One message: a share done, progress, or a worker's failure (raised)."""
        if kind == "failed":
            raise UrlvetError(f"an audit worker process failed: {payload}")
        if kind == "done":
            self.finished[where] = payload
            self.seen[where] = (self.seen.get(where, (0, 0, ""))[0], payload.summary.urls, "")
        else:
            self.progress(where, *payload)
        self._write_ready()

    def poll(self) -> None:
        """Take the messages there are, without waiting; fail the run when a worker died."""
        while True:
            try:
                kind, where, payload = self.results.get_nowait()
            except queue.Empty:
                break
            self.take(kind, where, payload)
        self._check_workers()

    def wait(self) -> Summary:
        """Wait for the workers' remaining shares and write them; the run's summary."""
        shares = len(self.setup.shares)
        while self.next_share < shares:
            try:
                kind, where, payload = self.results.get(timeout=0.5)
            except queue.Empty:
                if self._check_workers():
                    # The workers' last messages are in the pipe once they have ended.
                    while True:
                        try:
                            kind, where, payload = self.results.get(timeout=0.1)
                        except queue.Empty:
                            break
                        self.take(kind, where, payload)
                    if self.next_share < shares:  # never leave the output short
                        raise UrlvetError(
                            "the audit workers ended before all of the input was audited"
                        ) from None
            else:
                self.take(kind, where, payload)
        return self.summary

    def _check_workers(self) -> bool:
        """Fail the run when a worker process died; True when all of them have ended."""
        for worker in self.workers:
            if not worker.is_alive() and worker.exitcode != 0:
                # Killed, or out of memory: a worker that fails sends why and exits 0.
                raise UrlvetError(
                    f"an audit worker process ended unexpectedly (exit code {worker.exitcode})"
                )
        return not any(w.is_alive() for w in self.workers)

    def _write_ready(self) -> None:
        jobs = self.setup.jobs
        finished = self.finished
        while self.next_share < len(self.setup.shares) and all(
            (self.next_share, w) in finished for w in range(jobs)
        ):
            index = self.next_share
            parts = [finished.pop((index, w)) for w in range(jobs)]
            _splice(self.setup, index, parts, self.writer)
            _merge(self.setup.shares[index], parts, self.summary, self.reporter)
            self.next_share += 1


def _splice(setup: _Setup, index: int, parts: list[_ShareResult], writer: JsonWriter) -> None:
    """Append the objects of share ``index`` to the output in input order, from its parts
    (each in input order, one object a line), and remove the parts."""
    paths = [_part_path(setup.folder, index, w) for w in range(len(parts))]
    keys = [array("Q", part.keys) for part in parts]
    files = [open(path, "rb", buffering=_SPLICE_BUFFER) for path in paths]  # noqa: SIM115
    try:
        every = array("Q")
        reads: list[Callable[[], bytes]] = []
        for k, f in zip(keys, files, strict=True):
            if k and (
                f.seek(0, os.SEEK_END) == 0 or f.seek(-1, os.SEEK_END) < 0 or f.read(1) != b"\n"
            ):
                raise UrlvetError("an audit worker's part of the output is cut short")
            f.seek(0)
            every.extend(k)
            reads.extend([f.readline] * len(k))
        # Each part is in order: sorting the keys merges runs. Stable: a line's objects
        # (all from one worker) keep their order.
        order = sorted(range(len(every)), key=every.__getitem__)
        for at in range(0, len(order), _SPLICE_BATCH):
            batch = [reads[i]() for i in order[at : at + _SPLICE_BATCH]]
            if b"" in batch:
                raise UrlvetError("an audit worker's part of the output is cut short")
            writer.splice_lines(batch)
        if any(f.read(1) for f in files):
            raise UrlvetError("an audit worker's part of the output has more than it should")
    finally:
        for f in files:
            f.close()
        for path in paths:
            _remove(path)


def _merge(share: Share, parts: list[_ShareResult], summary: Summary, reporter: Reporter) -> None:
    """Count in a share's parts: what every worker read (files, lines) once, from worker 0,
    the rest added up; show its input problems in order; keep its baseline entries."""
    ordinals = _ordinals(share)
    show: Callable[[Diagnostic], None] | None = reporter.on_diagnostic
    if show is not None:
        shown = [d for part in parts for d in part.shown]
        shown.sort(key=lambda d: _order_key(ordinals, d.path, d.line))
        for diag in shown:
            show(diag)
    whole = Summary()
    for part in parts:
        whole.add(part.summary)
    read = parts[0].summary
    whole.sources, whole.skipped_files, whole.lines = read.sources, read.skipped_files, read.lines
    first: dict[str, tuple[int, int]] = {}
    for part in parts:
        for code, at in part.first.items():
            if code not in first or at < first[code]:
                first[code] = at
    whole.by_rule = {c: whole.by_rule[c] for c in sorted(whole.by_rule, key=first.__getitem__)}
    summary.add(whole)
    if reporter.collected is not None:
        for part in parts:
            if part.collected is not None:
                for entry in part.collected:
                    reporter.collected.setdefault(entry.fingerprint, entry)


def _remove(path: str) -> None:
    Path(path).unlink(missing_ok=True)
