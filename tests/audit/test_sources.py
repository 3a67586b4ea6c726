"""Reading sources: lines read a block at a time are the lines read one by one, wherever the
blocks break them, whatever the bytes (line breaks of both kinds, a byte order mark, invalid
UTF-8, NUL bytes, lines over the limit, a last line without a break), from a file or from a
pipe that hands over a few bytes at a time."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from urlvet.audit import sources
from urlvet.audit.options import AuditOptions
from urlvet.audit.sources import Diagnostic, Meter, Reader

_BOM = b"\xef\xbb\xbf"


class _Trickle(io.RawIOBase):
    """A raw stream that hands over at most ``step`` bytes a read, as a pipe may."""

    def __init__(self, data: bytes, step: int) -> None:
        self._data = memoryview(data)
        self._step = step

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self._step, len(self._data))
        buffer[:n] = self._data[:n]
        self._data = self._data[n:]
        return n


def _one_by_one(data: bytes, limit: int) -> list[tuple[int, str] | Diagnostic]:
    """The lines as read one at a time (the byte order mark dropped from the start)."""
    data = data.removeprefix(_BOM)
    readline = io.BufferedReader(io.BytesIO(data)).readline
    return list(Reader._each_line(readline, "in", limit, 0))


def _by_blocks(data: bytes, limit: int, step: int) -> tuple[list[Any], Reader]:
    reader = Reader(AuditOptions(), Meter())
    stream = io.BufferedReader(_Trickle(data, step), 1 << 16)
    items: Iterator[Any] = reader._lines(stream, "in", limit)  # type: ignore[arg-type]
    return list(items), reader


_PIECES = st.sampled_from(
    [
        b"https://example.com/a?b=1",
        b"x",
        b"\n",
        b"\r\n",
        b"\r",
        b"\xc3\xa9",  # é: a character of two bytes
        b"\xe2\x80\xa8",  # a line separator in Unicode, no break here
        b"\xff",  # never UTF-8
        b"\xc3",  # the first byte of a character, cut
        b"\x00",
        b"a" * 70,  # over the smallest limit
        _BOM,
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(_PIECES, max_size=40),
    limit=st.sampled_from([64, 100, 1 << 20]),
    block=st.sampled_from([1, 2, 5, 16, 64, 1 << 16]),
    step=st.sampled_from([1, 3, 50, 1 << 16]),
)
def test_lines_read_by_blocks_are_the_lines_read_one_by_one(
    pieces: list[bytes], limit: int, block: int, step: int
) -> None:
    data = b"".join(pieces)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sources, "LINES_BLOCK", block)
        got, reader = _by_blocks(data, limit, step)
    want = _one_by_one(data, limit)
    assert got == want
    assert reader.lines == len(want)  # every line counted, whatever it held


def test_a_line_over_the_limit_is_read_past_without_being_held() -> None:
    data = b"https://a.example/\n" + b"b" * 300_000 + b"\r\nhttps://c.example/\n"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sources, "LINES_BLOCK", 4096)
        got, _ = _by_blocks(data, 1000, 1 << 16)
    assert got[0] == (1, "https://a.example/")
    assert isinstance(got[1], Diagnostic)
    assert (got[1].code, got[1].line) == ("line-too-long", 2)
    assert "300,000 bytes" in got[1].message
    assert got[2] == (3, "https://c.example/")


def test_a_byte_order_mark_counts_only_at_the_start() -> None:
    data = _BOM + b"https://a.example/\n" + _BOM + b"https://b.example/\n"
    got, _ = _by_blocks(data, 1 << 20, 1)
    assert got == [(1, "https://a.example/"), (2, "\ufeffhttps://b.example/")]
