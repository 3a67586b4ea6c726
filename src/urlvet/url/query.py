"""Reading a query as a server does: form decoding, its name/value pairs, and one more round
of percent-decoding for a value that was encoded twice."""

from __future__ import annotations

import re

_ESCAPE_TEXT = re.compile(r"%([0-9A-Fa-f]{2})")
_ESCAPE_BYTES = re.compile(rb"%([0-9A-Fa-f]{2})")
_HEX_DIGITS = "0123456789abcdefABCDEF"
_BYTE_OF = {
    (a + b).encode("ascii"): bytes((int(a + b, 16),)) for a in _HEX_DIGITS for b in _HEX_DIGITS
}
"""Every escape's two hex digits (in either case) and the byte they stand for."""
_ASCII_OF = {
    a + b: chr(int(a + b, 16)) for a in _HEX_DIGITS for b in _HEX_DIGITS if a in "01234567"
}
"""The two hex digits of every escape of an ASCII byte and its character: text and escapes
all ASCII decode as text, without a round trip through bytes."""


def form_decode(text: str) -> str:
    """application/x-www-form-urlencoded decoding (URL Standard): '+' is a space, then
    percent-decoding of the UTF-8 bytes, invalid sequences replaced."""
    if "+" in text:
        text = text.replace("+", " ")
    if "%" in text:
        return _unescaped(text)
    if text.isascii():
        return text
    # No escape, but a lone surrogate is still replaced, as in the bytes it stands for.
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def query_params(search: str) -> list[tuple[str, str]]:
    """The name/value pairs of a query (with or without its '?'), decoded as a server
    decodes a form-encoded query."""
    out = []
    for part in search.removeprefix("?").split("&"):
        if part:
            key, _, value = part.partition("=")
            out.append((form_decode(key), form_decode(value)))
    return out


def query_values(search: str, name: str) -> list[str]:
    """The values of every ``name`` parameter of a query; names are decoded too, so
    ``redirect%5Furi`` counts as ``redirect_uri``."""
    if not search or (name not in search and "%" not in search):
        return []  # without the name or any escape, no parameter can decode to it
    return [value for key, value in query_params(search) if key == name]


def percent_decode(text: str) -> str:
    """Percent-decoding of the UTF-8 bytes of ``text`` ('+' stays a '+'), invalid sequences
    replaced: one more round of decoding for a value that was encoded twice."""
    if "%" not in text:
        return text
    return _unescaped(text)


def _unescaped(text: str) -> str:
    """``text`` (which holds a '%') percent-decoded as UTF-8 bytes, invalid sequences
    replaced; a '%' not followed by two hex digits stays as it is.

    The escapes are found by one split in C (a run of lone '%' costs nothing in Python), and
    text whose escapes are all of ASCII bytes is decoded as text, without a round trip
    through bytes."""
    if text.isascii():
        pieces = _ESCAPE_TEXT.split(text)
        try:
            pieces[1::2] = [_ASCII_OF[digits] for digits in pieces[1::2]]
        except KeyError:
            pass  # an escape of a byte past ASCII: it may be part of a UTF-8 sequence
        else:
            return "".join(pieces)
    raw = _ESCAPE_BYTES.split(text.encode("utf-8", "surrogatepass"))
    raw[1::2] = [_BYTE_OF[digits] for digits in raw[1::2]]
    return b"".join(raw).decode("utf-8", "replace")
