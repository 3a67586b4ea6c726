"""The audit pipeline: one loop, window -> look up -> vet -> report, and the strategies that vet.

The loop reads occurrences a window at a time, looks each key (URL, server, message) up in
the :class:`~urlvet.audit.cache.RecordCache`, hands the window's distinct misses to a
:class:`Strategy`, and reports every occurrence of a window in input order once its records
are in. Nothing holds more than a few windows of input.

A strategy is how the misses get vetted; the loop never knows which one runs:

- :class:`InProcess`: in this process, offline. The default.
- :class:`ProcessPool`: offline, in worker processes (``--jobs``); the loop reads ahead while
  the workers vet, a few windows in flight.
- :class:`Dns`: with DNS (and TLS probes) on an event loop: a window's misses are grouped by
  host, hosts run concurrently and the URLs of one host one after another, so that the
  resolver's cache answers all but the first lookup of each host.

A strategy that needs more than this package is handed in by the caller: the Spark strategy
(``--spark-master``) is :class:`urlvet.spark.strategy.SparkStrategy`, which the command line
picks; the audit never imports Spark.

Each strategy's ``submit`` takes the keys and returns a :class:`Batch` whose records come back
in the keys' order.

Which path ``--jobs N`` (N > 1) takes offline: with jsonl or json output and regular,
uncompressed files of at least two shares' worth of bytes, the audit is split
(:mod:`urlvet.audit.split`): the input is cut into shares at line starts and N workers each
run this loop with :class:`InProcess` on one share after another, the main process only
joining the outputs. For stdin, compressed or small inputs and the text, SARIF and GitHub
formats, this loop runs with :class:`ProcessPool`.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import os
import queue
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, Protocol

from urlvet.audit.cache import Key, RecordCache, SharedParts
from urlvet.audit.options import AuditOptions
from urlvet.audit.output.record import Record, record_from_verdict
from urlvet.audit.report import Reporter, Summary
from urlvet.audit.sources import Diagnostic, LineRoute, Meter, Occurrence, Reader, Source
from urlvet.checks.interaction import FormText
from urlvet.errors import InputError

if TYPE_CHECKING:
    from multiprocessing import Queue
    from multiprocessing.process import BaseProcess

    from urlvet.engine import Vetter
    from urlvet.policy import Policy
    from urlvet.server import Server

WINDOW = 4096
"""Occurrences read ahead of the results, per batch."""
DNS_CONCURRENCY = 64
"""Hosts whose URLs are vetted at once when DNS is on."""
SERVER_MEMO = 4096
"""Server spellings whose parsed :class:`~urlvet.server.Server` a vetter keeps."""

ProgressFn = Callable[[int, int, str], None]
"""Called now and then with (bytes read, URL occurrences done, current source name)."""


BULK_GC_THRESHOLDS = (50_000, 20, 100)
"""The collector's thresholds while an audit runs. An audit allocates a few records, strings
and tuples per URL and keeps caches of hundreds of thousands of them: at the default (700
allocations) the collector runs every few URLs and walks those caches, a fifth of the run.
Collections still happen (every 50,000 allocations, and in full as the old generation grows),
so cycles are still freed."""


@contextmanager
def bulk_gc() -> Iterator[None]:
    """The collector at :data:`BULK_GC_THRESHOLDS` for the block, then as it was. Inside
    another such block it changes nothing: a worker of a split audit holds it around all its
    shares, since the thresholds put back after each share would make the next allocation
    walk the whole heap (the old generation's count is past the default's by then)."""
    before = gc.get_threshold()
    if before == BULK_GC_THRESHOLDS:
        yield
        return
    gc.set_threshold(*BULK_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def bulk_gc_to_the_end() -> None:
    """The collector at :data:`BULK_GC_THRESHOLDS` for the rest of the process, for one that
    audits and then ends with :func:`end_process`. Putting the thresholds back after an
    audit makes the next allocation walk the whole heap, a fifth of a second with an audit's
    caches in it, for nothing when the process is about to end; :func:`bulk_gc` blocks inside
    then change nothing."""
    gc.set_threshold(*BULK_GC_THRESHOLDS)


_WORKER_SIGNALS = ("SIGINT", "SIGTERM")


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) and SIGTERM back while worker processes start, and take them after.

    Ctrl-C reaches the whole process group. Arriving during a fork, it would raise
    KeyboardInterrupt inside the fork's own handlers, where Python reports it as ignored: the
    run would go on as if nobody had pressed it. And a worker that the parent ends (SIGTERM)
    while it is still starting would run the parent's handler and go on. Held back, the
    parent takes them once the workers are started (and then ends them); the workers start
    with both held, and take them in :func:`worker_signals`."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {getattr(signal, name) for name in _WORKER_SIGNALS}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def worker_signals() -> None:
    """In a worker process started under :func:`signals_held`: ignore Ctrl-C, which the parent
    handles for the whole run (it ends the workers, so that they never print tracebacks of
    their own), and let SIGTERM end the worker at once; then take the signals."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {getattr(signal, name) for name in _WORKER_SIGNALS})


def end_process(code: int) -> NoReturn:
    """End this process with exit code ``code`` once the standard streams are flushed, without
    freeing its objects one by one: an audit's caches hold millions of them, and freeing them
    at exit took about half a second of a run of ten. Only where the process has nothing left
    to do: its output written and closed, its workers ended, its temporary files removed."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # closed, or a reader that went away
            stream.flush()
    os._exit(code)


# --- vetting keys into records --------------------------------------------------------------


class RecordVetter:
    """Vets keys offline into records; the same code runs in this process and in workers."""

    def __init__(
        self, vetter: Vetter, server_name: str | None, redact: bool, with_json: bool
    ) -> None:
        self.vetter = vetter
        self.server_name = server_name
        self.redact = redact
        self.with_json = with_json
        self._servers: dict[str | None, Server | None] = {None: None}

    @classmethod
    def for_options(cls, vetter: Vetter, options: AuditOptions) -> RecordVetter:
        """The record vetter an audit with ``options`` uses."""
        return cls(vetter, options.server_name, options.redact_secrets, options.json_records)

    def server(self, text: str | None) -> Server | None:
        """The Server for a server spelling (None when it is not valid: the reader reports
        that, and the URL is vetted without a server)."""
        found = self._servers.get(text, self)
        if found is not self:
            return found  # type: ignore[return-value]
        from urlvet.server import as_server

        try:
            srv = as_server(text, name=self.server_name)
        except InputError:
            srv = None
        if len(self._servers) < SERVER_MEMO:
            self._servers[text] = srv
        return srv

    def record(self, verdict: Any) -> Record:
        """The record of a verdict, as this audit's output needs it."""
        return record_from_verdict(verdict, redact_secrets=self.redact, with_json=self.with_json)

    def __call__(self, key: Key) -> Record:
        if key[0].__class__ is FormText:  # a form elicitation (UV701-UV706), not a URL
            from urlvet.mcp.forms import vet_form_text

            return self.record(vet_form_text(self.vetter, key[0], key[2], self.server(key[1])))
        url, server_text, message = key
        verdict = self.vetter.vet_offline(url, self.server(server_text), message=message)
        return self.record(verdict)


# --- strategies -----------------------------------------------------------------------------


class Batch(Protocol):
    """The records of one window's misses, on their way."""

    def ready(self) -> bool:
        """True when :meth:`records` would not wait."""

    def records(self) -> list[Record]:
        """The records, in the order of the keys submitted (waits for them)."""


class Strategy(Protocol):
    """How the cache misses of a window are vetted."""

    lookahead: int
    """Windows that may be in flight before the oldest is reported (0: report each window
    as soon as it is submitted)."""

    def submit(self, keys: list[Key]) -> Batch:
        """Start vetting ``keys`` (distinct, none of them cached)."""

    def vet_now(self, key: Key) -> Record:
        """Vet one key at once: a record the cache evicted before its window was reported."""

    def close(self) -> None:
        """Release workers, event loops and the like (called once, at the end)."""


class Done:
    """A batch whose records are already there."""

    __slots__ = ("_records",)

    def __init__(self, records: list[Record]) -> None:
        self._records = records

    def ready(self) -> bool:
        return True

    def records(self) -> list[Record]:
        return self._records


class InProcess:
    """Vets in this process, offline."""

    lookahead = 0

    def __init__(self, vet: RecordVetter) -> None:
        self._vet = vet

    def submit(self, keys: list[Key]) -> Batch:
        vet = self._vet
        return Done([vet(k) for k in keys])

    def vet_now(self, key: Key) -> Record:
        return self._vet(key)

    def close(self) -> None:
        pass


def _serve(
    inbox: Queue[list[Key] | None],
    outbox: Queue[list[Record] | str],
    policy: dict[str, Any],
    server_name: str | None,
    redact: bool,
    with_json: bool,
) -> None:
    """A worker process: builds its Vetter from the policy's data (any start method works),
    then vets each list of keys it is sent into a list of records, in order, until None."""
    from urlvet.engine import Vetter
    from urlvet.policy import Policy

    worker_signals()
    try:
        vet = RecordVetter(Vetter(Policy.model_validate(policy)), server_name, redact, with_json)
        bulk_gc_to_the_end()
        while (keys := inbox.get()) is not None:
            outbox.put([vet(k) for k in keys])
    except Exception as exc:
        outbox.put(f"{type(exc).__name__}: {exc}")
        return
    outbox.close()
    outbox.join_thread()  # every list of records is in the pipe
    end_process(0)


class _ShardedBatch:
    """One window's keys, split between the workers by host; records come back per worker
    in the order that worker was sent its lists, so a window is read after earlier ones."""

    __slots__ = ("_order", "_parts", "_pool")

    def __init__(self, pool: ProcessPool, parts: dict[int, list[int]], order: int) -> None:
        self._pool = pool
        self._parts = parts
        self._order = order

    def ready(self) -> bool:
        return all(not self._pool.outboxes[w].empty() for w in self._parts)

    def records(self) -> list[Record]:
        out: list[Record | None] = [None] * self._order
        for worker, positions in self._parts.items():
            for i, rec in zip(positions, self._pool.receive(worker), strict=True):
                out[i] = rec
        return out  # type: ignore[return-value]


class VetsElsewhere:
    """What the strategies that vet in other processes (:class:`ProcessPool`, the Spark
    strategy) share: the rare key the loop needs at once is vetted here, by a Vetter built on
    first use."""

    def __init__(self, policy: Policy, options: AuditOptions) -> None:
        self._policy = policy
        self._options = options
        self._local: list[RecordVetter] = []

    def vet_now(self, key: Key) -> Record:
        if not self._local:
            from urlvet.engine import Vetter

            self._local.append(RecordVetter.for_options(Vetter(self._policy), self._options))
        return self._local[0](key)


class ProcessPool(VetsElsewhere):
    """Vets offline in ``jobs`` worker processes, each with its own Vetter built from the
    policy's data.

    A window's keys are split by host, the same host always to the same worker, so each
    worker judges its share of the hosts once (the per-host findings, the lookalike analysis)
    instead of every worker judging every host. Each worker gets one list a window and sends
    one list of records back; queues, not pipes, so that neither side ever blocks the other.
    """

    def __init__(self, policy: Policy, options: AuditOptions) -> None:
        import multiprocessing

        super().__init__(policy, options)
        self.lookahead = 2 * options.jobs
        context = multiprocessing.get_context()
        self.inboxes: list[Queue[list[Key] | None]] = []
        self.outboxes: list[Queue[list[Record] | str]] = []
        self._workers: list[BaseProcess] = []
        data = policy.model_dump(mode="json")
        with signals_held():
            self._start(context, data, options)

    def _start(self, context: Any, data: dict[str, Any], options: AuditOptions) -> None:
        for _ in range(options.jobs):
            inbox: Queue[list[Key] | None] = context.Queue()
            outbox: Queue[list[Record] | str] = context.Queue()
            worker = context.Process(
                target=_serve,
                args=(
                    inbox,
                    outbox,
                    data,
                    options.server_name,
                    options.redact_secrets,
                    options.json_records,
                ),
                daemon=True,
            )
            worker.start()
            self.inboxes.append(inbox)
            self.outboxes.append(outbox)
            self._workers.append(worker)

    def submit(self, keys: list[Key]) -> Batch:
        jobs = len(self._workers)
        shares: dict[int, list[Key]] = {}
        parts: dict[int, list[int]] = {}
        for i, key in enumerate(keys):
            worker = hash(_host_text(key[0])) % jobs
            shares.setdefault(worker, []).append(key)
            parts.setdefault(worker, []).append(i)
        for worker, share in shares.items():
            self.inboxes[worker].put(share)
        return _ShardedBatch(self, parts, len(keys))

    def receive(self, worker: int) -> list[Record]:
        """The next list of records from ``worker`` (waits; fails if the worker died)."""
        outbox = self.outboxes[worker]
        while True:
            try:
                got = outbox.get(timeout=1.0)
            except queue.Empty:
                if not self._workers[worker].is_alive():
                    raise RuntimeError(
                        f"an audit worker process ended unexpectedly "
                        f"(exit code {self._workers[worker].exitcode})"
                    ) from None
                continue
            if isinstance(got, str):
                raise RuntimeError(f"an audit worker process failed: {got}")
            return got

    def close(self) -> None:
        for inbox in self.inboxes:
            inbox.put(None)
        for worker in self._workers:
            worker.join(timeout=5)
            if worker.is_alive():
                worker.terminate()
                worker.join()
        for inbox in self.inboxes:
            inbox.close()
        for outbox in self.outboxes:
            outbox.close()


def _host_text(url: str) -> str:
    """The host part of a URL as written, cheaply: only to send a host's URLs to one worker
    (any spelling that maps one host to one string will do; correctness never depends on it)."""
    start = url.find("//")
    if start < 0:
        return url[:64]
    end = len(url)
    for stop in "/?#":
        k = url.find(stop, start + 2)
        if 0 <= k < end:
            end = k
    return url[start + 2 : end]


class Dns:
    """Vets with DNS (and TLS probes when the policy asks) on an event loop of its own."""

    lookahead = 0

    def __init__(self, vet: RecordVetter) -> None:
        self._vet = vet
        self._loop = asyncio.new_event_loop()

    def submit(self, keys: list[Key]) -> Batch:
        by_host: dict[str, list[Key]] = {}
        for key in keys:
            by_host.setdefault(host_of(key[0]), []).append(key)
        out: dict[Key, Record] = {}
        self._loop.run_until_complete(self._vet_hosts(list(by_host.values()), out))
        return Done([out[k] for k in keys])

    async def _vet_hosts(self, groups: list[list[Key]], out: dict[Key, Record]) -> None:
        limit = asyncio.Semaphore(DNS_CONCURRENCY)
        vet = self._vet

        async def one_host(keys: list[Key]) -> None:
            async with limit:
                for key in keys:
                    url, server, message = key
                    if url.__class__ is FormText:  # a form: nothing to resolve
                        out[key] = vet(key)
                        continue
                    verdict = await vet.vetter.avet(url, vet.server(server), message=message)
                    out[key] = vet.record(verdict)

        await asyncio.gather(*(one_host(keys) for keys in groups))

    def vet_now(self, key: Key) -> Record:
        return self.submit([key]).records()[0]

    def close(self) -> None:
        self._loop.close()


# --- the loop -------------------------------------------------------------------------------


class _Window(NamedTuple):
    """Occurrences read ahead, with what is known of them so far."""

    items: list[Occurrence | Diagnostic]
    found: list[Record | None]
    """The cached record of each item, when there was one as the window was read."""
    keys: list[Key]
    """The keys submitted, in order."""
    batch: Batch
    occurrences_only: bool
    """True when every item is an occurrence (no diagnostic): reported in one row."""


class Auditor:
    """Runs an audit: reads sources, vets each distinct key once, reports every occurrence."""

    def __init__(self, policy: Policy, options: AuditOptions | None = None) -> None:
        self.policy = policy
        self.options = options or AuditOptions()

    @property
    def uses_dns(self) -> bool:
        """True when the policy resolves names or probes TLS (the audit then runs on an event
        loop, probes bounded by the prober's concurrency and cached per address, port, host)."""
        compiled = self.policy.compiled
        return bool(compiled.dns_enabled or compiled.tls_probe)

    def run(
        self,
        sources: Iterable[Source],
        reporter: Reporter,
        progress: ProgressFn | None = None,
        strategy: Strategy | None = None,
        route: LineRoute | None = None,
    ) -> Summary:
        """Audit the sources; results go to ``reporter``. Returns the run's summary.

        ``strategy``: how to vet (closed at the end); by default in process, in worker
        processes with ``jobs`` > 1, or on an event loop when the policy uses DNS.
        ``route``: audit only the lines it gives this worker (a routed split audit).
        The caller starts the reporter's writer before and finishes it after (with the
        summary), so that it can add to the summary first (a baseline written, say).
        """
        started = time.perf_counter()
        meter = Meter()
        reader = Reader(self.options, meter, route)
        items = reader.read(sources)
        cache = RecordCache(self.options.cache_size, self.options.cache_bytes)
        if strategy is None:
            strategy, items = self._strategy(items)
        try:
            with bulk_gc():
                _loop(items, reporter, cache, strategy, meter, progress)
        finally:
            strategy.close()
        return reporter.summarise(reader, cache.misses, time.perf_counter() - started)

    def _strategy(
        self, items: Iterator[Occurrence | Diagnostic]
    ) -> tuple[Strategy, Iterator[Occurrence | Diagnostic]]:
        from urlvet.engine import Vetter

        if self.uses_dns:
            return Dns(RecordVetter.for_options(Vetter(self.policy), self.options)), items
        if self.options.jobs > 1:
            # Starting workers costs more than vetting a small input here.
            head = list(itertools.islice(items, WINDOW))
            items = itertools.chain(head, items)
            if len(head) >= WINDOW:
                return ProcessPool(self.policy, self.options), items
        return InProcess(RecordVetter.for_options(Vetter(self.policy), self.options)), items


_KEY = slice(4, 7)
"""The part of an :class:`Occurrence` that is its key: url, server, message (a test keeps it
so), cut out in one step."""


def _windows(items: Iterator[Occurrence | Diagnostic]) -> Iterator[list[Occurrence | Diagnostic]]:
    while True:
        window = list(itertools.islice(items, WINDOW))
        if not window:
            return
        yield window


def _loop(
    items: Iterator[Occurrence | Diagnostic],
    reporter: Reporter,
    cache: RecordCache,
    strategy: Strategy,
    meter: Meter,
    progress: ProgressFn | None,
) -> None:
    """The one loop of every audit: window -> look up -> vet (the strategy) -> report."""
    share = SharedParts()
    get = cache.get
    inflight: set[Key] = set()
    pending: deque[_Window] = deque()
    done = 0

    def look_up(window: list[Occurrence | Diagnostic]) -> _Window:
        found: list[Record | None] = []
        keep = found.append
        keys: list[Key] = []
        fresh: set[Key] = set()
        occurrences_only = True
        for item in window:
            if item.__class__ is Diagnostic:
                keep(None)
                occurrences_only = False
                continue
            key: Key = item[_KEY]  # type: ignore[assignment,index]
            rec = get(key)
            if rec is None and key not in fresh and key not in inflight:
                fresh.add(key)
                keys.append(key)
            keep(rec)
        inflight.update(keys)
        cache.misses += len(keys)
        return _Window(window, found, keys, strategy.submit(keys), occurrences_only)

    def report(window: _Window) -> None:
        nonlocal done
        vetted: dict[Key, Record] = {}
        for key, new in zip(window.keys, window.batch.records(), strict=True):
            vetted[key] = shared = share(new)
            cache.put(key, shared)
            inflight.discard(key)

        def record_of(occ: Occurrence) -> Record:
            key = (occ.url, occ.server, occ.message)
            rec = vetted.get(key) or cache.get(key)
            if rec is None:  # vetted for an earlier window and evicted since
                rec = share(strategy.vet_now(key))
                cache.put(key, rec)
                cache.misses += 1
            return rec

        if window.occurrences_only:  # the whole window to the reporter in a row
            occurrences: list[Occurrence] = window.items  # type: ignore[assignment]
            reporter.occurrences(
                occurrences,
                [
                    rec if rec is not None else record_of(occ)
                    for occ, rec in zip(occurrences, window.found, strict=True)
                ],
            )
            done += len(occurrences)
            if progress is not None:
                progress(meter.bytes, done, meter.name)
            return
        done += _report_mixed(reporter, window, record_of)
        if progress is not None:
            progress(meter.bytes, done, meter.name)

    for window in _windows(items):
        pending.append(look_up(window))
        while len(pending) > strategy.lookahead or (pending and pending[0].batch.ready()):
            report(pending.popleft())
    while pending:
        report(pending.popleft())


def _report_mixed(
    reporter: Reporter, window: _Window, record_of: Callable[[Occurrence], Record]
) -> int:
    """Report a window that holds diagnostics: the occurrences between them go to the
    reporter in a row. How many occurrences it reported."""
    done = 0
    occs: list[Occurrence] = []
    recs: list[Record] = []
    for item, found in zip(window.items, window.found, strict=True):
        if item.__class__ is Diagnostic:
            if occs:
                reporter.occurrences(occs, recs)
                done += len(occs)
                occs, recs = [], []
            reporter.diagnostic(item)
            continue
        occ: Occurrence = item  # type: ignore[assignment]
        occs.append(occ)
        recs.append(found if found is not None else record_of(occ))
    if occs:
        reporter.occurrences(occs, recs)
        done += len(occs)
    return done


def host_of(url: str) -> str:
    """The host a browser would connect to for ``url``, or '' when it has none."""
    from urlvet.url import InvalidURL, parse

    try:
        return parse(url).host.rstrip(".").lower()
    except (InvalidURL, ValueError):
        return ""
