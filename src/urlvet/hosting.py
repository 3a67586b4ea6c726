"""Shared hosting: platforms where anyone publishes a page under the platform's own name.

Two sources: the Public Suffix List's private section, which urlvet reads through tldextract
(a host under one of its suffixes is a tenant's site: ``ParsedURL.suffix_is_private``), and
``data/shared_hosting.txt`` for the platforms the list leaves out or where the tenant is named in
the path (an S3 or Cloud Storage bucket, an IPFS content id, a Google Site), each entry with its
source (the PSL, the LOTS project's catalogue of trusted sites abused by attackers, the
platform's documentation). Pure and offline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

from urlvet.url import HostKind, ParsedURL

__all__ = ["HostingKind", "SharedHosting", "may_be_shared_hosting", "shared_hosting"]

HostingKind = Literal["storage", "site"]
"""``storage``: files served as they are (buckets, IPFS gateways); ``site``: site builders,
app hosting and forms, where brands keep real pages too."""

_DATA_FILE = "shared_hosting.txt"
# Amazon S3's regional endpoints (s3.us-east-2, s3-us-west-1, s3.dualstack.eu-west-1...): one
# pattern for the dozens the PSL lists one by one.
_S3_REGIONAL = re.compile(r"(?:^|\.)s3[.-][a-z0-9.-]*amazonaws\.com$")


@dataclass(frozen=True, slots=True)
class SharedHosting:
    """A shared-hosting platform a URL is on."""

    platform: str
    """The entry that matched (``*.r2.dev``, ``storage.googleapis.com``, or the PSL suffix)."""
    kind: HostingKind
    """Whether a brand's name there needs a lure word beside it."""
    tenant: str
    """The part of the host that the tenant chose (labels left of the platform), or ''."""


def parse_shared_hosting(text: str) -> dict[str, HostingKind]:
    """``host`` or ``*.domain`` -> kind, from the text of ``shared_hosting.txt``."""
    table: dict[str, HostingKind] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        host, kind, _source = (part.strip() for part in line.split("|", 2))
        if kind not in ("storage", "site"):
            raise ValueError(f"{_DATA_FILE}: unknown kind {kind!r} for {host}")
        table[host] = "storage" if kind == "storage" else "site"
    return table


@cache
def _table() -> dict[str, HostingKind]:
    text = resources.files("urlvet.data").joinpath(_DATA_FILE).read_text(encoding="utf-8")
    return parse_shared_hosting(text)


@cache
def _sites() -> frozenset[str]:
    """The registrable domains of the table's entries (``amazonaws.com`` for
    ``*.s3.amazonaws.com``)."""
    from urlvet.url import site_of

    sites = {"amazonaws.com"}
    for entry in _table():
        site = site_of(entry.removeprefix("*."))[0]
        sites.add(site or entry.removeprefix("*."))
    return frozenset(sites)


def may_be_shared_hosting(registrable_domain: str | None, suffix_is_private: bool) -> bool:
    """False when a host of this registrable domain is on no shared hosting: a set look-up
    that rules out most links before any host is walked."""
    return suffix_is_private or (registrable_domain or "") in _sites()


def shared_hosting(url: ParsedURL) -> SharedHosting | None:
    """The shared-hosting platform ``url`` is on, or None."""
    if url.host_kind is not HostKind.DOMAIN:
        return None
    host = url.host.rstrip(".").lower()
    table = _table()
    kind = table.get(host)
    if kind is not None:
        return SharedHosting(host, kind, "")
    dot = host.find(".")
    while dot >= 0:
        key = "*." + host[dot + 1 :]
        kind = table.get(key)
        if kind is not None:
            return SharedHosting(key, kind, host[:dot])
        dot = host.find(".", dot + 1)
    if host.endswith(".amazonaws.com") and _S3_REGIONAL.search(host):
        at = host.find("s3")
        return SharedHosting("s3.*.amazonaws.com", "storage", host[: max(at - 1, 0)])
    if url.suffix_is_private and url.public_suffix and host != url.public_suffix:
        return SharedHosting(url.public_suffix, "site", host[: -len(url.public_suffix) - 1])
    return None
