"""urlvet on a real local Spark (``local[2]``): vet_dataframe and the job ``python -m urlvet.spark``.

The verdicts are compared with what ``urlvet audit --format jsonl`` writes for the same URLs;
the workers' statistics show one Vetter per Python worker process; the policy reaches the
workers as data. One Spark session serves every test (conftest.py), on small data.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from urlvet import InputError, Policy, PolicyError, load_policy
from urlvet.cli import main as urlvet_main
from urlvet.cli import spark_job_command
from urlvet.spark import stats_accumulator, vet_dataframe

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[1]
Spark = Any  # pyspark.sql.SparkSession: the fixture is typed loosely to keep pyspark optional


def corpus_cases() -> list[dict[str, Any]]:
    """The labelled cases whose URL a line of a URL list can hold and Arrow can carry."""
    cases = []
    for path in sorted((ROOT / "corpus").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if not line.strip():
                continue
            case = json.loads(line)
            url = case["url"]
            if (
                not url
                or url.strip() != url
                or any(c in url for c in "\x00\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
            ):
                continue
            if url.startswith("#"):
                continue
            try:
                url.encode("utf-8")
            except UnicodeEncodeError:
                continue
            cases.append(case)
    return cases


CASES = corpus_cases()


def audit_jsonl(*args: str, exits: tuple[int, ...] = (0, 1)) -> list[dict[str, Any]]:
    result = CliRunner().invoke(urlvet_main, ["audit", "--no-dns", "--format", "jsonl", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code in exits, result.stderr
    return [json.loads(x) for x in result.stdout.splitlines()]


def verdict_of(obj: Any) -> tuple[str, list[str], list[tuple[str, str, str, str]]]:
    """(decision, codes, findings) of an audit record or a vet_dataframe row."""
    get = obj.get if isinstance(obj, dict) else obj.__getitem__
    findings = [(f["code"], f["name"], f["severity"], f["message"]) for f in get("findings")]
    return get("decision"), [f[0] for f in findings], findings


# -- vet_dataframe against urlvet audit ----------------------------------------------------------


def test_verdicts_match_audit_on_a_url_list_without_server(spark: Spark, tmp_path: Path) -> None:
    urls = [c["url"] for c in CASES]
    (tmp_path / "corpus.urls").write_text("".join(u + "\n" for u in urls), encoding="utf-8")
    expected = {o["line"]: verdict_of(o) for o in audit_jsonl(str(tmp_path / "corpus.urls"))}
    assert len(expected) == len(urls)

    df = spark.createDataFrame(list(enumerate(urls, 1)), "line int, url string").repartition(3)
    got = {r["line"]: verdict_of(r) for r in vet_dataframe(df).collect()}
    assert got == expected
    decisions = {v[0] for v in got.values()}
    assert decisions == {"allow", "warn", "block"}


def test_verdicts_match_audit_with_a_server_column(spark: Spark, tmp_path: Path) -> None:
    # MCP traffic where each line names its server: audit reads the server from the field,
    # vet_dataframe from a column. Lines without one use --server / server=; a server value
    # that is not a server URL is vetted without a server on both sides.
    rows = []
    for i, case in enumerate(CASES):
        server = case.get("server")
        if i % 7 == 3:
            server = "ftp://not-a-server"
        elif i % 11 == 5:
            server = None
        rows.append((i + 1, case["url"], server, case.get("message") or f"Step {i}"))
    lines = []
    for line, url, server, message in rows:
        request = {
            "jsonrpc": "2.0",
            "id": line,
            "method": "elicitation/create",
            "params": {"mode": "url", "url": url, "message": message, "elicitationId": f"e{line}"},
        }
        lines.append(json.dumps({"server": server, "msg": request}))
    (tmp_path / "traffic.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    records = [
        o
        # The invalid servers are input problems to audit: it exits 2.
        for o in audit_jsonl(
            "--server-field",
            "server",
            "--server",
            "stdio",
            str(tmp_path / "traffic.jsonl"),
            exits=(2,),
        )
        if o["type"] == "url"
    ]
    expected = {o["line"]: (verdict_of(o), o["server"]) for o in records}
    assert len(expected) == len(rows)

    df = spark.createDataFrame(rows, "line int, url string, server string, message string")
    out = vet_dataframe(df, server_col="server", server="stdio", message_col="message")
    got = {r["line"]: (verdict_of(r), expected[r["line"]][1]) for r in out.collect()}
    assert got == expected
    assert any("UV501" in v[0][1] for v in got.values())  # a message rule ran
    assert any("UV401" in v[0][1] for v in got.values())  # a server rule ran


def test_null_urls_get_null_verdicts_and_columns_are_typed(spark: Spark) -> None:
    df = spark.createDataFrame([("https://10.0.0.1/",), (None,)], "url string")
    out = vet_dataframe(df)
    assert out.schema.simpleString() == (
        "struct<url:string,decision:string,codes:array<string>,"
        "findings:array<struct<code:string,name:string,severity:string,message:string>>>"
    )
    rows = sorted(out.collect(), key=lambda r: r["url"] or "")
    assert tuple(rows[0])[1:] == (None, None, None)
    assert rows[1]["decision"] == "block"
    assert rows[1]["codes"] == ["UV201"]


def test_bad_columns_and_servers_are_input_errors(spark: Spark) -> None:
    df = spark.createDataFrame([("https://example.com/", 1)], "link string, n int")
    with pytest.raises(InputError, match=r"url_col: no column 'url'.*columns: link, n"):
        vet_dataframe(df)
    with pytest.raises(InputError, match="server_col: column 'n' is int, not string"):
        vet_dataframe(df, "link", server_col="n")
    with pytest.raises(InputError):
        vet_dataframe(df, "link", server="ftp://nope")
    with pytest.raises(PolicyError, match="no registrable domain"):
        vet_dataframe(df, "link", policy=Policy(protected_domains=["nothing.example"]))
    with pytest.raises(InputError, match="already has column"):
        vet_dataframe(vet_dataframe(df, "link"), "link")


@pytest.mark.dns
def test_dns_on_the_workers_matches_audit_with_dns(
    spark: Spark, tmp_path: Path, nsd: tuple[str, int]
) -> None:
    host, port = nsd
    urls = [
        json.loads(x)["url"]
        for x in (ROOT / "corpus" / "dns.jsonl").read_text(encoding="utf-8").splitlines()
        if x.strip()
    ]
    (tmp_path / "dns.urls").write_text("".join(u + "\n" for u in urls), encoding="utf-8")
    result = CliRunner().invoke(
        urlvet_main,
        ["audit", "--dns", "--nameserver", f"{host}:{port}", "--format", "jsonl", str(tmp_path / "dns.urls")],
    )  # fmt: skip
    expected = {o["line"]: verdict_of(o) for o in map(json.loads, result.stdout.splitlines())}
    assert len(expected) == len(urls)

    policy = Policy(dns={"nameservers": [f"{host}:{port}"]})
    df = spark.createDataFrame(list(enumerate(urls, 1)), "line int, url string")
    got = {r["line"]: verdict_of(r) for r in vet_dataframe(df, policy=policy, dns=True).collect()}
    assert got == expected
    assert any(code.startswith("UV22") for v in got.values() for code in v[1])


# -- one Vetter per worker, the policy as data ------------------------------------------------------


def test_one_vetter_per_python_worker_not_per_batch_or_task(spark: Spark) -> None:
    # A policy no earlier test used, so that every worker must build its Vetter here.
    policy = Policy(protected_domains=["one-vetter-per-worker.com"])
    urls = [(f"https://h{i % 40}.example.com/p/{i}",) for i in range(3000)]
    df = spark.createDataFrame(urls, "url string").repartition(6)
    conf = "spark.sql.execution.arrow.maxRecordsPerBatch"
    old = spark.conf.get(conf)
    spark.conf.set(conf, "100")
    try:
        first = stats_accumulator(spark)
        assert vet_dataframe(df, policy=policy, stats=first).count() == 3000
        second = stats_accumulator(spark)
        assert vet_dataframe(df, policy=policy, stats=second).count() == 3000
    finally:
        spark.conf.set(conf, old)
    built = [pid for pid, _ in first.value.setups] + [pid for pid, _ in second.value.setups]
    batches = sum(first.value.batches.values())
    assert batches >= 30  # 3,000 rows in batches of at most 100
    assert first.value.rows == 3000
    # Each worker process built the Vetter once, whatever the number of tasks and batches
    # it ran, and a second job on the same workers reused it.
    assert len(built) == len(set(built))
    assert set(first.value.batches) <= set(built)
    assert 1 <= len(built) < batches
    assert all(seconds > 0 for _, seconds in first.value.setups)


def test_policy_is_shipped_to_the_workers_as_data(spark: Spark, tmp_path: Path) -> None:
    url = "https://login.partner-portal.example/"
    df = spark.createDataFrame([(url,)], "url string")
    assert vet_dataframe(df).first()["decision"] == "allow"
    # Loaded from a file that is gone before the job runs: the workers never read it.
    path = tmp_path / "team.yaml"
    path.write_text(
        "extends: default\ndomains: {blocked: [partner-portal.example]}\n",
        encoding="utf-8",
    )
    policy = load_policy(path)
    path.unlink()
    row = vet_dataframe(df, policy=policy).first()
    assert row["decision"] == "block"
    assert row["codes"] == ["UV208"]


# -- the job -----------------------------------------------------------------------------------


def run_job(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(spark_job_command, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stderr


def read_jsonl_dir(path: Path) -> list[dict[str, Any]]:
    out = []
    for part in sorted(path.glob("part-*")):
        out.extend(json.loads(x) for x in part.read_text(encoding="utf-8").splitlines())
    return out


def test_job_writes_parquet_from_a_url_list(spark: Spark, tmp_path: Path) -> None:
    urls = [c["url"] for c in CASES[::4]]
    src = tmp_path / "in" / "links.urls"
    src.parent.mkdir()
    src.write_text("# inventory\n\n" + "".join(f"  {u}\n" for u in urls), encoding="utf-8")
    code, err = run_job(str(src.parent), str(tmp_path / "out"), "--format", "parquet")
    assert code == 0, err
    assert f"urlvet: {len(urls):,} URLs (urls) to" in err
    rows = spark.read.parquet(str(tmp_path / "out")).collect()
    expected = {o["line"]: o for o in audit_jsonl(str(src))}
    assert len(rows) == len(expected) == len(urls)
    by_url = {o["url"]: o for o in expected.values()}
    for row in rows:
        want = by_url[row["url"]]
        assert verdict_of(row) == verdict_of(want)
        assert row["column"] == want["column"] == 3
        assert row["input"] == "url-list"
        assert row["path"].endswith("/in/links.urls")
        for name in ("href", "host", "host_unicode", "host_kind", "registrable_domain", "server"):
            assert row[name] == want[name], name
        assert [json.loads(f["evidence"]) for f in row["findings"]] == [
            f["evidence"] for f in want["findings"]
        ]
        assert [f["cwe"] for f in row["findings"]] == [f["cwe"] for f in want["findings"]]


def test_job_writes_csv_with_flat_columns(spark: Spark, tmp_path: Path) -> None:
    import csv

    urls = [c["url"] for c in CASES[::6] if "\n" not in c["url"]]
    src = tmp_path / "links.urls"
    src.write_text("".join(f"{u}\n" for u in urls), encoding="utf-8")
    code, err = run_job(str(src), str(tmp_path / "out"), "--format", "csv")
    assert code == 0, err
    parts = sorted((tmp_path / "out").glob("part-*.csv"))
    assert parts
    rows = [row for p in parts for row in csv.DictReader(p.open(encoding="utf-8", newline=""))]
    audited = audit_jsonl(str(src))
    by_url = {o["url"]: o for o in audited}
    assert len(rows) == len(audited) == len(urls)
    for row in rows:
        want = by_url[row["url"]]
        assert row["decision"] == want["decision"]
        assert row["codes"].split() == [f["code"] for f in want["findings"]]
        assert row["findings"] == "; ".join(
            f"{f['code']} ({f['severity']})" for f in want["findings"]
        )


def test_job_writes_jsonl_from_json_records_with_a_server_field(
    spark: Spark, tmp_path: Path
) -> None:
    cases = CASES[1::5]
    src = tmp_path / "events.jsonl"
    lines = [
        json.dumps({"ts": i, "req": {"link": c["url"]}, "conn": {"server": c.get("server")}})
        for i, c in enumerate(cases)
    ]
    src.write_text("\n".join([*lines, "not json", '{"req": {}}']) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    code, err = run_job(
        str(src), str(out), "--format", "jsonl", "--url-col", "req.link",
        "--server-col", "conn.server", "--server", "stdio",
    )  # fmt: skip
    assert code == 0, err
    assert "1 input lines skipped: invalid-json" in err
    assert "1 input lines skipped: no-url" in err
    got = read_jsonl_dir(out)
    assert len(got) == len(cases)
    # The same (URL, server) pairs through audit, as MCP traffic with a server field.
    mcp = tmp_path / "same.jsonl"
    mcp.write_text(
        "".join(
            json.dumps(
                {
                    "server": c.get("server"),
                    "msg": {
                        "jsonrpc": "2.0",
                        "id": i,
                        "method": "elicitation/create",
                        "params": {"mode": "url", "url": c["url"], "elicitationId": f"e{i}"},
                    },
                }
            )
            + "\n"
            for i, c in enumerate(cases)
        ),
        encoding="utf-8",
    )
    audited = audit_jsonl("--server-field", "server", "--server", "stdio", str(mcp))
    want = {(o["url"], o["server"]): o for o in audited if o["type"] == "url"}
    assert len(audited) >= len(cases)
    for obj in got:
        expected = want[obj["url"], obj["server"]]
        assert obj["type"] == "url"
        assert obj["input"] == "json"
        assert obj["column"] is None
        assert obj["path"].endswith("/events.jsonl")
        for name in ("href", "decision", "findings", "host", "host_unicode", "host_kind"):
            assert obj[name] == expected[name], name
        assert obj["registrable_domain"] == expected["registrable_domain"]


def test_job_reads_urls_in_free_text_and_mcp_traffic(spark: Spark, tmp_path: Path) -> None:
    log = tmp_path / "proxy.log"
    log.write_text(
        "GET https://10.0.0.1/admin 200 ref=https://example.com/.\nno url here\n"
        "see (https://xn--pypal-4ve.com/login)\n",
        encoding="utf-8",
    )
    code, err = run_job(str(log), str(tmp_path / "t"), "--format", "jsonl")
    assert code == 0, err
    got = sorted(
        (o["url"], o["column"], o["input"], o["decision"]) for o in read_jsonl_dir(tmp_path / "t")
    )
    want = sorted((o["url"], o["column"], o["input"], o["decision"]) for o in audit_jsonl(str(log)))
    assert got == want
    assert len(got) == 3

    traffic = tmp_path / "traffic.jsonl"
    request = {
        "jsonrpc": "2.0", "id": 3, "method": "elicitation/create",
        "params": {"mode": "url", "url": "https://example.com/a?token=s3cret", "message": "Sign\u200bin", "elicitationId": "e"},
    }  # fmt: skip
    traffic.write_text(
        json.dumps({"srv": "https://mcp.example.com/", "m": request}) + "\n", encoding="utf-8"
    )
    code, err = run_job(
        str(traffic), str(tmp_path / "m"), "--format", "parquet", "--server-col", "srv"
    )
    assert code == 0, err
    (row,) = spark.read.parquet(str(tmp_path / "m")).collect()
    (want_obj,) = audit_jsonl("--server-field", "srv", str(traffic))
    assert row["input"] == want_obj["input"] == "mcp:elicitation/create"
    assert row["message"] == "Sign\u200bin"
    assert verdict_of(row) == verdict_of(want_obj)
    assert "UV501" in row["codes"]
    assert "s3cret" not in row["url"]  # secrets redacted, as audit does


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{missing}", "{out}"], "Path does not exist"),
        (["{src}", "{out}", "--policy", "{bad_policy}"], "thresholds.block"),
        (["{src}", "{out}", "--policy", "{missing}"], "cannot read policy file"),
        (["{src}", "{out}", "--server", "ftp://nope"], "server"),
        (["{src}", "{existing}"], "already exists"),
        (["{src}", "{out}", "--format", "xml"], "Invalid value for '--format'"),
    ],
)
def test_job_errors_are_one_clear_line(
    spark: Spark, tmp_path: Path, args: list[str], message: str
) -> None:
    (tmp_path / "src.urls").write_text("https://example.com/\n", encoding="utf-8")
    (tmp_path / "bad.yaml").write_text("thresholds: {block: extreme}\n", encoding="utf-8")
    (tmp_path / "existing").mkdir()
    names = {
        "src": tmp_path / "src.urls",
        "out": tmp_path / "out",
        "missing": tmp_path / "missing",
        "bad_policy": tmp_path / "bad.yaml",
        "existing": tmp_path / "existing",
    }
    code, err = run_job(*(a.format(**names) for a in args))
    assert code == 2
    assert message in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) <= 4  # click adds usage lines to a usage error


def test_module_entry_point_fails_cleanly_before_starting_spark(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("nope: 1\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "urlvet.spark", "in", "out", "--policy", str(bad)],
        capture_output=True,
        text=True,
        check=False,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("urlvet: error: ")
    assert "nope: unknown key" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_spark_extra_pins_what_pyspark_supports() -> None:
    # PySpark's own requirements for its SQL side (mapInPandas) set the floors; pandas 3 it
    # warns it does not yet fully support, so the extra keeps it out.
    import tomllib
    from importlib.metadata import requires

    from packaging.requirements import Requirement
    from packaging.version import Version

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]["spark"]
    ours = {r.name: r.specifier for r in map(Requirement, extra)}
    theirs = [Requirement(r) for r in requires("pyspark") or []]
    needed = {r.name: r.specifier for r in theirs if r.marker and "sql" in str(r.marker)}
    for name in ("pandas", "pyarrow"):
        floor = Version(next(s.version for s in needed[name] if s.operator == ">="))
        our_floor = Version(next(s.version for s in ours[name] if s.operator == ">="))
        assert our_floor >= floor, (name, our_floor, floor)  # never below what PySpark needs
    assert not ours["pandas"].contains("3.0.0")
    assert ours["pandas"].contains("2.3.3")
    assert not ours["pyspark"].contains("5.0.0")


def _as_a_user(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m urlvet.spark ...`` as a user runs it: from another directory, with a clean
    environment (no PYSPARK_PYTHON; a PATH whose python3 is not this one and has none of
    urlvet's dependencies), this checkout's sources on PYTHONPATH (an install does that)."""
    import os

    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "LANG": "C.UTF-8"}
    env["PYTHONPATH"] = str(ROOT / "src")
    if os.environ.get("JAVA_HOME"):
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    return subprocess.run(
        [sys.executable, "-m", "urlvet.spark", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
        check=False,
    )


def test_the_job_as_a_user_runs_it_writes_jsonl_files(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "in.urls").write_text(
        "https://example.com/\nhttps://10.0.0.1/admin\nhttps://bit.ly/x\n", encoding="utf-8"
    )
    done = _as_a_user("in.urls", "out", "--format", "jsonl", "--master", "local[1]", cwd=elsewhere)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ModuleNotFoundError" not in done.stderr
    parts = sorted(p.name for p in (elsewhere / "out").iterdir() if p.name.startswith("part-"))
    assert parts
    assert all(p.endswith(".jsonl") for p in parts), parts  # not Spark's part-*.txt
    found = [
        json.loads(line)
        for p in parts
        for line in (elsewhere / "out" / p).read_text(encoding="utf-8").splitlines()
    ]
    assert {o["url"]: o["decision"] for o in found} == {
        "https://example.com/": "allow",
        "https://10.0.0.1/admin": "block",
        "https://bit.ly/x": "warn",
    }
    # Again, without --overwrite: said before Spark starts, in urlvet's words.
    again = _as_a_user("in.urls", "out", "--format", "jsonl", cwd=elsewhere)
    assert again.returncode == 2
    assert again.stderr == "urlvet: error: out already exists: use --overwrite to replace it\n"
    assert (
        sorted(p.name for p in (elsewhere / "out").iterdir() if p.name.startswith("part-")) == parts
    )


# --- urlvet audit with Spark as its strategy ------------------------------------------------


def _audit_output(path: Path, spark_master: str | None = None) -> tuple[int, bytes, str]:
    """The audit as ``urlvet audit`` runs it, on Spark with ``spark_master``."""
    import io

    from urlvet.audit.command import AuditRun
    from urlvet.audit.options import AuditOptions
    from urlvet.cli.audit import audit_on

    policy = Policy(dns={"enabled": False})
    out = io.BytesIO()
    err = io.StringIO()
    code = audit_on(
        policy,
        AuditRun(
            paths=[str(path)],
            fmt="jsonl",
            options=AuditOptions(json_records=True),
            progress=False,
        ),
        out,
        err,
        spark_master,
    )
    return code, out.getvalue(), err.getvalue()


def _log_lines() -> list[str]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import mix

    urls = mix.urls(6000, host_count=500)
    # Repeats (served from the audit's cache), problems and cases that block or warn.
    return [
        *urls,
        "not a url",
        "# a comment",
        "https://10.0.0.1/admin",
        "https://paypa1.com/signin",
        "https://admin:hunter2@example.com/?token=abc",
        *urls[:2000],
    ]


def test_audit_on_spark_writes_what_an_in_process_audit_writes(
    spark: Spark, tmp_path: Path
) -> None:
    path = tmp_path / "log.urls"
    path.write_text("\n".join(_log_lines()) + "\n", encoding="utf-8")
    want = _audit_output(path)
    got = _audit_output(path, spark_master="local[2]")
    assert want[0] == 1  # URLs that block fail the run
    assert got == want
    assert len(want[1].splitlines()) > 8000


def test_spark_strategy_gathers_windows_into_jobs(spark: Spark, tmp_path: Path) -> None:
    from urlvet.audit.options import AuditOptions
    from urlvet.audit.output import RunInfo, make_writer
    from urlvet.audit.pipeline import WINDOW, Auditor
    from urlvet.audit.report import Reporter
    from urlvet.audit.sources import Source
    from urlvet.spark.strategy import SparkStrategy

    lines = _log_lines()
    path = tmp_path / "log.urls"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    policy = Policy(dns={"enabled": False})
    options = AuditOptions(json_records=True)

    def audit(strategy: Any) -> str:
        import io

        stream = io.StringIO()
        compiled = policy.compiled
        info = RunInfo(rules=compiled.rules, warn_at=compiled.warn_at, block_at=compiled.block_at)
        writer = make_writer("jsonl", stream, info)
        reporter = Reporter(writer, fail_at=compiled.block_at)
        writer.start()
        summary = Auditor(policy, options).run(
            [Source("log.urls", str(path))], reporter, None, strategy
        )
        writer.finish(summary)
        assert summary.urls == len(lines) - 1  # all but the comment
        return stream.getvalue()

    strategy = SparkStrategy(spark, policy, options, windows_per_job=2)
    got = audit(strategy)
    assert got == audit(None)
    windows = -(-len(lines) // WINDOW)
    assert strategy.jobs == -(-windows // 2)  # two windows a job, the last one alone


def test_audit_on_spark_refuses_dns_and_jobs(spark: Spark, tmp_path: Path) -> None:
    from urlvet.audit.command import AuditRun
    from urlvet.audit.options import AuditOptions
    from urlvet.cli.audit import audit_on
    from urlvet.errors import InputError

    path = tmp_path / "log.urls"
    path.write_text("https://example.com/\n", encoding="utf-8")
    with pytest.raises(InputError, match="offline"):
        audit_on(Policy(), AuditRun(paths=[str(path)]), io_bytes(), io_text(), "local[2]")
    with pytest.raises(InputError, match="cannot be combined"):
        audit_on(
            Policy(dns={"enabled": False}),
            AuditRun(paths=[str(path)], options=AuditOptions(jobs=2)),
            io_bytes(),
            io_text(),
            "local[2]",
        )


def io_bytes() -> Any:
    import io

    return io.BytesIO()


def io_text() -> Any:
    import io

    return io.StringIO()
