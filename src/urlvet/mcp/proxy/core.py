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
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from urlvet.mcp import MAX_LINE, JsonId, WireShape
from urlvet.mcp.proxy.judge import Judge, Judgement, LogEntry

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
    """The client's request sent again with declines; what the server answers to it takes the
    place of this message."""
    retry_of: JsonId | None = None
    """The id of the retried request."""


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


def _warn(text: str) -> None:
    print(f"urlvet proxy: {text}", file=sys.stderr, flush=True)


@dataclass
class Relay:
    """The decisions of one proxy: one client, one server. Safe to share between tasks."""

    judge: Judge
    log: ProxyLog | None = None
    diagnostic: Callable[[str], None] = _warn
    _requests: OrderedDict[tuple[Any, ...], dict[str, Any]] = field(default_factory=OrderedDict)
    _retries: dict[tuple[Any, ...], int] = field(default_factory=dict)

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
        except ValueError:
            return
        for item in data if isinstance(data, list) else (data,):
            if isinstance(item, dict) and isinstance(item.get("method"), str):
                key = _id_key(item.get("id"))
                if key is not None:
                    self.remember(item, channel)

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

    @staticmethod
    def quick(line: bytes) -> Step | None:
        """The step for a message that cannot carry a URL request (forward it), else None."""
        if any(m in line for m in _MARKERS):
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
        if len(line) > VET_LIMIT:
            return self._too_long(line, data)
        if isinstance(data, list):
            return await self._batch(line, data, channel, origin)
        judgement = await self.judge.judge(data)
        return self._step(line, data, judgement, channel, origin)

    def _unreadable(self, line: bytes, reason: str) -> Step:
        if any(h in line for h in _URL_REQUEST_HINTS):
            self.diagnostic(
                f"dropped a message from the server that looks like a URL request: {reason}"
            )
            return Step()
        return Step(to_client=(line,))

    def _too_long(self, line: bytes, data: Any) -> Step:
        items = data if isinstance(data, list) else [data]
        if not any(self.judge.carries_urls(item) for item in items):
            return Step(to_client=(line,))
        self.diagnostic(f"declined a URL request longer than {VET_LIMIT:,} bytes")
        to_client: list[bytes] = []
        to_server: list[bytes] = []
        for item in items:
            j = self.judge.refuse(item, f"the message is longer than {VET_LIMIT:,} bytes")
            if j.reply is not None:
                to_server.append(dumps(j.reply))
            if j.message is not None:
                to_client.append(dumps(j.message))
        return Step(tuple(to_client), tuple(to_server))

    async def _batch(
        self, line: bytes, data: list[Any], channel: str, origin: dict[str, Any] | None
    ) -> Step:
        steps = []
        for item in data:
            raw = dumps(item)
            steps.append(self._step(raw, item, await self.judge.judge(item), channel, origin))
        if all(s.to_client == (dumps(d),) for s, d in zip(steps, data, strict=True)) and not any(
            s.to_server or s.retry for s in steps
        ):
            return Step(to_client=(line,))
        parts: list[Any] = [json.loads(c) for s in steps for c in s.to_client]
        retries = [s for s in steps if s.retry is not None]
        return Step(
            to_client=(dumps(parts),) if parts else (),
            to_server=tuple(x for s in steps for x in s.to_server)
            + tuple(s.retry for s in retries[1:] if s.retry is not None),
            retry=retries[0].retry if retries else None,
            retry_of=retries[0].retry_of if retries else None,
        )

    def _step(
        self,
        line: bytes,
        data: Any,
        j: Judgement,
        channel: str,
        origin: dict[str, Any] | None,
    ) -> Step:
        if j.entries and self.log is not None:
            self.log.write(j.entries, self.judge.server_label, self.judge.server.name)
        if j.kind == "pass":
            return Step(to_client=(line,))
        if j.kind == "rewrite":
            assert j.message is not None
            return Step(to_client=(dumps(j.message),))
        if j.kind == "decline":
            return Step(
                to_client=(dumps(j.message),) if j.message is not None else (),
                to_server=(dumps(j.reply),) if j.reply is not None else (),
            )
        # retry: resend the client's request with the declines, or refuse when that is not
        # possible (the request is unknown, or the server keeps asking).
        assert j.retry_params is not None
        msg_id = data.get("id") if isinstance(data, dict) else None
        key = _id_key(msg_id)
        request = origin
        if request is None and key is not None:
            request = self._requests.get((channel, *key))
        full = (channel, *key) if key is not None else None
        tries = self._retries.get(full, 0) if full is not None else MAX_RETRIES
        if request is None or full is None or tries >= MAX_RETRIES:
            why = (
                "the server kept asking for it"
                if request is not None and tries >= MAX_RETRIES
                else "the request it answers is not known to the proxy"
            )
            refused = self.judge.refuse(data, j.reason or why)
            return Step(to_client=(dumps(refused.message),) if refused.message else ())
        self._retries[full] = tries + 1
        params = dict(request.get("params") or {})
        responses = dict(params.get("inputResponses") or {})
        responses.update(j.retry_params.get("inputResponses") or {})
        params["inputResponses"] = responses
        if "requestState" in j.retry_params:
            params["requestState"] = j.retry_params["requestState"]
        else:
            params.pop("requestState", None)
        retried = {**request, "params": params}
        self._requests[full] = retried
        return Step(retry=dumps(retried), retry_of=msg_id)

    def finished(self, msg_id: Any, channel: str = "") -> None:
        """Forget a request once its final answer went to the client."""
        key = _id_key(msg_id)
        if key is not None:
            self._requests.pop((channel, *key), None)
            self._retries.pop((channel, *key), None)


__all__ = [
    "MAX_MESSAGE",
    "VET_LIMIT",
    "Action",
    "ProxyLog",
    "Relay",
    "Step",
    "WireShape",
    "dumps",
]
