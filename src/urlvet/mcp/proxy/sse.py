"""Server-sent events as the HTML standard reads them, and as the proxy writes them again.

The reader follows the standard's event-stream interpretation (HTML, "Server-sent events",
9.2.5-9.2.6): the stream is UTF-8, decoded with replacement characters and one leading byte-order
mark dropped; a line ends at CR, LF or CRLF, wherever the stream is cut into chunks; a line that
begins with ``:`` is a comment; ``field:value`` loses one space after the colon and a line
without a colon is a field with an empty value; ``data`` lines are joined with LF; ``id`` with a
NUL is ignored; ``retry`` counts only when it is all ASCII digits; a blank line dispatches the
event when it has at least one ``data`` line; an event the stream ends in the middle of is never
dispatched.

``httpx-sse`` (and the copy of it in ``httpx2`` that the Python MCP SDK reads with) is not used:
it keeps a leading byte-order mark, decodes with the charset the server names rather than
UTF-8, and dispatches a last event the stream cut after a lone CR; the TypeScript SDK's
``eventsource-parser`` strips a leading ``\\xef\\xbb\\xbf`` read as three characters. A proxy that
reads differently from a client could pass what the client reads unvetted, so the proxy reads
as the standard says and never relays the bytes it read: it writes every event it passes again
(:func:`encode_event`) in the one form every reader agrees on.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

_LINE_END = re.compile(r"\r\n|\r|\n")


class SseTooLong(ValueError):
    """An event (or one line) of the stream is longer than the reader's limit."""


class SseCut(ValueError):
    """The stream ended inside an event that has data: the standard drops it, and so do we."""


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event, or a block of fields without data (``id``/``retry`` only)."""

    data: str | None
    """The ``data`` lines joined by LF; None when the block had no ``data`` line (no event)."""
    event: str = ""
    """The ``event`` field; empty means the default type, ``message``."""
    id: str | None = None
    """The ``id`` field of this block, when it had one (without NUL)."""
    retry: int | None = None
    """The ``retry`` field of this block, when it had an all-digit one."""
    comment: bool = False
    """True for a comment line between events (a keep-alive), which carries nothing else."""


class SseReader:
    """An incremental event-stream reader: feed it bytes as they come, take the events out."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._partial: list[str] = []
        self._partial_len = 0
        self._skip_lf = False
        self._data: list[str] = []
        self._size = 0
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """The events that ``chunk`` completes; :class:`SseTooLong` past the limit."""
        text = self._decoder.decode(chunk)
        if self._skip_lf and text:
            self._skip_lf = False
            if text[0] == "\n":
                text = text[1:]
        if "\r" not in text and "\n" not in text:
            if text:
                self._partial.append(text)
                self._partial_len += len(text)
                self._check(self._partial_len)
            return []
        if self._partial:
            text = "".join(self._partial) + text
            self._partial, self._partial_len = [], 0
        out: list[SseEvent] = []
        pos = 0
        for end in _LINE_END.finditer(text):
            self._line(text[pos : end.start()], out)
            pos = end.end()
        if pos == len(text) and text.endswith("\r"):
            self._skip_lf = True  # a CRLF cut between two chunks is one line end
        if pos < len(text):
            self._partial, self._partial_len = [text[pos:]], len(text) - pos
            self._check(self._partial_len)
        return out

    @property
    def cut(self) -> bool:
        """Whether what was fed so far ends inside an event that has data, or inside a line."""
        return bool(self._data or self._partial)

    def _check(self, pending: int) -> None:
        if self._size + pending > self.limit:
            raise SseTooLong(f"an SSE event is longer than {self.limit:,} characters")

    def _line(self, line: str, out: list[SseEvent]) -> None:
        if not line:
            self._dispatch(out)
            return
        if line[0] == ":":
            if not self._data and self._id is None and self._retry is None and not self._event:
                out.append(SseEvent(None, comment=True))
            return
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._size += len(value) + 1
            self._check(0)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)

    def _dispatch(self, out: list[SseEvent]) -> None:
        if self._data:
            out.append(SseEvent("\n".join(self._data), self._event, self._id, self._retry))
        elif self._id is not None or self._retry is not None:
            out.append(SseEvent(None, id=self._id, retry=self._retry))
        self._data, self._size, self._event = [], 0, ""
        self._id = self._retry = None


async def read_events(chunks: AsyncIterator[bytes], limit: int) -> AsyncIterator[SseEvent]:
    """The events of an event stream, as they complete.

    An event the stream ends inside is dropped, as the standard says, and :class:`SseCut`
    raised after the last event, so that whoever relays the stream can say so (a client that
    reads differently might have read it).
    """
    reader = SseReader(limit)
    async for chunk in chunks:
        for event in reader.feed(chunk):
            yield event
    if reader.cut:
        raise SseCut("the stream ended inside an event; the event was dropped")


def encode_event(
    data: bytes | None, event: str = "", id: str | None = None, retry: int | None = None
) -> bytes:
    """One event in the form every reader agrees on: LF line ends, ``name: value`` lines.

    ``data`` (UTF-8) is written one ``data:`` line per LF-separated part, so that a reader joins
    it back to the same text. Raises :class:`ValueError` for data or fields with a CR, which no
    event can carry.
    """
    parts: list[bytes] = []
    for name, value in (("event", event or None), ("id", id)):
        if value is not None:
            if "\r" in value or "\n" in value:
                raise ValueError(f"an SSE {name} field cannot hold a line break")
            parts.append(f"{name}: {value}\n".encode())
    if retry is not None:
        parts.append(f"retry: {retry}\n".encode())
    if data is not None:
        if b"\r" in data:
            raise ValueError("SSE data cannot hold a CR")
        parts.extend(b"data: " + line + b"\n" for line in data.split(b"\n"))
    elif not parts:
        return b":\n"
    parts.append(b"\n")
    return b"".join(parts)


__all__ = ["SseCut", "SseEvent", "SseReader", "SseTooLong", "encode_event", "read_events"]
