"""`urlvet audit`: every input kind, broken input, locations, caching, jobs and the DNS path.

Offline (--no-dns) except the tests marked `dns`, which resolve against the NSD fixture on
loopback.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from urlvet.audit import (
    WINDOW,
    AuditOptions,
    Auditor,
    Diagnostic,
    Occurrence,
    Reporter,
    Source,
    Summary,
    sniff_kind,
    urls_in_text,
)
from urlvet.audit.output.record import Record
from urlvet.cli import main
from urlvet.mcp.wire import url_requests
from urlvet.policy import Policy

OFFLINE = Policy(dns={"enabled": False})


def audit(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["audit", "--no-dns", *args], input=stdin)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def objects(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def urls_of(out: str) -> list[tuple[int, int, str]]:
    return [(o["line"], o["column"], o["url"]) for o in objects(out) if o["type"] == "url"]


def diagnostics_of(out: str) -> list[dict[str, Any]]:
    return [o for o in objects(out) if o["type"] == "diagnostic"]


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


# -- URL lists -----------------------------------------------------------------------------------


def test_url_list_skips_comments_and_blank_lines(in_tmp: Path) -> None:
    (in_tmp / "list.urls").write_text(
        "# inventory\n\nhttps://example.com/\n  https://example.org/a  # the wiki\n"
        "https://example.net/#frag\n\t\n",
        encoding="utf-8",
    )
    code, out, _ = audit("--format", "jsonl", "list.urls")
    assert code == 0
    assert urls_of(out) == [
        (3, 1, "https://example.com/"),
        (4, 3, "https://example.org/a"),
        (5, 1, "https://example.net/#frag"),
    ]
    assert {o["input"] for o in objects(out)} == {"url-list"}


def test_url_list_vets_a_line_that_is_no_url_instead_of_skipping_it(in_tmp: Path) -> None:
    (in_tmp / "urls.txt").write_text(
        "https://example.com/\nhttps://example.org/\nnot a url\n", encoding="utf-8"
    )
    code, out, _ = audit("--format", "jsonl", "urls.txt")
    assert code == 1
    bad = objects(out)[2]
    assert bad["url"] == "not a url"
    assert bad["decision"] == "block"
    assert bad["findings"][0]["code"] == "UV100"


def test_crlf_and_utf8_bom_are_not_part_of_the_url(in_tmp: Path) -> None:
    (in_tmp / "win.urls").write_bytes(
        b"\xef\xbb\xbfhttps://example.com/a\r\nhttps://example.com/b\r\n"
    )
    code, out, _ = audit("--format", "jsonl", "win.urls")
    assert code == 0
    assert urls_of(out) == [(1, 1, "https://example.com/a"), (2, 1, "https://example.com/b")]


# -- free text and logs --------------------------------------------------------------------------


def test_log_urls_get_line_and_code_point_column(in_tmp: Path) -> None:
    (in_tmp / "app.log").write_text(
        "2026-01-01 start\n"
        "ünïcødé → opening https://10.0.0.1/admin now\n"
        "see (https://example.com/a_(b)) and https://example.com/x.\n",
        encoding="utf-8",
    )
    code, out, _ = audit("--format", "jsonl", "app.log")
    assert code == 1
    line2 = "ünïcødé → opening https://10.0.0.1/admin now"
    assert urls_of(out) == [
        (2, line2.index("https") + 1, "https://10.0.0.1/admin"),
        (3, 6, "https://example.com/a_(b)"),
        (3, 37, "https://example.com/x"),
    ]
    assert objects(out)[0]["input"] == "text"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("go to https://a.example/path.", ["https://a.example/path"]),
        ("[docs](https://a.example/docs)", ["https://a.example/docs"]),
        ("<https://a.example/x>", ["https://a.example/x"]),
        ('"url":"https://a.example/q?x=1\\"', ["https://a.example/q?x=1"]),
        ("javascript:alert(1) and vbscript:msgbox", ["javascript:alert(1)", "vbscript:msgbox"]),
        ('data: {"event": 1}', []),
        ("data:text/html,<b>hi</b>", ["data:text/html"]),
        ("the https:// prefix alone", []),
        ("x_https://a.example/", ["https://a.example/"]),
        (
            "ms-settings://privacy and smb://host/share",
            ["ms-settings://privacy", "smb://host/share"],
        ),
        ("no urls here: just text", []),
    ],
)
def test_urls_in_text(text: str, expected: list[str]) -> None:
    assert [u for _, u in urls_in_text(text)] == expected


@given(st.text(max_size=300))
def test_urls_in_text_never_raises_and_offsets_point_at_the_url(text: str) -> None:
    for offset, url in urls_in_text(text):
        assert text[offset : offset + len(url)] == url


# -- MCP traffic (JSON Lines) --------------------------------------------------------------------

DRAFT_REQUEST = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "interaction/create",
    "params": {
        "id": "i-1",
        "type": "ua",
        "interaction": {"url": "https://10.0.0.1/a", "message": "Sign in"},
    },
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
ELICIT_REQUEST = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "elicitation/create",
    "params": {
        "mode": "url",
        "url": "https://10.0.0.3/c",
        "message": "Authorize",
        "elicitationId": "e-3",
    },
}
ELICIT_ERROR = {
    "jsonrpc": "2.0",
    "id": 4,
    "error": {
        "code": -32042,
        "message": "URL elicitation required",
        "data": {
            "elicitations": [
                {"mode": "url", "url": "https://10.0.0.4/d", "message": "m", "elicitationId": "x"},
                {"mode": "url", "url": "https://example.com/ok", "message": "m2"},
            ]
        },
    },
}
INPUT_REQUIRED = {
    "jsonrpc": "2.0",
    "id": 5,
    "result": {
        "resultType": "input_required",
        "inputRequests": {
            "login": {
                "method": "elicitation/create",
                "params": {"mode": "url", "url": "https://10.0.0.5/e", "message": "Log in"},
            },
            "form": {"method": "elicitation/create", "params": {"mode": "form", "message": "x"}},
        },
    },
}


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (DRAFT_REQUEST, [("https://10.0.0.1/a", "Sign in", "mcp:interaction/create")]),
        (DRAFT_ERROR, [("https://10.0.0.2/b", "Pay", "mcp:interaction_required")]),
        (ELICIT_REQUEST, [("https://10.0.0.3/c", "Authorize", "mcp:elicitation/create")]),
        (
            ELICIT_ERROR,
            [
                ("https://10.0.0.4/d", "m", "mcp:url_elicitation_required"),
                ("https://example.com/ok", "m2", "mcp:url_elicitation_required"),
            ],
        ),
        (INPUT_REQUIRED, [("https://10.0.0.5/e", "Log in", "mcp:input_required")]),
        (
            [DRAFT_REQUEST, ELICIT_REQUEST],
            [
                ("https://10.0.0.1/a", "Sign in", "mcp:interaction/create"),
                ("https://10.0.0.3/c", "Authorize", "mcp:elicitation/create"),
            ],
        ),
        ({"jsonrpc": "2.0", "method": "elicitation/create", "params": {"mode": "form"}}, []),
        ({"jsonrpc": "2.0", "id": 9, "result": {"content": []}}, []),
        (
            {"jsonrpc": "2.0", "method": "elicitation/create", "params": {"mode": "url", "url": 7}},
            [("7", None, "mcp:elicitation/create")],
        ),
    ],
)
def test_url_requests_in_each_wire_shape(message: Any, expected: list[tuple[Any, ...]]) -> None:
    assert [tuple(r) for r in url_requests(message).requests] == expected


def test_draft_interaction_url_is_found_flat_or_nested() -> None:
    # The draft's params carry the URL in `interaction` (as the brief has it) or flat (as
    # urlvet.mcp reads it); an audit finds it either way.
    flat = {**DRAFT_REQUEST, "params": {"id": "i", "type": "ua", "url": "https://10.0.0.1/a"}}
    assert [r.url for r in url_requests(flat).requests] == ["https://10.0.0.1/a"]
    assert [r.url for r in url_requests(DRAFT_REQUEST).requests] == ["https://10.0.0.1/a"]


def test_malformed_message_is_a_problem_and_its_url_is_still_vetted() -> None:
    broken = {
        "jsonrpc": "2.0",
        "method": "elicitation/create",
        "params": {"mode": "url", "url": "https://10.0.0.1/"},
    }
    found = url_requests(broken)  # no id: a request without one is malformed
    assert [r.url for r in found.requests] == ["https://10.0.0.1/"]
    assert found.problems
    assert "malformed MCP message" in found.problems[0]


def test_messages_without_jsonrpc_member_are_read_as_json_rpc() -> None:
    logged = {k: v for k, v in ELICIT_REQUEST.items() if k != "jsonrpc"}
    found = url_requests(logged)
    assert ([r.url for r in found.requests], found.problems) == (["https://10.0.0.3/c"], [])


def test_jsonl_traffic_with_server_field_and_locations(in_tmp: Path) -> None:
    lines = [
        {"ts": 1, "conn": {"server": "https://mcp.example.com/mcp"}, "message": DRAFT_REQUEST},
        {"ts": 2, "conn": {"server": "https://mcp.example.com/mcp"}, "message": ELICIT_ERROR},
        {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "hi"}]}},
        INPUT_REQUIRED,
    ]
    text = "\n".join(json.dumps(x) for x in lines) + "\nplain log line https://10.9.9.9/\n"
    (in_tmp / "traffic.jsonl").write_text(text, encoding="utf-8")
    code, out, _ = audit(
        "--format", "jsonl", "--server-field", "conn.server", "--server", "stdio", "traffic.jsonl"
    )
    assert code == 1
    got = [o for o in objects(out) if o["type"] == "url"]
    assert {d["level"] for d in diagnostics_of(out)} <= {"warning"}
    raw_lines = text.splitlines()
    assert [(o["line"], o["url"], o["input"]) for o in got] == [
        (1, "https://10.0.0.1/a", "mcp:interaction/create"),
        (2, "https://10.0.0.4/d", "mcp:url_elicitation_required"),
        (2, "https://example.com/ok", "mcp:url_elicitation_required"),
        (4, "https://10.0.0.5/e", "mcp:input_required"),
        (5, "https://10.9.9.9/", "text"),
    ]
    for o in got:
        line = raw_lines[o["line"] - 1]
        assert line[o["column"] - 1 :].startswith(o["url"])
    assert got[0]["server"] == "https://mcp.example.com"
    assert got[3]["server"] == "stdio"  # no field on that line: --server


def test_jsonl_escaped_url_is_found_and_located(in_tmp: Path) -> None:
    line = (
        '{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"mode":"url",'
        '"url":"https:\\/\\/10.0.0.1\\/\\u00e9","message":"x"}}'
    )
    (in_tmp / "t.jsonl").write_text(line + "\n", encoding="utf-8")
    code, out, _ = audit("--format", "jsonl", "t.jsonl")
    assert code == 1
    (o,) = objects(out)
    assert o["url"] == "https://10.0.0.1/é"
    assert o["column"] == line.index("https:") + 1


def test_jsonl_invalid_server_field_is_reported_and_the_url_still_vetted(in_tmp: Path) -> None:
    line = {"server": "ftp://nope", "msg": ELICIT_REQUEST}
    (in_tmp / "t.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    code, out, err = audit("--format", "jsonl", "--server-field", "server", "t.jsonl")
    assert code == 2
    kinds = [o["type"] for o in objects(out)]
    assert kinds == ["diagnostic", "url"]
    assert diagnostics_of(out)[0]["code"] == "invalid-server"
    assert "invalid-server" not in err
    assert "ftp://nope" in err


def test_input_kind_override_reads_a_log_as_a_url_list(in_tmp: Path) -> None:
    (in_tmp / "x.log").write_text("see https://example.com/\n", encoding="utf-8")
    _, out, _ = audit("--format", "jsonl", "x.log")
    assert urls_of(out) == [(1, 5, "https://example.com/")]
    _, out, _ = audit("--format", "jsonl", "--input-kind", "urls", "x.log")
    assert urls_of(out) == [(1, 1, "see https://example.com/")]


@pytest.mark.parametrize(
    ("name", "head", "kind"),
    [
        ("a.jsonl", b"anything", "jsonl"),
        ("a.ndjson", b"", "jsonl"),
        ("a.urls", b"hello world", "urls"),
        ("a.txt", b'{"jsonrpc": "2.0"}\n', "jsonl"),
        ("a.txt", b"# c\nhttps://a.example/\nhttp://b.example/ # note\n", "urls"),
        ("a.txt", b"the server said https://a.example/ today\n", "text"),
        ("a.txt", b"", "urls"),
        ("a.txt", b"{not json\n", "text"),
    ],
)
def test_sniff_kind(name: str, head: bytes, kind: str) -> None:
    assert sniff_kind(name, head) == kind


# -- stdin ---------------------------------------------------------------------------------------


def test_stdin_is_read_with_dash_and_named_by_stdin_filename(in_tmp: Path) -> None:
    code, out, _ = audit(
        "--format", "jsonl", "--stdin-filename", "piped.txt", "-", stdin=b"https://10.0.0.1/\n"
    )
    assert code == 1
    (o,) = objects(out)
    assert (o["path"], o["line"], o["column"]) == ("piped.txt", 1, 1)


def test_empty_stdin_and_empty_file_are_clean(in_tmp: Path) -> None:
    (in_tmp / "empty.txt").write_bytes(b"")
    code, out, err = audit("--format", "jsonl", "empty.txt", "-", stdin=b"")
    assert (code, out, err) == (0, "", "")


# -- broken input --------------------------------------------------------------------------------


def test_invalid_utf8_line_is_reported_and_skipped(in_tmp: Path) -> None:
    (in_tmp / "bad.urls").write_bytes(
        b"https://example.com/1\nhttps://ex\xffample.com/\nhttps://10.0.0.1/\n"
    )
    code, out, err = audit("--format", "jsonl", "bad.urls")
    assert code == 2  # input left unaudited outranks the finding
    assert [u for _, _, u in urls_of(out)] == ["https://example.com/1", "https://10.0.0.1/"]
    (d,) = diagnostics_of(out)
    assert (d["code"], d["line"], d["column"], d["level"]) == ("invalid-utf8", 2, 11, "error")
    assert "bad.urls:2:11" in err
    assert "invalid UTF-8" in err


def test_binary_file_is_reported_and_skipped(in_tmp: Path) -> None:
    (in_tmp / "blob.bin").write_bytes(b"\x7fELF\x00\x00https://10.0.0.1/\n" * 10)
    (in_tmp / "ok.urls").write_text("https://example.com/\n", encoding="utf-8")
    code, out, err = audit("--format", "jsonl", "blob.bin", "ok.urls")
    assert code == 2
    (d,) = diagnostics_of(out)
    assert (d["path"], d["code"], d["line"]) == ("blob.bin", "binary-file", None)
    assert urls_of(out) == [(1, 1, "https://example.com/")]
    assert "blob.bin: binary file" in err


def test_utf16_file_is_reported(in_tmp: Path) -> None:
    (in_tmp / "u16.txt").write_bytes("https://example.com/\n".encode("utf-16"))
    code, out, _ = audit("--format", "jsonl", "u16.txt")
    assert code == 2
    assert diagnostics_of(out)[0]["code"] == "utf16-file"


def test_nul_byte_after_the_first_block_skips_only_that_line(in_tmp: Path) -> None:
    body = b"https://example.com/\n" * 1000 + b"https://a\x00.example/\nhttps://10.0.0.1/\n"
    (in_tmp / "late.urls").write_bytes(body)
    code, out, _ = audit("--format", "jsonl", "late.urls")
    assert code == 2
    (d,) = diagnostics_of(out)
    assert (d["code"], d["line"], d["column"]) == ("nul-byte", 1001, 10)
    assert urls_of(out)[-1] == (1002, 1, "https://10.0.0.1/")


def test_over_long_line_is_reported_and_skipped_without_holding_it(in_tmp: Path) -> None:
    long_line = b"https://example.com/?" + b"a" * 5000 + b"\n"
    (in_tmp / "long.urls").write_bytes(b"https://example.com/\n" + long_line + b"https://10.0.0.1/")
    code, out, _ = audit("--format", "jsonl", "--max-line-bytes", "1000", "long.urls")
    assert code == 2
    (d,) = diagnostics_of(out)
    assert (d["code"], d["line"]) == ("line-too-long", 2)
    assert "5,021 bytes" in d["message"]
    assert urls_of(out) == [(1, 1, "https://example.com/"), (3, 1, "https://10.0.0.1/")]


def test_missing_file_is_an_input_error_and_the_rest_is_audited(in_tmp: Path) -> None:
    (in_tmp / "ok.urls").write_text("https://example.com/\n", encoding="utf-8")
    code, out, err = audit("--format", "jsonl", "nope.urls", "ok.urls")
    assert code == 2
    assert diagnostics_of(out)[0]["code"] == "unreadable"
    assert len(urls_of(out)) == 1
    assert "nope.urls: cannot read" in err


def test_directories_are_walked_skipping_vcs_and_binaries_quietly(in_tmp: Path) -> None:
    (in_tmp / "docs").mkdir()
    (in_tmp / "docs" / "a.md").write_text("see https://10.0.0.1/\n", encoding="utf-8")
    (in_tmp / "docs" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (in_tmp / ".git").mkdir()
    (in_tmp / ".git" / "config").write_text("url = https://10.0.0.2/\n", encoding="utf-8")
    code, out, _ = audit("--format", "jsonl", ".")
    assert code == 1
    assert [(o["path"], o["url"]) for o in objects(out)] == [("docs/a.md", "https://10.0.0.1/")]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_crash_and_stdout_stays_jsonl(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.txt"
    path.write_bytes(data)
    for kind in ("auto", "urls", "jsonl", "text"):
        code, out, _ = audit(
            "--format", "jsonl", "--input-kind", kind, "--max-line-bytes", "256", str(path)
        )
        assert code in (0, 1, 2)
        for line in out.splitlines():
            assert json.loads(line)["type"] in ("url", "diagnostic")


# -- the pipeline: cache, jobs, DNS --------------------------------------------------------------


class Collect:
    """A writer that keeps everything (tests only)."""

    def __init__(self) -> None:
        self.items: list[tuple[Occurrence, Record] | Diagnostic] = []

    def start(self) -> None:
        pass

    def occurrence(self, occ: Occurrence, record: Record, accepted: frozenset[str]) -> None:
        self.items.append((occ, record))

    def diagnostic(self, diag: Diagnostic) -> None:
        self.items.append(diag)

    def finish(self, summary: Summary) -> None:
        pass


def run_api(
    tmp_path: Path, text: str, policy: Policy = OFFLINE, **options: Any
) -> tuple[Summary, Collect]:
    path = tmp_path / "in.urls"
    path.write_text(text, encoding="utf-8")
    writer = Collect()
    reporter = Reporter(writer, fail_at=policy.compiled.block_at)
    summary = Auditor(policy, AuditOptions(**options)).run([Source("in.urls", str(path))], reporter)
    return summary, writer


def test_each_distinct_url_is_vetted_once(tmp_path: Path) -> None:
    urls = ["https://example.com/", "https://10.0.0.1/", "https://example.org/"] * 500
    summary, writer = run_api(tmp_path, "\n".join(urls) + "\n")
    assert summary.urls == 1500
    assert summary.vetted == 3
    assert summary.by_decision == {"block": 500, "warn": 0, "allow": 1000}
    assert summary.by_rule == {"UV201": 500}
    assert summary.failing == 500
    records = {id(rec) for item in writer.items if isinstance(item, tuple) for rec in [item[1]]}
    assert len(records) == 3


def test_cache_is_bounded_and_results_stay_right_when_it_evicts(tmp_path: Path) -> None:
    # Keys repeat within a window (vetted once there) and across windows, where the cache of
    # three records has evicted them.
    urls = [
        f"https://10.0.0.{i % 7}/" if i % 2 else f"https://e{i % 11}.example.com/"
        for i in range(3 * WINDOW)
    ]
    summary, writer = run_api(tmp_path, "\n".join(urls) + "\n", cache_size=3)
    assert summary.vetted > 18  # evictions forced re-vetting
    for item in writer.items:
        assert isinstance(item, tuple)
        occ, rec = item
        assert rec.decision.value == ("block" if occ.url.startswith("https://10.") else "allow")


def test_cache_is_bounded_in_bytes_too(tmp_path: Path) -> None:
    long_urls = [f"https://e{i}.example.com/{'a' * 3000}" for i in range(50)]
    # The same fifty URLs again a window later, when the cache may have dropped them.
    lines = [*long_urls, *["https://filler.example.com/"] * WINDOW, *long_urls]
    summary, _ = run_api(tmp_path, "\n".join(lines) + "\n", cache_bytes=20_000)
    assert summary.urls == 100 + WINDOW
    # Each record is ~3.5 kB: the budget holds five, not fifty, so most are vetted again.
    assert summary.vetted >= 51 + 45
    summary, _ = run_api(tmp_path, "\n".join(lines) + "\n")
    assert summary.vetted == 51


def test_jobs_give_the_same_results_in_the_same_order(in_tmp: Path) -> None:
    lines = []
    for i in range(12_000):
        lines.append(
            f"https://10.0.{i % 50}.1/x"
            if i % 3 == 0
            else f"https://svc{i % 700}.example.com/{i % 900}"
        )
        if i % 1000 == 0:
            lines.append("# comment")
    (in_tmp / "many.urls").write_text("\n".join(lines) + "\n", encoding="utf-8")
    one = audit("--format", "jsonl", "many.urls")
    two = audit("--format", "jsonl", "--jobs", "2", "many.urls")
    assert one[0] == two[0] == 1
    assert one[1] == two[1]


def test_jobs_report_broken_lines_in_place(in_tmp: Path) -> None:
    body = b"".join(
        b"https://ex\xffample.com/\n" if i == 4500 else b"https://e%d.example.com/\n" % i
        for i in range(9000)
    )
    (in_tmp / "b.urls").write_bytes(body)
    code, out, _ = audit("--format", "jsonl", "--jobs", "2", "b.urls")
    assert code == 2
    got = objects(out)
    assert len(got) == 9000
    assert got[4500]["type"] == "diagnostic"
    assert got[4500]["line"] == 4501


def test_dns_audit_groups_urls_by_host_and_runs_hosts_concurrently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from urlvet.engine import Vetter

    spans: dict[str, list[tuple[float, float]]] = {}

    async def fake_avet(self: Vetter, url: str, server: Any = None, *, message: Any = None) -> Any:
        start = time.monotonic()
        await asyncio.sleep(0.05)
        spans.setdefault(url.split("/")[2], []).append((start, time.monotonic()))
        return self.vet_offline(url, server, message=message)

    monkeypatch.setattr(Vetter, "avet", fake_avet)
    urls = [f"https://h{i % 4}.example.com/{i}" for i in range(16)] * 2
    started = time.monotonic()
    summary, _writer = run_api(tmp_path, "\n".join(urls) + "\n", policy=Policy())
    elapsed = time.monotonic() - started
    assert summary.urls == 32
    assert summary.vetted == 16
    for host_spans in spans.values():  # one host: one URL after the other
        host_spans.sort()
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(host_spans))
    assert len(spans) == 4
    assert elapsed < 16 * 0.05


@pytest.mark.dns
def test_dns_audit_against_the_loopback_zone(in_tmp: Path, nsd: tuple[str, int]) -> None:
    host, port = nsd
    urls = [
        "https://public.urlvet.test/",
        "https://private-10.urlvet.test/a",
        "https://private-10.urlvet.test/b",
        "https://public.urlvet.test/x",
    ] * 3
    (in_tmp / "d.urls").write_text("\n".join(urls) + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        main, ["audit", "--dns", "--nameserver", f"{host}:{port}", "--format", "jsonl", "d.urls"]
    )
    assert result.exit_code == 1, result.output
    got = objects(result.stdout)
    assert len(got) == 12
    by_url = {o["url"]: o for o in got}
    assert by_url["https://public.urlvet.test/"]["decision"] == "allow"
    assert "UV220" in [f["code"] for f in by_url["https://private-10.urlvet.test/a"]["findings"]]
