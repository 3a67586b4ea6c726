"""The stages of a vet after the offline rules: DNS, then the TLS probe, each only when the
policy asks for it and nothing has already blocked the URL.

A lookup or a probe tells the operator of the domain (and of its DNS) that someone looked: a
URL already blocked offline, or one nobody will open, is never resolved nor probed. The
network I/O itself is the resolver's and the prober's; this module decides what to resolve
and what to probe, and turns the answers into findings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from urlvet.checks.addresses import NEVER_RESOLVED_TLDS
from urlvet.checks.base import CheckContext
from urlvet.engine.verdicts import finding_of
from urlvet.findings import Finding
from urlvet.server import is_loopback_host
from urlvet.url import HostKind, ParsedURL

if TYPE_CHECKING:
    from urlvet.policy import CompiledPolicy
    from urlvet.resolve import Resolution
    from urlvet.tls import Probe


class Offline(NamedTuple):
    """A URL after the offline rules: what the later stages read and add findings to."""

    # A tuple rather than a frozen dataclass: built for every URL, and cheaper to build.
    raw: str
    url: ParsedURL | None
    ctx: CheckContext
    findings: list[Finding]
    message: str | None


def _blocked(compiled: CompiledPolicy, findings: list[Finding]) -> bool:
    block_at = compiled.block_at
    return any(f.severity.rank >= block_at for f in findings)


def _probes(compiled: CompiledPolicy, url: ParsedURL) -> bool:
    return compiled.tls_probe and url.scheme in ("https", "wss")


def dns_name(
    compiled: CompiledPolicy, url: ParsedURL | None, findings: list[Finding]
) -> str | None:
    """The name to resolve for ``url`` (with these offline ``findings``), or None when it
    is not a domain worth a lookup: not a web or probed URL, a loopback or ``.onion`` name,
    or already blocked."""
    if (
        url is None
        or url.host_kind is not HostKind.DOMAIN
        or (url.scheme not in ("http", "https") and not _probes(compiled, url))
    ):
        return None
    if is_loopback_host(url):
        return None
    name = url.host.rstrip(".")
    if name.rsplit(".", 1)[-1].lower() in NEVER_RESOLVED_TLDS:
        return None  # RFC 7686: .onion names are never sent to DNS
    # Already blocked offline: a lookup would add latency and tell the domain's DNS
    # operator about the user for nothing.
    return None if _blocked(compiled, findings) else name


def add_dns(compiled: CompiledPolicy, state: Offline, resolution: Resolution | None) -> None:
    """Add the findings of the policy's DNS rules on ``resolution`` (None: no lookup)."""
    if resolution is None:
        return
    ctx = CheckContext(
        settings=state.ctx.settings,
        server=state.ctx.server,
        raw=state.raw,
        resolution=resolution,
        message=state.message,
    )
    severities = compiled.severities
    for rule in compiled.rules_dns:
        for hit in rule.check(state.url, ctx):
            state.findings.append(finding_of(rule, hit, severities.get(rule.code)))


def tls_target(
    compiled: CompiledPolicy,
    url: ParsedURL | None,
    findings: list[Finding],
    resolution: Resolution | None,
) -> tuple[str, int, str] | None:
    """(address, port, host) to probe, or None: only an https:/wss: URL that nothing has
    blocked, only to an address the DNS answer (or the IP literal) offers and every
    address of the host may be probed (urlvet.tls.probe_address)."""
    if url is None or not _probes(compiled, url):
        return None
    if _blocked(compiled, findings):
        return None  # nobody will open it: no reason to tell its operator we looked
    if url.host_kind is HostKind.DOMAIN:
        if resolution is None or not resolution.ok:
            return None
        candidates: tuple[str, ...] = resolution.addresses
    elif url.host_kind in (HostKind.IPV4, HostKind.IPV6):
        candidates = (url.host,)
    else:
        return None
    from urlvet.tls import probe_address

    address = probe_address(
        candidates, compiled.settings.blocked_networks, compiled.tls_probe_networks
    )
    if address is None:
        return None
    return address, url.port or 443, url.host.rstrip(".")


def add_tls(compiled: CompiledPolicy, state: Offline, probe: Probe) -> None:
    """Add the findings of the policy's TLS rules on ``probe``."""
    ctx = CheckContext(
        settings=state.ctx.settings,
        server=state.ctx.server,
        raw=state.raw,
        message=state.message,
        tls=probe,
        earlier=frozenset(f.code for f in state.findings),
    )
    severities = compiled.severities
    for rule in compiled.rules_tls:
        for hit in rule.check(state.url, ctx):
            state.findings.append(finding_of(rule, hit, severities.get(rule.code)))


__all__ = ["Offline", "add_dns", "add_tls", "dns_name", "tls_target"]
