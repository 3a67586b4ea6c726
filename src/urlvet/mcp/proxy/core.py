"""The relay's decisions, whatever the transport: what happens to each message on the way.

A :class:`Relay` sits between one client and one server. Messages from the client are passed on
unchanged (the relay only remembers the requests, so that it can retry one itself). Each message
from the server is judged:

- a message that carries no URL request is forwarded byte for byte;
- a URL request whose URLs urlvet allows is forwarded byte for byte;
- one with warnings is forwarded with the message the client will show rewritten to begin with a
  ``urlvet:`` line;
- a blocked one never reaches the client: the server gets the decline its protocol expects, a
  2026-07-28 ``input_required`` result is answered by retrying the client's request with the
  declines, and where nothing can be declined the client gets a JSON-RPC error that says urlvet
  blocked the URL and why.

The transports (:mod:`.stdio`, :mod:`.http`) only move bytes and carry out the :class:`Step` the
relay returns.
"""

from __future__ import annotations

import json
import sys
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from urlvet.mcp.answers import with_id
from urlvet.mcp.proxy.judge import Judge, LogEntry
from urlvet.mcp.wire import MAX_LINE, JsonId, WireShape

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

# A server message can only carry a URL request when one of these occurs in its bytes. Escapes
# (\u, \/) could spell any of them, and an error code can be written many ways, so a message with
# an escape or an error member is always read in full.
_MARKERS = (b"elicitation", b"interaction", b"input_required", b'"error"', b"\\u", b"\\/")
# What makes a line that cannot be read look like a URL request: it is then never forwarded.
_URL_REQUEST_HINTS = (
    b"elicitation/create",
    b"interaction/create",
    b"input_required",
    b"-32042",
    b"-32003",
    b"\\u",
    b"\\/",
)

_RETRY_MARK = RETRY_PREFIX.encode()

Action = Literal["forwarded", "forwarded-with-warning", "declined"]


def _id_key(value: Any) -> tuple[str, JsonId] | None:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return ("s", value) if isinstance(value, str) else ("i", value)


def dumps(message: Any) -> bytes:
    """One message as compact JSON text (no newline), as the proxy writes what it makes."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


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


class ProxyLog:
    """``--log FILE``: one JSON line per vetted URL, appended and flushed as it is written."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file: TextIO = self.path.open("a", encoding="utf-8")
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
    _requests: OrderedDict[tuple[Any, ...], dict[str, Any]] = field(default_factory=OrderedDict)
    """The client's latest requests, by (channel, id): what a retry resends."""
    _retried: dict[tuple[Any, ...], JsonId] = field(default_factory=dict)
    """The proxy's retries in flight: their id -> the client's id."""
    _retries: dict[tuple[Any, ...], int] = field(default_factory=dict)
    """How often each client request was retried so far."""

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
        """The step for a message that cannot carry a URL request (forward it), else None."""
        if any(m in line for m in _MARKERS) or (self._retried and _RETRY_MARK in line):
            return None
        return Step(to_client=(line,))

    async def from_server(
        self, line: bytes, channel: str = "", origin: dict[str, Any] | None = None
    ) -> Step:
        """Judge one message (one line, or one SSE event's data) from the server.

        ``origin`` is the client request this message answers, when the transport knows it
        (HTTP: the POST's body); otherwise the relay looks it up by id.
        """
        quick = self.quick(line)
        if quick is not None:
            return quick
        if len(line) > MAX_MESSAGE:
            return self._unreadable(line, f"longer than {MAX_MESSAGE:,} bytes")
        try:
            data = json.loads(line)
        except (ValueError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else "invalid JSON"
            return self._unreadable(line, reason)
        too_long = VET_LIMIT if len(line) > VET_LIMIT else None
        if not isinstance(data, list):
            step, _ = await self._one(line, data, channel, origin, too_long)
            return step
        # A batch: forwarded as it came unless something in it is changed.
        parts: list[Any] = []
        to_server: list[bytes] = []
        retries: list[bytes] = []
        changed = False
        for item in data:
            step, unchanged = await self._one(None, item, channel, origin, too_long)
            changed = changed or not unchanged
            parts.extend(item if unchanged else json.loads(c) for c in step.to_client)
            to_server.extend(step.to_server)
            retries.extend([step.retry] if step.retry is not None else [])
        if not changed:
            return Step(to_client=(line,))
        return Step(
            to_client=(dumps(parts),) if parts else (),
            to_server=(*to_server, *retries[1:]),
            retry=retries[0] if retries else None,
        )

    def _unreadable(self, line: bytes, reason: str) -> Step:
        if any(h in line for h in _URL_REQUEST_HINTS):
            self.diagnostic(
                f"dropped a message from the server that looks like a URL request: {reason}"
            )
            return Step()
        return Step(to_client=(line,))

    async def _one(
        self,
        line: bytes | None,
        data: Any,
        channel: str,
        origin: dict[str, Any] | None,
        too_long: int | None,
    ) -> tuple[Step, bool]:
        """The step for one decoded message, and whether it forwards the message unchanged."""
        is_response = isinstance(data, dict) and "method" not in data
        readdressed = False
        if is_response:
            answered = self._retried.pop((channel, *(_id_key(data.get("id")) or ("", ""))), None)
            if answered is not None:
                # What follows a retry goes to the client under the client's own id.
                data = with_id(data, answered)
                line, readdressed = None, True
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
        action = judgement.action
        if action.to_server is not None and "method" in action.to_server:
            # The client's request retried with declines: its answer is the client's.
            assert key is not None
            retry_key = _id_key(action.to_server.get("id"))
            assert retry_key is not None
            self._retried[(channel, *retry_key)] = data["id"]
            self._retries[(channel, *key)] = tries + 1
            return Step(retry=dumps(action.to_server)), False
        if key is not None:
            self._retries.pop((channel, *key), None)
        to_server = (dumps(action.to_server),) if action.to_server is not None else ()
        if action.to_client is not None:
            return Step((dumps(action.to_client),), to_server), False
        if action.did == "declined":
            return Step((), to_server), False
        if line is None:
            return Step((dumps(data),), to_server), not readdressed
        return Step((line,), to_server), True


__all__ = [
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
