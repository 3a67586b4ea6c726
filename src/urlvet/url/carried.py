"""The URLs carried in a query: a parameter whose value, once decoded, is an absolute URL
(a sign-in callback, a redirect target, a click-tracker's destination), followed into the
URLs carried in those, within bounds."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from functools import lru_cache

from urlvet.memo import memo_size
from urlvet.url.parsing import InvalidURL, ParsedURL, parse
from urlvet.url.query import form_decode, percent_decode

MAX_CARRIED_DEPTH = 4
"""How deep :func:`carried_urls` follows URLs carried inside carried URLs."""
MAX_CARRIED = 16
"""How many carried URLs :func:`carried_urls` reads from one link, all depths together."""
MAX_CARRIED_LENGTH = 8192
"""Longer parameter values are not read as URLs (no browser-bound redirect needs more)."""
MAX_DECODE_ROUNDS = 3
"""Rounds of percent-decoding after the first (``%2525`` is three rounds from ``%``)."""

CARRIED_SCHEMES = frozenset({"http", "https", "javascript", "vbscript"})
"""Schemes a carried value may have to count as a URL: web pages, and the ones a page that
forwards with script (``location = next``) runs as script. Not ``data:``: browsers refuse to
open it at the top level when a page navigates there."""

_ENCODED_SCHEME = re.compile(r"^\s*[a-zA-Z][a-zA-Z0-9+.-]{0,30}%(?:25)*3[aA]")
_SCHEME = re.compile(r"^\s*([a-zA-Z][a-zA-Z0-9+.-]{0,30}):")
# "a1" and base64url of "http": the way bing.com's click-tracker (/ck/a) writes its target.
_BASE64_HTTP = re.compile(r"^a1(aHR0c[A-Za-z0-9_-]+)={0,2}$")
# A '%' that starts no escape of a byte other than '%', ':', a digit or a letter: one that
# starts no escape at all (it stays a '%') or an escape of one of those. What may_carry must
# see to let a value with escapes through (see its docstring); written as what follows a '%'
# that is harmless, so that the scan tries one look-ahead per '%'.
_MAY_DECODE_TO_URL = re.compile(
    r"%(?![0189A-Fa-f][0-9A-Fa-f]|2[0-46-9A-Fa-f]|3[B-Fb-f]|[46]0|[57][B-Fb-f])"
)


@dataclass(frozen=True, slots=True)
class CarriedURL:
    """An absolute URL written in a query parameter of a link (or of a URL carried in one)."""

    name: str
    """The parameter's name, decoded."""
    path: tuple[str, ...]
    """The names of the parameters from the link down to this one (``("continue", "next")``)."""
    value: str
    """The value fully decoded (percent-decoding repeated, base64 undone), as read as a URL."""
    target: ParsedURL
    """The value parsed as a browser would."""
    depth: int
    """1 for a parameter of the link itself, 2 for one of a URL carried there, and so on."""
    encoding: str
    """How the value was written: ``plain``, ``percent-encoded xN`` (N extra rounds), ``base64``."""


def carried_urls(url: ParsedURL) -> tuple[CarriedURL, ...]:
    """Every absolute URL carried in the query of ``url``, and in theirs, at any depth.

    A value counts when, after form decoding, up to :data:`MAX_DECODE_ROUNDS` more rounds of
    percent-decoding (a value encoded twice, ``https%253A%252F%252F``) or base64url after an
    ``a1`` prefix (bing.com's click-tracker), it is an absolute URL of a scheme in
    :data:`CARRIED_SCHEMES`. Bounded: :data:`MAX_CARRIED_DEPTH` levels, :data:`MAX_CARRIED`
    URLs, values up to :data:`MAX_CARRIED_LENGTH` characters. Breadth first, in query order.
    """
    if not _may_carry_query(url.search):
        return ()
    found: list[CarriedURL] = []
    queue: list[tuple[ParsedURL, tuple[str, ...]]] = [(url, ())]
    while queue and len(found) < MAX_CARRIED:
        holder, path = queue.pop(0)
        if path and not _may_carry_query(holder.search):  # the link's own: tested above
            continue
        for part in holder.search.removeprefix("?").split("&"):
            raw_name, _, raw_value = part.partition("=")
            # Decoded only when the raw value could hold a URL: most values cannot.
            if len(raw_value) > MAX_CARRIED_LENGTH or not may_carry(raw_value):
                continue
            if len(found) >= MAX_CARRIED:
                break
            kept = len(raw_name) + len(raw_value) <= CARRIED_PARAMETER_KEPT_LENGTH
            if kept and not path:
                # A parameter of the link itself: the item is the same for every link that
                # has the parameter (it holds nothing of the link), kept with its reading.
                item = _kept_first_item(raw_name, raw_value)
                if item is None:
                    continue
            else:
                read = (
                    _kept_carried_parameter(raw_name, raw_value)
                    if kept
                    else _carried_parameter(raw_name, raw_value)
                )
                if read is None:
                    continue
                name, text, encoding, target = read
                item = CarriedURL(name, (*path, name), text, target, len(path) + 1, encoding)
            found.append(item)
            if item.target.search and item.depth < MAX_CARRIED_DEPTH:
                queue.append((item.target, item.path))
    return tuple(found)


CARRIED_PARAMETERS_KEPT = 8192
"""Query parameters whose reading as a carried URL :func:`carried_urls` keeps: links repeat
their destination parameters (one sign-in callback for thousands of links), and decoding and
parsing the value is most of reading one."""
CARRIED_PARAMETER_KEPT_LENGTH = 1024
"""The longest parameter (name and raw value) whose reading is kept: a query of hostile
parameters of the longest length read would otherwise have the memo hold hundreds of
megabytes. Longer ones are read each time."""


def _carried_parameter(raw_name: str, raw_value: str) -> tuple[str, str, str, ParsedURL] | None:
    """The decoded name, the value as an absolute URL, how it was encoded and the URL parsed,
    of the query parameter ``raw_name=raw_value``; None when its value carries no URL of
    :data:`CARRIED_SCHEMES`. A pure function of the two strings (the parsed URL is immutable),
    memoised for parameters up to :data:`CARRIED_PARAMETER_KEPT_LENGTH` long."""
    decoded = _decode_carried(form_decode(raw_value))
    if decoded is None:
        return None
    text, encoding = decoded
    try:
        stripped = text.strip()
        target = parse(stripped)
    except InvalidURL:
        return None
    if target.scheme not in CARRIED_SCHEMES:
        return None
    return form_decode(raw_name), text, encoding, target


_kept_carried_parameter = lru_cache(maxsize=memo_size(CARRIED_PARAMETERS_KEPT))(_carried_parameter)


@lru_cache(maxsize=memo_size(CARRIED_PARAMETERS_KEPT))
def _kept_first_item(raw_name: str, raw_value: str) -> CarriedURL | None:
    """The item of :func:`carried_urls` for the parameter ``raw_name=raw_value`` of the link
    itself (depth 1), or None when it carries no URL: a pure function of the two strings
    (the item is immutable). Read with :func:`_carried_parameter`, not its kept twin: a
    parameter of the link is kept here once, with its reading, and a value met only once
    (a click-tracker's destination) costs one memo entry, not two."""
    read = _carried_parameter(raw_name, raw_value)
    if read is None:
        return None
    name, text, encoding, target = read
    return CarriedURL(name, (name,), text, target, 1, encoding)


def may_carry(search: str) -> bool:
    """False when no value in ``search`` (a query, or one parameter's raw value) can be read
    as a URL: a cheap test that rules out most queries and values before any decoding.

    Exact in one direction: a value is read as a URL only when, decoded, it holds a colon
    (``scheme:``), a '%' (a scheme encoded again, ``https%253A``) or base64 of "http"
    (``aHR0c``). Form decoding makes a colon only of ``:`` or ``%3A``, a '%' only of ``%25``
    or a '%' that starts no escape, and the letters of ``aHR0c`` only of themselves or of
    escapes of letters and digits. Without any of those in the raw text, no decoding (of
    any number of rounds) reaches a URL: ``utm_campaign=news%20letter``, ``a%2Fb``, ``caf%C3%A9``
    are never decoded."""
    return (
        ":" in search
        or "aHR0c" in search
        or ("%" in search and _MAY_DECODE_TO_URL.search(search) is not None)
    )


def _may_carry_query(search: str) -> bool:
    """:func:`may_carry` for a whole query, its scan bounded: a query longer than any value
    that is read is let through and tested value by value, where a value too long to read
    is passed over by its length alone."""
    if len(search) > MAX_CARRIED_LENGTH:
        return ":" in search or "%" in search or "aHR0c" in search
    return bool(search) and may_carry(search)


def _decode_carried(value: str) -> tuple[str, str] | None:
    """The value as an absolute URL and how it was encoded, or None when it is not one."""
    text = value.strip()
    if _SCHEME.match(text):
        return text, "plain"
    rounds = 0
    while rounds < MAX_DECODE_ROUNDS and _ENCODED_SCHEME.match(text):
        text = percent_decode(text).strip()
        rounds += 1
        if _SCHEME.match(text):
            return text, f"percent-encoded x{rounds + 1}"
    m = _BASE64_HTTP.match(value.strip())
    if m:
        data = m.group(1)
        try:
            decoded = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
        if _SCHEME.match(decoded):
            return decoded, "base64"
    return None
