"""The Streamable HTTP proxy: an MCP endpoint at ``http://HOST:PORT/mcp`` in front of another.

POST, GET and DELETE are relayed to the upstream endpoint with the client's headers
(``Mcp-Session-Id``, ``MCP-Protocol-Version``, ``Authorization``, ``Last-Event-ID`` ...) and
the upstream's answer comes back with its status and headers. Every message the upstream sends,
in a JSON body or in an SSE stream, is judged by the :class:`~.core.Relay`: SSE events that pass
are relayed byte for byte, in order. Declines go to the upstream as POSTs with the headers of the
request whose answer carried the URL request, as the client would have sent them; a retried
request's answer takes the place of the ``input_required`` result it answers.

When the upstream cannot be reached or fails (5xx), a client request gets a JSON-RPC error
saying so, never a hang. Other answers (a 401 with ``WWW-Authenticate``, a 404 for an expired
session) reach the client unchanged: the client knows what to do with them.

httpx talks to the upstream; uvicorn and Starlette serve the client.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from urlvet.mcp.proxy.core import MAX_MESSAGE, Relay, dumps
from urlvet.mcp.proxy.stdio import ProxyError

UPSTREAM_FAILED = -32603
"""The JSON-RPC error code a client request gets when the upstream cannot answer it."""
CONNECT_TIMEOUT = 10.0
"""Seconds to connect to the upstream (reads wait as long as the server works)."""
ENDPOINT = "/mcp"
_TIMEOUT = httpx.Timeout(None, connect=CONNECT_TIMEOUT).as_dict()

# Hop-by-hop headers and those httpx/uvicorn set themselves are never relayed.
_REQUEST_SKIP = frozenset(
    {
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "accept-encoding",
    }
)
_RESPONSE_SKIP = frozenset(
    {
        "content-length",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "content-encoding",
        "date",
        "server",
    }
)


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as (host, port); :class:`ProxyError` if not."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ProxyError(f"--listen {value!r}: expected HOST:PORT, as in 127.0.0.1:8765")
    return host.strip("[]"), int(port)


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One event of an SSE stream: its bytes as received, and its data when it has any."""

    raw: bytes
    data: bytes | None

    def fields(self) -> bytes:
        """The event's lines other than data (id, event, retry), each with its newline."""
        lines = self.raw.replace(b"\r\n", b"\n").split(b"\n")
        keep = [ln for ln in lines if ln and not ln.startswith(b"data")]
        return b"".join(ln + b"\n" for ln in keep)


def sse_event(data: bytes, fields: bytes = b"") -> bytes:
    """An SSE event carrying one JSON message (one data line: JSON text has no newline)."""
    return fields + b"data: " + data + b"\n\n"


def _event(raw: bytes) -> SseEvent:
    data: list[bytes] = []
    for line in raw.replace(b"\r\n", b"\n").split(b"\n"):
        if line == b"data" or line.startswith(b"data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(b" ") else value)
    return SseEvent(raw, b"\n".join(data) if data else None)


async def sse_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[SseEvent]:
    """The events of an SSE byte stream; an event longer than MAX_MESSAGE ends the stream."""
    buffer = bytearray()
    scanned = 0  # the boundary search resumes here: a big event is scanned once, not per chunk
    async for chunk in chunks:
        buffer += chunk
        while True:
            cut = _boundary(buffer, max(0, scanned - 3))
            if cut is None:
                scanned = len(buffer)
                break
            raw = bytes(buffer[:cut])
            del buffer[:cut]
            scanned = 0
            yield _event(raw)
        if len(buffer) > MAX_MESSAGE:
            raise ProxyError(f"an SSE event from the upstream is longer than {MAX_MESSAGE:,} bytes")
    if bytes(buffer).strip():
        yield _event(bytes(buffer))


def _boundary(buffer: bytearray, start: int) -> int | None:
    ends = [
        i + n for sep, n in ((b"\n\n", 2), (b"\r\n\r\n", 4)) if (i := buffer.find(sep, start)) >= 0
    ]
    return min(ends) if ends else None


def _forwarded_headers(headers: Mapping[str, str]) -> dict[str, str]:
    out = {k: v for k, v in headers.items() if k.lower() not in _REQUEST_SKIP}
    out["accept-encoding"] = "identity"
    return out


def _response_headers(resp: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in resp.headers.items() if k.lower() not in _RESPONSE_SKIP}


def _requests_in(body: bytes) -> list[dict[str, Any]]:
    """The requests (method and id) in a client's POST body."""
    try:
        data = json.loads(body)
    except ValueError:
        return []
    items = data if isinstance(data, list) else [data]
    return [
        i
        for i in items
        if isinstance(i, dict) and isinstance(i.get("method"), str) and i.get("id") is not None
    ]


class HttpProxy:
    """The ASGI application: ``/mcp`` in front of ``upstream``."""

    def __init__(self, upstream: str, relay: Relay, client: httpx.AsyncClient | None = None):
        self.upstream = upstream
        self.relay = relay
        self._client = client
        self._url = httpx.URL(upstream)

    @property
    def client(self) -> httpx.AsyncClient:
        """The client to the upstream (made on first use, closed with the application)."""
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT), follow_redirects=False
            )
        return self._client

    def _request(self, method: str, headers: dict[str, str], content: bytes) -> httpx.Request:
        """A request to the upstream, built as is (``client.build_request`` costs more).

        The proxy forwards each client's own headers, so there is nothing of the client's to
        merge in; and no cookie jar shared by every client of the proxy (their Cookie headers
        reach the upstream as they sent them).
        """
        return httpx.Request(
            method,
            self._url,
            headers=headers,
            content=content or None,
            extensions={"timeout": _TIMEOUT},
        )

    def app(self) -> Starlette:
        """The Starlette application serving ``/mcp``."""

        @asynccontextmanager
        async def lifespan(_: Starlette) -> AsyncIterator[None]:
            try:
                yield
            finally:
                if self._client is not None:
                    await self._client.aclose()

        return Starlette(
            routes=[Route(ENDPOINT, self.endpoint, methods=["GET", "POST", "DELETE"])],
            lifespan=lifespan,
        )

    async def endpoint(self, request: Request) -> Response:
        """``/mcp``: relay one POST, GET or DELETE to the upstream and its answer back."""
        headers = _forwarded_headers(request.headers)
        channel = request.headers.get("mcp-session-id", "")
        if request.method == "POST":
            length = request.headers.get("content-length")
            if length is not None and length.isdigit() and int(length) > MAX_MESSAGE:
                return Response(f"message longer than {MAX_MESSAGE:,} bytes", status_code=413)
            body = await request.body()
            if len(body) > MAX_MESSAGE:
                return Response(f"message longer than {MAX_MESSAGE:,} bytes", status_code=413)
            requests = _requests_in(body)
        else:
            body, requests = b"", []
        origin = requests[0] if len(requests) == 1 else None
        try:
            resp = await self.client.send(self._request(request.method, headers, body), stream=True)
        except httpx.HTTPError as exc:
            return self._failed(requests, f"cannot reach it ({type(exc).__name__}: {exc})")
        for sent in requests:  # the client's capabilities (UV710), by the session it opens
            self.relay.judge.lint.observe(sent, resp.headers.get("mcp-session-id", channel))
        if resp.status_code >= 500:
            await resp.aclose()
            return self._failed(requests, f"it answered HTTP {resp.status_code}")
        ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
        if resp.status_code == 200 and ctype == "text/event-stream":
            stream = self._stream(resp, origin, headers, channel)
            return StreamingResponse(
                stream, status_code=200, headers=_response_headers(resp), media_type=None
            )
        if resp.status_code == 200 and ctype == "application/json":
            return await self._json(resp, origin, headers, channel)
        content = await resp.aread()
        await resp.aclose()
        return Response(content, status_code=resp.status_code, headers=_response_headers(resp))

    def _failed(self, requests: list[dict[str, Any]], why: str) -> Response:
        text = f"urlvet proxy: the upstream server {self.upstream} failed: {why}"
        if not requests:
            return Response(text, status_code=502, media_type="text/plain")
        errors = [
            {"jsonrpc": "2.0", "id": r["id"], "error": {"code": UPSTREAM_FAILED, "message": text}}
            for r in requests
        ]
        return Response(
            dumps(errors[0] if len(errors) == 1 else errors), media_type="application/json"
        )

    async def _json(
        self, resp: httpx.Response, origin: dict[str, Any] | None, headers: dict[str, str], ch: str
    ) -> Response:
        try:
            body = await read_capped(resp)
        except ProxyError as exc:
            return self._failed([origin] if origin is not None else [], str(exc))
        finally:
            await resp.aclose()
        outs = [e async for e in self._vetted(_one(body), origin, headers, ch)]
        found = [e.data for e in outs if e.data is not None]
        rh = _response_headers(resp)
        if len(found) == 1 and found[0] == body:
            return Response(body, headers=rh)
        if len(found) == 1:
            assert found[0] is not None
            rh.pop("content-type", None)
            return Response(found[0], headers=rh, media_type="application/json")
        if not found:
            return Response(b"", status_code=202, headers=rh)
        # Several messages (a retry answered with a stream): as the stream they came in.
        rh.pop("content-type", None)
        events = b"".join(e.raw for e in outs)
        return Response(events, headers=rh, media_type="text/event-stream")

    async def _stream(
        self, resp: httpx.Response, origin: dict[str, Any] | None, headers: dict[str, str], ch: str
    ) -> AsyncIterator[bytes]:
        try:
            async for event in self._vetted(sse_events(resp.aiter_raw()), origin, headers, ch):
                yield event.raw
        except (httpx.HTTPError, ProxyError) as exc:
            self.relay.diagnostic(f"the upstream stream ended: {exc}")
        finally:
            await resp.aclose()

    async def _vetted(
        self,
        events: AsyncIterator[SseEvent],
        origin: dict[str, Any] | None,
        headers: dict[str, str],
        channel: str,
    ) -> AsyncIterator[SseEvent]:
        """The events to relay to the client: judged, declined, retried."""
        async for event in events:
            if event.data is None:
                yield event
                continue
            step = await self.relay.from_server(event.data, channel, origin)
            for message in step.to_server:
                await self._post_quiet(message, headers)
            if step.retry is not None:
                async for out in self._retry(step.retry, headers, channel):
                    yield out
                continue
            if step.to_client == (event.data,):
                yield event
                continue
            fields = event.fields()
            for message in step.to_client:
                yield SseEvent(sse_event(message, fields), message)

    async def _retry(
        self, retry: bytes, headers: dict[str, str], channel: str
    ) -> AsyncIterator[SseEvent]:
        request = json.loads(retry)
        failed: str | None = None
        try:
            resp = await self.client.send(
                self._request("POST", _json_post(headers), retry), stream=True
            )
        except httpx.HTTPError as exc:
            failed = f"cannot reach it ({type(exc).__name__})"
        else:
            try:
                ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
                if resp.status_code != 200 or ctype not in (
                    "application/json",
                    "text/event-stream",
                ):
                    failed = f"it answered HTTP {resp.status_code}"
                else:
                    events = (
                        sse_events(resp.aiter_raw())
                        if ctype == "text/event-stream"
                        else _one(await read_capped(resp))
                    )
                    async for out in self._vetted(events, request, headers, channel):
                        yield out
            except (httpx.HTTPError, ProxyError) as exc:
                failed = str(exc) or type(exc).__name__
            finally:
                await resp.aclose()
        if failed is not None:
            # Through the relay, which answers the client under its own id, not the retry's.
            error = self._error_event(request, failed)
            async for out in self._vetted(_one(error.data or b""), None, headers, channel):
                yield out

    def _error_event(self, request: dict[str, Any], why: str) -> SseEvent:
        text = f"urlvet proxy: the upstream server {self.upstream} failed: {why}"
        message = dumps(
            {
                "jsonrpc": "2.0",
                "id": request.get("id"),
                "error": {"code": UPSTREAM_FAILED, "message": text},
            }
        )
        return SseEvent(sse_event(message), message)

    async def _post_quiet(self, message: bytes, headers: dict[str, str]) -> None:
        try:
            resp = await self.client.send(self._request("POST", _json_post(headers), message))
            if resp.status_code >= 300:
                self.relay.diagnostic(f"the upstream answered HTTP {resp.status_code} to a decline")
        except httpx.HTTPError as exc:
            self.relay.diagnostic(f"could not send a decline upstream: {exc}")


async def read_capped(resp: httpx.Response) -> bytes:
    """A response body of at most MAX_MESSAGE bytes; :class:`ProxyError` past that."""
    chunks = bytearray()
    async for chunk in resp.aiter_raw():
        chunks += chunk
        if len(chunks) > MAX_MESSAGE:
            raise ProxyError(f"its answer is longer than {MAX_MESSAGE:,} bytes")
    return bytes(chunks)


def _json_post(headers: dict[str, str]) -> dict[str, str]:
    out = {k: v for k, v in headers.items() if k.lower() not in ("last-event-id", "content-type")}
    out["content-type"] = "application/json"
    out["accept"] = "application/json, text/event-stream"
    return out


async def _one(body: bytes) -> AsyncIterator[SseEvent]:
    yield SseEvent(sse_event(body), body)


def run_http(upstream: str, listen: str, relay: Relay) -> int:
    """Serve ``http://LISTEN/mcp`` in front of ``upstream`` until stopped; the exit status."""
    import uvicorn

    host, port = parse_listen(listen)
    if not upstream.startswith(("http://", "https://")):
        raise ProxyError(f"--upstream {upstream!r}: expected an http:// or https:// URL")
    app = HttpProxy(upstream, relay).app()
    shown = f"[{host}]" if ":" in host else host
    print(
        f"urlvet proxy: serving http://{shown}:{port}{ENDPOINT} in front of {upstream}",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    server.run()
    return 0 if server.started else 1


__all__ = ["ENDPOINT", "UPSTREAM_FAILED", "HttpProxy", "SseEvent", "parse_listen", "run_http"]
