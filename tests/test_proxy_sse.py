"""The proxy's event-stream reader against the HTML standard's event-stream interpretation.

The table holds the standard's own examples (HTML, "Server-sent events", 9.2.6) and the framing
that real clients read differently; the property test checks the reader against the standard's
algorithm written out plainly below (:func:`reference`), for generated streams cut anywhere.
"""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from urlvet.mcp.proxy.sse import SseReader, SseTooLong, encode_event

Reading = list[tuple[str, str, str]]
"""Dispatched events as (type, data, last event ID)."""


def reference(stream: bytes) -> Reading:
    """The standard's algorithm, as written: decode, split lines, process fields, dispatch."""
    text = stream.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = re.split(r"\r\n|\r|\n", text)
    lines.pop()  # the text after the last line end is no line: the stream ended inside it
    events: Reading = []
    data, kind, last_id = "", "", ""
    for line in lines:
        if line == "":
            if data == "":
                kind = ""
                continue
            events.append((kind or "message", data.removesuffix("\n"), last_id))
            data, kind = "", ""
            continue
        if line.startswith(":"):
            continue
        if ":" in line:
            name, value = line.split(":", 1)
            value = value.removeprefix(" ")
        else:
            name, value = line, ""
        if name == "event":
            kind = value
        elif name == "data":
            data += value + "\n"
        elif name == "id" and "\0" not in value:
            last_id = value
    return events


def read(stream: bytes, cuts: list[int] | None = None, limit: int = 1 << 20) -> Reading:
    """What SseReader dispatches for ``stream`` fed in pieces cut at ``cuts``."""
    reader = SseReader(limit)
    bounds = [0, *sorted(cuts or []), len(stream)]
    out: Reading = []
    last_id = ""
    for a, b in itertools.pairwise(bounds):
        for event in reader.feed(stream[a:b]):
            if event.id is not None:
                last_id = event.id
            if event.data is not None:
                out.append((event.event or "message", event.data, last_id))
    return out


TABLE: list[tuple[str, bytes, Reading]] = [
    (
        "standard: three data lines joined by LF",
        b"data: YHOO\ndata: +2\ndata: 10\n\n",
        [("message", "YHOO\n+2\n10", "")],
    ),
    (
        "standard: comment, id, id reset, two spaces",
        b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
        b"data:  third event\n\n",
        [
            ("message", "first event", "1"),
            ("message", "second event", ""),
            ("message", " third event", ""),
        ],
    ),
    (
        "standard: bare data fields, and an event the stream cuts",
        b"data\n\ndata\ndata\n\ndata:",
        [("message", "", ""), ("message", "\n", "")],
    ),
    (
        "standard: with or without the space",
        b"data:test\n\ndata: test\n\n",
        [("message", "test", "")] * 2,
    ),
    ("CR line ends", b'data: {"a":1}\r\r', [("message", '{"a":1}', "")]),
    ("CRLF line ends", b'data: {"a":1}\r\n\r\n', [("message", '{"a":1}', "")]),
    (
        "events split by CRLF CRLF",
        b"data: a\r\n\r\ndata: b\r\n\r\n",
        [("message", "a", ""), ("message", "b", "")],
    ),
    ("mixed line ends", b"data: a\rdata: b\ndata: c\r\n\n", [("message", "a\nb\nc", "")]),
    ("a leading BOM is dropped", b"\xef\xbb\xbfdata: x\n\n", [("message", "x", "")]),
    ("a second BOM is part of the field name", b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n", []),
    ("a BOM read as three characters is a field name", b"\xc3\xaf\xc2\xbb\xc2\xbfdata: x\n\n", []),
    ("an id with NUL is ignored", b"id: 7\n\nid: a\x00b\ndata: x\n\n", [("message", "x", "7")]),
    ("event type", b"event: ping\ndata: x\n\n", [("ping", "x", "")]),
    ("unknown fields and retry are no data", b"foo: bar\nretry: 10\n\n", []),
    ("invalid UTF-8 is replaced", b"data: a\xffb\n\n", [("message", "a\ufffdb", "")]),
    ("an unterminated last event is dropped", b"data: x\n", []),
    ("a lone CR ends the last line, not the event", b"data: x\r", []),
    ("field name is case-sensitive", b"Data: x\n\n", []),
]


@pytest.mark.parametrize(("stream", "expected"), [t[1:] for t in TABLE], ids=[t[0] for t in TABLE])
def test_reader_follows_the_standard(stream: bytes, expected: Reading) -> None:
    assert reference(stream) == expected
    for cut in range(len(stream) + 1):
        assert read(stream, [cut]) == expected, cut
    assert read(stream, list(range(1, len(stream)))) == expected


def test_retry_counts_only_all_digits() -> None:
    reader = SseReader(1000)
    got = reader.feed(b"retry: 25\n\nretry: 2x\n\nretry: \xc2\xb2\n\n")
    assert [e.retry for e in got] == [25]


def test_an_event_past_the_limit_ends_the_stream() -> None:
    reader = SseReader(100)
    reader.feed(b"data: " + b"x" * 60 + b"\n")
    with pytest.raises(SseTooLong):
        reader.feed(b"data: " + b"x" * 60 + b"\n")
    with pytest.raises(SseTooLong):
        SseReader(100).feed(b"data: " + b"y" * 200)


def test_written_events_read_back_as_written() -> None:
    data = b'{"a": "x\\ny"}\n  \n{"b": 2}'
    stream = encode_event(data, "message", "ev-1", 50) + encode_event(None) + encode_event(b"")
    assert read(stream) == [("message", data.decode(), "ev-1"), ("message", "", "ev-1")]
    assert reference(stream) == read(stream)
    with pytest.raises(ValueError, match="CR"):
        encode_event(b"a\rb")
    with pytest.raises(ValueError, match="line break"):
        encode_event(b"x", id="a\nb")


_text = st.lists(
    st.sampled_from([*'ab{}":, \t:\0é', "\ufeff", "data", "id", "event"]), max_size=8
).map("".join)
_line = st.one_of(
    st.tuples(st.sampled_from(["data", "id", "event", "retry", "foo", "", "Data"]), _text).map(
        lambda t: f"{t[0]}:{t[1]}"
    ),
    st.tuples(st.sampled_from(["data", "id"]), _text).map(lambda t: f"{t[0]}: {t[1]}"),
    st.sampled_from(["data", "id", "event", ": comment", ""]),
)
_ending = st.sampled_from(["\n", "\r", "\r\n"])


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    parts = ["\ufeff" if draw(st.booleans()) else ""]
    for line in draw(st.lists(_line, max_size=14)):
        parts.append(line + draw(_ending))
    if draw(st.booleans()):
        parts.append(draw(_line))
    raw = "".join(parts).encode("utf-8")
    if draw(st.booleans()):
        raw = raw.replace(b"b", b"\xff", 1)  # one invalid byte
    cuts = draw(st.lists(st.integers(0, len(raw)), max_size=6))
    return raw, cuts


@settings(max_examples=400, deadline=None)
@given(streams())
def test_reader_agrees_with_the_standard_however_the_stream_is_cut(
    case: tuple[bytes, list[int]],
) -> None:
    raw, cuts = case
    expected = reference(raw)
    assert read(raw, cuts) == expected
    # What the proxy writes again reads back the same, by the standard.
    reader = SseReader(1 << 20)
    written = b"".join(
        encode_event(e.data.encode() if e.data is not None else None, e.event, e.id, e.retry)
        for e in reader.feed(raw)
        if not e.comment
    )
    assert [(t, d) for t, d, _ in reference(written)] == [(t, d) for t, d, _ in expected]
