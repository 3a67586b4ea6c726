"""Where the values of a JSON text lie, found without decoding it: batch items and a message's id.

A relay that changes one item of a batch must pass the others on exactly as the server wrote
them (``1.0E+2`` stays ``1.0E+2``), and an answer to a request must carry the request's id as
the server wrote it (``1.0`` stays ``1.0``): both need the byte span of a value, which
:mod:`json` does not report. This scanner finds spans only; whatever it finds is still decoded
and judged by the one wire parser before anything is relayed. Where the text is not JSON the
scanner says so (None) rather than guess.

:func:`object_members` also reads the start of a message that was cut off (an over-long line
keeps only its first bytes): the members it could read to their end, and no others.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

Span = tuple[int, int]
"""A value's ``(start, end)`` byte offsets in the text it was found in."""

WHITESPACE = b" \t\r\n"
"""JSON's whitespace (RFC 8259, section 2): nothing else may stand between tokens."""

ID_TEXT_LIMIT = 256
"""Bytes of an id urlvet repeats as written; a longer one is not repeated."""

_IN_STRING = re.compile(rb'["\\]')
_NESTED = re.compile(rb'["\[\]{}]')
_SCALAR = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_CLOSER = {ord("["): ord("]"), ord("{"): ord("}")}


def skip_whitespace(data: bytes, pos: int) -> int:
    """The first offset at or after ``pos`` that is not JSON whitespace (``len(data)`` at most)."""
    end = len(data)
    while pos < end and data[pos] in WHITESPACE:
        pos += 1
    return pos


def string_end(data: bytes, start: int) -> int | None:
    """The offset just past the JSON string opening at ``data[start]``, or None when cut off."""
    pos = start + 1
    while True:
        found = _IN_STRING.search(data, pos)
        if found is None:
            return None
        if found.group() == b'"':
            return found.end()
        pos = found.end() + 1  # the escaped character: \" and \\ are not the string's end


def _nested_end(data: bytes, start: int) -> int | None:
    stack = [_CLOSER[data[start]]]
    pos = start + 1
    while stack:
        found = _NESTED.search(data, pos)
        if found is None:
            return None
        char = data[found.start()]
        if char == ord('"'):
            after = string_end(data, found.start())
            if after is None:
                return None
            pos = after
            continue
        if char in _CLOSER:
            stack.append(_CLOSER[char])
        elif stack.pop() != char:
            return None  # "[}": not JSON, so no span can be trusted
        pos = found.end()
    return pos


def value_end(data: bytes, start: int) -> int | None:
    """The offset just past the JSON value starting at ``data[start]``, or None.

    None when the text there is no value or is cut off before the value ends. Objects and
    arrays are skipped by their brackets and strings (mismatched brackets give None); what lies
    inside is not checked: decode the span to know it is JSON.
    """
    if start >= len(data):
        return None
    first = data[start]
    if first == ord('"'):
        return string_end(data, start)
    if first in _CLOSER:
        return _nested_end(data, start)
    found = _SCALAR.match(data, start)
    if found is None or found.end() == len(data):
        return None  # a number at the very end of a cut-off text may go on
    return found.end()


def _sequence(
    data: bytes, start: int, closer: int, item: Callable[[int], tuple[int, Span] | None]
) -> tuple[int | None, list[Span]]:
    """Read the items of an array or object opening at ``data[start]``: (the offset past its
    closer or None where the text ends or breaks first, the items read to their end)."""
    spans: list[Span] = []
    pos = skip_whitespace(data, start + 1)
    if pos < len(data) and data[pos] == closer:
        return pos + 1, spans
    while True:
        read = item(pos)
        if read is None:
            return None, spans
        pos, span = read
        spans.append(span)
        pos = skip_whitespace(data, pos)
        if pos >= len(data):
            return None, spans
        if data[pos] == closer:
            return pos + 1, spans
        if data[pos] != ord(","):
            return None, spans
        pos = skip_whitespace(data, pos + 1)


def array_items(data: bytes) -> list[Span] | None:
    """The span of each item of the JSON array that is the whole of ``data``, or None.

    Whitespace may surround the array; anything else before or after it, a cut-off or
    broken array gives None.
    """
    start = skip_whitespace(data, 0)
    if start >= len(data) or data[start] != ord("["):
        return None

    def item(pos: int) -> tuple[int, Span] | None:
        end = value_end(data, pos)
        return None if end is None else (end, (pos, end))

    end, spans = _sequence(data, start, ord("]"), item)
    if end is None or skip_whitespace(data, end) != len(data):
        return None
    return spans


def object_members(data: bytes) -> dict[str, Span]:
    """The members of the JSON object at the start of ``data``: name -> the value's span.

    Names are decoded (``"\\u0069d"`` is ``id``, as every JSON parser reads it); of repeated
    names the last is kept, as :mod:`json` and JavaScript's ``JSON.parse`` keep it. The text
    may be cut off or break after some members: those read to their end are returned, the
    rest are not. Not an object: an empty dict.
    """
    return scan_object(data)[0]


def scan_object(data: bytes) -> tuple[dict[str, Span], tuple[str, int] | None]:
    """:func:`object_members`, and the member the text ends in (its name and where its value
    starts) when the text is cut off inside a member's value."""
    start = skip_whitespace(data, 0)
    members: dict[str, Span] = {}
    cut: list[tuple[str, int]] = []
    if start >= len(data) or data[start] != ord("{"):
        return members, None

    def member(pos: int) -> tuple[int, Span] | None:
        if pos >= len(data) or data[pos] != ord('"'):
            return None
        name_end = string_end(data, pos)
        if name_end is None:
            return None
        colon = skip_whitespace(data, name_end)
        if colon >= len(data) or data[colon] != ord(":"):
            return None
        try:
            name = json.loads(data[pos:name_end])
        except ValueError:
            return None
        value_start = skip_whitespace(data, colon + 1)
        end = value_end(data, value_start)
        if end is None:
            cut.append((name, value_start))
            return None
        members.pop(name, None)  # the last of repeated names is the one read
        members[name] = (value_start, end)
        return end, (value_start, end)

    _sequence(data, start, ord("}"), member)
    return members, (cut[0] if cut else None)


def member_text(data: bytes, path: Sequence[str]) -> bytes | None:
    """The text of the value at ``path`` (member names, outermost first) in the JSON object
    ``data``, or None. Where ``data`` is cut off inside that value, its start is returned."""
    for name in path:
        members, cut = scan_object(data)
        if name in members:
            start, end = members[name]
            data = data[start:end]
        elif cut is not None and cut[0] == name:
            data = data[cut[1] :]
        else:
            return None
    return data


def id_text(data: bytes, span: Span) -> str | None:
    """The id at ``span`` of ``data`` as written, when it can be repeated in an answer.

    A JSON number or string of at most :data:`ID_TEXT_LIMIT` bytes, returned exactly as
    written (``1.0`` stays ``1.0``); None for anything else (null, an object, a string that is
    not valid JSON or UTF-8).
    """
    raw = data[span[0] : span[1]]
    if len(raw) > ID_TEXT_LIMIT:
        return None
    if _NUMBER.fullmatch(raw) is None:
        if not raw.startswith(b'"'):
            return None
        try:
            json.loads(raw)
        except ValueError:
            return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


__all__ = [
    "ID_TEXT_LIMIT",
    "WHITESPACE",
    "Span",
    "array_items",
    "id_text",
    "member_text",
    "object_members",
    "scan_object",
    "skip_whitespace",
    "string_end",
    "value_end",
]
