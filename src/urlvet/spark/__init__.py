"""urlvet on Apache Spark: vet a DataFrame's URLs, and the batch job ``python -m urlvet.spark``.

:func:`vet_dataframe` adds a verdict to every row of a DataFrame with ``mapInPandas``. The
policy travels to the workers as data (its JSON), never as a file path a worker may not see,
and each Python worker process builds one :class:`~urlvet.engine.Vetter` for it and keeps it
for every task and batch it runs. The job reads URL lists, free text or JSON Lines from any
path Spark reads (local, HDFS, S3...) and writes one record per URL, with the members
``urlvet audit --format jsonl`` writes, as Parquet or JSON Lines.

pyspark, pandas and pyarrow (the ``urlvet[spark]`` extra) are imported only when a function
here needs them: importing this module costs nothing without them.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, NoReturn

from urlvet.engine import Vetter
from urlvet.errors import InputError, PolicyError, UrlvetError
from urlvet.policy import Policy
from urlvet.server import as_server

if TYPE_CHECKING:
    import pandas as pd
    from pyspark import Accumulator
    from pyspark.sql import DataFrame, SparkSession

    from urlvet.audit import Record

InputKind = Literal["urls", "text", "json", "mcp"]
"""How the job reads its input: one URL a line, URLs in free text, JSON Lines records with
a URL field, or MCP JSON-RPC traffic (as ``urlvet audit`` reads JSON Lines)."""

VERDICT_COLUMNS = ("decision", "codes", "findings")
"""The columns :func:`vet_dataframe` adds."""

FINDINGS_TYPE = "array<struct<code:string,name:string,severity:string,message:string>>"
"""The Spark SQL type of the ``findings`` column :func:`vet_dataframe` adds."""

# The job's Parquet records: the members of `urlvet audit --format jsonl`, except the line
# (Spark splits files between tasks, so a row does not know its line number).
RECORD_SCHEMA = (
    "path string, input string, column int, url string, href string, decision string, "
    "codes array<string>, findings array<struct<code:string,name:string,severity:string,"
    "message:string,evidence:string,cwe:int>>, host string, host_unicode string, "
    "host_kind string, registrable_domain string, server string, message string"
)
_RECORD_FIELDS = (
    "path", "input", "column", "url", "href", "decision", "codes", "findings", "host",
    "host_unicode", "host_kind", "registrable_domain", "server", "message",
)  # fmt: skip

# Distinct (URL, server, message) keys whose records a task keeps across its batches; logs
# repeat URLs, and a task sees many batches of one file split.
RECORD_CACHE_SIZE = 65_536
# DNS lookups in flight per task when the job resolves names.
DNS_CONCURRENCY = 64
# Lines sampled to decide the input kind of `--input-kind auto`.
SNIFF_LINES = 20


# --- statistics from the workers ---------------------------------------------------------------


@dataclass
class WorkerStats:
    """What the workers did, gathered by a Spark accumulator (see :func:`stats_accumulator`).

    Spark applies a task's accumulator updates once per successful attempt of a stage that
    writes output, but a re-run stage (or a DataFrame evaluated twice) counts twice: treat
    these as a report on the run, not as exact counts.
    """

    setups: list[tuple[int, float]] = field(default_factory=list)
    """(process id, seconds) for each Vetter a Python worker built: parsing the policy,
    compiling it and vetting one URL to load what is loaded lazily."""
    batches: dict[int, int] = field(default_factory=dict)
    """Arrow batches vetted, per worker process id."""
    rows: int = 0
    """Rows vetted (null URLs not counted)."""
    decisions: dict[str, int] = field(default_factory=dict)
    """Rows per decision."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Input lines the job skipped, per reason."""
    invalid_servers: int = 0
    """Rows whose server value is not a server URL (vetted without a server, as audit does)."""
    cpu_seconds: float = 0.0
    """CPU time the Python workers spent in the tasks, reading and writing Arrow included:
    a measure of the work that does not depend on how busy the machine is."""

    def merge(self, other: WorkerStats) -> WorkerStats:
        """Add ``other`` into this object and return it."""
        self.setups.extend(other.setups)
        for pid, n in other.batches.items():
            self.batches[pid] = self.batches.get(pid, 0) + n
        self.rows += other.rows
        for key, n in other.decisions.items():
            self.decisions[key] = self.decisions.get(key, 0) + n
        for key, n in other.skipped.items():
            self.skipped[key] = self.skipped.get(key, 0) + n
        self.invalid_servers += other.invalid_servers
        self.cpu_seconds += other.cpu_seconds
        return self


def _stats_param() -> Any:
    from pyspark.accumulators import AccumulatorParam

    class _StatsParam(AccumulatorParam[WorkerStats]):
        def zero(self, value: WorkerStats) -> WorkerStats:
            return WorkerStats()

        def addInPlace(self, value1: WorkerStats, value2: WorkerStats) -> WorkerStats:
            return value1.merge(value2)

    return _StatsParam()


def stats_accumulator(spark: SparkSession) -> Accumulator[WorkerStats]:
    """A new accumulator for :func:`vet_dataframe`'s ``stats``; read ``.value`` after an action.

    Accumulators need a classic Spark session (not Spark Connect).
    """
    return spark.sparkContext.accumulator(WorkerStats(), _stats_param())


# --- the worker side ---------------------------------------------------------------------------

# One Vetter per Python worker process and policy, keyed by the hash of the policy's JSON.
# Module state on purpose: Spark reuses a worker process for many tasks, and a module global
# is the only thing that outlives a task there. A Vetter is immutable, so sharing it is safe.
_VETTERS: dict[str, Vetter] = {}

# What a worker vets to load what the engine loads lazily, so that setup time is paid (and
# measured) once, not by the first batch.
_WARM_UP_URL = "https://example.com/"


class _Plan(NamedTuple):
    """Everything a worker needs, shipped inside the function Spark sends it."""

    policy_json: str
    policy_key: str
    dns: bool
    redact_secrets: bool
    server: str | None
    stats: Any  # an Accumulator[WorkerStats], or None


def _plan(
    policy: Policy | None, *, dns: bool, server: str | None, redact: bool, stats: Any
) -> _Plan:
    chosen = policy if policy is not None else Policy()
    if dns and not chosen.dns.enabled:
        chosen = chosen.with_changes(dns={**chosen.dns.model_dump(mode="json"), "enabled": True})
    # Errors surface on the driver, once, not as a failed task on every worker: a server
    # that is not one, a policy whose compilation fails (a protected domain without a
    # registrable domain...).
    if server is not None:
        as_server(server)
    chosen.compiled  # noqa: B018 - compiled (and cached) for its errors
    text = chosen.model_dump_json()
    key = hashlib.sha256(text.encode()).hexdigest()
    return _Plan(text, key, dns, redact, server, stats)


def worker_vetter(policy_json: str, policy_key: str, stats: Any = None) -> Vetter:
    """This process's Vetter for the policy whose JSON is ``policy_json``, built on first use.

    ``policy_key`` is the SHA-256 of ``policy_json`` (computed once, on the driver).
    """
    vetter = _VETTERS.get(policy_key)
    if vetter is None:
        start = time.perf_counter()
        vetter = Vetter(Policy.model_validate_json(policy_json))
        vetter.vet_offline(_WARM_UP_URL)
        _VETTERS[policy_key] = vetter
        # A worker process vets in bulk from now on, as an audit does.
        from urlvet.audit.pipeline import BULK_GC_THRESHOLDS

        gc.set_threshold(*BULK_GC_THRESHOLDS)
        if stats is not None:
            stats.add(WorkerStats(setups=[(os.getpid(), time.perf_counter() - start)]))
    return vetter


Key = tuple[str, str | None, str | None]
"""(URL, server as written, message): what one vet depends on, as audit keys its cache."""


class _TaskVetter:
    """Vets the rows of one task's batches with this worker's Vetter, once per distinct key.

    Records are made by audit's :class:`~urlvet.audit.RecordVetter`, the code audit's
    in-process and pool strategies run, so that a record here is a record there.
    """

    def __init__(self, plan: _Plan, *, with_json: bool) -> None:
        from urlvet.audit import RecordVetter

        self.cpu_start = time.process_time()
        self.plan = plan
        self.vetter = worker_vetter(plan.policy_json, plan.policy_key, plan.stats)
        self.recorder = RecordVetter(self.vetter, None, plan.redact_secrets, with_json)
        self.records: dict[Key, Record] = {}
        self.stats = WorkerStats()

    def key(self, url: str, server: str | None, message: str | None) -> Key:
        """The key of a row: a missing or empty server is the plan's."""
        if server is None or not server.strip():
            server = self.plan.server
        return (url, server.strip() if server is not None else None, message)

    def vet(self, keys: list[Key | None]) -> list[Record | None]:
        """The record of each key (None for None), vetting each distinct key once."""
        records = self.records
        todo = list({k: None for k in keys if k is not None and k not in records})
        if todo:
            if len(records) + len(todo) > RECORD_CACHE_SIZE:
                records.clear()
            if self.plan.dns:
                made = asyncio.run(self._vet_dns(todo))
            else:
                made = [self.recorder(k) for k in todo]
            records.update(zip(todo, made, strict=True))
        out: list[Record | None] = []
        stats = self.stats
        decisions = stats.decisions
        server_of = self.recorder.server
        for key in keys:
            if key is None:
                out.append(None)
                continue
            rec = records[key]
            out.append(rec)
            stats.rows += 1
            value = rec.decision.value
            decisions[value] = decisions.get(value, 0) + 1
            if key[1] is not None and server_of(key[1]) is None:
                stats.invalid_servers += 1
        return out

    async def _vet_dns(self, keys: list[Key]) -> list[Record]:
        gate = asyncio.Semaphore(DNS_CONCURRENCY)
        avet = self.vetter.avet
        recorder = self.recorder

        async def one(key: Key) -> Record:
            async with gate:
                verdict = await avet(key[0], recorder.server(key[1]), message=key[2])
            return recorder.record(verdict)

        return list(await asyncio.gather(*(one(k) for k in keys)))

    def batch_done(self) -> None:
        """Count one batch for this worker process."""
        pid = os.getpid()
        self.stats.batches[pid] = self.stats.batches.get(pid, 0) + 1

    def flush(self) -> None:
        """Send this task's statistics to the driver's accumulator."""
        if self.plan.stats is not None:
            self.stats.cpu_seconds = time.process_time() - self.cpu_start
            self.plan.stats.add(self.stats)
        self.stats = WorkerStats()
        self.cpu_start = time.process_time()


def _text_or_none(value: Any) -> str | None:
    # pandas gives None, NaN or pd.NA for a null string, depending on its version and dtype.
    return value if isinstance(value, str) else None


def _vet_frames(
    plan: _Plan, url_col: str, server_col: str | None, message_col: str | None
) -> Callable[[Iterable[pd.DataFrame]], Iterator[pd.DataFrame]]:
    def vet_frames(frames: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        task = _TaskVetter(plan, with_json=False)
        try:
            for frame in frames:
                urls = [_text_or_none(u) for u in frame[url_col].tolist()]
                n = len(urls)
                servers = (
                    [_text_or_none(s) for s in frame[server_col].tolist()]
                    if server_col is not None
                    else [None] * n
                )
                messages = (
                    [_text_or_none(m) for m in frame[message_col].tolist()]
                    if message_col is not None
                    else [None] * n
                )
                keys: list[Key | None] = [
                    task.key(u, s, m) if u is not None else None
                    for u, s, m in zip(urls, servers, messages, strict=True)
                ]
                records = task.vet(keys)
                decision: list[str | None] = []
                codes: list[list[str] | None] = []
                findings: list[list[dict[str, str]] | None] = []
                for rec in records:
                    if rec is None:
                        decision.append(None)
                        codes.append(None)
                        findings.append(None)
                        continue
                    decision.append(rec.decision.value)
                    codes.append(list(rec.codes))
                    findings.append(
                        [
                            {
                                "code": f.code,
                                "name": f.name,
                                "severity": f.severity.value,
                                "message": f.message,
                            }
                            for f in rec.findings
                        ]
                    )
                task.batch_done()
                yield frame.assign(decision=decision, codes=codes, findings=findings)
        finally:
            task.flush()

    return vet_frames


# --- the public API ----------------------------------------------------------------------------


def vet_dataframe(
    df: DataFrame,
    url_col: str = "url",
    *,
    server: str | None = None,
    server_col: str | None = None,
    policy: Policy | None = None,
    dns: bool = False,
    message_col: str | None = None,
    redact_secrets: bool = True,
    stats: Accumulator[WorkerStats] | None = None,
) -> DataFrame:
    """``df`` with a verdict on the URL in ``url_col`` of every row.

    Adds ``decision`` (allow, warn or block), ``codes`` (the rule codes, most serious
    first) and ``findings`` (code, name, severity, message), all null where the URL is
    null. ``server`` is the server that asked for every URL (a URL or ``"stdio"``);
    ``server_col`` names a column that holds it per row (a null or empty value falls back
    to ``server``; a value that is not a server URL is vetted without a server, as
    ``urlvet audit`` does with ``--server-field``). ``message_col`` names a column with the
    message the server showed beside the URL. ``policy`` defaults to the built-in policy;
    with ``dns=False`` (the default) names are never resolved, with ``dns=True`` the
    workers resolve them (they need DNS). Messages have secrets in the URL masked unless
    ``redact_secrets=False``. ``stats`` (from :func:`stats_accumulator`) gathers what the
    workers did.

    Lazy, as any transformation: nothing runs until an action. Raises InputError for a
    missing or non-string column, an invalid ``server``, or existing verdict columns.
    """
    from pyspark.sql.types import StringType, StructField, StructType, _parse_datatype_string

    fields = {f.name: f for f in df.schema.fields}
    for role, name in (
        ("url_col", url_col),
        ("server_col", server_col),
        ("message_col", message_col),
    ):
        if name is None:
            continue
        if name not in fields:
            raise InputError(
                f"{role}: no column {name!r} in the DataFrame (columns: {', '.join(fields) or 'none'})"
            )
        if not isinstance(fields[name].dataType, StringType):
            raise InputError(
                f"{role}: column {name!r} is {fields[name].dataType.simpleString()}, not string"
            )
    clash = [c for c in VERDICT_COLUMNS if c in fields]
    if clash:
        raise InputError(
            f"the DataFrame already has column(s) {', '.join(clash)}: rename or drop them first"
        )
    plan = _plan(policy, dns=dns, server=server, redact=redact_secrets, stats=stats)
    schema = StructType(
        [
            *df.schema.fields,
            StructField("decision", StringType(), True),
            StructField("codes", _parse_datatype_string("array<string>"), True),
            StructField("findings", _parse_datatype_string(FINDINGS_TYPE), True),
        ]
    )
    return df.mapInPandas(_vet_frames(plan, url_col, server_col, message_col), schema)


# --- the job -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobOptions:
    """How the job reads its input and what it writes."""

    input_kind: InputKind = "urls"
    """How to read the input lines."""
    fmt: Literal["parquet", "jsonl", "csv"] = "parquet"
    """The output format: parquet (typed columns), jsonl (the objects of ``urlvet audit
    --format jsonl``), csv (flat columns with a header, for spreadsheets)."""
    url_col: str = "url"
    """For JSON Lines records: the (dotted) field that holds the URL."""
    server_col: str | None = None
    """For JSON Lines records and MCP traffic: the (dotted) field that holds the server."""
    server: str | None = None
    """The server for every URL whose line names none."""
    dns: bool = False
    """Resolve names (the workers need DNS)."""
    redact_secrets: bool = True
    """Mask secrets in URLs and messages, as audit does."""


class _Found(NamedTuple):
    column: int | None
    url: str
    server: str | None
    message: str | None
    input: str


def _dotted(obj: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


class _LineReader:
    """Turns one input line into the URLs it holds (the worker side of the job)."""

    def __init__(self, options: JobOptions, stats: WorkerStats) -> None:
        self.options = options
        self.stats = stats
        self.url_path = tuple(options.url_col.split("."))
        self.server_path = tuple(options.server_col.split(".")) if options.server_col else None

    def skip(self, reason: str) -> None:
        self.stats.skipped[reason] = self.stats.skipped.get(reason, 0) + 1

    def found(self, line: str) -> list[_Found]:
        from urlvet.audit import messages_in_line, strip_comment, urls_in_text
        from urlvet.audit.sources import ASCII_WS
        from urlvet.mcp.wire import url_requests

        kind = self.options.input_kind
        if "\x00" in line:
            self.skip("nul-byte")
            return []
        if kind == "urls":
            url = line.strip(ASCII_WS)
            if not url or url[0] == "#":
                return []
            if "#" in url and ("\t#" in url or " #" in url):
                url = strip_comment(url)
            column = len(line) - len(line.lstrip(ASCII_WS)) + 1
            return [_Found(column, url, None, None, "url-list")]
        if kind == "text":
            if ":" not in line:
                return []
            return [_Found(o + 1, u, None, None, "text") for o, u in urls_in_text(line)]
        s = line.strip(ASCII_WS)
        if not s:
            return []
        if kind == "mcp" and (s[0] not in "{[" or ("url" not in s and "\\u" not in s)):
            # Logs mix JSON with plain lines: URLs there are found as in free text, as
            # audit does; a JSON line without "url" (or escapes that could spell it) has none.
            if s[0] in "{[":
                return []
            return [_Found(o + 1, u, None, None, "text") for o, u in urls_in_text(line)]
        try:
            obj = json.loads(s)
        except ValueError:
            if kind == "mcp":
                return [_Found(o + 1, u, None, None, "text") for o, u in urls_in_text(line)]
            self.skip("invalid-json")
            return []
        server = None
        if self.server_path is not None:
            value = _dotted(obj, self.server_path)
            server = value if isinstance(value, str) else None
        if kind == "json":
            url = _dotted(obj, self.url_path)
            if not isinstance(url, str):
                self.skip("no-url" if url is None else "url-not-a-string")
                return []
            return [_Found(None, url, server, None, "json")]
        out: list[_Found] = []
        for message in messages_in_line(obj):
            found = url_requests(message)
            if found.problems:
                self.skip("malformed-mcp")
            out.extend(_Found(None, r.url, server, r.message, r.shape) for r in found.requests)
        return out


def _job_frames(
    plan: _Plan, options: JobOptions
) -> Callable[[Iterable[pd.DataFrame]], Iterator[pd.DataFrame]]:
    def job_frames(frames: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        import pandas as pd

        task = _TaskVetter(plan, with_json=True)
        reader = _LineReader(options, task.stats)
        try:
            for frame in frames:
                paths: list[str] = []
                found: list[_Found] = []
                for line, path in zip(frame["value"].tolist(), frame["path"].tolist(), strict=True):
                    if not isinstance(line, str):
                        continue
                    for item in reader.found(line):
                        paths.append(path)
                        found.append(item)
                records = task.vet([task.key(f.url, f.server, f.message) for f in found])
                task.batch_done()
                if options.fmt == "jsonl":
                    yield pd.DataFrame({"value": _jsonl_lines(paths, found, records)})
                else:
                    yield _record_frame(paths, found, records)
        finally:
            task.flush()

    return job_frames


def _jsonl_lines(paths: list[str], found: list[_Found], records: list[Record | None]) -> list[str]:
    lines = []
    for path, item, rec in zip(paths, found, records, strict=True):
        assert rec is not None
        column = "null" if item.column is None else str(item.column)
        lines.append(
            f'{{"type":"url","path":{json.dumps(path, ensure_ascii=True)},"column":{column},'
            f'"input":{json.dumps(item.input)},{rec.json}}}'
        )
    return lines


def _record_frame(
    paths: list[str], found: list[_Found], records: list[Record | None]
) -> pd.DataFrame:
    import pandas as pd

    rows: dict[str, list[Any]] = {name: [] for name in _RECORD_FIELDS}
    for path, item, rec in zip(paths, found, records, strict=True):
        assert rec is not None
        data = json.loads("{" + rec.json + "}")
        rows["path"].append(path)
        rows["input"].append(item.input)
        rows["column"].append(item.column)
        rows["url"].append(data["url"])
        rows["href"].append(data["href"])
        rows["decision"].append(data["decision"])
        rows["codes"].append(list(rec.codes))
        rows["findings"].append(
            [
                {
                    "code": f["code"],
                    "name": f["name"],
                    "severity": f["severity"],
                    "message": f["message"],
                    "evidence": json.dumps(f["evidence"], ensure_ascii=False),
                    "cwe": f["cwe"],
                }
                for f in data["findings"]
            ]
        )
        for name in ("host", "host_unicode", "host_kind", "registrable_domain", "server"):
            rows[name].append(data[name])
        rows["message"].append(item.message)
    frame = pd.DataFrame(rows)
    frame["column"] = frame["column"].astype("Int32")
    return frame


def sniff_input_kind(spark: SparkSession, path: str, url_col: str = "url") -> InputKind:
    """The input kind of ``path`` from its name and its first lines, as audit decides per file.

    JSON Lines whose first object has ``url_col`` are records (``json``); other JSON Lines
    are MCP traffic (``mcp``).
    """
    from urlvet.audit import sniff_kind

    lines = [r.value for r in spark.read.text(path).limit(SNIFF_LINES).collect()]
    kind = sniff_kind(path, "\n".join(lines).encode("utf-8", "replace"))
    if kind != "jsonl":
        return "urls" if kind == "urls" else "text"
    for line in lines:
        s = line.strip()
        if s:
            try:
                first = json.loads(s)
            except ValueError:
                return "json"
            return "json" if _dotted(first, tuple(url_col.split("."))) is not None else "mcp"
    return "json"


def audit_frame(
    spark: SparkSession,
    source: str,
    options: JobOptions,
    *,
    policy: Policy | None = None,
    stats: Accumulator[WorkerStats] | None = None,
) -> DataFrame:
    """The job's records for the files at ``source`` (any path or glob Spark reads), lazily."""
    from pyspark.sql import functions as F

    plan = _plan(
        policy, dns=options.dns, server=options.server, redact=options.redact_secrets, stats=stats
    )
    lines = spark.read.text(source).select(
        F.col("value"), F.col("_metadata.file_path").alias("path")
    )
    schema = "value string" if options.fmt == "jsonl" else RECORD_SCHEMA
    return lines.mapInPandas(_job_frames(plan, options), schema)


# --- the job --------------------------------------------------------------------------


def _fail(message: str) -> NoReturn:
    print(f"urlvet: error: {message}", file=sys.stderr)
    sys.exit(2)


def _spark_message(exc: BaseException) -> str:
    # Spark's errors carry a JVM stack trace after the first lines: keep the sentence.
    text = str(exc).strip() or type(exc).__name__
    lines = [ln for ln in text.splitlines() if ln.strip()]
    first = lines[0] if lines else text
    return first[:500]


def run_job(
    source: str,
    output: str,
    options: JobOptions,
    *,
    policy_path: str | None = None,
    sniff: bool = False,
    overwrite: bool = False,
    master: str | None = None,
) -> WorkerStats | None:
    """Run the job; exits 2 with a message (never a traceback) on any error."""
    from urlvet.policy import load_policy

    try:
        policy = load_policy(policy_path) if policy_path else Policy()
        if options.server is not None:
            as_server(options.server)
    except UrlvetError as exc:
        _fail(str(exc))
    if not overwrite and _local_path_exists(output):
        _fail(_EXISTS.format(output=output))  # said before Spark starts, not by Spark
    spark_errors = _spark_errors()
    spark, created = _job_session(master, spark_errors)
    stats: Accumulator[WorkerStats] | None
    try:
        stats = stats_accumulator(spark)
    except Exception:  # Spark Connect has no accumulators: run without a summary.
        stats = None
    try:
        if sniff:
            options = JobOptions(
                **{
                    **options.__dict__,
                    "input_kind": sniff_input_kind(spark, source, options.url_col),
                }
            )
        if not overwrite and _output_exists(spark, output):
            _fail(_EXISTS.format(output=output))
        frame = audit_frame(spark, source, options, policy=policy, stats=stats)
        _write_output(spark, frame, output, options.fmt, overwrite)
    except spark_errors as exc:
        _fail(_spark_message(exc))
    except (UrlvetError, PolicyError) as exc:
        _fail(str(exc))
    finally:
        if created:
            spark.stop()
    summary = stats.value if stats is not None else None
    if summary is not None:
        _print_summary(summary, options.input_kind, output)
    return summary


def _spark_errors() -> tuple[type[BaseException], ...]:
    """The error classes Spark fails with; exits 2 when the spark extra is not installed."""
    try:
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
        from pyspark.errors import PySparkException
    except ImportError as exc:
        _fail(
            f"the Spark job needs {exc.name} (urlvet's spark extra): pip install pyspark pandas pyarrow"
        )
    spark_errors: tuple[type[BaseException], ...] = (PySparkException,)
    try:
        from py4j.protocol import Py4JError

        spark_errors = (*spark_errors, Py4JError)
    except ImportError:
        pass
    return spark_errors


def _job_session(
    master: str | None, spark_errors: tuple[type[BaseException], ...]
) -> tuple[SparkSession, bool]:
    """The job's Spark session and whether the job stops it at the end; exits 2 when Spark
    cannot start."""
    from pyspark.sql import SparkSession

    # Under spark-submit or a Databricks task the JVM and its session exist already (and
    # are not ours to stop); launched by `python -m`, this process starts Spark and stops it.
    launched_here = "PYSPARK_GATEWAY_PORT" not in os.environ
    try:
        spark = SparkSession.getActiveSession()
        if spark is not None:
            return spark, False
        builder = SparkSession.builder.appName("urlvet")
        if master:
            builder = builder.master(master)
        if launched_here and (master is None or master.startswith("local")):
            # Local workers run this Python, the one that has urlvet (a virtualenv's, not
            # the first python3 on PATH): the driver reads PYSPARK_PYTHON, the launcher
            # the setting.
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            builder = builder.config("spark.pyspark.python", sys.executable)
        return builder.getOrCreate(), launched_here
    except spark_errors as exc:
        _fail(f"cannot start Spark (it needs Java 17 or later, JAVA_HOME): {_spark_message(exc)}")


def _write_output(
    spark: SparkSession, frame: DataFrame, output: str, fmt: str, overwrite: bool
) -> None:
    """Write the job's records to ``output`` in ``fmt`` (jsonl, csv or parquet)."""
    if fmt == "jsonl":
        frame.write.mode(writer_mode(overwrite)).text(output)
        _rename_parts(spark, output, ".txt", ".jsonl")
    elif fmt == "csv":
        frame.select(*flat_columns()).write.mode(writer_mode(overwrite)).option("header", True).csv(
            output
        )
    else:
        frame.write.mode(writer_mode(overwrite)).parquet(output)


def _print_summary(summary: WorkerStats, input_kind: str, output: str) -> None:
    """The job's figures and warnings, on stderr."""
    decided = ", ".join(f"{summary.decisions.get(d, 0):,} {d}" for d in ("block", "warn", "allow"))
    print(
        f"urlvet: {summary.rows:,} URLs ({input_kind}) to {output}: {decided}",
        file=sys.stderr,
    )
    for reason, n in sorted(summary.skipped.items()):
        print(f"urlvet: warning: {n:,} input lines skipped: {reason}", file=sys.stderr)
    if summary.invalid_servers:
        print(
            f"urlvet: warning: {summary.invalid_servers:,} URLs had a server value that is not "
            "a server URL and were vetted without a server",
            file=sys.stderr,
        )


_EXISTS = "{output} already exists: use --overwrite to replace it"


def writer_mode(overwrite: bool) -> str:
    """Spark's save mode for the job's output."""
    return "overwrite" if overwrite else "errorifexists"


def flat_columns() -> list[Any]:
    """The job's records as flat columns for CSV: the codes joined by spaces, each finding
    as ``CODE (severity)``, ``; ``-separated; no evidence or messages of findings."""
    from pyspark.sql import functions as F

    findings = F.expr("transform(findings, f -> concat(f.code, ' (', f.severity, ')'))")
    return [
        F.col("path"),
        F.col("input"),
        F.col("column"),
        F.col("url"),
        F.col("href"),
        F.col("decision"),
        F.array_join(F.col("codes"), " ").alias("codes"),
        F.array_join(findings, "; ").alias("findings"),
        F.col("host"),
        F.col("registrable_domain"),
        F.col("server"),
        F.col("message"),
    ]


def _local_path_exists(output: str) -> bool:
    """Whether ``output`` is a path on this machine that exists (a URI with another scheme,
    hdfs:// or s3a://, is asked of Spark's file system once Spark runs)."""
    if "://" in output and not output.startswith("file:"):
        return False
    return os.path.lexists(output.removeprefix("file://").removeprefix("file:"))


def _hadoop_path(spark: SparkSession, output: str) -> tuple[Any, Any]:
    """(file system, path) of ``output`` through Spark's Hadoop configuration."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(output)  # type: ignore[union-attr]
    return path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), path


def _output_exists(spark: SparkSession, output: str) -> bool:
    """Whether ``output`` exists, on whatever file system it names."""
    try:
        fs, path = _hadoop_path(spark, output)
        return bool(fs.exists(path))
    except Exception:  # Spark Connect has no JVM here: Spark's own check still runs
        return False


def _rename_parts(spark: SparkSession, output: str, old: str, new: str) -> None:
    """Give the part files Spark wrote in ``output`` the suffix ``new`` instead of ``old``
    (Spark's text writer names them ``.txt``; they hold JSON Lines)."""
    fs, path = _hadoop_path(spark, output)
    for status in fs.listStatus(path):
        name = status.getPath().getName()
        if name.startswith("part-") and name.endswith(old):
            target = status.getPath().getParent().suffix(f"/{name[: -len(old)]}{new}")
            if not fs.rename(status.getPath(), target):
                raise UrlvetError(f"{output}: cannot rename {name} to {new}")


def start_session(master: str) -> tuple[Any, bool]:
    """A Spark session on ``master`` (the active one when there is one) and whether this call
    created it (the caller then stops it). Raises InputError when Spark cannot start."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise InputError(
            "--spark-master needs pyspark, pandas and pyarrow (urlvet's spark extra)"
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
