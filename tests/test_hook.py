"""``urlvet hook`` against a hostile server: over-long and unreadable lines, odd ids, hang-ups.

The hook runs as the real command in a subprocess, on real pipes; its memory is read from
/proc. What it must do: hold no line whole beyond 1 MiB, decline every URL request whose id
can be read (by that id, as the server wrote it), say when nothing can be declined, and end
with one line when its reader goes away.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from support.proxy_harness import env
from urlvet.findings import Decision
from urlvet.mcp import answer_line, hook_lines
from urlvet.mcp.lines import OverlongLine, read_lines
from urlvet.mcp.wire import MAX_LINE

BLOCKED = "https://accounts.google.com@evil.example/login"
TIMEOUT = 60.0
HOOK = [sys.executable, "-m", "urlvet", "hook", "--no-dns", "--server", "stdio"]
MB = 1 << 20


def _elicit_head(msg_id: str) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":' + msg_id.encode() + b',"method":"elicitation/create",'
        b'"params":{"mode":"url","elicitationId":"e1","message":"Sign in","url":"'
    )


def _elicit(msg_id: str, url: str = BLOCKED) -> bytes:
    return _elicit_head(msg_id) + url.encode() + b'"}}'


def _hook(stdin: bytes) -> list[dict[str, Any]]:
    proc = subprocess.run(HOOK, input=stdin, capture_output=True, env=env(), timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


# -- over-long lines --------------------------------------------------------------------------


def test_a_400_mb_line_is_refused_unread_in_bounded_memory_and_declined_by_its_id() -> None:
    proc = subprocess.Popen(HOOK, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env())
    assert proc.stdin is not None
    assert proc.stdout is not None

    def feed() -> None:
        assert proc.stdin is not None
        proc.stdin.write(b'{"jsonrpc":"2.0","id":6,"method":"ping"}\n')
        proc.stdin.flush()
        proc.stdin.write(_elicit_head("5") + b"https://example.com/?q=")
        block = b"a" * MB
        for _ in range(400):
            proc.stdin.write(block)
        proc.stdin.write(b'"}}\n' + _elicit("7") + b"\n")
        proc.stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    first = json.loads(proc.stdout.readline())  # the hook is up: its baseline
    baseline = _hwm_mb(proc.pid)
    long_one = json.loads(proc.stdout.readline())
    peak = _hwm_mb(proc.pid)
    after = json.loads(proc.stdout.readline())
    writer.join(TIMEOUT)
    assert proc.wait(timeout=TIMEOUT) == 0
    assert first["id"] == 6
    assert peak - baseline < 16, f"the hook grew by {peak - baseline:.0f} MB for a 400 MB line"
    print(f"400 MB line: hook VmHWM {baseline:.0f} MB before, {peak:.0f} MB after")
    assert long_one["ok"] is False
    assert long_one["decision"] == "block"
    assert long_one["error"]["code"] == "too-long"
    assert long_one["id"] == 5
    assert long_one["response"] == {"jsonrpc": "2.0", "id": 5, "result": {"action": "decline"}}
    # The next line is read whole and answered on its own.
    assert after["id"] == 7
    assert after["response"] == {"jsonrpc": "2.0", "id": 7, "result": {"action": "decline"}}


def test_an_over_long_request_whose_id_is_past_the_first_mebibyte_is_said_undeclinable() -> None:
    line = (
        b'{"jsonrpc":"2.0","method":"interaction/create","params":{"blob":"'
        + b"b" * (2 * MB)
        + b'"},"id":9}\n'
    )
    (got,) = _hook(line)
    assert got["ok"] is False
    assert got["decision"] == "block"
    assert got["response"] is None
    assert got["error"]["code"] == "too-long"
    assert "claims to be interaction/create but no id could be read" in got["error"]["message"]
    assert "nothing can be declined: drop it" in got["error"]["message"]


def test_an_over_long_input_required_result_is_declined_by_the_keys_that_can_be_read() -> None:
    line = (
        b'{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","requestState":"s-1",'
        b'"inputRequests":{"a":{"method":"elicitation/create","params":{"mode":"url"}},'
        b'"b":{"method":"elicitation/create","params":{"mode":"url","url":"https://x.example/'
        + b"c" * (2 * MB)
        + b'"}}}}}\n'
    )
    (got,) = _hook(line)
    assert got["error"]["code"] == "too-long"
    assert got["response"] == {
        "inputResponses": {"a": {"action": "decline"}, "b": {"action": "decline"}},
        "requestState": "s-1",
    }


# -- unreadable lines ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "response"),
    [
        (
            _elicit_head('"r-1"') + b"https://x.example/\xff\xfe" + b'"}}',
            {"jsonrpc": "2.0", "id": "r-1", "result": {"action": "decline"}},
        ),
        (
            b'{"jsonrpc":"2.0","\\u0069d":12,"method":"interaction/create","params":{"url":',
            {
                "jsonrpc": "2.0",
                "id": 12,
                "error": {"code": -32099, "message": "User did not consent to the interaction."},
            },
        ),
        (
            b'{"jsonrpc":"2.0","id":4,"id":8,"method":"elicitation/create","params":{,}}',
            {"jsonrpc": "2.0", "id": 8, "result": {"action": "decline"}},
        ),
    ],
    ids=["invalid-utf8", "escaped-name-cut-off", "repeated-id-broken"],
)
def test_an_unreadable_url_request_is_declined_by_the_id_it_carries(
    line: bytes, response: dict[str, Any]
) -> None:
    (got,) = _hook(line + b"\n")
    assert got["ok"] is False
    assert got["decision"] == "block"
    assert got["error"]["code"] == "invalid-json"
    assert got["response"] == response


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":5,"error":{"code":"-32042","data":{"elicitations":[',
        b'{"jsonrpc":"2.0","id":5,"error":{"code":-3.2003e4,"data":{"url":"https://x.example/"',
    ],
    ids=["string-code", "exponent-code"],
)
def test_an_unreadable_url_error_is_blocked_and_not_retried(line: bytes) -> None:
    (got,) = _hook(line + b"\n")
    assert got["ok"] is False
    assert got["decision"] == "block"
    assert got["retry"] is False
    assert got["response"] is None


def test_an_unreadable_line_that_claims_no_url_request_says_so() -> None:
    (got,) = _hook(b'{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{\n')
    assert got["response"] is None
    assert "claims no URL request" in got["error"]["message"]


# -- ids as the server wrote them -----------------------------------------------------------


@pytest.mark.parametrize("written", ["1.0", "1.0E+2", "-0.0", "7e0"])
def test_a_request_id_that_is_no_integer_is_declined_with_the_id_as_written(
    written: str,
) -> None:
    proc = subprocess.run(
        HOOK, input=_elicit(written) + b"\n", capture_output=True, env=env(), timeout=TIMEOUT
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["decision"] == "block"
    assert got["id_text"] == written
    assert got["response"]["result"] == {"action": "decline"}
    assert f'"response": {{"jsonrpc": "2.0", "id": {written}, '.encode() in proc.stdout


def test_an_integer_id_is_answered_as_before() -> None:
    (got,) = _hook(_elicit("42") + b"\n")
    assert got["id"] == 42
    assert got["id_text"] is None
    assert got["response"] == {"jsonrpc": "2.0", "id": 42, "result": {"action": "decline"}}


# -- the reader goes away -----------------------------------------------------------------------


def test_a_reader_that_hangs_up_gets_one_line_on_stderr_and_the_hook_ends() -> None:
    proc = subprocess.Popen(
        HOOK,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(),
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    proc.stdout.close()
    _, stderr = proc.communicate(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n' * 3000, TIMEOUT)
    assert proc.returncode == 0
    assert stderr.decode().splitlines() == ["urlvet hook: the reader of stdout closed it: stopping"]


# -- the line reader ----------------------------------------------------------------------------


class _Trickle(io.RawIOBase):
    """A stream that hands out at most ``step`` bytes a read, as a pipe may."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data = data
        self.step = step

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        out, self.data = self.data[: self.step], self.data[self.step :]
        return out


@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=12),
    st.booleans(),
    st.integers(1, 50),
    st.integers(4, 30),
)
def test_read_lines_gives_each_line_or_its_head_whatever_the_chunks(
    lines: list[bytes], last_newline: bool, step: int, limit: int
) -> None:
    data = b"\n".join(lines) + (b"\n" if last_newline and lines else b"")
    expected: list[bytes | OverlongLine] = []
    for line in re.findall(rb"[^\n]*\n|[^\n]+\Z", data):
        expected.append(line if len(line) <= limit else OverlongLine(line[:limit], len(line)))
    assert list(read_lines(_Trickle(data, step), limit)) == expected  # type: ignore[arg-type]


def test_hook_lines_answers_an_overlong_line_without_its_body() -> None:
    head = _elicit_head("3")[:MAX_LINE]
    (out,) = hook_lines([OverlongLine(head, 5 * MAX_LINE)])
    got = json.loads(out)
    assert got["error"]["code"] == "too-long"
    assert f"({5 * MAX_LINE:,})" in got["error"]["message"]
    assert got["response"]["id"] == 3


def test_a_decodable_request_keeps_its_verdict_whatever_its_id() -> None:
    answer = answer_line(_elicit("2.5"))
    assert answer.decision is Decision.BLOCK
    assert answer.id is None
    assert answer.id_text == "2.5"
    assert answer.response == {"jsonrpc": "2.0", "id": 2.5, "result": {"action": "decline"}}
