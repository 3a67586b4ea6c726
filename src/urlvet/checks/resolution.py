"""The DNS rules (UV220-UV226): what the host's DNS answers say about where a link leads.

These rules read the :class:`urlvet.resolve.Resolution` the engine put in the context (no
resolution, as with ``--no-dns`` or an IP-literal host, means they stay silent) and never do
I/O themselves. The address rules for IP literals live in checks/addresses.py; these are the
same concerns reached through a name.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from urlvet.addresses import AddressClass, classify, in_networks
from urlvet.checks.addresses import blocked_network_of, feed_evidence
from urlvet.checks.base import (  # internal_name_reason: re-exported
    CheckContext,
    CheckSettings,
    Hit,
    internal_name_reason,
    rule,
)
from urlvet.findings import Severity
from urlvet.url import ParsedURL

if TYPE_CHECKING:
    from urlvet.resolve import Resolution

__all__ = [
    "SHORT_TTL_SECONDS",
    "cname_to_internal_name",
    "dns_lookup_failed",
    "dns_name_not_found",
    "dns_no_address",
    "dns_timeout",
    "internal_name_reason",
    "private_address_resolution",
    "short_dns_ttl",
]

SHORT_TTL_SECONDS = 30
"""A TTL below this many seconds is reported as a rebinding hint (UV226)."""

# What a person should picture for each category of the address table.
_PLACES = {
    "loopback": "this computer itself",
    "unspecified": "this computer itself (0.0.0.0 / :: reach local services)",
    "this-network": "this computer itself (0.0.0.0 / :: reach local services)",
    "private-use": "a device on a private network",
    "shared-address-space": "a device on a carrier's private network",
    "unique-local": "a device on a private network",
    "link-local": "a device on the local network segment",
    "site-local": "a device on a private network",
    "cloud-metadata": "the cloud metadata service, which hands out the machine's credentials",
    "multicast": "a multicast group, not a website",
    "broadcast": "every device on the local network",
}


def _place(cls: AddressClass) -> str:
    return _PLACES.get(cls.category, "a special-purpose address that is not a public website")


def _classify(text: str) -> AddressClass | None:
    try:
        return classify(text)
    except ValueError:
        return None  # not an address: resolve.py never produces one, but stay total


def _is_allowed(address: str, cls: AddressClass, settings: CheckSettings) -> bool:
    """True when the policy declares the address's network legitimate.

    An IPv6 address that embeds IPv4 is allowed when either form is inside an allowed
    network, so ``allowed_networks: [10.0.0.0/8]`` also covers ``::ffff:10.1.2.3``.
    """
    if not settings.allowed_networks:
        return False
    candidates = [ipaddress.ip_address(address), ipaddress.ip_address(cls.effective.address)]
    return any(in_networks(a, settings.allowed_networks) is not None for a in candidates)


@rule("UV220", "private-address-resolution", Severity.CRITICAL, kind="dns", cwe=918)
def private_address_resolution(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """
    ## What it does
    Blocks a link whose host name resolves to an address that is not on the public internet
    (loopback, private networks, link-local, cloud metadata, other special-purpose blocks) or
    to a network the policy blocks (``networks.blocked`` or its ``blocked_files`` feeds, named
    with the list and line). One such address among public ones is enough. Networks the
    policy lists in ``allowed_networks`` are exempt.

    ## Why is this bad?
    A name is an indirection: ``http://localtest.me`` looks like any website, but its DNS
    answer is ``127.0.0.1``, so the browser talks to a service on the user's own machine.
    An MCP server can use such names (nip.io-style wildcard services, its own domain) to make
    the user's browser send requests into their network or to the cloud metadata service:
    server-side request forgery carried out by the client. A name that returns a public and a
    private address at once lets the browser pick either, the split-answer form of DNS
    rebinding, so a single private answer blocks the link. IPv6 answers that embed an IPv4
    address (``::ffff:127.0.0.1``) are judged by the IPv4 address they reach.

    ## Example
    ```text
    http://169.254.169.254.nip.io/latest/meta-data/   A 169.254.169.254   -> block
    http://app.example.com/                           A 203.0.113.7, 10.0.0.5 -> block
    ```
    Use a public host name, or declare the internal network in the policy's
    ``allowed_networks`` if internal links are intended.

    ## References
    - CWE-918: Server-Side Request Forgery
    - IANA IPv4 and IPv6 Special-Purpose Address Registries
    """
    res = ctx.resolution
    if res is None:
        return
    flagged = [
        entry
        for address in res.addresses
        if (entry := _flagged_address(address, ctx.settings)) is not None
    ]
    if not flagged:
        return
    yield Hit(
        _private_resolution_message(res, flagged),
        {
            "host": res.name,
            "addresses": list(res.addresses),
            "flagged": flagged,
            "cnames": list(res.cnames),
        },
    )


def _flagged_address(address: str, settings: CheckSettings) -> dict[str, Any] | None:
    """The evidence of one resolved address that UV220 flags (a network the policy blocks, or
    one not on the public internet and not allowed), or None for an address it lets through."""
    cls = _classify(address)
    if cls is None:
        return None
    found = blocked_network_of(ipaddress.ip_address(address), settings)
    if found is not None:
        blocked, on_list = found
        policy_entry: dict[str, Any] = {
            "address": address,
            "category": "blocked-by-policy",
            "network": str(blocked),
            "place": "a network your organisation's policy blocks"
            if on_list is None
            else f"{blocked}, on your blocklist {on_list.describe()}",
        }
        if on_list is not None:
            policy_entry.update(feed_evidence(on_list))
        return policy_entry
    if cls.globally_reachable or _is_allowed(address, cls, settings):
        return None
    effective = cls.effective
    entry: dict[str, Any] = {
        "address": address,
        "category": effective.category,
        "network": effective.network,
        "place": _place(effective),
    }
    if cls.via is not None:
        entry["via"] = cls.via
        entry["reaches"] = effective.address
    return entry


def _private_resolution_message(res: Resolution, flagged: list[dict[str, Any]]) -> str:
    """UV220's message: where the name leads, and the public answers it mixes in."""
    public = [a for a in res.addresses if a not in {f["address"] for f in flagged}]
    listed = ", ".join(
        f"{f['address']} ({'= ' + f['reaches'] + ', ' if 'reaches' in f else ''}{f['place']})"
        for f in flagged
    )
    alias = f" (an alias of {res.cnames[-1]})" if res.cnames else ""
    message = f"The name {res.name}{alias} leads to {listed}, not to a public website."
    if public:
        message += (
            f" It also gives the public address {', '.join(public)}: a name that mixes public"
            " and private answers is how DNS rebinding attacks reach inside a network."
        )
    return message


@rule("UV221", "cname-to-internal-name", Severity.HIGH, kind="dns", cwe=918)
def cname_to_internal_name(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """
    ## What it does
    Flags a host name that is an alias (CNAME) of an internal name: a single-label name,
    ``localhost`` or a name under it, or a name ending in one of the policy's
    ``internal_suffixes`` (``corp``, ``internal``, ``lan``, ``home.arpa`` ...).

    ## Why is this bad?
    A public name whose alias points at ``db.corp`` or ``intranet.internal`` is built to reach
    a machine inside an organisation. From where urlvet runs the internal name may not resolve
    at all, while the user's browser, on the company network, reaches the internal host. The
    alias is the intent, whatever urlvet's own resolver can see.

    ## Example
    ```text
    http://status.example.com/   status.example.com CNAME db.corp.   -> flagged
    ```
    Link to the public name of the service instead.

    ## References
    - CWE-918: Server-Side Request Forgery
    - RFC 6761 (localhost), RFC 8375 (home.arpa)
    """
    res = ctx.resolution
    if res is None:
        return
    for target in res.cnames:
        reason = internal_name_reason(target, ctx.settings)
        if reason is not None:
            yield Hit(
                f"The name {res.name} is an alias of {target}, an internal name ({reason}):"
                " the link is built to reach a machine inside a private network.",
                {"host": res.name, "cname": target, "cnames": list(res.cnames), "reason": reason},
            )
            return


@rule("UV222", "dns-name-not-found", Severity.MEDIUM, kind="dns")
def dns_name_not_found(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """
    ## What it does
    Reports a host name that does not exist in DNS (NXDOMAIN), after following any aliases.

    ## Why is this bad?
    A link to a name that does not exist leads nowhere on the public internet. It may be a
    typo, an expired domain that anyone can register and take over, or a name that only
    exists on some company's internal DNS, where the user's browser may still reach it. urlvet
    cannot tell where such a link leads, so it asks the user to look twice.

    ## Example
    ```text
    https://docs.exmaple.com/   -> NXDOMAIN -> warn
    ```
    """
    res = ctx.resolution
    if res is None or res.status != "nxdomain":
        return
    alias = f" (it is an alias of {res.cnames[-1]}, which does not exist)" if res.cnames else ""
    yield Hit(
        f"The name {res.name} does not exist on the internet{alias}. The link leads nowhere,"
        " or only somewhere inside a private network; it may also be a typo or an expired"
        " domain that someone else can register.",
        {"host": res.name, "status": res.status, "cnames": list(res.cnames)},
    )


@rule("UV223", "dns-lookup-failed", Severity.MEDIUM, kind="dns")
def dns_lookup_failed(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """
    ## What it does
    Reports a DNS lookup of the host that failed: the nameserver answered SERVFAIL or
    REFUSED, or the answer could not be used (a CNAME loop, a chain too long, a broken
    response).

    ## Why is this bad?
    When the lookup fails, urlvet cannot see which address the link leads to, so the address
    rules cannot vouch for it. A domain whose DNS is broken on purpose (for some resolvers and
    not others) can hide where it points.

    ## Example
    ```text
    http://loop.example.com/   loop.example.com CNAME a.example.com, a CNAME loop -> warn
    ```
    """
    res = ctx.resolution
    if res is None or res.status not in ("servfail", "refused", "error"):
        return
    what = {
        "servfail": "the DNS server could not answer",
        "refused": "the DNS server refused to answer",
        "error": "the answer could not be used",
    }[res.status]
    yield Hit(
        f"The DNS lookup of {res.name} failed: {what} ({res.detail}). urlvet could not check"
        " where the link leads.",
        _failed_lookup_evidence(res),
    )


def _failed_lookup_evidence(res: Resolution) -> dict[str, Any]:
    """The evidence of a lookup that failed or timed out: what came back, and why not more."""
    return {
        "host": res.name,
        "status": res.status,
        "detail": res.detail,
        "addresses": list(res.addresses),
    }


@rule("UV224", "dns-timeout", Severity.MEDIUM, kind="dns")
def dns_timeout(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """
    ## What it does
    Reports a host name whose DNS lookup got no answer before the deadline, for the IPv4 or
    the IPv6 query or both.

    ## Why is this bad?
    Without an answer urlvet cannot see which address the link leads to. Even when one query
    was answered, the other could have returned a private address. A name whose nameservers
    stay silent for some resolvers can be a way to slip past a check.

    ## Example
    ```text
    http://slow.example.com/   no answer within 2 s -> warn
    ```
    """
    res = ctx.resolution
    if res is None or res.status != "timeout":
        return
    partial = ""
    if res.addresses:
        partial = f" Only part of the answer arrived ({', '.join(res.addresses)})."
    yield Hit(
        f"DNS did not answer in time for {res.name}, so urlvet could not check where the link"
        f" leads.{partial}",
        _failed_lookup_evidence(res),
    )


@rule("UV225", "dns-no-address", Severity.MEDIUM, kind="dns")
def dns_no_address(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """
    ## What it does
    Reports a host name that exists in DNS but has no address: neither an A (IPv4) nor an
    AAAA (IPv6) record, after following any aliases.

    ## Why is this bad?
    A browser cannot open a name without an address on the public internet, so the link
    leads nowhere or only to something on a private network whose DNS says otherwise. It is
    often a mistake, and urlvet cannot tell where the link leads.

    ## Example
    ```text
    http://mail-only.example.com/   only MX and TXT records -> warn
    ```
    """
    res = ctx.resolution
    if res is None or res.status != "no-answer":
        return
    yield Hit(
        f"The name {res.name} exists but has no internet address, so a browser cannot open"
        " it from here; the link may only work inside a private network.",
        {"host": res.name, "status": res.status, "cnames": list(res.cnames)},
    )


@rule("UV226", "short-dns-ttl", Severity.LOW, kind="dns", cwe=367)
def short_dns_ttl(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """
    ## What it does
    Notes a DNS answer that may be kept for less than 30 seconds (a TTL of 0 to 29), when
    the name has addresses.

    ## Why is this bad?
    A TTL this short tells every resolver to ask again almost at once. That is what a DNS
    rebinding attack needs: answer the check with a public address, then answer the browser
    a moment later with a private one. On its own it is only a hint (some load balancers use
    short TTLs), so the severity is low.

    ## Example
    ```text
    http://make-1.2.3.4-rebind-169.254-169.254-rr.1u.ms/   TTL 0 -> noted
    ```

    ## References
    - CWE-367: Time-of-check Time-of-use (TOCTOU) Race Condition
    """
    res = ctx.resolution
    if res is None or not res.addresses or res.min_ttl is None:
        return
    if res.min_ttl >= SHORT_TTL_SECONDS:
        return
    lifetime = (
        "must not be kept at all (TTL 0)"
        if res.min_ttl == 0
        else f"may change after {res.min_ttl} seconds"
    )
    yield Hit(
        f"The DNS answer for {res.name} {lifetime}. A lifetime this short lets a site switch"
        " its address right after it is checked (DNS rebinding), so this check may not hold"
        " when the browser opens the link.",
        {
            "host": res.name,
            "min_ttl": res.min_ttl,
            "threshold": SHORT_TTL_SECONDS,
            "addresses": list(res.addresses),
        },
    )
