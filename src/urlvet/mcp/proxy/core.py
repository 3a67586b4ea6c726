"""The relay's decisions, whatever the transport: what happens to each message on the way.

A :class:`Relay` sits between one client and one server. Messages from the client are passed on
unchanged (the relay only remembers the requests, so that it can retry one itself). Each message
from the server is judged:

- every message is read by the one wire reader (:func:`urlvet.mcp.wire.read_json`) as leniently
  as any client reads it, and judged as the most lenient client would take it
  (``docs/proxy-clients.md``); a message that cannot be read at all is never forwarded;
- a message that carries no URL request is forwarded byte for byte when those bytes are the ones
  that were read, else as the canonical JSON of what was judged;
- a URL request whose URLs urlvet allows is forwarded the same way;
- one with warnings is forwarded with the message the client will show rewritten to begin with a
  ``urlvet:`` line;
- a blocked one never reaches the client: the server gets the decline its protocol expects, a
  2026-07-28 ``input_required`` result is answered by retrying the client's request with the
  declines, and where nothing can be declined the client gets a JSON-RPC error that says urlvet
  blocked the URL and why. Every block is told: one line on stderr for the operator, and an MCP
  ``notifications/message`` at level ``warning`` to the client, naming the server, the site and
  the reason.

The transports (:mod:`.stdio`, :mod:`.http`) only move bytes and carry out the :class:`Step` the
relay returns.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from urlvet.mcp.answers import URL_BLOCKED, rpc_error, with_id
from urlvet.mcp.proxy.judge import BlockNotice, Judge, LogEntry
from urlvet.mcp.wire import (
    INVALID_REQUEST,
    MAX_LINE,
    JsonId,
    JsonText,
    UnreadableJson,
    WireShape,
    dumps,
    might_carry_url,
    read_json,
)

if TYPE_CHECKING:
    from urlvet.engine import Vetter
    from urlvet.server import Server

MAX_MESSAGE = 64 << 20
"""The longest message the proxy relays (64 MiB); a longer one is dropped with a diagnostic."""
VET_LIMIT = MAX_LINE
"""The longest URL request the proxy vets (1 MiB); a longer one is declined, never forwarded."""
TRACK_LIMIT = 1 << 20
"""The longest client request the proxy remembers for a retry on the client's behalf."""
TRACKED_REQUESTS = 4096
"""How many of the client's latest requests the proxy remembers for retries."""
RETRY_PREFIX = "urlvet-retry-"
"""The start of the id of every request the proxy retries itself."""
MAX_RETRIES = 3
"""How often the proxy retries one request with declines before it answers the client itself."""

_RETRY_MARK = RETRY_PREFIX.encode()
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""MCP's log levels (RFC 5424's), least severe first."""
_WARNING = LOG_LEVELS.index("warning")

Action = Literal["forwarded", "forwarded-with-warning", "declined"]


def _id_key(value: Any) -> tuple[str, JsonId] | None:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return ("s", value) if isinstance(value, str) else ("i", value)


@dataclass(frozen=True, slots=True)
class Step:
    """What the transport does with one message from the server."""

    to_client: tuple[bytes, ...] = ()
    """Messages for the client, in order (the original bytes when forwarded unchanged)."""
    to_server: tuple[bytes, ...] = ()
    """Answers to the server on the client's behalf (declines), in order."""
    retry: bytes | None = None
    """The client's request sent again with declines (under a new id); what the server answers
    to it takes the place of this message."""
    notices: tuple[bytes, ...] = ()
    """MCP ``notifications/message`` (level warning) telling the client of a block. A transport
    sends them before ``to_client`` where its framing allows (a stdio stream, an SSE stream)
    and may leave them out where it does not (a single JSON response body)."""


class ProxyLog:
    """``--log FILE``: one JSON line per vetted URL, appended and flushed as it is written."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        # A lone surrogate (a JSON "\\udfff" escape) is written back as that escape.
        self._file: TextIO = self.path.open("a", encoding="utf-8", errors="backslashreplace")
        self._lock = threading.Lock()

    def write(self, entries: tuple[LogEntry, ...], server: str, server_name: str | None) -> None:
        """Append one line per entry."""
        if not entries:
            return
        now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        lines = []
        for e in entries:
            record = {
                "time": now,
                "server": server,
                "server_name": server_name,
                "shape": e.shape,
                "url": e.url,
                "message": e.message,
                "decision": e.decision,
                "codes": list(e.codes),
                "action": e.action,
            }
            lines.append(json.dumps(record, ensure_ascii=False) + "\n")
        with self._lock:
            self._file.write("".join(lines))
            self._file.flush()

    def close(self) -> None:
        """Close the file."""
        self._file.close()


LOG_ACTIONS = ("forwarded", "forwarded-with-warning", "declined")
"""What the proxy did, as its log says."""


@dataclass(frozen=True, slots=True)
class LoggedUrl:
    """One line of a proxy log, read back (by ``urlvet audit``)."""

    url: str
    message: str | None
    shape: str
    server: str | None


def read_log_line(obj: Any) -> LoggedUrl | None:
    """The vetted URL of one decoded ``--log`` line, or None when ``obj`` is not one."""
    if not isinstance(obj, dict) or obj.get("action") not in LOG_ACTIONS:
        return None
    url, shape = obj.get("url"), obj.get("shape")
    if not isinstance(url, str) or not isinstance(shape, str):
        return None
    message, server = obj.get("message"), obj.get("server")
    return LoggedUrl(
        url,
        message if isinstance(message, str) else None,
        shape,
        server if isinstance(server, str) and server else None,
    )


def _warn(text: str) -> None:
    print(f"urlvet proxy: {text}", file=sys.stderr, flush=True)


@dataclass
class Relay:
    """The decisions of one proxy: one client, one server. Used from one event loop."""

    judge: Judge
    log: ProxyLog | None = None
    diagnostic: Callable[[str], None] = _warn
    notify_client: bool = True
    """Send the client an MCP ``notifications/message`` (level warning) for each block."""
    _requests: OrderedDict[tuple[Any, ...], dict[str, Any]] = field(default_factory=OrderedDict)
    """The client's latest requests, by (channel, id): what a retry resends."""
    _retried: dict[tuple[Any, ...], JsonId] = field(default_factory=dict)
    """The proxy's retries in flight: their id -> the client's id."""
    _retries: dict[tuple[Any, ...], int] = field(default_factory=dict)
    """How often each client request was retried so far."""
    _client_level: str = "debug"
    """The least severe level of log message the client asked for (``logging/setLevel``)."""

    @classmethod
    def build(cls, vetter: Vetter, server: Server, log: ProxyLog | None = None, **kw: Any) -> Relay:
        """A relay that vets with ``vetter`` as ``server`` (the configured one) asked."""
        return cls(Judge(vetter, server), log, **kw)

    # -- client to server ---------------------------------------------------------------

    def from_client(self, line: bytes, channel: str = "") -> None:
        """Remember the client's requests (never changes them): a retry resends one."""
        if len(line) > TRACK_LIMIT or b'"method"' not in line:
            return
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            return
        for item in data if isinstance(data, list) else (data,):
            if isinstance(item, dict) and isinstance(item.get("method"), str):
                self.remember(item, channel)
                self.judge.lint.observe(item, channel)  # the client's capabilities (UV710)
                if item["method"] == "logging/setLevel":
                    params = item.get("params")
                    level = params.get("level") if isinstance(params, dict) else None
                    if level in LOG_LEVELS:
                        self._client_level = level

    def remember(self, request: dict[str, Any], channel: str = "") -> None:
        """Remember one decoded client request by its id."""
        key = _id_key(request.get("id"))
        if key is None:
            return
        full = (channel, *key)
        self._requests[full] = request
        self._requests.move_to_end(full)
        while len(self._requests) > TRACKED_REQUESTS:
            old, _ = self._requests.popitem(last=False)
            self._retries.pop(old, None)

    # -- server to client ---------------------------------------------------------------

    def quick(self, line: bytes) -> Step | None:
        """The step for a message that cannot carry a URL request (forward it), else None.

        Sound by :func:`~urlvet.mcp.wire.might_carry_url`: no client reads such bytes as a URL
        request, however it decodes them.
        """
        if might_carry_url(line) or (self._retried and _RETRY_MARK in line):
            return None
        return Step(to_client=(line,))

    async def from_server(
        self, line: bytes, channel: str = "", origin: dict[str, Any] | None = None
    ) -> Step:
        """Judge one message (one line, or one SSE event's data) from the server.

        ``origin`` is the client request this message answers, when the transport knows it
        (HTTP: the POST's body); otherwise the relay looks it up by id. Never raises.
        """
        quick = self.quick(line)
        if quick is not None:
            return quick
        try:
            return await self._read(line, channel, origin)
        except Exception as exc:  # the relay's boundary: one message must never end the proxy
            return self._unreadable(f"it could not be judged ({type(exc).__name__}: {exc})")

    async def _read(self, line: bytes, channel: str, origin: dict[str, Any] | None) -> Step:
        if len(line) > MAX_MESSAGE:
            return self._unreadable(f"longer than {MAX_MESSAGE:,} bytes", line)
        try:
            read = read_json(line)
        except UnreadableJson as exc:
            return self._unreadable(str(exc), line)
        too_long = VET_LIMIT if len(line) > VET_LIMIT else None
        data = read.value
        if not isinstance(data, list):
            step, _ = await self._one(_judged_bytes(line, read), data, channel, origin, too_long)
            return step
        return await self._batch(line, read, channel, origin, too_long)

    async def _batch(
        self,
        line: bytes,
        read: JsonText,
        channel: str,
        origin: dict[str, Any] | None,
        too_long: int | None,
    ) -> Step:
        """A batch: each item judged; an item forwarded unchanged keeps its own bytes."""
        items = read.value
        spans = _item_texts(read.text, len(items))
        parts: list[bytes] = []
        to_server: list[bytes] = []
        retries: list[bytes] = []
        notices: list[bytes] = []
        changed = False
        for n, item in enumerate(items):
            own = spans[n].encode("utf-8") if spans is not None else None
            step, unchanged = await self._one(own, item, channel, origin, too_long)
            changed = changed or not unchanged
            parts.extend(step.to_client)
            to_server.extend(step.to_server)
            retries.extend([step.retry] if step.retry is not None else [])
            notices.extend(step.notices)
        if not changed:
            return Step(to_client=(_judged_bytes(line, read),))
        return Step(
            to_client=(b"[" + b",".join(parts) + b"]",) if parts else (),
            to_server=(*to_server, *retries[1:]),
            retry=retries[0] if retries else None,
            notices=tuple(notices),
        )

    def _unreadable(self, reason: str, line: bytes = b"") -> Step:
        # Nothing urlvet cannot read reaches the client: no client can then take it for a URL
        # request that urlvet did not see. The side that waits is answered when the message's
        # own id can still be made out at its start; otherwise nobody can be.
        self.diagnostic(f"dropped a message from the server that urlvet cannot read: {reason}")
        head = _HEAD.match(line[:SALVAGE_WINDOW])
        if head is None:
            return Step()
        try:
            msg_id = _json_id(json.loads(head.group("id")))
        except ValueError:
            return Step()
        if msg_id is None:
            return Step()
        return self._refused(
            {"id": msg_id, **({"method": ""} if head["method"] or head["method_after"] else {})},
            f"it cannot be read: {reason}",
            told=True,
        )

    def _refused(self, data: Any, reason: str, *, told: bool = False) -> Step:
        """``data`` not relayed: the side that waits for it gets an error instead."""
        if not told:
            self.diagnostic(f"dropped a message from the server: {reason}")
        msg_id = _json_id(data.get("id")) if isinstance(data, dict) else None
        if msg_id is None:
            return Step()
        if isinstance(data.get("method"), str):
            return Step(to_server=(dumps(rpc_error(msg_id, INVALID_REQUEST, reason)),))
        error = rpc_error(msg_id, URL_BLOCKED, f"urlvet dropped the server's answer: {reason}")
        return Step(to_client=(dumps(error),))

    async def _one(
        self,
        line: bytes | None,
        data: Any,
        channel: str,
        origin: dict[str, Any] | None,
        too_long: int | None,
    ) -> tuple[Step, bool]:
        """The step for one decoded message, and whether it forwards ``line`` unchanged.

        ``line`` is the message's own bytes when they are exactly what was read, else None
        (the message is then written anew from what was judged).
        """
        try:
            return await self._judged(line, data, channel, origin, too_long)
        except UnreadableJson as exc:
            return self._refused(data, str(exc)), False

    async def _judged(
        self,
        line: bytes | None,
        data: Any,
        channel: str,
        origin: dict[str, Any] | None,
        too_long: int | None,
    ) -> tuple[Step, bool]:
        is_response = isinstance(data, dict) and "method" not in data
        if is_response:
            answered = self._retried.pop((channel, *(_id_key(data.get("id")) or ("", ""))), None)
            if answered is not None:
                # What follows a retry goes to the client under the client's own id.
                data = with_id(data, answered)
                line = None
        key = _id_key(data.get("id")) if is_response else None
        if origin is None and key is not None:
            origin = self._requests.get((channel, *key))
        tries = self._retries.get((channel, *key), 0) if key is not None else 0
        retry_id = f"{RETRY_PREFIX}{uuid.uuid4().hex}" if tries < MAX_RETRIES else None
        judgement = await self.judge.judge(
            data, original_request=origin, retry_id=retry_id, too_long=too_long, channel=channel
        )
        for note in judgement.notes:  # interaction lint: what was declined on whose behalf
            self.diagnostic(note)
        if judgement.entries and self.log is not None:
            self.log.write(judgement.entries, self.judge.server_label, self.judge.server.name)
        notices = self._tell(judgement.blocked)
        action = judgement.action
        if action.to_server is not None and "method" in action.to_server:
            # The client's request retried with declines: its answer is the client's.
            assert key is not None
            retry_key = _id_key(action.to_server.get("id"))
            assert retry_key is not None
            self._retried[(channel, *retry_key)] = data["id"]
            self._retries[(channel, *key)] = tries + 1
            return Step(retry=dumps(action.to_server), notices=notices), False
        if key is not None:
            self._retries.pop((channel, *key), None)
        to_server = (dumps(action.to_server),) if action.to_server is not None else ()
        if action.to_client is not None:
            return Step((dumps(action.to_client),), to_server, notices=notices), False
        if action.did == "declined":
            return Step((), to_server, notices=notices), False
        if line is None:
            return Step((dumps(data),), to_server), False
        return Step((line,), to_server), True

    def _tell(self, blocked: tuple[BlockNotice, ...]) -> tuple[bytes, ...]:
        """One stderr line per blocked URL, and one ``notifications/message`` for the client."""
        if not blocked:
            return ()
        server = self.judge.server.name or self.judge.server_label
        for notice in blocked:
            self.diagnostic(f"blocked a URL request from {server}: {notice.site}: {notice.reason}")
        if not self.notify_client or LOG_LEVELS.index(self._client_level) > _WARNING:
            return ()  # the client asked for fewer messages than warnings (logging/setLevel)
        first = blocked[0]
        more = f" (and {len(blocked) - 1} more)" if len(blocked) > 1 else ""
        text = f"urlvet blocked a URL request from {server}: {first.site}: {first.reason}{more}"
        notification = {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {
                "level": "warning",
                "logger": "urlvet",
                "data": {
                    "message": text,
                    "server": server,
                    "blocked": [
                        {"site": b.site, "reason": b.reason, "codes": list(b.codes)}
                        for b in blocked
                    ],
                },
            },
        }
        return (dumps(notification),)


SALVAGE_WINDOW = 4096
"""How much of an unreadable message is searched for its id, so that the side waiting for it
can be answered."""
# The top-level members before the first nested value: "jsonrpc", then "id" and perhaps
# "method", as every SDK writes them. Anything else is left unanswered.
_HEAD = re.compile(
    rb'\A\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?'
    rb'(?:"method"\s*:\s*(?P<method>"[^"\\]*")\s*,\s*)?'
    rb'"id"\s*:\s*(?P<id>-?[0-9]+(?:\.0+)?|"[^"\\]*")'
    rb'(?:\s*,\s*"method"\s*:\s*(?P<method_after>"[^"\\]*"))?'
)


def _json_id(value: Any) -> JsonId | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str | int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _judged_bytes(line: bytes, read: JsonText) -> bytes:
    """The bytes of what was judged: ``line`` itself when it was read as it is, else the text
    that was read (invalid UTF-8 as U+FFFD, no byte-order mark) in UTF-8. Numbers, key order
    and escapes stay as the server wrote them."""
    return line if read.exact else read.text.encode("utf-8")


def _item_texts(text: str, count: int) -> list[str] | None:
    """The text of each item of the JSON array ``text``, or None when it cannot be cut."""
    # Only the spans are wanted: numbers are not made (a 5,000-digit one would not be).
    decoder = json.JSONDecoder(strict=False, parse_int=len, parse_float=len)
    spans: list[str] = []
    pos = _skip(text, 0)
    if text[pos : pos + 1] != "[":
        return None
    pos = _skip(text, pos + 1)
    try:
        while len(spans) < count:
            _, end = decoder.raw_decode(text, pos)
            spans.append(text[pos:end])
            pos = _skip(text, end)
            pos = _skip(text, pos + 1) if text[pos : pos + 1] == "," else pos
    except (ValueError, RecursionError):
        return None
    return spans


def _skip(text: str, pos: int) -> int:
    while text[pos : pos + 1] in (" ", "\t", "\n", "\r") and pos < len(text):
        pos += 1
    return pos


__all__ = [
    "LOG_LEVELS",
    "MAX_MESSAGE",
    "VET_LIMIT",
    "Action",
    "LoggedUrl",
    "ProxyLog",
    "Relay",
    "Step",
    "WireShape",
    "dumps",
    "read_log_line",
]
