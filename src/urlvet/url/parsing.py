"""Parse a URL exactly as a browser will: the WHATWG parse through ada-url and the
:class:`ParsedURL` it builds.

Parsing is ada-url's implementation of the WHATWG URL Standard, the algorithm browsers use.
Python's ``urllib`` never decides the host here: it disagrees with browsers on backslashes,
userinfo, IPv4 shorthand and more, and a check that looks at another host than the one the
browser opens is worthless.

:func:`normalize_domain` lives here rather than beside the host's facts: it is this parse run
on a bare domain, and the parse itself reads those facts (:mod:`~urlvet.url.hosts`).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any

from ada_url import URL

try:  # ada-url's cffi binding: one C call per component, without the URL class's overhead.
    from ada_url._ada_wrapper import ffi as _ffi
    from ada_url._ada_wrapper import lib as _lib
except ImportError:  # pragma: no cover - a future ada-url that moves its binding
    _lib = None

from urlvet.errors import InputError
from urlvet.url.hosts import MAX_DOMAIN_LENGTH, _domain_facts

SPECIAL_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp", "file"})
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}


class HostKind(str, Enum):
    """What the host of a parsed URL is."""

    DOMAIN = "domain"
    IPV4 = "ipv4"
    IPV6 = "ipv6"
    OPAQUE = "opaque"
    """A host of a non-special scheme, which browsers do not resolve as a web host."""
    EMPTY = "empty"
    """No host at all (``javascript:``, ``data:``, ``file:///``)."""


class InvalidURL(InputError):
    """The URL is one a browser refuses to open."""


@dataclass(frozen=True, slots=True)
class ParsedURL:
    """A URL as a browser sees it. Every field is derived from the WHATWG parse."""

    raw: str
    """The input exactly as given."""
    href: str
    """The normalised URL: what the browser opens and what a consent screen must show."""
    scheme: str
    """The scheme in lower case, without the colon."""
    username: str
    """The percent-encoded username, or ''."""
    password: str
    """The percent-encoded password, or ''."""
    host: str
    """The host in A-label (punycode) form; IPv6 without brackets; '' when there is none."""
    host_unicode: str
    """The host with each valid A-label decoded to Unicode (equal to host otherwise)."""
    host_kind: HostKind
    """domain, ipv4, ipv6, opaque or empty."""
    port: int | None
    """The explicit port, or None when the URL uses the scheme's default."""
    pathname: str
    """The path as the browser will request it."""
    search: str
    """The query with its leading '?', or ''."""
    hash: str
    """The fragment with its leading '#', or ''."""
    registrable_domain: str | None
    """The site: public suffix plus one label, A-label, no trailing dot; None for IPs etc."""
    public_suffix: str | None
    """The public suffix of the host (ICANN or private section), or None."""
    suffix_is_private: bool
    """True when the public suffix comes from the PSL's private section (github.io...)."""
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None
    """The address when the host is an IP literal."""

    @property
    def has_userinfo(self) -> bool:
        """True when the URL carries a username or a password."""
        return bool(self.username or self.password)

    @property
    def is_special(self) -> bool:
        """True for the schemes the WHATWG standard treats as special (http, https, ...)."""
        return self.scheme in SPECIAL_SCHEMES

    @property
    def effective_port(self) -> int | None:
        """The port the browser will connect to."""
        return self.port if self.port is not None else _DEFAULT_PORTS.get(self.scheme)

    @property
    def labels(self) -> tuple[str, ...]:
        """The host's labels (A-label form) without a trailing empty label."""
        if self.host_kind is not HostKind.DOMAIN:
            return ()
        return tuple(self.host.rstrip(".").split("."))

    @property
    def host_for_display(self) -> str:
        """The host as a person would read it (Unicode), bracketed when IPv6."""
        if self.host_kind is HostKind.IPV6:
            return f"[{self.host}]"
        return self.host_unicode


# The parser writes an IP address host in its one serialisation (dotted decimal; RFC 5952
# IPv6): read from its four or sixteen bytes, the address is the same as from its text, at a
# fifth of the cost of ipaddress's own text parser (a test compares the two).
_IPV4 = ipaddress.IPv4Address
_IPV6 = ipaddress.IPv6Address
_INET_ATON = socket.inet_aton
_INET_PTON = socket.inet_pton


def parse(raw: str, base: str | None = None) -> ParsedURL:
    """Parse ``raw`` as a browser's address bar would, or relative to ``base`` when given.

    Raises :class:`InvalidURL` when a browser would refuse the URL.
    """
    if not isinstance(raw, str):
        raise InvalidURL(f"a URL must be text, not {type(raw).__name__}")
    if base is not None and not isinstance(base, str):
        raise InvalidURL(f"a base URL must be text, not {type(base).__name__}")
    parts = _components(raw, base)
    if parts is None:
        raise InvalidURL(_refusal_reason(raw))
    (
        href,
        protocol,
        hostname,
        host_type,
        port_text,
        username,
        password,
        pathname,
        search,
        fragment,
    ) = parts

    scheme = protocol[:-1].lower()
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None
    if host_type == 1:
        kind = HostKind.IPV4
        ip = _IPV4(_INET_ATON(hostname))
        host = hostname
    elif host_type == 2:
        kind = HostKind.IPV6
        host = hostname.strip("[]")
        ip = _IPV6(_INET_PTON(socket.AF_INET6, host))
    elif not hostname:
        kind = HostKind.EMPTY
        host = ""
    elif scheme in SPECIAL_SCHEMES:
        kind = HostKind.DOMAIN
        host = hostname
    else:
        kind = HostKind.OPAQUE
        host = hostname

    registrable = suffix = None
    private = False
    host_unicode = host
    if kind is HostKind.DOMAIN:
        host_unicode, registrable, suffix, private = _domain_facts(host)

    return new_parsed(
        raw,
        href,
        scheme,
        username,
        password,
        host,
        host_unicode,
        kind,
        int(port_text) if port_text else None,
        pathname,
        search,
        fragment,
        registrable,
        suffix,
        private,
        ip,
    )


# A frozen dataclass's __init__ sets each of the sixteen fields through object.__setattr__, a
# sizeable share of parsing a URL; the slots' own descriptors set them directly. The fields
# are taken from the class, in order, so that the two cannot drift apart (a test builds both
# ways and compares).
# Unrolled rather than a loop over the setters, half the cost again; unpacking them here
# fails at import should the class gain or lose a field.
_SLOT_SETTERS = tuple(ParsedURL.__dict__[f.name].__set__ for f in fields(ParsedURL))
(_S0, _S1, _S2, _S3, _S4, _S5, _S6, _S7, _S8, _S9, _S10, _S11, _S12, _S13, _S14, _S15) = (
    _SLOT_SETTERS
)


def new_parsed(
    v0: Any,
    v1: Any,
    v2: Any,
    v3: Any,
    v4: Any,
    v5: Any,
    v6: Any,
    v7: Any,
    v8: Any,
    v9: Any,
    v10: Any,
    v11: Any,
    v12: Any,
    v13: Any,
    v14: Any,
    v15: Any,
) -> ParsedURL:
    """``ParsedURL(v0, ..., v15)``, the fields in the class's order, without the frozen
    dataclass's ``__init__`` (which sets each field with object.__setattr__): for the
    parser and the engine, which build one for every URL and every new host."""
    url: ParsedURL = object.__new__(ParsedURL)
    _S0(url, v0)
    _S1(url, v1)
    _S2(url, v2)
    _S3(url, v3)
    _S4(url, v4)
    _S5(url, v5)
    _S6(url, v6)
    _S7(url, v7)
    _S8(url, v8)
    _S9(url, v9)
    _S10(url, v10)
    _S11(url, v11)
    _S12(url, v12)
    _S13(url, v13)
    _S14(url, v14)
    _S15(url, v15)
    return url


_Components = tuple[str, str, str, int, str, str, str, str, str, str]
_OMITTED = 0xFFFFFFFF
"""ada-url's offset for a part the URL does not have."""


def _components(raw: str, base: str | None = None) -> _Components | None:
    """The WHATWG components of ``raw`` (against ``base``), or None when a browser refuses it."""
    try:
        data = raw.encode("utf-8")
        base_data = base.encode("utf-8") if base is not None else None
    except UnicodeEncodeError:
        return None
    if _lib is None:  # pragma: no cover
        return _class_components(raw, base)
    if base_data is None:
        obj = _lib.ada_parse(data, len(data))
    else:
        obj = _lib.ada_parse_with_base(data, len(data), base_data, len(base_data))
    try:
        if not _lib.ada_is_valid(obj):
            return None
        href = _text(_lib.ada_get_href(obj))
        host_type = int(_lib.ada_get_host_type(obj))
        # Where each part starts and ends in the serialised URL: one C call for all of them,
        # where a getter per part costs a call and a copy each.
        at = _lib.ada_get_components(obj)
        protocol_end, host_start, host_end, port = (
            at.protocol_end,
            at.host_start,
            at.host_end,
            at.port,
        )
        path_at, query_at, fragment_at = at.pathname_start, at.search_start, at.hash_start
        # Most URLs carry no credentials: one has_* call saves two getters and their copies
        # (which give "" when there are none).
        if _lib.ada_has_credentials(obj):
            username = _text(_lib.ada_get_username(obj))
            password = _text(_lib.ada_get_password(obj))
            host_start += 1  # past the "@" that ends them
        else:
            username = password = ""
    finally:
        _lib.ada_free(obj)
    # An absent part's offset is ada's "omitted" (the largest 32-bit value); a bare "?" or "#"
    # reads as "" as its getter gives it.
    end = len(href)
    if fragment_at < end:
        fragment = href[fragment_at:] if fragment_at < end - 1 else ""
        end = fragment_at
    else:
        fragment = ""
    if query_at < end:
        search = href[query_at:end] if query_at < end - 1 else ""
        end = query_at
    else:
        search = ""
    return (
        href,
        href[:protocol_end],
        href[host_start:host_end],
        host_type,
        "" if port == _OMITTED else str(port),
        username,
        password,
        href[path_at:end],
        search,
        fragment,
    )


def _class_components(raw: str, base: str | None) -> _Components | None:
    """:func:`_components` read through ada-url's ``URL`` class, for an ada-url that moves the
    cffi binding :func:`_components` calls: the same parts, at the class's cost per URL."""
    try:
        u = URL(raw, base=base)
        return (
            u.href,
            u.protocol,
            u.hostname,
            int(u.host_type),
            u.port,
            u.username,
            u.password,
            u.pathname,
            u.search,
            u.hash,
        )
    except (ValueError, UnicodeError):
        return None


def _text(value: Any) -> str:
    length = value.length
    return _ffi.unpack(value.data, length).decode("utf-8") if length else ""


def normalize_domain(text: str) -> str:
    """A domain as a browser spells it: lower case, A-labels, no trailing dot.

    For domains in policies. Raises ValueError when ``text`` is not a domain a browser
    would accept as a host (IP addresses included: they are not domains).
    """
    value = text.strip().rstrip(".")
    if not value or any(c in value for c in "/:@?#[]\\ \t\n\r"):
        raise ValueError(f"{text!r} is not a domain name")
    try:
        url = parse(f"https://{value}/")
    except InvalidURL as exc:
        raise ValueError(f"{text!r} is not a valid domain name: {exc}") from None
    if url.host_kind is not HostKind.DOMAIN:
        raise ValueError(f"{text!r} is an IP address, not a domain name")
    host = url.host.rstrip(".")
    if len(host) > MAX_DOMAIN_LENGTH:
        raise ValueError(
            f"{text[:40]!r}... is {len(host)} characters long in A-label form: a DNS name has "
            f"at most {MAX_DOMAIN_LENGTH}"
        )
    return host


def _refusal_reason(raw: str) -> str:
    """A best-effort, plain-language reason why a browser refuses ``raw``."""
    stripped = raw.strip(
        "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f"
        "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "
    )
    if not stripped:
        return "the URL is empty"
    if ":" not in stripped:
        return "the URL has no scheme (a browser needs an absolute URL here)"
    if "\x00" in raw:
        return "the URL contains a NUL byte in a place a browser refuses"
    if any(0xD800 <= ord(c) <= 0xDFFF for c in raw):
        return "the URL contains an unpaired surrogate (invalid Unicode)"
    return "a browser would refuse this URL (invalid host, port or syntax)"
