"""Split audits (`--jobs N` with jsonl/json output on regular files): the input cut into shares
at line starts, every worker (the main process and N - 1 worker processes) auditing the lines
of its own hosts of each, gives byte for byte the output, the exit code and the stderr of a
one-process run; a failing or dying worker fails the run with a message and leaves no
temporary file behind."""

from __future__ import annotations

import gzip
import io
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from urlvet.audit import (
    AuditOptions,
    Auditor,
    Occurrence,
    Reporter,
    Source,
    command,
    expand_paths,
    sources,
    split,
)
from urlvet.audit.output import RunInfo
from urlvet.audit.output.jsonl import JsonWriter
from urlvet.audit.sources import SNIFF_BYTES, Diagnostic, Meter, Reader
from urlvet.cli import main
from urlvet.policy import Policy

OFFLINE = Policy(dns={"enabled": False})
Run = tuple[int, bytes, str]


def audit(*args: str, jobs: int) -> Run:
    result = CliRunner().invoke(main, ["audit", "--no-dns", "--jobs", str(jobs), *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout_bytes, result.stderr


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Small shares, so that small files are split; records the worker count of each split
    run, and fails a run whose main process runs the pipeline with --jobs > 1 (the pool's way)
    instead of as worker 0 of a split audit."""
    monkeypatch.setattr(split, "MIN_SHARE_BYTES", 64)
    counts: list[int] = []
    real_split = command.run_split

    def spy(policy: Policy, options: AuditOptions, shares: Any, *a: Any, **k: Any) -> Any:
        assert len(shares) >= options.jobs
        counts.append(options.jobs)
        return real_split(policy, options, shares, *a, **k)

    monkeypatch.setattr(command, "run_split", spy)
    parent = os.getpid()
    real_run = Auditor.run

    def guarded(self: Auditor, *a: Any, **k: Any) -> Any:
        if os.getpid() == parent and self.options.jobs > 1:
            raise AssertionError("the main process ran the pipeline of a split audit")
        return real_run(self, *a, **k)

    monkeypatch.setattr(Auditor, "run", guarded)
    return counts


def same_as_one_process(taken: list[int], *args: str, jobs: tuple[int, ...] = (2, 3)) -> Run:
    """Runs the audit with one process and with each of ``jobs``: all the same, all split."""
    before = len(taken)
    one = audit(*args, jobs=1)
    assert len(taken) == before
    for n in jobs:
        before = len(taken)
        got = audit(*args, jobs=n)
        assert taken[before:] == [n], "the split path was not taken"
        assert got[0] == one[0]
        assert got[2] == one[2]
        assert got[1] == one[1]
    return one


def url_lines(n: int) -> list[bytes]:
    out = []
    for i in range(n):
        if i % 97 == 0:
            out.append(b"# batch %d" % i)
        elif i % 89 == 0:
            out.append(b"")
        elif i % 7 == 0:
            out.append(b"http://10.1.%d.%d/admin  # internal" % (i % 200, i % 250))
        elif i % 11 == 0:
            out.append(b"  https://xn--pple-43d.com/login?i=%d" % i)
        else:
            out.append(b"https://svc%d.example.com/items/%d?page=%d" % (i % 300, i, i % 40))
    return out


# -- byte-identical output ----------------------------------------------------------------------


def test_url_list_with_bom_crlf_comments_and_blank_lines(in_tmp: Path, taken: list[int]) -> None:
    body = b"\xef\xbb\xbf" + b"".join(
        line + (b"\r\n" if i % 2 else b"\n") for i, line in enumerate(url_lines(4000))
    )
    (in_tmp / "inventory.urls").write_bytes(body)
    code, out, _ = same_as_one_process(taken, "--format", "jsonl", "inventory.urls")
    assert code == 1
    first = json.loads(out.split(b"\n", 1)[0])
    assert (first["line"], first["column"]) == (2, 1)  # the BOM line is a comment


def test_text_log(in_tmp: Path, taken: list[int]) -> None:
    lines = []
    for i in range(3000):
        lines.append(
            f"2026-12-03T10:{i % 60:02d} ünïcode GET https://svc{i % 90}.example.com/{i} "
            f"from http://10.0.{i % 7}.1:8080/x and (https://example.org/{i % 13}) done"
        )
        if i % 50 == 0:
            lines.append("no url here")
    (in_tmp / "app.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, _ = same_as_one_process(taken, "--format", "jsonl", "app.log")
    assert code == 1


ELICIT = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "elicitation/create",
    "params": {"mode": "url", "url": "https://10.0.0.3/c", "message": "Authorize"},
}
DRAFT_ERROR = {
    "jsonrpc": "2.0",
    "id": 2,
    "error": {
        "code": -32003,
        "message": "interaction required",
        "data": {"id": "i-2", "type": "ua", "url": "https://10.0.0.2/b", "message": "Pay"},
    },
}
BAD_URL = {"jsonrpc": "2.0", "method": "elicitation/create", "params": {"mode": "url", "url": 7}}


def test_mcp_json_lines_traffic(in_tmp: Path, taken: list[int]) -> None:
    lines = []
    for i in range(1500):
        server = "ftp://nope" if i % 101 == 0 else f"https://mcp{i % 5}.example.com/mcp"
        msg = dict(ELICIT, id=i, params=dict(ELICIT["params"], url=f"https://h{i}.example.com/"))  # type: ignore[arg-type]
        lines.append(json.dumps({"ts": i, "conn": {"server": server}, "message": msg}))
        if i % 3 == 0:
            lines.append(json.dumps(DRAFT_ERROR))
        if i % 40 == 0:
            lines.append(json.dumps(BAD_URL))
            lines.append(f"plain log line https://10.9.9.{i % 250}/")
    (in_tmp / "traffic.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = same_as_one_process(
        taken, "--format", "jsonl", "--server-field", "conn.server", "traffic.jsonl"
    )
    assert code == 2  # the invalid servers
    assert b"malformed-mcp" in out
    assert "ftp://nope" in err


def test_several_files_and_a_walked_directory(in_tmp: Path, taken: list[int]) -> None:
    (in_tmp / "d").mkdir()
    (in_tmp / "d" / "a.urls").write_bytes(b"\n".join(url_lines(900)) + b"\n")
    (in_tmp / "d" / "b.log").write_text(
        "".join(f"GET https://b{i}.example.net/ ok\n" for i in range(700)), encoding="utf-8"
    )
    (in_tmp / "d" / "c.bin").write_bytes(b"\x00\x01binary" * 100)  # walked: skipped quietly
    (in_tmp / "d" / "empty.urls").write_bytes(b"")
    (in_tmp / "tiny.urls").write_bytes(b"https://10.0.0.1/\n")
    (in_tmp / "no-newline.urls").write_bytes(b"https://example.com/\nhttps://10.0.0.2/")
    (in_tmp / "named.bin").write_bytes(b"\x00" * 300)  # named: reported
    code, _, err = same_as_one_process(
        taken,
        "--format",
        "jsonl",
        "d",
        "tiny.urls",
        "no-newline.urls",
        "named.bin",
        jobs=(2, 3, 4),
    )
    assert code == 2
    assert "binary file" in err


def _cuts(path: Path, jobs: int, **options: Any) -> list[int]:
    shares = split.plan_split(
        list(expand_paths([str(path)])),
        "jsonl",
        AuditOptions(jobs=jobs, **options),
        offline=True,
        min_share=64,
    )
    assert shares is not None
    return [s.span.start for share in shares for s in share if s.span is not None and s.span.start]


def test_diagnostics_at_and_around_the_cuts(in_tmp: Path, taken: list[int]) -> None:
    # Every third line is longer than --max-line-bytes 64; the lines at, just before and
    # just after each cut become invalid UTF-8 or hold a NUL (same lengths: same cuts).
    lines = [
        b"https://e%d.example.com/%s" % (i, b"x" * 60 if i % 3 == 0 else b"p") for i in range(3000)
    ]
    path = in_tmp / "cut.urls"
    path.write_bytes(b"\n".join(lines) + b"\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    cuts = {jobs: _cuts(path, jobs) for jobs in (2, 3)}
    mutated = 0
    for jobs in (2, 3):
        for cut in cuts[jobs]:
            if cut < 2 * SNIFF_BYTES:
                continue  # a NUL in the head makes it a binary file
            mutated += 1
            at = starts.index(cut)
            lines[at - 1] = lines[at - 1][:-1] + b"\xff"
            lines[at] = lines[at][:10] + b"\x00" + lines[at][11:]
            lines[at + 1] = lines[at + 1][:12] + b"\xc3\x28" + lines[at + 1][14:]
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert mutated >= 40
    assert {jobs: _cuts(path, jobs) for jobs in (2, 3)} == cuts
    code, out, err = same_as_one_process(
        taken, "--format", "jsonl", "--max-line-bytes", "64", "cut.urls"
    )
    assert code == 2
    codes = [json.loads(x).get("code") for x in out.splitlines()]
    assert {"line-too-long", "invalid-utf8", "nul-byte"} <= set(codes)
    assert "further input problems are only in the report" in err  # more than 50


def test_a_cut_that_falls_inside_a_very_long_line(in_tmp: Path, taken: list[int]) -> None:
    short = [b"https://s%d.example.com/" % i for i in range(200)]
    long_line = b"https://long.example.com/?q=" + b"a" * 50_000
    (in_tmp / "long.urls").write_bytes(b"\n".join([*short, long_line, *short]) + b"\n")
    cuts = _cuts(in_tmp / "long.urls", 2)
    start = sum(len(s) + 1 for s in short)
    end = start + len(long_line) + 1
    assert end in cuts  # the targets inside the long line moved to its end
    assert not [c for c in cuts if start < c < end]
    for extra in ([], ["--max-line-bytes", "4096"]):
        same_as_one_process(taken, "--format", "jsonl", *extra, "long.urls", jobs=(2,))


def test_baseline_and_write_baseline(in_tmp: Path, taken: list[int]) -> None:
    (in_tmp / "a.urls").write_bytes(b"\n".join(url_lines(3000)) + b"\n")
    one = audit("--format", "jsonl", "--write-baseline", "one.json", "a.urls", jobs=1)
    two = audit("--format", "jsonl", "--write-baseline", "two.json", "a.urls", jobs=2)
    assert taken == [2]
    assert one == two
    assert one[0] == 0
    assert (in_tmp / "one.json").read_bytes() == (in_tmp / "two.json").read_bytes()
    assert len(json.loads((in_tmp / "one.json").read_text())["findings"]) > 100
    # Half the findings accepted: the rest still fail the run.
    doc = json.loads((in_tmp / "one.json").read_text())
    doc["findings"] = doc["findings"][::2]
    (in_tmp / "half.json").write_text(json.dumps(doc), encoding="utf-8")
    code, out, _ = same_as_one_process(
        taken, "--format", "jsonl", "--baseline", "half.json", "a.urls"
    )
    assert code == 1
    assert b'"accepted":["' in out


def test_fail_on_warn(in_tmp: Path, taken: list[int]) -> None:
    (in_tmp / "warn.urls").write_bytes(
        b"".join(
            b"https://xn--pple-43d.com/%d\nhttps://ok%d.example.com/\n" % (i, i) for i in range(800)
        )
    )
    assert same_as_one_process(taken, "--format", "jsonl", "--fail-on", "warn", "warn.urls")[0] == 1
    assert same_as_one_process(taken, "--format", "jsonl", "--exit-zero", "warn.urls")[0] == 0


def test_json_array_with_parts_that_hold_no_object(in_tmp: Path, taken: list[int]) -> None:
    # The first and middle thirds are comments only: their parts are empty.
    comments = b"".join(b"# comment number %d\n" % i for i in range(300))
    urls = b"".join(b"https://a%d.example.com/\n" % i for i in range(300))
    (in_tmp / "a.urls").write_bytes(comments + comments + urls)
    _, out, _ = same_as_one_process(taken, "--format", "json", "a.urls")
    assert len(json.loads(out)) == 300
    (in_tmp / "b.urls").write_bytes(urls + comments + comments + urls)
    _, out, _ = same_as_one_process(taken, "--format", "json", "b.urls")
    assert len(json.loads(out)) == 600
    (in_tmp / "c.urls").write_bytes(comments + comments)
    _, out, _ = same_as_one_process(taken, "--format", "json", "c.urls")
    assert out == b"[]\n"


def test_output_file(in_tmp: Path, taken: list[int]) -> None:
    (in_tmp / "a.urls").write_bytes(b"\n".join(url_lines(2000)) + b"\n")
    (in_tmp / "out").mkdir()
    one = audit("--format", "jsonl", "-o", "out/one.jsonl", "a.urls", jobs=1)
    two = audit("--format", "jsonl", "-o", "out/two.jsonl", "a.urls", jobs=2)
    assert taken == [2]
    assert one == two
    assert (in_tmp / "out/one.jsonl").read_bytes() == (in_tmp / "out/two.jsonl").read_bytes()
    assert sorted(p.name for p in (in_tmp / "out").iterdir()) == ["one.jsonl", "two.jsonl"]


# -- the summary ---------------------------------------------------------------------------------


def test_the_summary_adds_up_to_the_one_process_summary(in_tmp: Path) -> None:
    (in_tmp / "d").mkdir()
    (in_tmp / "d" / "a.urls").write_bytes(
        b"\xef\xbb\xbf" + b"\n".join(url_lines(3000)) + b"\n\xff\n" + b"x" * 300 + b"\n"
    )
    (in_tmp / "d" / "b.bin").write_bytes(b"\x00" * 100)
    (in_tmp / "d" / "c.log").write_text("see https://10.0.0.1/ and https://a.example/\n" * 500)
    sources = list(expand_paths(["d"]))
    options = AuditOptions(jobs=3, max_line_bytes=128)
    info = RunInfo(rules=OFFLINE.compiled.rules, warn_at=1, block_at=2)

    def reporter() -> Reporter:
        writer = JsonWriter(io.TextIOWrapper(io.BytesIO()), info)
        return Reporter(writer, fail_at=OFFLINE.compiled.block_at, collect_baseline=True)

    one_reporter = reporter()
    one = Auditor(OFFLINE, AuditOptions(max_line_bytes=128)).run(sources, one_reporter)
    shares = split.plan_split(sources, "jsonl", options, offline=True, min_share=64)
    assert shares is not None
    assert len(shares) == 3 * split.SHARES_PER_JOB
    split_reporter = reporter()
    got = split.run_split(OFFLINE, options, shares, split_reporter, fmt="jsonl", info=info)
    assert (
        (one.sources, one.skipped_files, one.lines)
        == (got.sources, got.skipped_files, got.lines)
        == (2, 1, 3502)
    )
    for name in (
        "urls",
        "by_decision",
        "by_rule",
        "rule_names",
        "failing",
        "accepted",
        "diagnostics",
    ):
        assert getattr(got, name) == getattr(one, name), name
    assert list(got.by_rule) == list(one.by_rule)
    assert one_reporter.collected == split_reporter.collected


def test_a_file_named_twice_is_audited_twice_without_a_split(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(split, "MIN_SHARE_BYTES", 64)
    (in_tmp / "a.urls").write_bytes(b"\n".join(url_lines(2000)) + b"\n")
    sources_ = list(expand_paths(["a.urls", "a.urls"]))
    # The workers place objects by their file's name: the pool audits it instead.
    assert split.plan_split(sources_, "jsonl", AuditOptions(jobs=2), offline=True) is None
    assert split.plan_split(sources_[:1], "jsonl", AuditOptions(jobs=2), offline=True)
    one = audit("--format", "jsonl", "a.urls", "a.urls", jobs=1)
    two = audit("--format", "jsonl", "a.urls", "a.urls", jobs=2)
    assert one == two
    assert one[1].count(b'"line":2,') == 2


# -- routing: each worker audits the lines of its own hosts --------------------------------------


def routed_lines(rng: random.Random, n: int) -> list[str]:
    hosts = [f"h{i}.example.com" for i in range(300)]
    lines = []
    for i in range(n):
        r = rng.random()
        if r < 0.05:
            lines.append(rng.choice(["", "# a comment", "no url here", "://", "x://"]))
        elif r < 0.35:
            lines.append(f"https://hot.example.com/{i}")  # more than ROUTE_HOST_LINES
        elif r < 0.40:
            lines.append(f"https://[2001:db8::{i % 7}]:8443/{i}")
        else:
            host = rng.choice(hosts)
            port = rng.choice(["", ":443", ":8080", ":x"])
            lines.append(f"{rng.choice(['http', 'https', 'ftp'])}://{host}{port}/p/{i}?q={i}")
    return lines


@pytest.mark.parametrize("count", [2, 3, 5])
def test_every_line_goes_to_exactly_one_worker(count: int) -> None:
    rng = random.Random(count)
    lines = routed_lines(rng, 8000)
    routes = [split.LineRoute(w, count) for w in range(count)]
    owners = [[w for w, r in enumerate(routes) if r.mine(n, text)] for n, text in enumerate(lines)]
    assert all(len(o) == 1 for o in owners)
    # A host's lines go to one worker until it has had ROUTE_HOST_LINES of them, however
    # its URLs are spelt (scheme, port); then they are dealt out.
    by_host: dict[str, set[int]] = {}
    hot: list[int] = []
    for text, (owner,) in zip(lines, owners, strict=True):
        if "hot.example.com" in text:
            hot.append(owner)
        elif "://h" in text:
            authority = text.split("://", 1)[1].split("/", 1)[0]
            if not authority.endswith(":x"):  # not a port: another host for the route
                by_host.setdefault(authority.split(":")[0], set()).add(owner)
    assert len(by_host) == 300
    assert all(len(o) == 1 for o in by_host.values())
    assert len({next(iter(o)) for o in by_host.values()}) == count  # all workers get hosts
    limit = sources.ROUTE_HOST_LINES
    assert len(hot) > limit + 500
    assert len(set(hot[:limit])) == 1
    assert len(set(hot[limit:])) == count


@pytest.mark.parametrize("count", [2, 3, 8, 100])
def test_worker_0_gets_a_little_less_than_an_even_share(count: int) -> None:
    """Worker 0 is the main process and merges the others' output too."""
    table = sources.route_table(count)
    slots = [table.count(w) for w in range(count)]
    assert slots[0] / len(table) == pytest.approx(sources.ROUTE_FIRST_SHARE / count, rel=0.02)
    assert max(slots[1:]) - min(slots[1:]) <= 1
    assert min(slots[1:]) > slots[0]
    assert table[0] == 0


def test_an_even_share_for_worker_0_is_an_even_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "ROUTE_FIRST_SHARE", 1.0)
    table = sources.route_table(3)
    assert [table.count(w) for w in range(3)] == [sources.ROUTE_SLOTS_PER_WORKER] * 3


def test_the_route_is_the_same_in_every_process(tmp_path: Path) -> None:
    """CRC-32, not Python's salted hash: a worker started afresh routes as its siblings do."""
    lines = routed_lines(random.Random(7), 3000)
    script = (
        "import sys, json\n"
        "from urlvet.audit.sources import LineRoute\n"
        "lines = json.load(sys.stdin)\n"
        "r = LineRoute(1, 3)\n"
        "print(json.dumps([r.mine(n, t) for n, t in enumerate(lines)]))\n"
    )
    got = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", script],
                input=json.dumps(lines),
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "PYTHONHASHSEED": seed},
            ).stdout
        )
        for seed in ("1", "2")
    ]
    here = split.LineRoute(1, 3)
    assert got[0] == got[1] == [here.mine(n, t) for n, t in enumerate(lines)]


def test_each_worker_reads_only_its_hosts_urls(in_tmp: Path) -> None:
    lines = routed_lines(random.Random(3), 5000)
    (in_tmp / "a.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    sources_ = list(expand_paths(["a.log"]))
    everything = list(Reader(AuditOptions(), Meter()).read(sources_))
    parts = [
        list(Reader(AuditOptions(), Meter(), split.LineRoute(w, 2)).read(sources_))
        for w in range(2)
    ]
    assert sorted(parts[0] + parts[1], key=lambda o: (o.line, o.column)) == everything
    hosts = [
        {o.url.split("/")[2].split(":")[0] for o in p if "://h" in o.url and ":x" not in o.url}
        for p in parts
    ]
    assert "hot.example.com" in hosts[0] & hosts[1]  # dealt out once it is hot
    hosts = [h - {"hot.example.com"} for h in hosts]
    assert hosts[0]
    assert hosts[1]
    assert not hosts[0] & hosts[1]


def test_routed_reads_pick_the_lines_a_line_at_a_time_route_picks(in_tmp: Path) -> None:
    # Clean blocks are routed in one pass each; blocks with CRLF line breaks, invalid UTF-8,
    # a NUL byte or a line over the limit are read a line at a time. Either way each line
    # and each diagnostic goes to exactly one worker, the one a route fed line by line in
    # input order picks, and the hosts are counted across both kinds of block.
    rng = random.Random(11)
    lines = [line.encode() for line in routed_lines(rng, 30_000)]
    for at in range(0, len(lines), 997):
        lines[at] += rng.choice([b"\r", b"\xff", b"\x00", b"\r\r", b" # note"])
    lines[12_345] = b"https://long.example/" + b"a" * 3000
    (in_tmp / "a.urls").write_bytes(b"\n".join(lines) + b"\n")
    sources_ = list(expand_paths(["a.urls"]))
    options = AuditOptions(max_line_bytes=2048)
    everything = list(Reader(options, Meter()).read(sources_))
    assert sum(isinstance(item, Diagnostic) for item in everything) > 8
    for count in (2, 3):
        parts = [
            list(Reader(options, Meter(), split.LineRoute(w, count)).read(sources_))
            for w in range(count)
        ]
        merged = sorted(
            (item for part in parts for item in part), key=lambda i: (i.line or 0, i.column or 0)
        )
        assert merged == everything
        # The route fed one line at a time, in input order, with the text of each line that
        # reads as text; a line that cannot be read goes by its number.
        alone = [split.LineRoute(w, count) for w in range(count)]
        table = sources.route_table(count)
        owner = {}
        for n, line in enumerate(lines, start=1):
            if b"\xff" in line or b"\x00" in line or len(line) > 2048:
                owner[n] = table[n % len(table)]
                continue
            text = line.decode().rstrip("\r")
            (owner[n],) = [w for w, r in enumerate(alone) if r.mine(n, text)]
        for worker, part in enumerate(parts):
            assert all(owner[item.line] == worker for item in part if item.line is not None)


# -- when a split is planned ------------------------------------------------------------------


def test_plan_cuts_at_line_starts_with_their_line_numbers(tmp_path: Path) -> None:
    data = b"".join(b"https://h%d.example.com/%s\n" % (i, b"z" * (i % 37)) for i in range(5000))
    (tmp_path / "a.urls").write_bytes(data)
    sources = [Source("a.urls", str(tmp_path / "a.urls"))]
    shares = split.plan_split(sources, "jsonl", AuditOptions(jobs=5), offline=True, min_share=1000)
    assert shares is not None
    assert len(shares) == 5 * split.SHARES_PER_JOB
    spans = [s.span for share in shares for s in share]
    assert spans[0] is not None
    assert spans[0].start == 0
    assert spans[0].first_line == 1
    for before, after in itertools.pairwise(spans):
        assert before is not None
        assert after is not None
        assert before.end == after.start
        assert data[after.start - 1 : after.start] == b"\n"
        assert after.first_line == data[: after.start].count(b"\n") + 1
        assert after.kind == "urls"
    assert spans[-1] is not None
    assert spans[-1].end == len(data)


def test_plan_keeps_the_pool_where_a_split_would_not_be_the_same_or_not_pay(tmp_path: Path) -> None:
    big = tmp_path / "big.urls"
    big.write_bytes(b"https://example.com/\n" * 200_000)  # 4 MB
    gz = tmp_path / "big.urls.gz"
    gz.write_bytes(gzip.compress(big.read_bytes() * 4, compresslevel=1))  # never cut by bytes
    named_gz = tmp_path / "plain.urls.gz"
    named_gz.write_bytes(big.read_bytes())  # plain text, whatever its name says
    src = [Source("big.urls", str(big))]
    opts = AuditOptions(jobs=2)
    assert split.plan_split(src, "jsonl", opts, offline=True) is not None
    assert split.plan_split(src, "json", opts, offline=True) is not None
    for fmt in ("text", "sarif", "github"):
        assert split.plan_split(src, fmt, opts, offline=True) is None
    assert split.plan_split(src, "jsonl", opts, offline=False) is None
    assert split.plan_split(src, "jsonl", AuditOptions(jobs=1), offline=True) is None
    assert split.plan_split([Source("<stdin>", None)], "jsonl", opts, offline=True) is None
    assert split.plan_split([Source("g", str(gz))], "jsonl", opts, offline=True) is None
    assert split.plan_split([Source("p", str(named_gz))], "jsonl", opts, offline=True) is not None
    small = tmp_path / "small.urls"
    small.write_bytes(b"https://example.com/\n" * 1000)
    assert split.plan_split([Source("s", str(small))], "jsonl", opts, offline=True) is None


# -- failures ----------------------------------------------------------------------------------


def _no_share_files(*dirs: Path) -> None:
    for d in dirs:
        assert not [p for p in d.iterdir() if p.name.startswith(".urlvet-share-")]


def test_a_worker_that_raises_fails_the_run_clearly(
    in_tmp: Path, taken: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    (in_tmp / "a.urls").write_bytes(b"\n".join(url_lines(2000)) + b"\n")
    temp = in_tmp / "temp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    parent = os.getpid()
    real = Reporter.occurrences

    def broken(self: Reporter, occs: list[Occurrence], recs: Any) -> None:
        if os.getpid() != parent and occs[-1].line >= 1500:
            raise ValueError("reporting failed on purpose")
        real(self, occs, recs)

    monkeypatch.setattr(Reporter, "occurrences", broken)
    code, _, err = audit("--format", "jsonl", "a.urls", jobs=2)
    assert taken == [2]
    assert code == 2
    assert "an audit worker process failed: ValueError: reporting failed on purpose" in err
    assert "Traceback" not in err
    _no_share_files(temp, in_tmp)


def test_worker_0_that_raises_fails_the_run_clearly(
    in_tmp: Path, taken: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The main process audits its own part (worker 0): a failure there ends the worker
    processes and is reported as theirs are."""
    (in_tmp / "a.urls").write_bytes(b"\n".join(url_lines(2000)) + b"\n")
    temp = in_tmp / "temp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    parent = os.getpid()
    # Children that earlier tests keep for the session (a DNS server, a reference process).
    before = set(_children(parent))
    real = Reporter.occurrences

    def broken(self: Reporter, occs: list[Occurrence], recs: Any) -> None:
        if os.getpid() == parent and occs[-1].line >= 1500:
            raise ValueError("reporting failed on purpose")
        real(self, occs, recs)

    monkeypatch.setattr(Reporter, "occurrences", broken)
    code, _, err = audit("--format", "jsonl", "a.urls", jobs=2)
    assert taken == [2]
    assert code == 2
    assert "the audit failed: ValueError: reporting failed on purpose" in err
    assert "Traceback" not in err
    _no_share_files(temp, in_tmp)
    assert set(_children(parent)) <= before  # none of the audit's workers is left


def test_a_worker_that_dies_fails_the_run_clearly(
    in_tmp: Path, taken: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    (in_tmp / "a.urls").write_bytes(b"\n".join(url_lines(2000)) + b"\n")
    (in_tmp / "out").mkdir()
    parent = os.getpid()
    real = Reporter.occurrences

    def dies(self: Reporter, occs: list[Occurrence], recs: Any) -> None:
        if os.getpid() != parent and occs[-1].line >= 1500:
            os.kill(os.getpid(), signal.SIGKILL)
        real(self, occs, recs)

    monkeypatch.setattr(Reporter, "occurrences", dies)
    code, _, err = audit("--format", "jsonl", "-o", "out/r.jsonl", "a.urls", jobs=2)
    assert taken == [2]
    assert code == 2
    assert "an audit worker process ended unexpectedly (exit code -9)" in err
    _no_share_files(in_tmp / "out")


SLOW_AUDIT = """
import sys, time
import urlvet.audit.split as split
from urlvet.audit.report import Reporter
split.MIN_SHARE_BYTES = 64
real = Reporter.occurrences
def slow(self, occs, recs):
    time.sleep(0.001 * len(occs))
    real(self, occs, recs)
Reporter.occurrences = slow
from urlvet.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("stop", ["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_leaves_no_worker_and_no_temporary_file(in_tmp: Path, stop: str) -> None:
    (in_tmp / "a.urls").write_bytes(b"\n".join(url_lines(40_000)) + b"\n")
    (in_tmp / "out").mkdir()
    args = ["audit", "--no-dns", "--format", "jsonl", "--jobs", "2", "-o", "out/r.jsonl", "a.urls"]
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_AUDIT, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not [
            part
            for folder in (in_tmp / "out").glob(".urlvet-share-*")
            for part in folder.glob("*.part")
            if part.exists() and part.stat().st_size > 0
        ]:
            assert time.monotonic() < deadline
            assert proc.poll() is None
            time.sleep(0.05)
        children = _children(proc.pid)
        assert len(children) == 1  # the main process is worker 0
        if stop == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
        else:
            os.kill(proc.pid, signal.SIGTERM)  # the main process only, as a CI timeout
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == (143 if stop == "sigterm" else 130)
    assert b"Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
    assert not (in_tmp / "out" / "r.jsonl").exists()  # no half report
    time.sleep(0.2)
    assert all(not Path(f"/proc/{pid}").exists() or _zombie(pid) for pid in children)
    _no_share_files(in_tmp / "out")


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _zombie(pid: int) -> bool:
    try:
        return (Path(f"/proc/{pid}") / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
