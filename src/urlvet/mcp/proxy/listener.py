"""Who may talk to the HTTP proxy: its listening address, ``Origin``, ``Host`` and bearer token.

The proxy is a server in its own right, and the one a web page would aim at: a page the user
opens can make the browser POST to ``http://127.0.0.1:PORT/mcp`` (DNS rebinding makes even a
page on another name look same-origin). So, as the Streamable HTTP transport asks of servers:

- every request with an ``Origin`` header is refused with 403 unless the origin is on this
  computer (``localhost``, ``127.0.0.1``, ``[::1]``, any port) or allowed by ``--allow-origin``;
  requests without one (MCP clients are not browsers) pass;
- every request's ``Host`` must name this computer, the listening address or an
  ``--allow-host`` value (a rebound name fails here even without ``Origin``);
- the proxy listens on loopback unless ``--allow-remote`` is given together with a bearer token,
  and with a token every request must carry ``Authorization: Bearer TOKEN`` (else 401). The
  token is the proxy's: it is never forwarded to the upstream server.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from urlvet.mcp.proxy.stdio import ProxyError

TOKEN_ENV = "URLVET_PROXY_TOKEN"  # noqa: S105 (the variable's name, not a token)
"""The environment variable that holds the bearer token (kept out of the process list)."""
MIN_TOKEN = 16
"""The shortest bearer token accepted: a shorter one can be guessed."""
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
"""Host names that always mean this computer."""
_WILDCARDS = frozenset({"0.0.0.0", "::"})  # noqa: S104 (compared with, never bound)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an IP literal, brackets allowed) is this computer only."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_only(value: str) -> str:
    """The host of a ``Host`` header or an origin's authority, lower-cased, without port."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request is refused: its HTTP status and the text the client and operator see."""

    status: int
    reason: str


@dataclass(frozen=True, slots=True)
class ListenerPolicy:
    """What the proxy's listener accepts; immutable, built once by :func:`listener_policy`."""

    hosts: frozenset[str]
    """Host names (without port) a request's ``Host`` may carry; empty accepts any."""
    origins: frozenset[str]
    """Origins (``scheme://host[:port]``) allowed besides this computer's."""
    token: str | None = None
    """The bearer token every request must carry, when one is set."""

    def refuse(self, headers: Mapping[str, str]) -> Refusal | None:
        """The refusal for a request with these headers, or None when it may pass."""
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            return Refusal(403, f"origin {origin!r} is not allowed (see --allow-origin)")
        host = _host_only(headers.get("host", ""))
        if self.hosts and host not in self.hosts:
            return Refusal(403, f"host {host!r} is not this proxy's (see --allow-host)")
        if self.token is not None:
            given = headers.get("authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                value.strip().encode(), self.token.encode()
            ):
                return Refusal(401, "this proxy needs its bearer token (Authorization: Bearer)")
        return None

    def _origin_allowed(self, origin: str) -> bool:
        value = origin.strip().lower().rstrip("/")
        if value in self.origins:
            return True
        scheme, sep, authority = value.partition("://")
        return bool(sep) and scheme in ("http", "https") and is_loopback(_host_only(authority))


def listener_policy(
    host: str,
    *,
    allow_remote: bool = False,
    token: str | None = None,
    allow_origins: Iterable[str] = (),
    allow_hosts: Iterable[str] = (),
) -> tuple[ListenerPolicy, list[str]]:
    """The policy for listening on ``host``, and the notes to print on stderr.

    Raises :class:`ProxyError` for a non-loopback address without ``--allow-remote`` and a
    token, and for a token shorter than :data:`MIN_TOKEN`.
    """
    notes: list[str] = []
    if token is not None and len(token) < MIN_TOKEN:
        raise ProxyError(f"the proxy's bearer token must be at least {MIN_TOKEN} characters")
    remote = not is_loopback(host)
    if remote and not (allow_remote and token):
        raise ProxyError(
            f"--listen {host}: not a loopback address; anyone who can reach it could use the "
            f"proxy. Give --allow-remote and a bearer token (--auth-token or {TOKEN_ENV}), "
            "or listen on 127.0.0.1"
        )
    hosts = {h.strip("[]").lower() for h in allow_hosts}
    if remote:
        notes.append(
            f"listening on {host}, which other computers can reach: every request must carry "
            "Authorization: Bearer <token>"
        )
        if host.strip("[]") in _WILDCARDS and not hosts:
            hosts = set()  # any name this computer answers to; the token guards it
        else:
            hosts |= LOOPBACK_NAMES | {host.strip("[]").lower()}
    else:
        hosts |= LOOPBACK_NAMES | {host.strip("[]").lower()}
    origins = frozenset(o.strip().lower().rstrip("/") for o in allow_origins)
    return ListenerPolicy(frozenset(hosts), origins, token), notes


__all__ = [
    "LOOPBACK_NAMES",
    "MIN_TOKEN",
    "TOKEN_ENV",
    "ListenerPolicy",
    "Refusal",
    "is_loopback",
    "listener_policy",
]
