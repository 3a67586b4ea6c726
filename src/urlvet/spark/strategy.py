"""``urlvet audit --spark-master``: the audit's strategy that vets on Spark.

The audit reads its sources, keeps its cache and writes its report on this machine, as with
the other strategies; only the vetting of the distinct keys it has not seen goes to Spark. A
Spark job has a fixed cost (scheduling, shipping the policy, starting Python workers), so
the strategy gathers :data:`WINDOWS_PER_JOB` windows of keys into one job (``lookahead``: the
loop lets that many windows wait) and runs it when the loop asks for the oldest window's
records. Each Python worker builds one Vetter for the policy, shipped as data, and keeps it
(:func:`urlvet.spark.worker_vetter`); records are made by
:class:`~urlvet.audit.pipeline.RecordVetter` and come back pickled, in the keys' order. The
output is an in-process audit's, byte for byte: a test compares them.

Offline only: DNS answers on workers in another network would not be the answers this
machine gets. pyspark is imported by :func:`urlvet.spark.start_session`, never here.
"""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING

from urlvet.audit.cache import Key
from urlvet.audit.options import AuditOptions
from urlvet.audit.output.record import Record
from urlvet.audit.pipeline import BULK_GC_THRESHOLDS, Auditor, RecordVetter, VetsElsewhere
from urlvet.errors import InputError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from urlvet.policy import Policy

WINDOWS_PER_JOB = 48
"""Windows of keys (4,096 occurrences each) gathered into one Spark job."""
KEYS_PER_PARTITION = 4096
"""About how many keys one task vets."""

_SPARK_RECORDERS: dict[tuple[str, str | None, bool, bool], RecordVetter] = {}


def _spark_partition(
    policy_json: str,
    policy_key: str,
    server_name: str | None,
    redact: bool,
    with_json: bool,
    keys: Iterable[Key],
) -> Iterator[Record]:
    """On a worker: the records of one partition's keys, in order."""
    from urlvet.spark import worker_vetter

    key = (policy_key, server_name, redact, with_json)
    recorder = _SPARK_RECORDERS.get(key)
    if recorder is None:
        vetter = worker_vetter(policy_json, policy_key)
        recorder = _SPARK_RECORDERS[key] = RecordVetter(vetter, server_name, redact, with_json)
        gc.set_threshold(*BULK_GC_THRESHOLDS)
    for k in keys:
        yield recorder(k)


class _Job:
    """The keys gathered for one Spark job, then its records."""

    __slots__ = ("keys", "records")

    def __init__(self) -> None:
        self.keys: list[Key] = []
        self.records: list[Record] | None = None


class _SparkBatch:
    """One window's share of a job."""

    __slots__ = ("_count", "_job", "_start", "_strategy")

    def __init__(self, strategy: SparkStrategy, job: _Job, start: int, count: int) -> None:
        self._strategy = strategy
        self._job = job
        self._start = start
        self._count = count

    def ready(self) -> bool:
        return self._job.records is not None

    def records(self) -> list[Record]:
        records = self._strategy.run(self._job)
        return records[self._start : self._start + self._count]


class SparkStrategy(VetsElsewhere):
    """Vets the audit's cache misses on Spark, :data:`WINDOWS_PER_JOB` windows a job."""

    def __init__(
        self,
        spark: SparkSession,
        policy: Policy,
        options: AuditOptions,
        *,
        windows_per_job: int = WINDOWS_PER_JOB,
    ) -> None:
        super().__init__(policy, options)
        self.lookahead = max(0, windows_per_job - 1)
        self.jobs = 0
        """Spark jobs run so far."""
        self._spark = spark
        self._policy_json = policy.model_dump_json()
        self._policy_key = hashlib.sha256(self._policy_json.encode()).hexdigest()
        self._job = _Job()

    def submit(self, keys: list[Key]) -> _SparkBatch:
        job = self._job
        start = len(job.keys)
        job.keys.extend(keys)
        return _SparkBatch(self, job, start, len(keys))

    def run(self, job: _Job) -> list[Record]:
        """The records of ``job``, running it first when it has not run."""
        if job.records is None:
            if job is self._job:
                self._job = _Job()  # keys submitted from now on go to the next job
            job.records = self._vet(job.keys) if job.keys else []
            if len(job.records) != len(job.keys):
                raise RuntimeError(
                    f"Spark returned {len(job.records)} records for {len(job.keys)} URLs"
                )
        return job.records

    def _vet(self, keys: list[Key]) -> list[Record]:
        context = self._spark.sparkContext
        slices = max(1, min(len(keys) // KEYS_PER_PARTITION + 1, 4 * context.defaultParallelism))
        options = self._options
        vet = partial(
            _spark_partition,
            self._policy_json,
            self._policy_key,
            options.server_name,
            options.redact_secrets,
            options.json_records,
        )
        self.jobs += 1
        records: list[Record] = context.parallelize(keys, slices).mapPartitions(vet).collect()
        return records

    def close(self) -> None:
        pass


@contextmanager
def spark_strategy(master: str, policy: Policy, options: AuditOptions) -> Iterator[SparkStrategy]:
    """The Spark strategy of an audit with ``policy`` and ``options`` on ``master`` (``local[4]``,
    ``spark://host:7077``, ``yarn``), for the block; a session this call started is stopped
    after it.

    Raises :class:`~urlvet.errors.InputError` before Spark starts when the audit would need DNS
    or TLS probes (the strategy vets offline) or worker processes (``jobs`` > 1), and when Spark
    cannot start.
    """
    from urlvet.spark import start_session

    if Auditor(policy, options).uses_dns:
        raise InputError("--spark-master vets offline: add --no-dns (and leave the TLS probe off)")
    if options.jobs > 1:
        raise InputError("--spark-master and --jobs cannot be combined")
    spark, started = start_session(master)
    try:
        yield SparkStrategy(spark, policy, options)
    finally:
        if started:
            spark.stop()
