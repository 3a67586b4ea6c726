"""``urlvet audit --spark-master``: the audit's pipeline with a Spark cluster as its strategy.

The audit reads its sources, keeps its cache and writes its report on this machine, exactly as
it does with the in-process and process-pool strategies (:mod:`urlvet.audit.pipeline`); only
the vetting of the distinct keys it has not seen goes to Spark. A Spark job has a fixed cost
(scheduling, shipping the policy, starting Python workers), so the strategy gathers
:data:`WINDOWS_PER_JOB` windows of keys into one job (``lookahead``: the loop lets that many
windows wait) and runs it when the loop asks for the oldest window's records. Each Python
worker builds one :class:`~urlvet.engine.Vetter` for the policy, shipped as data, and keeps it
(:func:`urlvet.spark.worker_vetter`); records are made by the audit's own
:class:`~urlvet.audit.RecordVetter` and come back pickled, in the keys' order. The output is
the same as an in-process audit's, byte for byte: a test compares them.

Offline only: DNS answers on workers in another network would not be the answers this
machine gets. Spark Connect sessions have no RDDs and are refused with a clear message.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from urlvet.errors import InputError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from urlvet.audit import AuditOptions, Record
    from urlvet.audit.cache import Key
    from urlvet.audit.pipeline import RecordVetter
    from urlvet.policy import Policy

WINDOWS_PER_JOB = 48
"""Windows of keys (4,096 occurrences each) gathered into one Spark job."""
KEYS_PER_PARTITION = 4096
"""About how many keys one task vets."""

_RECORDERS: dict[tuple[str, str | None, bool, bool], RecordVetter] = {}


def _vet_partition(
    policy_json: str,
    policy_key: str,
    server_name: str | None,
    redact: bool,
    with_json: bool,
    keys: Iterable[Key],
) -> Iterator[Record]:
    """On a worker: the records of one partition's keys, in order."""
    import gc

    from urlvet.audit.pipeline import BULK_GC_THRESHOLDS, RecordVetter
    from urlvet.spark import worker_vetter

    key = (policy_key, server_name, redact, with_json)
    recorder = _RECORDERS.get(key)
    if recorder is None:
        vetter = worker_vetter(policy_json, policy_key)
        recorder = _RECORDERS[key] = RecordVetter(vetter, server_name, redact, with_json)
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


class SparkStrategy:
    """Vets the audit's cache misses on Spark, :data:`WINDOWS_PER_JOB` windows a job."""

    def __init__(
        self,
        spark: SparkSession,
        policy: Policy,
        options: AuditOptions,
        *,
        windows_per_job: int = WINDOWS_PER_JOB,
    ) -> None:
        self.lookahead = max(0, windows_per_job - 1)
        self.jobs = 0
        """Spark jobs run so far."""
        self._spark = spark
        self._policy = policy
        self._options = options
        self._policy_json = policy.model_dump_json()
        self._policy_key = hashlib.sha256(self._policy_json.encode()).hexdigest()
        self._job = _Job()
        self._local: list[RecordVetter] = []

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
            _vet_partition,
            self._policy_json,
            self._policy_key,
            options.server_name,
            options.redact_secrets,
            options.json_records,
        )
        self.jobs += 1
        records: list[Record] = context.parallelize(keys, slices).mapPartitions(vet).collect()
        return records

    def vet_now(self, key: Key) -> Record:
        if not self._local:
            from urlvet.audit.pipeline import RecordVetter
            from urlvet.engine import Vetter

            self._local.append(RecordVetter.for_options(Vetter(self._policy), self._options))
        return self._local[0](key)

    def quick(self, key: Key) -> Record | None:
        return None  # the shapes live on the workers

    def close(self) -> None:
        pass


def start_session(master: str) -> tuple[Any, bool]:
    """A Spark session on ``master`` (the active one when there is one) and whether this call
    created it (the caller then stops it). Raises InputError when Spark cannot start."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise InputError(
            "--spark-master needs pyspark, pandas and pyarrow: pip install 'urlvet[spark]'"
        ) from None
    spark = SparkSession.getActiveSession()
    if spark is not None:
        return spark, False
    builder = SparkSession.builder.appName("urlvet audit").master(master)
    if master.startswith("local"):
        # Local workers run this Python, the one that has urlvet.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = builder.config("spark.pyspark.python", sys.executable).config(
            "spark.ui.enabled", "false"
        )
    # The audit's own progress line, not Spark's, goes to stderr.
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    try:
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
    except Exception as exc:  # py4j and JVM start-up errors come in many classes
        raise InputError(
            f"cannot start Spark on {master!r} (it needs Java 17 or later, JAVA_HOME): "
            f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        ) from None
    try:
        spark.sparkContext  # noqa: B018 - Spark Connect sessions have none
    except Exception:
        raise InputError(
            "--spark-master needs a classic Spark session: Spark Connect has no RDDs"
        ) from None
    return spark, True


__all__ = ["WINDOWS_PER_JOB", "SparkStrategy", "start_session"]
