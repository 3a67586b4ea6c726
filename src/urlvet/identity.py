"""Identity providers' authorization endpoints, read from ``data/identity_providers.txt``
(each from the provider's published OpenID configuration or OAuth documentation).

A URL on one of them is a sign-in page whose grant goes to its ``redirect_uri``. Pure and
offline.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from urlvet.url import HostKind, ParsedURL

__all__ = [
    "authorization_endpoint",
    "is_identity_provider_host",
    "may_be_identity_provider",
    "parse_identity_providers",
]

_DATA_FILE = "identity_providers.txt"


def parse_identity_providers(text: str) -> dict[str, tuple[str, ...]]:
    """``host`` or ``*.domain`` -> the path prefixes of its authorization endpoints."""
    table: dict[str, list[str]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        host, prefix, _source = (part.strip() for part in line.split("|", 2))
        table.setdefault(host.lower(), []).append(prefix)
    return {host: tuple(prefixes) for host, prefixes in table.items()}


@cache
def _table() -> dict[str, tuple[str, ...]]:
    text = resources.files("urlvet.data").joinpath(_DATA_FILE).read_text(encoding="utf-8")
    return parse_identity_providers(text)


@cache
def _sites() -> frozenset[str]:
    from urlvet.url import site_of

    return frozenset(site_of(h.removeprefix("*."))[0] or h for h in _table())


def may_be_identity_provider(registrable_domain: str | None) -> bool:
    """False when no listed authorization endpoint is on a site of this registrable domain."""
    return bool(registrable_domain) and registrable_domain in _sites()


def _prefixes(host: str) -> tuple[str, ...] | None:
    table = _table()
    found = table.get(host)
    if found is not None:
        return found
    dot = host.find(".")
    while dot >= 0:
        found = table.get("*." + host[dot + 1 :])
        if found is not None:
            return found
        dot = host.find(".", dot + 1)
    return None


def is_identity_provider_host(url: ParsedURL) -> bool:
    """True when ``url``'s host has an authorization endpoint listed."""
    if url.host_kind is not HostKind.DOMAIN:
        return False
    return _prefixes(url.host.rstrip(".").lower()) is not None


def authorization_endpoint(url: ParsedURL) -> str | None:
    """The listed entry (host and path prefix) when ``url`` is on an identity provider's
    authorization endpoint, else None."""
    if url.host_kind is not HostKind.DOMAIN or url.scheme != "https":
        return None
    host = url.host.rstrip(".").lower()
    prefixes = _prefixes(host)
    if prefixes is None:
        return None
    for prefix in prefixes:
        if url.pathname.startswith(prefix):
            return host + prefix
    return None
