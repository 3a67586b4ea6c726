"""``urlvet proxy -- COMMAND``: the wire, byte for byte, and the faults, with a scripted server.

The server is tests/support/jsonrpc_server.py, a hand-written JSON-RPC server the test scripts through
``test/send`` (write these lines verbatim) and ``test/received`` (what it has read): it sends the
draft's shapes, malformed and over-long lines, big results and input_required results the SDK
cannot. The client is this test, talking JSON lines to the real proxy command's stdin/stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from support.mcp_specs import DRAFT_TEXT, code_blocks
from support.proxy_harness import JSONRPC_SERVER, env, proxy_command
from urlvet.mcp.answers import URL_BLOCKED
from urlvet.mcp.proxy.stdio import OVERSIZED, LineReader

BLOCKED = "https://google.com@evil.example/"
WARNED = "https://93.184.216.34/"  # a public IP literal: UV205, a warning
ALLOWED = "https://example.com/x"
DRAFT_SERVER = "https://example.com/mcp"
TIMEOUT = 30.0


class Proxied:
    """The proxy in front of the scripted server, driven as a client drives it."""

    def __init__(self, *options: str, server_args: tuple[str, ...] = (), dns: bool = False) -> None:
        cmd = proxy_command(
            *(() if dns else ("--no-dns",)),
            *options,
            command=[sys.executable, str(JSONRPC_SERVER), *server_args],
        )
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env(),
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()
        self._next = 1000

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr += line

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def recv(self, timeout: float = TIMEOUT) -> bytes:
        line = self.lines.get(timeout=timeout)
        assert line is not None, f"the proxy closed its stdout; stderr: {self.stderr!r}"
        return line

    def request(self, method: str, params: Any = None) -> int:
        self._next += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self._next

    def until_response(self, msg_id: int) -> tuple[dict[str, Any], list[bytes]]:
        """Read until the response to ``msg_id``: (it, the lines before it)."""
        before = []
        while True:
            line = self.recv()
            try:
                data = json.loads(line)
            except ValueError:
                data = None
            if isinstance(data, dict) and data.get("id") == msg_id and "method" not in data:
                return data, before
            before.append(line)

    def script(self, *lines: str | bytes) -> list[bytes]:
        """Have the server write ``lines``; what the client got before the server's '{}'."""
        texts = [x.decode() if isinstance(x, bytes) else x for x in lines]
        _, got = self.until_response(self.request("test/send", {"lines": texts}))
        # urlvet's notices of a block (tests/test_proxy_hostile_stdio.py checks them) are set aside.
        return [g for g in got if b'"logger":"urlvet"' not in g]

    def received(self) -> list[Any]:
        """What the server has read so far, decoded (unreadable lines as text)."""
        time.sleep(0.2)  # declines are written right after the message: let them land
        result, _ = self.until_response(self.request("test/received"))
        out = []
        for text in result["result"]["lines"]:
            try:
                out.append(json.loads(text))
            except ValueError:
                out.append(text)
        return out

    def close(self, timeout: float = TIMEOUT) -> int:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        return self.proc.wait(timeout=timeout)


@pytest.fixture
def proxied() -> Any:
    p = Proxied("--server", DRAFT_SERVER)
    yield p
    p.close()
    if p.proc.poll() is None:
        p.proc.kill()


def _elicit(msg_id: int | str, url: str, message: str = "Please sign in.") -> str:
    params = {"mode": "url", "elicitationId": f"e-{msg_id}", "url": url, "message": message}
    return json.dumps(
        {"jsonrpc": "2.0", "id": msg_id, "method": "elicitation/create", "params": params}
    )


def _draft(index: int) -> dict[str, Any]:
    return copy.deepcopy(code_blocks(DRAFT_TEXT)[index])


def _replies_to(received: list[Any], msg_id: Any) -> list[Any]:
    return [
        m for m in received if isinstance(m, dict) and m.get("id") == msg_id and "method" not in m
    ]


# -- the wire ----------------------------------------------------------------------------------


def test_unrelated_traffic_passes_byte_for_byte_and_in_order(proxied: Proxied) -> None:
    lines = [
        '{ "jsonrpc" : "2.0", "method": "notifications/message", "params": {"level": "info"} }',
        '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"caf\\u00e9 \\/ x"}}',
        '[{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}},'
        '{"jsonrpc":"2.0","id":"s1","method":"ping"}]',
        '{"jsonrpc":"2.0","id":"s2","method":"elicitation/create","params":{"mode":"form",'
        '"message":"Name?","requestedSchema":{"type":"object","properties":{}}}}',
        '{"jsonrpc":"2.0","id":"s3","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}',
        "not json at all",
        '{"not": "json-rpc", "text": "caf\\u00e9"}',
        '{"jsonrpc":"2.0","id":"s4","error":{"code":-32601,"message":"no such method \\u00e9"}}',
    ]
    got = proxied.script(*lines)
    assert got == [line.encode() + b"\n" for line in lines]


def test_draft_example_interaction_allowed_is_forwarded_byte_for_byte(proxied: Proxied) -> None:
    text = json.dumps(_draft(1), indent=None)
    assert proxied.script(text) == [text.encode() + b"\n"]


def test_draft_interaction_blocked_is_declined_with_minus_32099(proxied: Proxied) -> None:
    message = _draft(1)
    message["id"] = 77
    message["params"]["interaction"]["url"] = BLOCKED
    assert proxied.script(json.dumps(message)) == []
    replies = _replies_to(proxied.received(), 77)
    assert replies == [
        {
            "jsonrpc": "2.0",
            "id": 77,
            "error": {"code": -32099, "message": "User did not consent to the interaction."},
        }
    ]


def test_draft_interaction_warned_gets_a_urlvet_line_in_its_text_content(
    proxied: Proxied,
) -> None:
    message = _draft(1)
    message["params"]["interaction"]["url"] = WARNED
    (got,) = proxied.script(json.dumps(message))
    data = json.loads(got)
    text = data["params"]["interaction"]["message"]["text"]
    first, rest = text.split("\n", 1)
    assert first.startswith("urlvet: ")
    assert "UV205" in first
    assert rest == "Authorization is required to access your Example Co files."
    assert data["params"]["interaction"]["url"] == WARNED
    assert data["params"]["id"] == message["params"]["id"]


def test_draft_interaction_required_error_blocked_becomes_urlvets_error(
    proxied: Proxied,
) -> None:
    message = _draft(2)
    message["id"] = 55
    message["error"]["data"]["url"] = BLOCKED
    (got,) = proxied.script(json.dumps(message))
    data = json.loads(got)
    assert data["id"] == 55
    assert data["error"]["code"] == URL_BLOCKED
    assert data["error"]["message"].startswith("urlvet blocked the URL")
    assert "UV104" in data["error"]["message"]


def test_elicitation_blocked_allowed_and_warned(proxied: Proxied) -> None:
    got = proxied.script(_elicit(1, BLOCKED), _elicit(2, ALLOWED), _elicit(3, WARNED, "Open it."))
    assert got[0] == _elicit(2, ALLOWED).encode() + b"\n"
    warned = json.loads(got[1])
    assert warned["params"]["message"].startswith("urlvet: ")
    assert warned["params"]["message"].endswith("\nOpen it.")
    assert len(got) == 2
    assert _replies_to(proxied.received(), 1) == [
        {"jsonrpc": "2.0", "id": 1, "result": {"action": "decline"}}
    ]


def test_input_required_blocked_is_retried_with_a_decline_and_the_client_sees_what_follows(
    proxied: Proxied,
) -> None:
    ask = {
        "pay": {
            "method": "elicitation/create",
            "params": {"mode": "url", "url": BLOCKED, "message": "Pay."},
        }
    }
    call = proxied.request("tools/call", {"name": "t", "arguments": {"ask": ask, "n": 1}})
    response, before = proxied.until_response(call)
    assert [b for b in before if b'"logger":"urlvet"' not in b] == []
    # The server echoes the params it got: the retry carried the decline and the state.
    echoed = json.loads(response["result"]["content"][0]["text"])
    assert echoed["inputResponses"] == {"pay": {"action": "decline"}}
    assert echoed["requestState"] == "state-1"
    assert echoed["arguments"] == {"ask": ask, "n": 1}
    retried = [
        m
        for m in proxied.received()
        if isinstance(m, dict) and m.get("method") == "tools/call" and m["id"] != call
    ]
    assert len(retried) == 1
    assert str(retried[0]["id"]).startswith("urlvet-retry-")


def test_input_required_warned_is_forwarded_rewritten(proxied: Proxied) -> None:
    ask = {
        "k": {
            "method": "elicitation/create",
            "params": {"mode": "url", "url": WARNED, "message": "M"},
        }
    }
    call = proxied.request("tools/call", {"name": "t", "arguments": {"ask": ask}})
    response, _ = proxied.until_response(call)
    assert response["result"]["resultType"] == "input_required"
    message = response["result"]["inputRequests"]["k"]["params"]["message"]
    assert message.startswith("urlvet: ")
    assert message.endswith("\nM")


# -- faults ------------------------------------------------------------------------------------


def test_malformed_url_request_is_declined_never_forwarded(proxied: Proxied) -> None:
    no_url = '{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{"mode":"url","message":"x"}}'
    broken = '{"jsonrpc":"2.0","id":10,"method":"elicitation/create","params":{"mode":"url","url":'
    escaped = '{"jsonrpc":"2.0","id":11,"method":"elicitation\\/create","params":{"mode":"url","url":"https://google.com@evil.example/","message":"m"}}'
    assert proxied.script(no_url, broken, escaped) == []
    received = proxied.received()
    assert _replies_to(received, 9) == [
        {"jsonrpc": "2.0", "id": 9, "result": {"action": "decline"}}
    ]
    assert _replies_to(received, 11) == [
        {"jsonrpc": "2.0", "id": 11, "result": {"action": "decline"}}
    ]


def test_over_long_url_request_is_declined_never_forwarded(proxied: Proxied) -> None:
    line = _elicit(12, ALLOWED, "x" * (2 << 20))
    assert proxied.script(line) == []
    assert _replies_to(proxied.received(), 12) == [
        {"jsonrpc": "2.0", "id": 12, "result": {"action": "decline"}}
    ]


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def _proxy_pid(p: Proxied) -> int:
    return p.proc.pid


def test_a_10_mb_message_passes_with_bounded_memory(proxied: Proxied) -> None:
    proxied.until_response(proxied.request("test/big", {"size": 1000}))  # started and warm
    before = _peak_rss_kib(_proxy_pid(proxied))
    size = 10_000_000
    msg_id = proxied.request("test/big", {"size": size})
    response, _ = proxied.until_response(msg_id)
    assert len(response["result"]["blob"]) == size
    # And a second one: memory does not grow with each big message.
    response, _ = proxied.until_response(proxied.request("test/big", {"size": size}))
    peak = _peak_rss_kib(_proxy_pid(proxied))
    grown_mb = (peak - before) / 1024
    assert grown_mb < 6 * size / 1e6, f"the proxy grew by {grown_mb:.0f} MB for a 10 MB message"


def test_a_thousand_concurrent_tool_calls(proxied: Proxied) -> None:
    ids = []
    for n in range(1000):
        ids.append(
            proxied.request("tools/call", {"name": "echo", "arguments": {"n": n, "delay": 0.5}})
        )
    seen: dict[int, int] = {}
    for _ in range(1000):
        data = json.loads(proxied.recv())
        echoed = json.loads(data["result"]["content"][0]["text"])
        seen[data["id"]] = echoed["arguments"]["n"]
    assert sorted(seen) == ids
    assert all(seen[i] == i - ids[0] for i in ids)


def test_child_exit_is_the_proxys_exit_after_flushing(proxied: Proxied) -> None:
    lines = [
        f'{{"jsonrpc":"2.0","method":"notifications/message","params":{{"n":{n}}}}}'
        for n in range(50)
    ]
    proxied.send({"jsonrpc": "2.0", "id": 1, "method": "test/send", "params": {"lines": lines}})
    proxied.send({"jsonrpc": "2.0", "id": 2, "method": "test/exit", "params": {"code": 3}})
    got = [proxied.recv() for _ in range(51)]
    assert got[:50] == [line.encode() + b"\n" for line in lines]
    assert proxied.proc.wait(timeout=TIMEOUT) == 3
    assert proxied.lines.get(timeout=TIMEOUT) is None  # stdout closed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def test_client_hang_up_stops_a_stubborn_child_and_leaves_no_orphan() -> None:
    p = Proxied(server_args=("--stubborn",))
    deadline = time.monotonic() + TIMEOUT
    while b"grandchild=" not in p.stderr:
        assert time.monotonic() < deadline, p.stderr
        time.sleep(0.05)
    grandchild = int(p.stderr.split(b"grandchild=")[1].split()[0])
    child = int(
        subprocess.run(
            ["pgrep", "-P", str(p.proc.pid)], capture_output=True, text=True, check=False
        ).stdout.split()[0]
    )
    assert _alive(child)
    assert _alive(grandchild)
    started = time.monotonic()
    status = p.close()  # the client hangs up: stdin closed
    took = time.monotonic() - started
    assert status == 128 + signal.SIGKILL  # it ignored stdin's end and SIGTERM
    assert took < 15
    time.sleep(0.2)
    assert not _alive(child)
    assert not _alive(grandchild)


def test_a_missing_command_is_a_clear_error() -> None:
    proc = subprocess.run(
        proxy_command("--no-dns", command=["/nonexistent/server"]),
        capture_output=True,
        text=True,
        env=env(),
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode == 2
    assert "cannot start '/nonexistent/server'" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- the log, and urlvet audit reading it ------------------------------------------------------


def test_log_lines_and_urlvet_audit_reads_them(tmp_path: Path) -> None:
    log = tmp_path / "proxy.log"
    p = Proxied("--log", str(log), "--server-name", "scripted")
    try:
        p.script(_elicit(1, BLOCKED), _elicit(2, ALLOWED), _elicit(3, WARNED))
    finally:
        p.close()
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["url"], e["decision"], e["action"]) for e in entries] == [
        (BLOCKED, "block", "declined"),
        (ALLOWED, "allow", "forwarded"),
        (WARNED, "warn", "forwarded-with-warning"),
    ]
    for e in entries:
        assert set(e) >= {"time", "server", "shape", "url", "decision", "codes", "action"}
        assert e["server"] == "stdio"
        assert e["server_name"] == "scripted"
        assert e["shape"] == "elicitation/create"
    assert entries[0]["codes"][0] == "UV104"
    audit = subprocess.run(
        [
            sys.executable,
            "-c",
            "from urlvet.cli import main; main()",
            "audit",
            "--no-dns",
            "--format",
            "jsonl",
            str(log),
        ],
        capture_output=True,
        text=True,
        env=env(),
        timeout=TIMEOUT,
        check=False,
    )
    assert audit.returncode == 1, audit.stderr
    found = [json.loads(line) for line in audit.stdout.splitlines()]
    by_url = {f["url"]: f["decision"] for f in found}
    assert by_url == {BLOCKED: "block", ALLOWED: "allow", WARNED: "warn"}


def test_sigterm_to_the_proxy_stops_the_child_and_exits_with_its_status() -> None:
    p = Proxied()
    p.until_response(p.request("ping"))  # both running
    child = int(
        subprocess.run(
            ["pgrep", "-P", str(p.proc.pid)], capture_output=True, text=True, check=False
        ).stdout.split()[0]
    )
    p.proc.send_signal(signal.SIGTERM)
    # The child's stdin is closed first: it ends on its own, with status 0.
    assert p.proc.wait(timeout=TIMEOUT) == 0
    time.sleep(0.2)
    assert not _alive(child)


@pytest.mark.dns
def test_with_dns_a_name_that_resolves_into_the_network_is_declined(
    nsd: tuple[str, int],
) -> None:
    host, port = nsd
    p = Proxied("--dns", "--nameserver", f"{host}:{port}", dns=True)
    try:
        private = _elicit(1, "https://private-10.urlvet.test/login")
        public = _elicit(2, "https://public.urlvet.test/login")
        assert p.script(private, public) == [public.encode() + b"\n"]
        assert _replies_to(p.received(), 1) == [
            {"jsonrpc": "2.0", "id": 1, "result": {"action": "decline"}}
        ]
    finally:
        p.close()


def test_url_requests_spelled_to_slip_past_are_still_vetted(proxied: Proxied) -> None:
    elicitation = {"mode": "url", "elicitationId": "x", "url": BLOCKED, "message": "m"}
    float_code = {
        "jsonrpc": "2.0",
        "id": 60,
        "error": {
            "code": -32042.0,  # a JavaScript client reads it as -32042
            "message": "URL elicitation required",
            "data": {"elicitations": [elicitation]},
        },
    }
    no_jsonrpc = {"id": 61, "method": "elicitation/create", "params": elicitation}
    got = proxied.script(json.dumps(float_code), json.dumps(no_jsonrpc))
    assert len(got) == 1
    error = json.loads(got[0])
    assert error["id"] == 60
    assert error["error"]["code"] == URL_BLOCKED
    assert _replies_to(proxied.received(), 61) == [
        {"jsonrpc": "2.0", "id": 61, "result": {"action": "decline"}}
    ]


# -- faults and resources: a server or client that floods, hangs up or leaves helpers ---------

MEMORY_BOUND_MB = 256
"""The most the proxy may hold, whatever the server or the client sends (VmHWM)."""

# A server that writes messages as fast as its stdout takes them: sizes cycle through the
# list (48 MiB down to 2 KiB), every one valid JSON-RPC and numbered in order; every third is
# an error response, which urlvet decodes and judges in full.
FLOOD_LINE = r"""
def flood_line(seq, sizes):
    size = sizes[seq % len(sizes)]
    if seq % 3 == 0:
        head = b'{"jsonrpc":"2.0","id":%d,"error":{"code":-32000,"message":"' % seq
    else:
        head = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"seq":%d,"t":"' % seq
    return head + b"x" * size + b'"}}\n'
"""
FLOOD_SERVER = (
    FLOOD_LINE
    + r"""
import sys
sizes, total = [int(x) for x in sys.argv[1].split(",")], int(sys.argv[2])
out, sent, seq = sys.stdout.buffer, 0, 0
while sent < total:
    line = flood_line(seq, sizes)
    out.write(line)
    out.flush()
    sent += len(line)
    seq += 1
print(f"sent={seq},{sent}", file=sys.stderr, flush=True)
"""
)
FLOOD_SIZES = (48 << 20, 1 << 20, 16 << 20, 2048, 4 << 20, 64 << 10)
FLOOD_TOTAL = 1 << 30


def _rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} for {pid}")


def _sample_rss(pid: int, seconds: float) -> float:
    """The proxy's largest resident set over ``seconds``, sampled every 20 ms (MB)."""
    peak = 0.0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        peak = max(peak, _rss_mb(pid))
        time.sleep(0.02)
    return peak


def _raw_proxy(
    server: list[str], stdin: Any = subprocess.PIPE, stderr: Any = subprocess.PIPE
) -> subprocess.Popen[bytes]:
    """The proxy with nothing reading its stdout: the test reads when it chooses."""
    return subprocess.Popen(
        proxy_command("--no-dns", command=server),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=env(),
    )


class _HighWater:
    """A process's VmHWM, read every 10 ms until it exits (the last reading is kept)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.mb = 0.0
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while True:
            try:
                self.mb = _rss_mb(self.pid, "VmHWM")
            except (OSError, AssertionError):
                return  # exited
            time.sleep(0.01)

    def final(self) -> float:
        self._thread.join(TIMEOUT)
        return self.mb


def test_a_server_flooding_a_client_that_does_not_read_keeps_the_proxy_under_256_mb() -> None:
    namespace: dict[str, Any] = {}
    exec(FLOOD_LINE, namespace)
    flood_line = namespace["flood_line"]
    sizes = ",".join(str(s) for s in FLOOD_SIZES)
    proc = _raw_proxy([sys.executable, "-c", FLOOD_SERVER, sizes, str(FLOOD_TOTAL)])
    assert proc.stdout is not None
    assert proc.stderr is not None
    high = _HighWater(proc.pid)
    try:
        # The client reads nothing for a while: the proxy stops reading, the server blocks.
        paused_peak = _sample_rss(proc.pid, 4.0)
        paused_hwm = _rss_mb(proc.pid, "VmHWM")
        assert paused_hwm <= MEMORY_BOUND_MB, f"VmHWM {paused_hwm:.0f} MB while paused"
        # Then it reads everything: every message arrives whole, unchanged and in order.
        seq = total = 0
        for line in proc.stdout:
            assert line == flood_line(seq, FLOOD_SIZES), (seq, line[:100], len(line))
            seq += 1
            total += len(line)
        assert proc.wait(timeout=TIMEOUT) == 0
        assert total >= FLOOD_TOTAL
        assert f"sent={seq},{total}".encode() in proc.stderr.read()
        hwm = high.final()
        assert hwm <= MEMORY_BOUND_MB, f"VmHWM {hwm:.0f} MB by the end"
        print(
            f"flood to a paused client: peak RSS {paused_peak:.0f} MB and VmHWM "
            f"{paused_hwm:.0f} MB while paused, VmHWM {hwm:.0f} MB by the end"
        )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# A server that reads nothing for a while, then counts what it reads and says so.
SLOW_READER_SERVER = r"""
import json, sys, time
time.sleep(float(sys.argv[1]))
lines = size = 0
for raw in sys.stdin.buffer:
    json.loads(raw)
    lines, size = lines + 1, size + len(raw)
print(json.dumps({"jsonrpc": "2.0", "method": "test/count", "params": [lines, size]}), flush=True)
"""


def test_a_client_flooding_a_server_that_does_not_read_keeps_the_proxy_under_256_mb() -> None:
    proc = _raw_proxy([sys.executable, "-c", SLOW_READER_SERVER, "5"])
    assert proc.stdin is not None
    assert proc.stdout is not None
    blob = "y" * ((4 << 20) - 100)
    lines = [
        json.dumps({"jsonrpc": "2.0", "method": "notifications/x", "params": [n, blob]}).encode()
        + b"\n"
        for n in range(4)
    ]
    count = (1 << 30) // len(lines[0])

    def flood() -> None:
        assert proc.stdin is not None
        for n in range(count):
            proc.stdin.write(lines[n % 4])
        proc.stdin.close()

    writer = threading.Thread(target=flood, daemon=True)
    try:
        writer.start()
        peak = _sample_rss(proc.pid, 4.0)  # the server reads nothing yet
        hwm = _rss_mb(proc.pid, "VmHWM")
        assert hwm <= MEMORY_BOUND_MB, f"VmHWM {hwm:.0f} MB while the server did not read"
        counted = json.loads(proc.stdout.readline())
        assert counted["params"] == [count, count * len(lines[0])]
        writer.join(TIMEOUT)
        assert proc.wait(timeout=TIMEOUT) == 0
        print(f"flood to a server that does not read: peak RSS {peak:.0f} MB, VmHWM {hwm:.0f} MB")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_client_that_pauses_gets_all_the_exited_servers_output() -> None:
    lines = [
        json.dumps({"jsonrpc": "2.0", "method": "notifications/x", "params": [n, "z" * 100_000]})
        for n in range(100)
    ]
    p = Proxied()
    # Paused: the proxy reads the client's line but the client reads nothing for a while.
    p.send({"jsonrpc": "2.0", "id": 1, "method": "test/send", "params": {"lines": lines}})
    p.send({"jsonrpc": "2.0", "id": 2, "method": "test/exit", "params": {"code": 0}})
    got = [p.recv() for _ in range(101)]
    assert got[:100] == [line.encode() + b"\n" for line in lines]
    assert p.proc.wait(timeout=TIMEOUT) == 0


def test_stdin_at_end_of_file_ends_the_proxy_with_the_servers_status() -> None:
    started = time.monotonic()
    with open(os.devnull, "rb") as nothing:
        proc = subprocess.run(
            proxy_command("--no-dns", command=[sys.executable, str(JSONRPC_SERVER)]),
            stdin=nothing,
            capture_output=True,
            env=env(),
            timeout=TIMEOUT,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr  # the server ends when its stdin does
    assert time.monotonic() - started < 10
    assert proc.stdout == b""
    assert b"Traceback" not in proc.stderr


def test_stdin_at_end_of_file_with_a_stubborn_server_ends_with_sigkill() -> None:
    with open(os.devnull, "rb") as nothing:
        proc = subprocess.run(
            proxy_command("--no-dns", command=[sys.executable, str(JSONRPC_SERVER), "--stubborn"]),
            stdin=nothing,
            capture_output=True,
            env=env(),
            timeout=TIMEOUT,
            check=False,
        )
    assert proc.returncode == 128 + signal.SIGKILL
    grandchild = int(proc.stderr.split(b"grandchild=")[1].split()[0])
    time.sleep(0.2)
    assert not _alive(grandchild)


def test_a_file_on_stdin_is_relayed_then_the_proxy_ends(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        "".join(
            json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"}) + "\n" for n in range(200)
        )
    )
    with requests.open("rb") as stdin:
        proc = subprocess.run(
            proxy_command("--no-dns", command=[sys.executable, str(JSONRPC_SERVER)]),
            stdin=stdin,
            capture_output=True,
            env=env(),
            timeout=TIMEOUT,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line)["id"] for line in proc.stdout.splitlines()] == list(range(200))


# A server that starts a helper in a session of its own, holding the server's stdout, then
# answers requests until its stdin ends or it is asked to exit.
SETSID_SERVER = r"""
import json, os, subprocess, sys
helper = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
)
print(f"helper={helper.pid}", file=sys.stderr, flush=True)
for raw in sys.stdin:
    msg = json.loads(raw)
    if msg.get("method") == "test/exit":
        print(json.dumps({"jsonrpc": "2.0", "method": "notifications/bye"}), flush=True)
        os._exit(msg["params"]["code"])
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}), flush=True)
"""


def _helper_pid(proc: subprocess.Popen[bytes]) -> int:
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert line.startswith(b"helper="), line
    return int(line.split(b"=")[1])


def _end(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def test_a_helper_in_its_own_session_does_not_keep_the_proxy_after_the_client_leaves() -> None:
    proc = _raw_proxy([sys.executable, "-c", SETSID_SERVER])
    helper = _helper_pid(proc)
    try:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        started = time.monotonic()
        proc.stdin.close()  # the client leaves
        assert proc.wait(timeout=TIMEOUT) == 0  # the server ended on its stdin's end
        assert time.monotonic() - started < 10
        assert _alive(helper)  # out of the server's group: not the proxy's to end
    finally:
        _end(helper)


def test_a_helper_in_its_own_session_does_not_keep_the_proxy_after_the_server_exits() -> None:
    proc = _raw_proxy([sys.executable, "-c", SETSID_SERVER])
    helper = _helper_pid(proc)
    try:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"test/exit","params":{"code":4}}\n')
        proc.stdin.flush()
        started = time.monotonic()
        assert proc.wait(timeout=TIMEOUT) == 4
        assert time.monotonic() - started < 10
        assert proc.stdout.read() == b'{"jsonrpc": "2.0", "method": "notifications/bye"}\n'
    finally:
        _end(helper)


def test_a_client_hang_up_is_one_line_on_stderr_and_the_proxy_ends() -> None:
    notification = '{"jsonrpc":"2.0","method":"notifications/message","params":{"n":1}}'
    proc = _raw_proxy([sys.executable, str(JSONRPC_SERVER)])
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    request = {"jsonrpc": "2.0", "id": 1, "method": "test/send"}
    request["params"] = {"lines": [notification] * 20_000}
    proc.stdin.write(json.dumps(request).encode() + b"\n")
    proc.stdin.flush()
    assert proc.stdout.readline() == notification.encode() + b"\n"
    proc.stdout.close()  # the client hangs up, its end of our stdin still open
    assert proc.wait(timeout=TIMEOUT) == 0
    stderr = proc.stderr.read().decode()
    assert stderr.splitlines() == [
        "urlvet proxy: the client closed its end of the pipe: stopping the server"
    ]


def test_a_batch_with_a_blocked_item_keeps_the_other_items_byte_for_byte(
    proxied: Proxied,
) -> None:
    others = [
        '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1.0E+2}}',
        '{ "jsonrpc" : "2.0" , "method" : "notifications/message" , "params" : {"v": -0.0} }',
    ]
    batch = f"[{others[0]}, {_elicit(31, BLOCKED)} ,\t{others[1]}]"
    assert proxied.script(batch) == [f"[{others[0]},{others[1]}]\n".encode()]
    assert _replies_to(proxied.received(), 31) == [
        {"jsonrpc": "2.0", "id": 31, "result": {"action": "decline"}}
    ]
    allowed = f"[{others[0]} , {_elicit(32, ALLOWED)}]"
    assert proxied.script(allowed) == [allowed.encode() + b"\n"]


def test_sigterm_ends_the_proxy_while_its_client_reads_nothing() -> None:
    sizes = ",".join(str(s) for s in FLOOD_SIZES)
    proc = _raw_proxy([sys.executable, "-c", FLOOD_SERVER, sizes, str(FLOOD_TOTAL)])
    assert proc.stderr is not None
    time.sleep(2)  # the proxy has stopped reading; the server is blocked on its stdout
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    # The server ignores its stdin's end (it never reads it): SIGTERM after the grace period.
    assert proc.wait(timeout=TIMEOUT) == 128 + signal.SIGTERM
    assert time.monotonic() - started < 10
    assert b"Traceback" not in proc.stderr.read()


class _Chunks:
    """A byte source that hands out the chunks it was given, as a pipe might cut them."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def read(self) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""


@given(
    st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=10),
    st.booleans(),
    st.lists(st.integers(1, 40), min_size=1, max_size=8),
    st.integers(5, 25),
)
def test_the_line_reader_gives_each_line_whatever_the_chunks(
    lines: list[bytes], last_newline: bool, cuts: list[int], limit: int
) -> None:
    data = b"\n".join(lines) + (b"\n" if last_newline and lines else b"")
    chunks, pos, n = [], 0, 0
    while pos < len(data):
        step = cuts[n % len(cuts)]
        chunks.append(data[pos : pos + step])
        pos, n = pos + step, n + 1
    expected = [
        line if len(line.rstrip(b"\n")) <= limit else OVERSIZED
        for line in re.findall(rb"[^\n]*\n|[^\n]+\Z", data)
    ]
    reader = LineReader(_Chunks(chunks), limit)

    async def read_all() -> list[bytes | object]:
        out: list[bytes | object] = []
        while (line := await reader.next()) is not None:
            out.append(line)
        return out

    assert asyncio.run(read_all()) == expected
