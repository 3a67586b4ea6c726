"""The Streamable HTTP proxy: an MCP endpoint at ``http://HOST:PORT/mcp`` in front of another.

POST, GET and DELETE are relayed to the upstream endpoint with the client's headers
(``Mcp-Session-Id``, ``MCP-Protocol-Version``, ``Authorization``, ``Last-Event-ID`` ...) and
the upstream's answer comes back with its status and headers. Every body a client could read as
JSON-RPC goes through the :class:`~.core.Relay`, read as the most lenient client reads it
(:func:`reading_of`): any status below 400 by content type (matched by prefix, any case), a GET
stream as SSE whatever its content type, a 4xx body as one JSON-RPC message. SSE is read as the
HTML standard says (:mod:`.sse`) and every event that passes is written again in one plain form,
so the client reads exactly what was judged. A body the proxy cannot read is never relayed: the
requests waiting for it get a JSON-RPC error and the operator a line on stderr.

Declines go to the upstream as POSTs with the headers of the request whose answer carried the URL
request, as the client would have sent them; a retried request's answer takes the place of the
``input_required`` result it answers. When the upstream cannot be reached or fails (5xx), a
client request gets a JSON-RPC error saying so, never a hang. Empty answers (a 401 with
``WWW-Authenticate``, a 404 for an expired session) keep their status and headers.

Who may use the proxy is :mod:`.listener`'s business. httpx talks to the upstream; uvicorn and
Starlette serve the client.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from types import FrameType
from typing import Any, Literal

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from urlvet.mcp.proxy.core import MAX_MESSAGE, Relay, dumps
from urlvet.mcp.proxy.listener import ListenerPolicy, Refusal, listener_policy
from urlvet.mcp.proxy.sse import SseCut, SseEvent, SseTooLong, encode_event, read_events
from urlvet.mcp.proxy.stdio import ProxyError

UPSTREAM_FAILED = -32603
"""The JSON-RPC error code a client request gets when the upstream cannot answer it."""
CONNECT_TIMEOUT = 10.0
"""Seconds to connect to the upstream (reads wait as long as the server works)."""
ENDPOINT = "/mcp"
SHUTDOWN_GRACE = 1
"""Seconds open streams and unanswered requests get once the proxy is told to stop."""
SSE_TYPE = "text/event-stream; charset=utf-8"
JSON_TYPE = "application/json"
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
        "content-type",
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


Reading = Literal["sse", "json", "unknown"]
"""How the proxy reads an upstream answer's body: as an event stream, as one JSON-RPC body, or
not at all (then it is never relayed)."""


def reading_of(method: str, status: int, content_type: str | None) -> Reading:
    """How a client could read an answer, taking the most any real client reads.

    Below 400 (any 2xx, and a 3xx the client does not follow) the Python SDK reads by prefix
    of the lower-cased content type, the TypeScript SDK by its media type, and the TypeScript
    SDK reads a GET stream as SSE whatever its content type. At 4xx the Python SDK reads a
    JSON-RPC error from the body; the proxy reads any 4xx body as one.
    """
    if status >= 400:
        return "json"
    if method == "GET":
        return "sse"
    kind = (content_type or "").strip().lower()
    if kind.startswith("text/event-stream"):
        return "sse"
    if kind.startswith("application/json"):
        return "json"
    return "unknown"


def _forwarded_headers(headers: Mapping[str, str], token: str | None) -> dict[str, str]:
    out = {k: v for k, v in headers.items() if k.lower() not in _REQUEST_SKIP}
    if token is not None:
        # The proxy's own credential never reaches the server it guards against.
        out = {k: v for k, v in out.items() if k.lower() != "authorization"}
    out["accept-encoding"] = "identity"
    return out


def _response_headers(resp: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in resp.headers.items() if k.lower() not in _RESPONSE_SKIP}


def _requests_in(body: bytes) -> list[dict[str, Any]]:
    """The requests (method and id) in a client's POST body."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return []
    items = data if isinstance(data, list) else [data]
    return [
        i
        for i in items
        if isinstance(i, dict) and isinstance(i.get("method"), str) and i.get("id") is not None
    ]


_PLAIN = SseEvent(None)
_NOTICE = SseEvent(None, event="")
"""The event of urlvet's own ``notifications/message`` about a block: written on a stream
before the reply it concerns, without the upstream's event id (it is no upstream event)."""
Item = SseEvent | bytes
"""What the proxy judges: an SSE event, or a JSON body (bytes)."""
Out = tuple[bytes | None, SseEvent]
"""A message for the client (None: only the event's fields), and the event it came in."""


class HttpProxy:
    """The ASGI application: ``/mcp`` in front of ``upstream``."""

    def __init__(
        self,
        upstream: str,
        relay: Relay,
        client: httpx.AsyncClient | None = None,
        listener: ListenerPolicy | None = None,
    ):
        self.upstream = upstream
        self.relay = relay
        self.listener = listener or listener_policy("127.0.0.1")[0]
        self._client = client
        self._url = httpx.URL(upstream)
        self._loop: asyncio.AbstractEventLoop | None = None

    def stop(self) -> None:
        """Cut every upstream exchange (a request left unanswered, an open stream) at once.

        Safe to call from a signal handler: the work is handed to the event loop. Each exchange
        then ends as if the upstream had failed, so its client gets an answer or an ended
        stream, instead of the server waiting on it until it gives up.
        """
        client, loop = self._client, self._loop
        if client is not None and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(lambda: loop.create_task(client.aclose()))

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
            self._loop = asyncio.get_running_loop()
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
        refusal = self.listener.refuse(request.headers)
        if refusal is not None:
            self.relay.diagnostic(f"refused a {request.method} request: {refusal.reason}")
            return _refused(refusal)
        headers = _forwarded_headers(request.headers, self.listener.token)
        channel = request.headers.get("mcp-session-id", "")
        if request.method == "POST":
            length = request.headers.get("content-length")
            if length is not None and length.isdigit() and int(length) > MAX_MESSAGE:
                return Response(f"message longer than {MAX_MESSAGE:,} bytes", status_code=413)
            body = await request.body()
            if len(body) > MAX_MESSAGE:
                return Response(f"message longer than {MAX_MESSAGE:,} bytes", status_code=413)
            requests = _requests_in(body)
            # As over stdio, the relay sees what the client sends (its requests, to retry one
            # that an answer on another stream asks input for; its initialize).
            self.relay.from_client(body, channel)
        else:
            body, requests = b"", []
        origin = requests[0] if len(requests) == 1 else None
        try:
            resp = await self.client.send(self._request(request.method, headers, body), stream=True)
        except (httpx.HTTPError, RuntimeError) as exc:  # RuntimeError: the client is closed
            return self._failed(requests, f"cannot reach it ({type(exc).__name__}: {exc})")
        for sent in requests:  # the client's capabilities (UV710), by the session it opens
            self.relay.judge.lint.observe(sent, resp.headers.get("mcp-session-id", channel))
        if resp.status_code >= 500:
            await resp.aclose()
            return self._failed(requests, f"it answered HTTP {resp.status_code}")
        reading = reading_of(request.method, resp.status_code, resp.headers.get("content-type"))
        if reading == "sse":
            stream = self._stream(resp, origin, headers, channel)
            return StreamingResponse(
                stream, resp.status_code, _response_headers(resp), media_type=SSE_TYPE
            )
        try:
            content = await read_capped(resp)
        except (ProxyError, httpx.HTTPError) as exc:
            return self._failed(requests, str(exc) or type(exc).__name__)
        finally:
            await resp.aclose()
        if not content:
            return Response(b"", resp.status_code, _response_headers(resp))
        if reading == "unknown":
            kind = resp.headers.get("content-type")
            why = f"its answer has content type {kind!r}, which no MCP client reads as JSON-RPC"
            return self._withheld(requests, resp, why)
        return await self._json(content, resp, requests, headers, channel)

    def _failed(self, requests: list[dict[str, Any]], why: str) -> Response:
        text = f"urlvet proxy: the upstream server {self.upstream} failed: {why}"
        if not requests:
            return Response(text, status_code=502, media_type="text/plain")
        return _errors(requests, text)

    def _withheld(self, requests: list[dict[str, Any]], resp: httpx.Response, why: str) -> Response:
        """An answer the proxy does not relay: the waiting requests get an error instead."""
        text = f"urlvet proxy: withheld the answer of the upstream server {self.upstream}: {why}"
        self.relay.diagnostic(f"withheld an answer of the upstream: {why}")
        if requests and resp.status_code < 300:
            return _errors(requests, text)
        return Response(b"", resp.status_code, _response_headers(resp))

    async def _json(
        self,
        body: bytes,
        resp: httpx.Response,
        requests: list[dict[str, Any]],
        headers: dict[str, str],
        ch: str,
    ) -> Response:
        origin = requests[0] if len(requests) == 1 else None
        outs = [out async for out in self._vetted(_one(body), origin, headers, ch)]
        # A JSON answer carries one message: urlvet's notices go on streams only.
        outs = [(m, e) for m, e in outs if e is not _NOTICE]
        found = [m for m, _ in outs if m]
        rh = _response_headers(resp)
        if resp.status_code >= 300 and len(found) == 1 and not _is_json(found[0]):
            # An error page, not JSON-RPC: a client would only show its text, so it goes.
            found = []
        if len(found) == 1:
            return Response(found[0], resp.status_code, rh, media_type=JSON_TYPE)
        if not found:
            return self._withheld(requests, resp, "urlvet could not read it or blocked it")
        # Several messages (a retry answered with a stream): as an event stream.
        events = b"".join(_encoded(m, e, self.relay) for m, e in outs)
        return Response(events, 200, rh, media_type=SSE_TYPE)

    async def _stream(
        self, resp: httpx.Response, origin: dict[str, Any] | None, headers: dict[str, str], ch: str
    ) -> AsyncIterator[bytes]:
        try:
            events = read_events(resp.aiter_bytes(), MAX_MESSAGE)
            async for message, event in self._vetted(events, origin, headers, ch):
                yield _encoded(message, event, self.relay)
        except (httpx.HTTPError, SseTooLong, SseCut) as exc:
            why = str(exc) or type(exc).__name__
            self.relay.diagnostic(f"the upstream stream ended: {why}")
            if origin is not None:
                # The client may still wait for its answer on this stream: it gets an error.
                text = (
                    f"urlvet proxy: the stream of the upstream server {self.upstream} failed: {why}"
                )
                yield encode_event(_error(origin.get("id"), text))
        finally:
            await resp.aclose()

    async def _vetted(
        self,
        items: AsyncIterator[Item],
        origin: dict[str, Any] | None,
        headers: dict[str, str],
        channel: str,
    ) -> AsyncIterator[Out]:
        """The messages to relay to the client, judged, declined, retried, with their events."""
        async for item in items:
            if isinstance(item, bytes):
                data, event = item, _PLAIN
            elif not item.data:  # no data, or an empty one: nothing a client reads as a message
                yield (b"" if item.data == "" else None), item
                continue
            else:
                data, event = item.data.encode("utf-8"), item
            step = await self.relay.from_server(data, channel, origin)
            for message in step.to_server:
                await self._post_quiet(message, headers)
            if step.retry is not None:
                async for out in self._retry(step.retry, headers, channel):
                    yield out
                continue
            for notice in step.notices:
                yield notice, _NOTICE
            for message in step.to_client:
                yield message, event

    async def _retry(
        self, retry: bytes, headers: dict[str, str], channel: str
    ) -> AsyncIterator[Out]:
        request = json.loads(retry)
        failed: str | None = None
        try:
            resp = await self.client.send(
                self._request("POST", _json_post(headers), retry), stream=True
            )
        except (httpx.HTTPError, RuntimeError) as exc:
            failed = f"cannot reach it ({type(exc).__name__})"
        else:
            try:
                reading = reading_of("POST", resp.status_code, resp.headers.get("content-type"))
                if resp.status_code >= 300 or reading == "unknown":
                    failed = f"it answered HTTP {resp.status_code}"
                else:
                    items: AsyncIterator[Item] = (
                        read_events(resp.aiter_bytes(), MAX_MESSAGE)
                        if reading == "sse"
                        else _one(await read_capped(resp))
                    )
                    async for out in self._vetted(items, request, headers, channel):
                        yield out
            except (httpx.HTTPError, ProxyError, SseTooLong, SseCut) as exc:
                failed = str(exc) or type(exc).__name__
            finally:
                await resp.aclose()
        if failed is not None:
            # Through the relay, which answers the client under its own id, not the retry's.
            text = f"urlvet proxy: the upstream server {self.upstream} failed: {failed}"
            error = _error(request.get("id"), text)
            async for out in self._vetted(_one(error), None, headers, channel):
                yield out

    async def _post_quiet(self, message: bytes, headers: dict[str, str]) -> None:
        try:
            resp = await self.client.send(self._request("POST", _json_post(headers), message))
            if resp.status_code >= 300:
                self.relay.diagnostic(f"the upstream answered HTTP {resp.status_code} to a decline")
        except (httpx.HTTPError, RuntimeError) as exc:
            self.relay.diagnostic(f"could not send a decline upstream: {exc}")


def _encoded(message: bytes | None, event: SseEvent, relay: Relay) -> bytes:
    """One event as the proxy writes it; a message no event can carry is dropped, and said."""
    if event.comment:
        return b":\n"
    try:
        return encode_event(message, event.event, event.id, event.retry)
    except ValueError as exc:
        relay.diagnostic(f"dropped a message from the upstream: {exc}")
        return b""


def _is_json(message: bytes) -> bool:
    try:
        json.loads(message)
    except (ValueError, RecursionError):
        return False
    return True


def _error(request_id: Any, text: str) -> bytes:
    return dumps(
        {"jsonrpc": "2.0", "id": request_id, "error": {"code": UPSTREAM_FAILED, "message": text}}
    )


def _errors(requests: list[dict[str, Any]], text: str) -> Response:
    errors = [json.loads(_error(r["id"], text)) for r in requests]
    return Response(dumps(errors[0] if len(errors) == 1 else errors), media_type=JSON_TYPE)


def _refused(refusal: Refusal) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": refusal.reason}}
    extra = {"www-authenticate": 'Bearer realm="urlvet proxy"'} if refusal.status == 401 else None
    return Response(dumps(body), refusal.status, extra, media_type=JSON_TYPE)


async def read_capped(resp: httpx.Response) -> bytes:
    """A response body (decoded as a client decodes it) of at most MAX_MESSAGE bytes."""
    chunks = bytearray()
    async for chunk in resp.aiter_bytes():
        chunks += chunk
        if len(chunks) > MAX_MESSAGE:
            raise ProxyError(f"its answer is longer than {MAX_MESSAGE:,} bytes")
    return bytes(chunks)


def _json_post(headers: dict[str, str]) -> dict[str, str]:
    out = {k: v for k, v in headers.items() if k.lower() not in ("last-event-id", "content-type")}
    out["content-type"] = "application/json"
    out["accept"] = "application/json, text/event-stream"
    return out


async def _one(body: bytes) -> AsyncIterator[Item]:
    yield body


class _Server(uvicorn.Server):
    """uvicorn's server, which on SIGTERM or SIGINT also cuts the proxy's upstream exchanges:
    uvicorn alone waits for them, and a hostile upstream need never end one."""

    def __init__(self, config: uvicorn.Config, proxy: HttpProxy) -> None:
        super().__init__(config)
        self.proxy = proxy

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        self.proxy.stop()


def run_http(
    upstream: str,
    listen: str,
    relay: Relay,
    *,
    allow_remote: bool = False,
    token: str | None = None,
    allow_origins: Sequence[str] = (),
    allow_hosts: Sequence[str] = (),
) -> int:
    """Serve ``http://LISTEN/mcp`` in front of ``upstream`` until stopped; the exit status.

    SIGTERM or SIGINT stops it: open streams and requests the upstream has not answered are
    given :data:`SHUTDOWN_GRACE` seconds, then cut.
    """
    host, port = parse_listen(listen)
    if not upstream.startswith(("http://", "https://")):
        raise ProxyError(f"--upstream {upstream!r}: expected an http:// or https:// URL")
    listener, notes = listener_policy(
        host,
        allow_remote=allow_remote,
        token=token,
        allow_origins=allow_origins,
        allow_hosts=allow_hosts,
    )
    proxy = HttpProxy(upstream, relay, listener=listener)
    app = proxy.app()
    shown = f"[{host}]" if ":" in host else host
    for note in notes:
        print(f"urlvet proxy: {note}", file=sys.stderr, flush=True)
    print(
        f"urlvet proxy: serving http://{shown}:{port}{ENDPOINT} in front of {upstream}",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
    )
    server = _Server(config, proxy)
    server.run()
    return 0 if server.started else 1


__all__ = [
    "ENDPOINT",
    "SHUTDOWN_GRACE",
    "UPSTREAM_FAILED",
    "HttpProxy",
    "Reading",
    "parse_listen",
    "reading_of",
    "run_http",
]
