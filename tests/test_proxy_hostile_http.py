"""A hostile HTTP MCP server against the real SDK clients, with and without ``urlvet proxy``.

The server (tests/support/hostile_http.py) writes raw bytes on a socket, so status, headers,
chunking and SSE framing are its own choice. Each attack first runs without the proxy, to prove
that the client named in it reads the blocked URL; then through ``urlvet proxy --upstream``,
where no client may: not in its elicitation callback, not as a ``-32042`` error's data. The
clients are the Python SDK's ``mcp.Client`` (Streamable HTTP, 2025-11-25) and the TypeScript
SDK's ``StreamableHTTPClientTransport`` (tests/ts/http_client.mjs).
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, MCPError
from mcp.types import ElicitRequestURLParams, ElicitResult

from support.hostile_http import (
    ATTACKS,
    BLOCKED_URL,
    BOTH,
    Attack,
    HostileServer,
    Piece,
    chunk,
    dumps,
    elicitation,
    head,
    input_required,
    sse_answer,
)
from support.proxy_harness import env, http_proxy
from test_proxy_sse import reference
from urlvet.mcp.answers import URL_BLOCKED
from urlvet.mcp.proxy.http import UPSTREAM_FAILED, reading_of

TS_CLIENT = Path(__file__).parent / "ts" / "http_client.mjs"
CLIENT_TIMEOUT = 25.0
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "login"}}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@dataclass
class Seen:
    """What a client application was shown: elicitations and errors."""

    urls: list[str] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)

    def reached(self) -> bool:
        """Whether the blocked URL reached the elicitation callback or -32042 handling."""
        if BLOCKED_URL in self.urls:
            return True
        return any(
            e.get("code") == -32042 and BLOCKED_URL in json.dumps(e.get("data"))
            for e in self.errors
        )


@pytest.fixture(scope="module")
def server() -> Iterator[HostileServer]:
    with HostileServer() as hostile:
        yield hostile


@pytest.fixture(scope="module")
def proxy(server: HostileServer) -> Iterator[str]:
    with http_proxy(server.url, "--no-dns") as url:
        yield url


def python_client(url: str, mode: str = "legacy") -> Seen:
    """The Python SDK client: connect, call ``login``, record what the application sees."""
    seen = Seen()

    async def elicit(context: Any, params: Any) -> ElicitResult:
        if isinstance(params, ElicitRequestURLParams):
            seen.urls.append(params.url)
        return ElicitResult(action="accept")

    async def main() -> None:
        with anyio.move_on_after(CLIENT_TIMEOUT):
            try:
                async with Client(url, mode=mode, elicitation_callback=elicit) as client:
                    await client.call_tool("login", {}, read_timeout_seconds=8)
            except Exception as exc:
                seen.errors.extend(_errors(exc))

    anyio.run(main)
    return seen


def _errors(exc: BaseException) -> list[dict[str, Any]]:
    """The errors inside ``exc`` (the SDK raises from task groups), as the application sees them."""
    if isinstance(exc, BaseExceptionGroup):
        return [e for inner in exc.exceptions for e in _errors(inner)]
    if isinstance(exc, MCPError):
        return [{"code": exc.code, "message": exc.message, "data": exc.error.data}]
    return [{"code": None, "message": repr(exc), "data": None}]


def ts_client(url: str, mode: str = "legacy") -> Seen:
    """The TypeScript SDK client, the same way."""
    node = shutil.which("node")
    if node is None or not (TS_CLIENT.parent / "node_modules" / "@modelcontextprotocol").is_dir():
        pytest.fail("the TypeScript client needs Node.js and `npm ci` in tests/ts", pytrace=False)
    proc = subprocess.run(
        [node, str(TS_CLIENT), url],
        capture_output=True,
        text=True,
        env=env(),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    urls = [s.get("url") for s in out["shown"]]
    return Seen(urls, out["errors"])


CLIENTS = {"python": python_client, "ts": ts_client}


@pytest.mark.parametrize("client", list(CLIENTS))
@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_blocked_url_never_reaches_a_client_however_the_server_writes_it(
    attack: Attack, client: str, server: HostileServer, proxy: str
) -> None:
    run = CLIENTS[client]
    server.attack = attack
    if client in attack.clients:
        direct = run(server.url, attack.mode)
        assert direct.reached(), f"without the proxy, {client} should read {attack.name}"
    server.answers.clear()
    seen = run(proxy, attack.mode)
    assert not seen.reached(), (attack.name, seen)
    # Not by accident (a broken connection): the server got a decline, or the client urlvet's error.
    declined = {"action": "decline"} in [a.get("result") for a in server.answers]
    blocked = [
        e for e in seen.errors if e["code"] == URL_BLOCKED or str(URL_BLOCKED) in e["message"]
    ]
    failed = [e for e in seen.errors if e["code"] == UPSTREAM_FAILED]  # what it dropped, said
    assert declined or blocked or (attack.dropped and failed), (attack.name, seen)


# -- generated framings -----------------------------------------------------------------------

_ENDINGS = st.sampled_from([b"\n", b"\r", b"\r\n"])


@st.composite
def framings(draw: st.DrawFn) -> tuple[int, str, list[bytes]]:
    """An SSE answer carrying the blocked elicitation, framed as the standard allows."""
    end = _ENDINGS
    message = json.dumps(elicitation(), indent=draw(st.sampled_from([None, 1]))).encode()
    lines: list[bytes] = []
    if draw(st.booleans()):
        lines.append(b":" + draw(st.sampled_from([b"", b" keep-alive", b"data: x"])))
    for name, value in draw(
        st.lists(
            st.sampled_from([(b"id", b"7"), (b"retry", b"10"), (b"event", b"message")]), max_size=3
        )
    ):
        lines.append(name + b":" + draw(st.sampled_from([b"", b" "])) + value)
    sep = draw(st.sampled_from([b"data:", b"data: "]))
    lines += [sep + part for part in message.split(b"\n")]
    body = b"".join(line + draw(end) for line in lines)
    blank = draw(end)
    if body.endswith(b"\r") and blank == b"\n":
        blank = b"\r\n"  # CR then LF would be one line end, not a blank line
    body = (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + body + blank
    cuts = sorted(draw(st.lists(st.integers(1, len(body) - 1), max_size=4, unique=True)))
    pieces = [body[a:b] for a, b in itertools.pairwise([0, *cuts, len(body)])]
    status = draw(st.sampled_from([200, 201, 203, 299]))
    kind = draw(
        st.sampled_from(
            ["text/event-stream", "TEXT/event-stream", "text/event-stream;charset=utf-8"]
        )
    )
    return status, kind, pieces


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=framings())
def test_generated_framings_never_carry_the_blocked_url_through(
    case: tuple[int, str, list[bytes]], server: HostileServer, proxy: str
) -> None:
    status, kind, pieces = case
    stream = b"".join(pieces)
    # Read as the standard says, the stream asks for the blocked URL ...
    assert any(BLOCKED_URL in data for _, data, _ in reference(stream)), stream
    raw: list[Piece] = [head(status, [("content-type", kind), ("transfer-encoding", "chunked")])]
    for piece in pieces:
        raw += [chunk(piece), 0.01]
    raw.append(chunk(b""))
    server.attack = Attack("generated", lambda _: raw, BOTH)
    resp = httpx.post(proxy, json=CALL, headers=MCP_HEADERS, timeout=30)
    # ... and nothing the proxy relays does, however it is read; only urlvet's own warning of
    # the block names the site (never the URL).
    assert BLOCKED_URL.encode() not in resp.content
    for _, data, _ in reference(resp.content):
        if _is_urlvet_notice(data):
            continue
        assert "evil.example" not in data


def _is_urlvet_notice(data: str) -> bool:
    try:
        message = json.loads(data)
    except ValueError:
        return False
    return (
        isinstance(message, dict)
        and message.get("method") == "notifications/message"
        and message.get("params", {}).get("logger") == "urlvet"
    )


def _raw_answer(status: int, kind: str | None, body: bytes) -> Attack:
    headers = [("content-type", kind)] if kind is not None else []
    answer = head(status, [*headers, ("content-length", str(len(body)))]) + body
    return Attack("raw", lambda _: [answer], BOTH)


@pytest.mark.parametrize(
    ("status", "kind"),
    [(200, "text/plain"), (200, None), (201, "application/octet-stream"), (200, "text/html")],
)
def test_an_answer_of_a_type_no_client_reads_is_withheld_with_an_error(
    status: int, kind: str | None, server: HostileServer, proxy: str
) -> None:
    server.attack = _raw_answer(status, kind, b"data: " + dumps(elicitation()) + b"\n\n")
    resp = httpx.post(proxy, json=CALL, headers=MCP_HEADERS, timeout=30)
    assert b"evil.example" not in resp.content
    assert resp.status_code == 200
    error = resp.json()
    assert error["id"] == 1
    assert error["error"]["code"] == UPSTREAM_FAILED
    assert "withheld" in error["error"]["message"]


def test_an_unreadable_4xx_body_is_not_relayed_but_its_status_is(
    server: HostileServer, proxy: str
) -> None:
    server.attack = _raw_answer(404, "text/html", b"<a href='" + BLOCKED_URL.encode() + b"'>x</a>")
    resp = httpx.post(proxy, json=CALL, headers=MCP_HEADERS, timeout=30)
    assert resp.status_code == 404
    assert b"evil.example" not in resp.content


@pytest.mark.parametrize(
    ("method", "status", "kind", "reading"),
    [
        ("POST", 200, "application/json", "json"),
        ("POST", 299, "APPLICATION/JSON; charset=utf-16", "json"),
        ("POST", 200, "application/json-rpc", "json"),
        ("POST", 201, "Text/Event-Stream;x=1", "sse"),
        ("POST", 304, "text/event-stream", "sse"),
        ("POST", 200, "text/plain", "unknown"),
        ("POST", 200, None, "unknown"),
        ("DELETE", 200, "", "unknown"),
        ("GET", 200, None, "sse"),
        ("GET", 200, "application/json", "sse"),
        ("GET", 404, "text/event-stream", "json"),
        ("POST", 400, "text/event-stream", "json"),
        ("POST", 403, None, "json"),
    ],
)
def test_each_answer_is_read_as_the_most_lenient_client_reads_it(
    method: str, status: int, kind: str | None, reading: str
) -> None:
    assert reading_of(method, status, kind) == reading


@pytest.mark.parametrize(
    "tail",
    [b"\r", b"\n", b""],
    ids=["cut-after-cr", "cut-after-lf", "cut-inside-the-line"],
)
def test_a_stream_cut_inside_an_event_ends_with_an_error_for_the_waiting_request(
    tail: bytes, server: HostileServer, proxy: str
) -> None:
    server.attack = _raw_answer(200, "text/event-stream", b"data: " + dumps(elicitation()) + tail)
    resp = httpx.post(proxy, json=CALL, headers=MCP_HEADERS, timeout=30)
    assert b"evil.example" not in resp.content
    events = reference(resp.content)
    assert len(events) == 1
    error = json.loads(events[0][1])
    assert error["id"] == 1
    assert error["error"]["code"] == UPSTREAM_FAILED
    assert "ended inside an event" in error["error"]["message"]


@pytest.mark.parametrize("client", list(CLIENTS))
def test_an_allowed_url_reaches_each_client_through_the_proxy(
    client: str, server: HostileServer, proxy: str
) -> None:
    allowed = "https://example.com/signin"
    frame = sse_answer(frame=lambda m: b"id: 1\r\ndata:" + m + b"\r\n\r\n", url=allowed)
    server.attack = Attack("allowed", frame, BOTH)
    server.answers.clear()
    seen = CLIENTS[client](proxy, "legacy")
    assert seen.urls == [allowed]
    assert seen.errors == []
    assert [a.get("result") for a in server.answers] == [{"action": "accept"}]


def test_an_input_required_answer_on_the_get_stream_is_retried_with_a_decline(
    server: HostileServer, proxy: str
) -> None:
    """The answer to a POSTed call comes on the GET stream: the proxy knows the call it retries."""
    accepted = [head(202, [("content-length", "0")])]
    stream = b"data: " + dumps(input_required(41)) + b"\n\n"
    get = [
        head(200, [("content-type", "text/event-stream"), ("transfer-encoding", "chunked")]),
        chunk(stream),
        chunk(b""),
    ]
    server.attack = Attack("answer-on-get", lambda _: accepted, BOTH, get=get)
    server.answers.clear()
    session = {**MCP_HEADERS, "mcp-session-id": "get-stream-1"}
    call = {**CALL, "id": 41}
    assert httpx.post(proxy, json=call, headers=session, timeout=30).status_code == 202
    with httpx.stream("GET", proxy, headers=session, timeout=30) as resp:
        body = resp.read()
    assert b"evil.example" not in body
    (event,) = reference(body)
    answer = json.loads(event[1])
    assert answer["id"] == 41
    assert answer["result"]["content"][0]["text"] == "done"
    assert server.answers == [{"result": {"action": "decline"}}]


def test_a_client_on_a_stream_is_told_of_a_block_with_a_warning_before_the_decline(
    server: HostileServer, proxy: str
) -> None:
    """Over HTTP too, the block is told: an MCP ``notifications/message`` at level warning on
    the stream that carried the request, naming the site and the rule, never the URL."""
    server.attack = next(a for a in ATTACKS if a.name == "sse-plain")
    server.answers.clear()
    notices: list[dict[str, Any]] = []

    async def logged(params: Any) -> None:
        notices.append(params.model_dump(mode="json"))

    async def elicit(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept")  # declares URL mode; never called here

    async def main() -> None:
        with anyio.move_on_after(CLIENT_TIMEOUT):
            try:
                async with Client(
                    proxy, mode="legacy", elicitation_callback=elicit, logging_callback=logged
                ) as client:
                    await client.call_tool("login", {}, read_timeout_seconds=8)
            except Exception:  # the tool call itself fails: its elicitation was declined
                pass

    anyio.run(main)
    assert {"action": "decline"} in [a.get("result") for a in server.answers]
    assert len(notices) == 1, notices
    assert notices[0]["level"] == "warning"
    assert notices[0]["logger"] == "urlvet"
    text = notices[0]["data"]["message"]
    assert "evil.example" in text
    assert "UV104" in text
    assert BLOCKED_URL not in json.dumps(notices[0])
