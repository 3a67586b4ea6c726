"""The lines ``urlvet hook`` reads: a chunk at a time, never more than one bounded line held.

A co-process that read a whole line before checking its length would hold whatever a server
sends (a 400 MB line took 878 MB). :func:`read_lines` keeps at most ``limit`` bytes of a line
and one chunk: a longer line is handed on as an :class:`OverlongLine`, its first ``limit``
bytes and its length, so that its id can still be read from its start and the request
declined.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from urlvet.mcp.wire import MAX_LINE

READ_CHUNK = 1 << 16
"""Bytes asked of the stream at a time."""


@dataclass(frozen=True, slots=True)
class OverlongLine:
    """A line longer than the reader's limit: what the reader kept of it."""

    head: bytes
    """Its first bytes, as many as the limit."""
    length: int
    """How long the line was in bytes, its newline included when it had one."""


def read_lines(stream: BinaryIO, limit: int = MAX_LINE) -> Iterator[bytes | OverlongLine]:
    """Each line of ``stream`` (its newline kept), or an :class:`OverlongLine` when it is
    longer than ``limit`` bytes. Reads a chunk at a time, and returns each line as soon as
    its newline has been read (``read1`` where the stream has it), so a co-process is never
    kept waiting for more input than one line."""
    read: Callable[[int], bytes] = getattr(stream, "read1", None) or stream.read
    held = bytearray()
    head: bytes | None = None  # set while the rest of an over-long line is skipped
    skipped = 0
    while chunk := read(READ_CHUNK):
        start = 0
        while start < len(chunk):
            newline = chunk.find(b"\n", start)
            end = len(chunk) if newline < 0 else newline + 1
            if head is not None:
                skipped += end - start
            else:
                held += memoryview(chunk)[start:end]
                if len(held) > limit:
                    head, skipped = bytes(held[:limit]), len(held)
                    held.clear()
            if newline >= 0:
                if head is not None:
                    yield OverlongLine(head, skipped)
                    head = None
                else:
                    yield bytes(held)
                    held.clear()
            start = end
    if head is not None:
        yield OverlongLine(head, skipped)
    elif held:
        yield bytes(held)


__all__ = ["READ_CHUNK", "OverlongLine", "read_lines"]
