"""Reading a query as a server does: form decoding, its name/value pairs, and one more round
of percent-decoding for a value that was encoded twice."""

from __future__ import annotations

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
    replaced; a '%' not followed by two hex digits stays as it is."""
    if text.isascii():
        found = _unescaped_ascii(text)
        if found is not None:
            return found
    parts = text.encode("utf-8", "surrogatepass").split(b"%")
    out = [parts[0]]
    byte_of = _BYTE_OF.get
    for part in parts[1:]:
        byte = byte_of(part[:2])
        if byte is None:
            out += (b"%", part)
        else:
            out += (byte, part[2:])
    return b"".join(out).decode("utf-8", "replace")


def _unescaped_ascii(text: str) -> str | None:
    """ASCII ``text`` percent-decoded when every escape in it is of an ASCII byte, else None
    (the bytes of the others may form a UTF-8 sequence together)."""
    parts = text.split("%")
    out = [parts[0]]
    char_of = _ASCII_OF.get
    for part in parts[1:]:
        char = char_of(part[:2])
        if char is not None:
            out += (char, part[2:])
        elif part[:2].encode("ascii") in _BYTE_OF:
            return None
        else:
            out += ("%", part)
    return "".join(out)
