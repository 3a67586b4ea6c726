"""``urlvet proxy --upstream URL --listen HOST:PORT``: headers, SSE streams, retries and faults.

The upstream is tests/support/http_upstream.py, a scripted Streamable HTTP endpoint that records what it
receives; the client is httpx, posting as an MCP client posts. The SDK client through the HTTP
proxy is in test_proxy_sdk.py.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.proxy_harness import free_port, http_proxy, running
from urlvet.mcp.answers import URL_BLOCKED
from urlvet.mcp.proxy.http import UPSTREAM_FAILED

BLOCKED = "https://google.com@evil.example/"
ALLOWED = "https://example.com/x"
UPSTREAM_SCRIPT = Path(__file__).parent / "support" / "http_upstream.py"
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "authorization": "Bearer token-123",
    "mcp-session-id": "sess-1",
    "mcp-protocol-version": "2025-11-25",
}


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    port = free_port()
    with running([sys.executable, str(UPSTREAM_SCRIPT), str(port)], port):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def proxy(upstream: str) -> Iterator[str]:
    with http_proxy(f"{upstream}/mcp", "--no-dns") as url:
        yield url


def _records(upstream: str) -> list[dict[str, Any]]:
    time.sleep(0.2)
    data: list[dict[str, Any]] = httpx.get(f"{upstream}/received").json()
    return data


def _call(n: int, **arguments: Any) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tools/call",
        "params": {"name": "t", "arguments": arguments},
    }
    return json.dumps(message).encode()


def _elicit(msg_id: int, url: str) -> str:
    params = {"mode": "url", "elicitationId": f"e{msg_id}", "url": url, "message": "Sign in."}
    return json.dumps(
        {"jsonrpc": "2.0", "id": msg_id, "method": "elicitation/create", "params": params}
    )


def test_headers_go_both_ways(proxy: str, upstream: str) -> None:
    resp = httpx.post(proxy, content=_call(1, plain=True), headers=HEADERS)
    assert resp.status_code == 200
    assert resp.headers["mcp-session-id"] == "sess-1"
    assert resp.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    sent = _records(upstream)[-1]["headers"]
    for name in ("authorization", "mcp-session-id", "mcp-protocol-version", "accept"):
        assert sent[name] == HEADERS[name]
    assert sent["host"] == upstream.removeprefix("http://")


def test_sse_stream_relays_unchanged_events_and_declines_blocked_ones(
    proxy: str, upstream: str
) -> None:
    note = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'
    events = [_elicit(70, BLOCKED), _elicit(71, ALLOWED), note]
    with httpx.stream("POST", proxy, content=_call(2, events=events), headers=HEADERS) as resp:
        assert resp.headers["content-type"].startswith("text/event-stream")
        body = resp.read()
    # Events that pass are the upstream's bytes, ids and all; the blocked one is gone.
    assert f"id: ev-1\ndata: {_elicit(71, ALLOWED)}\n\n".encode() in body
    assert f"id: ev-2\ndata: {note}\n\n".encode() in body
    assert b"ev-0" not in body
    assert BLOCKED.encode() not in body
    assert b'"text": "done"' in body
    declines = [
        r
        for r in _records(upstream)
        if r["method"] == "POST" and json.loads(r["body"]).get("id") == 70
    ]
    assert len(declines) == 1
    assert json.loads(declines[0]["body"]) == {
        "jsonrpc": "2.0",
        "id": 70,
        "result": {"action": "decline"},
    }
    # The decline carries the session and the credentials, as the client would have sent it.
    assert declines[0]["headers"]["authorization"] == "Bearer token-123"
    assert declines[0]["headers"]["mcp-session-id"] == "sess-1"


def test_input_required_blocked_is_retried_upstream_and_answered_under_the_clients_id(
    proxy: str, upstream: str
) -> None:
    ask = {
        "pay": {
            "method": "elicitation/create",
            "params": {"mode": "url", "url": BLOCKED, "message": "Pay."},
        }
    }
    resp = httpx.post(proxy, content=_call(3, ask=ask), headers=HEADERS)
    assert resp.status_code == 200
    data = resp.json()
    assert data["id"] == 3
    echoed = json.loads(data["result"]["content"][0]["text"])
    assert echoed["inputResponses"] == {"pay": {"action": "decline"}}
    assert echoed["requestState"] == "state-1"
    retry = _records(upstream)[-1]
    assert json.loads(retry["body"])["id"].startswith("urlvet-retry-")
    assert retry["headers"]["authorization"] == "Bearer token-123"


def test_allowed_input_required_is_the_upstreams_bytes(proxy: str, upstream: str) -> None:
    ask = {
        "ok": {
            "method": "elicitation/create",
            "params": {"mode": "url", "url": ALLOWED, "message": "Go."},
        }
    }
    through = httpx.post(proxy, content=_call(4, ask=ask), headers=HEADERS).content
    direct = httpx.post(upstream + "/mcp", content=_call(4, ask=ask), headers=HEADERS).content
    assert through == direct
    assert json.loads(through)["result"]["inputRequests"] == ask


def test_upstream_error_is_a_json_rpc_error(proxy: str) -> None:
    resp = httpx.post(proxy, content=_call(5, status=503), headers=HEADERS)
    assert resp.status_code == 200
    data = resp.json()
    assert data["id"] == 5
    assert data["error"]["code"] == UPSTREAM_FAILED
    assert "HTTP 503" in data["error"]["message"]
    # Answers a client acts on itself (here a 404 for an unknown session) pass unchanged.
    resp = httpx.post(proxy, content=_call(6, status=404), headers=HEADERS)
    assert resp.status_code == 404


def test_upstream_down_is_a_json_rpc_error_not_a_hang() -> None:
    dead = f"http://127.0.0.1:{free_port()}/mcp"
    with http_proxy(dead, "--no-dns") as url:
        started = time.monotonic()
        resp = httpx.post(url, content=_call(7), headers=HEADERS, timeout=30)
        assert time.monotonic() - started < 10
    data = resp.json()
    assert data["id"] == 7
    assert data["error"]["code"] == UPSTREAM_FAILED
    assert "cannot reach it" in data["error"]["message"]


def test_get_and_delete_are_relayed(proxy: str, upstream: str) -> None:
    assert httpx.get(proxy, headers={"accept": "text/event-stream"}).status_code == 405
    assert httpx.delete(proxy, headers={"mcp-session-id": "sess-1"}).status_code == 200
    methods = [r["method"] for r in _records(upstream)[-2:]]
    assert methods == ["GET", "DELETE"]


def test_a_minus_32042_with_a_blocked_url_becomes_urlvets_error(proxy: str) -> None:
    # Over SSE: the server answers the call with -32042 naming a blocked URL.
    error = {
        "jsonrpc": "2.0",
        "id": 8,
        "error": {
            "code": -32042,
            "message": "URL elicitation required",
            "data": {
                "elicitations": [
                    {"mode": "url", "elicitationId": "x", "url": BLOCKED, "message": "m"}
                ]
            },
        },
    }
    with httpx.stream(
        "POST", proxy, content=_call(8, events=[json.dumps(error)]), headers=HEADERS
    ) as resp:
        body = resp.read()
    notice, event = body.split(b"\n\n")[:2]
    # First urlvet's own warning (no upstream event id: it is no upstream event), then the reply.
    told = json.loads(notice.split(b"data: ", 1)[1])
    assert told["method"] == "notifications/message"
    assert told["params"]["level"] == "warning"
    assert b"id:" not in notice
    assert event.startswith(b"id: ev-0\n")  # the event keeps its id
    data = json.loads(event.split(b"data: ", 1)[1])
    assert data["id"] == 8
    assert data["error"]["code"] == URL_BLOCKED
    assert data["error"]["message"].startswith("urlvet blocked the URL")


def test_concurrent_tool_calls_over_http(proxy: str) -> None:
    """200 at once (the 1,000 of the stdio test take minutes here: httpx's client pool, not the
    proxy, is slow with that many waiting requests, directly to the upstream as well)."""
    import anyio

    async def main() -> dict[int, Any]:
        got: dict[int, Any] = {}
        async with httpx.AsyncClient(timeout=120) as client:

            async def one(n: int) -> None:
                resp = await client.post(proxy, content=_call(n, plain=n), headers=HEADERS)
                got[n] = resp.json()

            async with anyio.create_task_group() as tg:
                for n in range(1000, 1200):
                    tg.start_soon(one, n)
        return got

    got = anyio.run(main)
    assert sorted(got) == list(range(1000, 1200))
    assert all(got[n] == {"jsonrpc": "2.0", "id": n, "result": {}} for n in got)


def test_a_retry_the_upstream_fails_is_an_error_under_the_clients_id(proxy: str) -> None:
    ask = {
        "pay": {
            "method": "elicitation/create",
            "params": {"mode": "url", "url": BLOCKED, "message": "Pay."},
        }
    }
    resp = httpx.post(proxy, content=_call(9, ask=ask, retry_status=500), headers=HEADERS)
    assert resp.status_code == 200
    data = resp.json()
    assert data["id"] == 9
    assert data["error"]["code"] == UPSTREAM_FAILED
    assert "HTTP 500" in data["error"]["message"]
