"""Reading a query as a server does: form decoding, its name/value pairs, and one more round
of percent-decoding for a value that was encoded twice."""

from __future__ import annotations

import re

_PERCENT = re.compile(rb"%([0-9A-Fa-f]{2})")


def form_decode(text: str) -> str:
    """application/x-www-form-urlencoded decoding (URL Standard): '+' is a space, then
    percent-decoding of the UTF-8 bytes, invalid sequences replaced."""
    raw = text.replace("+", " ").encode("utf-8", "surrogatepass")
    if b"%" in raw:
        raw = _PERCENT.sub(lambda m: bytes((int(m.group(1), 16),)), raw)
    return raw.decode("utf-8", "replace")


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
    raw = _PERCENT.sub(
        lambda m: bytes((int(m.group(1), 16),)), text.encode("utf-8", "surrogatepass")
    )
    return raw.decode("utf-8", "replace")
