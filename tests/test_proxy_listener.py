"""The HTTP proxy's listener is a server too: Origin, Host, bearer token, loopback, SIGTERM.

Unit tests pin :class:`~urlvet.mcp.proxy.listener.ListenerPolicy`; the rest run the real
``urlvet proxy`` command in front of tests/support/http_upstream.py (which records what reaches
it) or tests/support/hostile_http.py (which can hold a stream open), all on 127.0.0.1.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.hostile_http import BOTH, Attack, HostileServer, chunk, head
from support.proxy_harness import env, free_port, http_proxy, proxy_command, running, wait_for_port
from urlvet.mcp.proxy import ProxyError
from urlvet.mcp.proxy.http import UPSTREAM_FAILED
from urlvet.mcp.proxy.listener import ListenerPolicy, listener_policy

UPSTREAM_SCRIPT = Path(__file__).parent / "support" / "http_upstream.py"
TOKEN = "s3cret-token-for-the-proxy-0123"
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {}}}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def _policy(**kw: Any) -> ListenerPolicy:
    return listener_policy("127.0.0.1", **kw)[0]


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"host": "127.0.0.1:8765"}, None),
        ({"host": "localhost:8765", "origin": "http://localhost:3000"}, None),
        ({"host": "[::1]:8765", "origin": "http://[::1]:9"}, None),
        ({"host": "127.0.0.1", "origin": "https://127.0.0.1"}, None),
        ({"host": "127.0.0.1:8765", "origin": "https://evil.example"}, 403),
        ({"host": "127.0.0.1:8765", "origin": "null"}, 403),
        ({"host": "127.0.0.1:8765", "origin": "http://localhost.evil.example"}, 403),
        ({"host": "127.0.0.1:8765", "origin": "file://"}, 403),
        ({"host": "evil.example:8765"}, 403),  # a rebound name, even without Origin
        ({"host": "127.0.0.1.evil.example"}, 403),
        ({}, 403),
    ],
)
def test_origin_and_host_are_checked_on_loopback(
    headers: dict[str, str], status: int | None
) -> None:
    refusal = _policy().refuse(headers)
    assert (refusal.status if refusal else None) == status


def test_allowed_origins_and_hosts_widen_the_check() -> None:
    policy = _policy(allow_origins=["https://App.example/"], allow_hosts=["mcp.internal"])
    assert policy.refuse({"host": "mcp.internal:80", "origin": "https://app.example"}) is None
    refusal = policy.refuse({"host": "mcp.internal", "origin": "https://other.example"})
    assert refusal is not None
    assert refusal.status == 403


def test_a_token_is_required_when_set() -> None:
    policy = _policy(token=TOKEN)
    base = {"host": "127.0.0.1:1"}
    assert policy.refuse({**base, "authorization": f"Bearer {TOKEN}"}) is None
    assert policy.refuse({**base, "authorization": f"bearer {TOKEN}"}) is None
    for given in ("", f"Bearer {TOKEN}x", f"Basic {TOKEN}", TOKEN, "Bearer "):
        refusal = policy.refuse({**base, "authorization": given})
        assert refusal is not None, given
        assert refusal.status == 401, given


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "proxy.example"])
def test_non_loopback_listening_needs_allow_remote_and_a_token(host: str) -> None:
    with pytest.raises(ProxyError, match="not a loopback address"):
        listener_policy(host)
    with pytest.raises(ProxyError, match="--allow-remote"):
        listener_policy(host, allow_remote=True)
    with pytest.raises(ProxyError, match="not a loopback address"):
        listener_policy(host, token=TOKEN)
    with pytest.raises(ProxyError, match="at least 16"):
        listener_policy(host, allow_remote=True, token="short")
    policy, notes = listener_policy(host, allow_remote=True, token=TOKEN)
    assert policy.token == TOKEN
    assert notes
    assert "Authorization: Bearer" in notes[0]
    refusal = policy.refuse({"host": host})
    assert refusal is not None
    assert refusal.status == 401


def test_the_command_refuses_a_non_loopback_listen_address() -> None:
    cmd = proxy_command("--upstream", "http://127.0.0.1:9/mcp", "--listen", "0.0.0.0:8765")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=60, check=False)
    assert proc.returncode == 2
    assert "not a loopback address" in proc.stderr
    assert "--allow-remote" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    port = free_port()
    with running([sys.executable, str(UPSTREAM_SCRIPT), str(port)], port):
        yield f"http://127.0.0.1:{port}"


def _received(upstream: str) -> list[dict[str, Any]]:
    time.sleep(0.2)
    data: list[dict[str, Any]] = httpx.get(f"{upstream}/received").json()
    return data


def test_the_proxy_refuses_foreign_origins_and_hosts_before_the_upstream_sees_them(
    upstream: str,
) -> None:
    with http_proxy(f"{upstream}/mcp", "--no-dns") as url:
        before = len(_received(upstream))
        evil = httpx.post(url, json=CALL, headers={**MCP_HEADERS, "origin": "http://evil.example"})
        rebound = httpx.post(url, json=CALL, headers={**MCP_HEADERS, "host": "evil.example"})
        local = httpx.post(
            url, json=CALL, headers={**MCP_HEADERS, "origin": "http://localhost:6274"}
        )
    assert (evil.status_code, rebound.status_code, local.status_code) == (403, 403, 200)
    assert evil.json()["error"]["message"].startswith("origin 'http://evil.example'")
    assert len(_received(upstream)) == before + 1  # only the local one


def test_the_token_guards_every_request_and_never_reaches_the_upstream(upstream: str) -> None:
    port = free_port()
    cmd = proxy_command(
        "--upstream", f"{upstream}/mcp", "--listen", f"127.0.0.1:{port}", "--no-dns"
    )
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, env={**env(), "URLVET_PROXY_TOKEN": TOKEN})
    try:
        wait_for_port(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        missing = httpx.post(url, json=CALL, headers=MCP_HEADERS)
        wrong = httpx.post(url, json=CALL, headers={**MCP_HEADERS, "authorization": "Bearer nope"})
        get = httpx.get(url, headers={"accept": "text/event-stream"})
        good = httpx.post(
            url, json=CALL, headers={**MCP_HEADERS, "authorization": f"Bearer {TOKEN}"}
        )
    finally:
        proc.terminate()
        proc.wait(10)
    assert (missing.status_code, wrong.status_code, get.status_code) == (401, 401, 401)
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert good.status_code == 200
    assert good.json()["id"] == 1
    last = _received(upstream)[-1]
    assert "authorization" not in last["headers"]
    assert TOKEN not in str(last)


def _stop_promptly(proc: subprocess.Popen[bytes]) -> tuple[float, bytes]:
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    return time.monotonic() - started, err


def test_sigterm_ends_the_proxy_while_an_upstream_request_hangs() -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        upstream = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        port = free_port()
        cmd = proxy_command("--upstream", upstream, "--listen", f"127.0.0.1:{port}", "--no-dns")
        proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, env=env())
        wait_for_port(port, proc)
        answers: list[Any] = []

        def call() -> None:
            try:
                answers.append(httpx.post(f"http://127.0.0.1:{port}/mcp", json=CALL, timeout=30))
            except httpx.HTTPError as exc:
                answers.append(exc)

        caller = threading.Thread(target=call)
        caller.start()
        time.sleep(1.0)
        assert not answers  # the request hangs upstream
        took, err = _stop_promptly(proc)
        caller.join(30)
    assert took < 5, took
    assert proc.returncode == -signal.SIGTERM
    assert b"Traceback" not in err
    # The waiting client is answered, not left hanging: a JSON-RPC error for its request.
    assert isinstance(answers[0], httpx.Response)
    assert answers[0].json()["id"] == 1
    assert answers[0].json()["error"]["code"] == UPSTREAM_FAILED


def test_sigterm_ends_the_proxy_while_an_sse_stream_is_open() -> None:
    forever: list[Any] = [
        head(200, [("content-type", "text/event-stream"), ("transfer-encoding", "chunked")]),
        chunk(b": open\n\n"),
        120.0,
    ]
    with HostileServer() as server:
        server.attack = Attack("open-stream", lambda _: [], BOTH, get=forever)
        port = free_port()
        cmd = proxy_command("--upstream", server.url, "--listen", f"127.0.0.1:{port}", "--no-dns")
        proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, env=env())
        wait_for_port(port, proc)
        with (
            httpx.Client(timeout=30) as client,
            client.stream(
                "GET", f"http://127.0.0.1:{port}/mcp", headers={"accept": "text/event-stream"}
            ) as resp,
        ):
            first = next(resp.iter_raw())
            assert first == b":\n"  # the keep-alive, as the proxy writes it
            took, err = _stop_promptly(proc)
    assert took < 5, took
    assert proc.returncode == -signal.SIGTERM
    assert b"Traceback" not in err
