"""The MCP server that asks for a URL, as the client knows it from its own configuration.

Never build a Server from what the server says about itself (its ``serverInfo``): a malicious
server can claim any name. The client knows which connection a request came in on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from urlvet.errors import InputError
from urlvet.memo import memo_size
from urlvet.url import HostKind, InvalidURL, ParsedURL, parse

_LOOPBACK_NAMES = ("localhost",)


@dataclass(frozen=True, slots=True)
class Server:
    """A configured MCP server: a name, and its URL for HTTP transports (None for stdio)."""

    name: str | None = None
    """The name the client's configuration gives the server."""
    url: str | None = None
    """The server's endpoint URL for HTTP transports; None for a stdio server."""
    parsed: ParsedURL | None = field(default=None, compare=False, repr=False)
    """The parsed endpoint URL (filled in from ``url`` when not given)."""

    def __post_init__(self) -> None:
        # A Server built by hand with only a URL must not pass for a local (stdio) server:
        # that would let a remote server send users to loopback http:// pages.
        if self.url is not None and self.parsed is None:
            object.__setattr__(self, "parsed", _parse_endpoint(self.url))

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.url is None else "http"

    @property
    def is_local(self) -> bool:
        """True for a stdio server or one whose endpoint is on a loopback address or name."""
        if self.parsed is None:
            return True
        return is_loopback_host(self.parsed)

    @property
    def host(self) -> str | None:
        """The endpoint's host (A-label), or None for stdio."""
        return self.parsed.host if self.parsed is not None else None

    @property
    def registrable_domain(self) -> str | None:
        """The endpoint's site, or None for stdio and IP endpoints."""
        return self.parsed.registrable_domain if self.parsed is not None else None

    @property
    def origin(self) -> str:
        """The endpoint's origin (``scheme://host[:port]``), or ``stdio``."""
        if self.parsed is None:
            return "stdio"
        p = self.parsed
        port = f":{p.port}" if p.port is not None else ""
        return (
            f"{p.scheme}://{p.host_for_display if p.host_kind is HostKind.IPV6 else p.host}{port}"
        )

    def label(self) -> str:
        """How to name the server to a person: its configured name and its origin."""
        if self.name:
            return f"{self.name} ({self.origin})"
        return self.origin


def is_loopback_host(url: ParsedURL) -> bool:
    """True when the URL's host is a loopback address or the name localhost (or *.localhost)."""
    if url.ip is not None:
        from urlvet.addresses import classify

        return classify(url.ip).effective.category == "loopback"
    host = url.host.rstrip(".").lower()
    return host in _LOOPBACK_NAMES or host.endswith(".localhost")


def as_server(value: Server | str | None, name: str | None = None) -> Server | None:
    """Turn ``"stdio"``, a server URL, or a Server into a Server (None stays None).

    Raises :class:`InputError` when the server URL is not one a client could connect to.
    """
    if value is None or isinstance(value, Server):
        return value
    return _server_from_text(value, name)


@lru_cache(maxsize=memo_size(256))
def _server_from_text(value: str, name: str | None) -> Server:
    # Servers are few and asked about again and again: parse each spelling once.
    text = value.strip()
    if text.lower() == "stdio":
        return Server(name=name, url=None)
    parsed = _parse_endpoint(text)
    return Server(name=name, url=parsed.href, parsed=parsed)


def _parse_endpoint(text: str) -> ParsedURL:
    """The parsed endpoint URL of an HTTP server. Raises InputError when it is not one."""
    try:
        parsed = parse(text.strip())
    except InvalidURL as exc:
        raise InputError(f"server URL {text!r} is not valid: {exc}") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise InputError(f"server URL {text!r} must be an http(s) URL with a host, or 'stdio'")
    return parsed
