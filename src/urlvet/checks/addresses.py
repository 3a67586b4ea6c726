"""UV2xx: where the URL points on the network. Does it reach into the user's own network?

This module looks at what the URL says (IP literals and names); the answers DNS gives for a
name are judged in ``resolution.py``.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from urlvet import psl
from urlvet.addresses import AddressClass, classify, in_networks
from urlvet.checks.base import (
    CheckContext,
    CheckSettings,
    Facts,
    Hit,
    allowed_domain,
    carried,
    clip,
    host_matches,
    internal_name_reason,
    redirector_position,
    rule,
    shortest_parent_in,
)
from urlvet.feeds import FeedHit, url_key
from urlvet.findings import Severity
from urlvet.memo import memo_size
from urlvet.server import is_loopback_host
from urlvet.url import HostKind, ParsedURL

_ROUTE_LABELS = {
    "loopback": "this computer (loopback)",
    "private-use": "a private network",
    "link-local": "a link-local network",
    "cloud-metadata": "a cloud metadata service",
    "shared-address-space": "a carrier-grade NAT network",
    "unique-local": "a private network",
    "multicast": "a multicast group",
    "broadcast": "the local broadcast address",
    "unspecified": "'this host' (0.0.0.0)",
    "this-network": "'this network' (0.0.0.0/8)",
}


def _deciding(cls: AddressClass) -> AddressClass:
    # The embedded IPv4 address decides, except where the IPv6 block itself is never reachable
    # whatever it embeds (local-use NAT64): then the block is what to name.
    eff = cls.effective
    if eff is not cls and eff.globally_reachable and not cls.globally_reachable:
        return cls
    return eff


def describe(cls: AddressClass) -> str:
    """A short plain-language name of where an address leads."""
    eff = _deciding(cls)
    where = _ROUTE_LABELS.get(eff.category, f"a special-purpose range ({eff.name})")
    if cls.embedded is not None and eff is not cls:
        return f"{where}, hidden inside the IPv6 address ({cls.via})"
    return where


def address_evidence(cls: AddressClass) -> dict[str, object]:
    """The facts about one classified address, for a finding's evidence."""
    eff = _deciding(cls)
    ev: dict[str, object] = {
        "address": cls.address,
        "category": eff.category,
        "range": eff.network,
        "range_name": eff.name,
    }
    if cls.embedded is not None:
        ev["embedded_ipv4"] = cls.embedded.address
        ev["via"] = cls.via
    return ev


def reached_addresses(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The address, and the IPv4 address it embeds when it is an IPv6 that embeds one."""
    embedded = classify(address).embedded
    if embedded is None:
        return [address]
    return [address, ipaddress.ip_address(embedded.address)]


def in_any(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...],
) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """The most specific network holding the address or the IPv4 address it embeds."""
    if not networks:
        return None
    found = [n for a in reached_addresses(address) if (n := in_networks(a, networks))]
    return max(found, key=lambda n: n.prefixlen, default=None)


def blocked_network_of(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, settings: CheckSettings
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, FeedHit | None] | None:
    """The most specific network the policy blocks (``networks.blocked`` or its feeds) that
    holds the address or the IPv4 address it embeds, with the feed entry when a feed lists it."""
    best: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, FeedHit | None] | None = None
    net = in_any(address, settings.blocked_networks)
    if net is not None:
        best = (net, None)
    if settings.blocked_network_feeds:
        for reached in reached_addresses(address):
            hit = settings.blocked_network_feeds.match_address(reached)
            if hit is None:
                continue
            listed = ipaddress.ip_network(hit.entry)
            if best is None or listed.prefixlen > best[0].prefixlen:
                best = (listed, hit)
    return best


LAST_LABELS_KEPT = 64
"""Policy lists of domains whose last labels :func:`may_be_under` keeps (a policy has a few)."""


@lru_cache(maxsize=memo_size(LAST_LABELS_KEPT))
def _last_labels(domains: frozenset[str]) -> frozenset[str]:
    return frozenset(d.rstrip(".").rsplit(".", 1)[-1].lower() for d in domains)


def may_be_under(name: str, domains: frozenset[str]) -> bool:
    """False when ``name`` (lower case, no final dot) is neither one of ``domains`` nor under
    one: the host and each parent of it end with its last label, so a list none of whose
    domains ends so holds none of them. One look-up where the walk over the parents
    (:func:`host_matches`) takes one a parent; True tells nothing."""
    return name[name.rfind(".") + 1 :] in _last_labels(domains)


def _listed_parent(
    name: str, domains: frozenset[str], walk: Callable[[str, frozenset[str]], str | None]
) -> str | None:
    """``walk(name, domains)`` (:func:`host_matches`, :func:`shortest_parent_in`), or None
    without walking when ``name`` cannot be under any of ``domains`` (:func:`may_be_under`)."""
    return walk(name, domains) if may_be_under(name, domains) else None


def _local_callback(url: ParsedURL, ctx: CheckContext) -> bool:
    return ctx.server is not None and ctx.server.is_local and is_loopback_host(url)


@rule(
    "UV201",
    "non-public-address-literal",
    Severity.CRITICAL,
    cwe=918,
    reads={"ip", "host", "host_kind", "host_for_display"},
    needs="ip",
)
def non_public_address_literal(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """An IP-address host in a range that is not globally reachable, in any spelling.

    ## What it does
    Flags hosts that are IP addresses in private, loopback, link-local, cloud-metadata,
    multicast, reserved or other special-purpose ranges, classified with urlvet's table built
    from the IANA special-purpose registries. The browser's parser has already turned decimal,
    octal, hex, shortened, full-width and percent-encoded spellings into one address, and IPv6
    addresses that embed IPv4 (mapped, NAT64, 6to4, Teredo) are judged by the IPv4 address
    they reach. A local server's loopback callback page is allowed; networks the policy
    declares legitimate are exempt.

    ## Why is this bad?
    A server that sends the user's browser to `169.254.169.254` or `192.168.1.1` uses the
    browser to reach inside the user's network (server-side request forgery through the
    client, router attacks, cloud credential theft).

    ## Example
    `https://169.254.169.254/latest/meta-data/`, `https://[::ffff:7f00:1]/`,
    `https://0x7f.1/`, `https://2130706433/`.
    """
    if url is None or url.ip is None:
        return
    cls = classify(url.ip)
    if cls.globally_reachable or _local_callback(url, ctx):
        return
    if in_any(url.ip, ctx.settings.allowed_networks) is not None:
        return
    yield Hit(
        f"The link points to an IP address in {describe(cls)}, not a public website.",
        address_evidence(cls),
    )


@rule("UV202", "localhost-name", Severity.CRITICAL, cwe=918, reads={"host", "host_kind", "ip"})
def localhost_name(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """The host `localhost` or a name under `.localhost`.

    ## What it does
    Flags `localhost` and `*.localhost`, which browsers resolve to the user's own computer
    without asking DNS. A local server (stdio or loopback) may use them for its OAuth callback.

    ## Why is this bad?
    A remote server sending the user to their own machine targets local services: admin
    consoles, development servers, database web UIs.

    ## Example
    `https://localhost:8080/admin`, `https://app.localhost/`.
    """
    if url is None or url.host_kind is not HostKind.DOMAIN:
        return
    host = url.host.rstrip(".").lower()
    if (host == "localhost" or host.endswith(".localhost")) and not _local_callback(url, ctx):
        yield Hit(
            "The link points to this computer (localhost), not a public website.", {"host": host}
        )


@rule(
    "UV203",
    "internal-name",
    Severity.HIGH,
    cwe=918,
    reads={"host", "host_kind", "registrable_domain"},
)
def internal_name(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A host name that only resolves inside a private network.

    ## What it does
    Flags single-label names (`intranet`, `router`), names under internal-only suffixes
    (`.local`, `.internal`, `.localdomain`, `.home.arpa`, `.lan`, `.corp`, `.intranet`,
    `metadata.google.internal`...; the list is in the policy), and names under a top-level
    domain the Public Suffix List does not know (`.svc`, `.router`), unless the policy allows
    the domain. The RFC 2606 names (`.example`, `.test`, `.invalid`) resolve nowhere and are
    left to the DNS checks.

    ## Why is this bad?
    Such a name points at a machine on the user's own network, which a remote server has no
    business sending them to.

    ## Example
    `https://router/`, `https://printer.local/`, `https://metadata.google.internal/`,
    `https://kubernetes.default.svc/`.
    """
    if url is None or url.host_kind is not HostKind.DOMAIN:
        return
    host = url.host.rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return
    if allowed_domain(host, ctx.settings):
        return
    if "." not in host:
        yield Hit(
            f"The link points to {host!r}, a single-word name that only works inside a "
            "private network.",
            {"host": host, "reason": "single-label"},
        )
        return
    # The host itself counts too: `home.arpa` and `metadata.google.internal` are listed names.
    suffix = _listed_parent(host, ctx.settings.internal_suffixes, host_matches)
    if suffix is not None:
        where = "the name" if suffix == host else f"a name under .{suffix}"
        yield Hit(
            f"The link points to {host!r}, {where} that only works inside a private network.",
            {"host": host, "suffix": suffix},
        )
        return
    if url.registrable_domain:
        return  # the suffix list knows its public suffix, so its top-level domain too
    tld = host.rsplit(".", 1)[1]
    if tld not in _RESERVED_TLDS and not psl.is_known_tld(tld):
        yield Hit(
            f"The link points to {host!r}, under .{tld}, which is not a top-level domain of "
            "the public Internet: such a name only works inside a private network (or with "
            "a special resolver).",
            {"host": host, "suffix": tld, "reason": "unknown-tld"},
        )


# Names reserved so that they resolve nowhere (DNS checks report that): they are not internal
# names. RFC 2606's, and the eleven IDN test TLDs of 2007 (.テスト, .испытание, ...), since
# taken out of the root.
_RESERVED_TLDS = frozenset(
    {
        "example",
        "test",
        "invalid",
        "xn--kgbechtv",
        "xn--hgbk6aj7f53bba",
        "xn--0zwm56d",
        "xn--g6w251d",
        "xn--80akhbyknj4f",
        "xn--11b5bs3a9aj6g",
        "xn--jxalpdlp",
        "xn--9t4b11yi5a",
        "xn--deba0ad",
        "xn--zckzah",
        "xn--hlcj6aya9esc7a",
    }
)


# Lookarounds rather than consumed separators, so that neighbouring forms are all found
# (`7f000001.c0a80001.rbndr.us` names two addresses).
# Overlapping (a lookahead): `1.2.3.4.5.6.nip.io` holds three candidate addresses, and the
# services differ in which one they answer with.
_V4_DOTTED = re.compile(r"(?<![0-9a-z])(?=((?:\d{1,3}[.-]){3}\d{1,3})(?![0-9a-z]))")
_V4_HEX = re.compile(r"(?<![0-9a-z])([0-9a-f]{8})(?![0-9a-z])")
# An IPv6 address written with '-' for ':' is a whole label: ``--`` for the '::', or eight
# groups. Read label by label: as one pattern (``[0-9a-f-]*--[0-9a-f-]*``) a long run of '-'
# cost its length squared, the pattern trying every place to split it at.
_V6_GROUPS = re.compile(r"(?:[0-9a-f]{1,4}-){7}[0-9a-f]{1,4}")
_V6_LABEL_CHARACTERS = frozenset("0123456789abcdef-")


def embedded_addresses(label_part: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Addresses written into a name the way wildcard-DNS services read them."""
    found: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for m in _V4_DOTTED.finditer(label_part):
        parts = re.split(r"[.-]", m.group(1))
        if all(int(p) <= 255 for p in parts):
            address = ipaddress.IPv4Address(".".join(str(int(p)) for p in parts))
            if address not in found:
                found.append(address)
    for m in _V4_HEX.finditer(label_part):
        found.append(ipaddress.IPv4Address(int(m.group(1), 16)))
    for label in label_part.split("."):
        if not label or not _V6_LABEL_CHARACTERS.issuperset(label):
            continue
        if "--" not in label and _V6_GROUPS.fullmatch(label) is None:
            continue
        try:
            found.append(ipaddress.IPv6Address(label.replace("-", ":")))
        except ValueError:
            continue
    return found


# Special-use names the public DNS must never be asked about (RFC 7686 for .onion) and which
# an ordinary browser cannot open. The engine never resolves them.
NEVER_RESOLVED_TLDS = frozenset({"onion"})


@rule("UV209", "onion-service", Severity.MEDIUM, reads={"host", "host_kind"})
def onion_service(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A Tor onion service (`.onion`).

    ## What it does
    Flags hosts under `.onion`, the special-use top-level domain of Tor onion services
    (RFC 7686). urlvet never sends such a name to DNS, as the RFC requires.

    ## Why is this bad?
    An ordinary browser cannot open an onion address, and nothing about the name says who runs
    the service: it is a request to switch to Tor and trust an anonymous site, which an MCP
    server should rarely need. It is a warning, since some services do offer an onion mirror.

    ## Example
    `https://duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion/`.
    """
    if url is None or url.host_kind is not HostKind.DOMAIN:
        return
    host = url.host.rstrip(".").lower()
    tld = host.rsplit(".", 1)[-1]
    if tld in NEVER_RESOLVED_TLDS and not allowed_domain(host, ctx.settings):
        yield Hit(
            f"The link points to {host!r}, a Tor onion service: an ordinary browser cannot "
            "open it, and who runs it cannot be known from the name.",
            {"host": host, "suffix": tld},
        )


def internal_target(target: ParsedURL, ctx: CheckContext) -> str | None:
    """What makes ``target`` a place inside the user's network, or None."""
    if target.ip is not None:
        cls = classify(target.ip)
        if cls.globally_reachable or in_any(target.ip, ctx.settings.allowed_networks):
            return None
        return f"an IP address in {describe(cls)}"
    if target.host_kind is not HostKind.DOMAIN:
        return None
    if allowed_domain(target.host.rstrip(".").lower(), ctx.settings):
        return None
    if internal_name_reason(target.host, ctx.settings) is None:
        return None
    if is_loopback_host(target):
        return "this computer"
    return "a name that only works inside a private network"


@rule(
    "UV210",
    "internal-target-in-parameter",
    Severity.MEDIUM,
    cwe=601,
    reads={
        "host",
        "host_kind",
        "host_for_display",
        "registrable_domain",
        "carried",
        "redirect_position",
    },
    needs="carried",
)
def internal_target_in_parameter(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A query parameter that holds a URL inside the user's network.

    ## What it does
    Reads the query's parameters as the site will (form decoding) and flags a value that is
    an absolute `http(s)` URL whose host is a non-public address (in any spelling), localhost
    or an internal name. A loopback `redirect_uri` (an app's own sign-in callback, RFC 8252),
    and any loopback target asked for by a local server, are left alone.

    ## Why is this bad?
    It is how a server reaches inside the network through a site it does not control: an
    open redirect (`https://redirector.example/?url=http://169.254.169.254/`) sends the
    browser on to the parameter, and neither the link's host nor its DNS shows where it ends.

    ## Example
    `https://307.r3dir.me/--to/?url=http://localhost`,
    `https://www.example.com/out?next=http%3A%2F%2F192.168.1.1%2Fadmin`.
    """
    if url is None or not url.carried:
        return
    local = ctx.server is not None and ctx.server.is_local
    # A listed redirector's destination is UV213's, which vets it in full.
    # By position: two copies of one parameter are two items, equal but both read.
    redirect = redirector_position(url, ctx)
    for position, item in enumerate(carried(url, ctx)):
        target = item.target
        if position == redirect or target.scheme not in ("http", "https"):
            continue
        if is_loopback_host(target) and (local or item.name == "redirect_uri"):
            continue
        what = internal_target(target, ctx)
        if what is None:
            continue
        name = " > ".join(item.path)
        yield Hit(
            f"The link carries {target.host_for_display}, {what}, in its parameter "
            f"{clip(name, 100)!r}: if {url.host_for_display} forwards you there, your browser "
            "ends up inside your own network.",
            {"parameter": clip(name, 100), "value": clip(item.value), "host": target.host},
        )
        return


@rule("UV204", "address-in-name", Severity.CRITICAL, cwe=918, reads={"host", "host_kind"})
def address_in_name(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A name under a wildcard-DNS service that resolves to an address written in the name.

    ## What it does
    Flags names under services such as nip.io, sslip.io, xip.io and 1u.ms (the list is
    `domains.wildcard_dns` in the policy), and under public domains whose every name answers
    loopback (`lvh.me`, `localtest.me`, `localho.st`, `vcap.me`...: `domains.loopback_dns`,
    from published lists), which block without asking DNS. Where the name carries an address (`10.0.0.1.nip.io`,
    `app-192-168-1-1.sslip.io`, `0a000001.nip.io`) it is classified like an IP literal: a
    private target blocks, a public one warns. Services that always answer loopback, names
    with no address the service could answer with, and DNS-rebinding names (`rbndr.us`,
    1u.ms `rebind` names) block.

    ## Why is this bad?
    These names exist to make any IP address look like a domain name, which is exactly what
    an attacker needs to get an internal address past a filter that only looks at IP
    literals, or to rebind DNS between the check and the visit.

    ## Example
    `https://169.254.169.254.nip.io/`, `https://localtest.me/`,
    `https://make-1.2.3.4-rebind-127.0.0.1-rr.1u.ms/`.
    """
    if url is None or url.host_kind is not HostKind.DOMAIN:
        return
    host = url.host.rstrip(".").lower()
    loopback = _listed_parent(host, ctx.settings.loopback_dns_suffixes, host_matches)
    if loopback is not None:
        yield Hit(
            f"The link uses {loopback}, a public domain whose every name leads to this "
            "computer (loopback), not to a website.",
            {"host": host, "service": loopback, "loopback": True},
        )
        return
    # The shortest listed suffix is the service: a list holding both nip.io and
    # 127.0.0.1.nip.io must still read the address out of company.127.0.0.1.nip.io.
    service = _listed_parent(host, ctx.settings.wildcard_dns_suffixes, shortest_parent_in)
    if service is None:
        return
    prefix = host[: -len(service)].rstrip(".")
    addresses = embedded_addresses(prefix)
    evidence: dict[str, object] = {"host": host, "service": service}
    if not addresses:
        yield Hit(
            f"The link uses {service}, a service that makes names resolve to any "
            "address, usually this computer or a private network.",
            evidence,
        )
        return
    classes = [classify(a) for a in addresses]
    allowed = ctx.settings.allowed_networks
    private = [
        c
        for a, c in zip(addresses, classes, strict=True)
        if not c.globally_reachable and in_any(a, allowed) is None
    ]
    evidence["embedded"] = [address_evidence(c) for c in classes]
    # A rebinding name answers one address now and another later: whatever addresses it
    # names, what the browser reaches is not what was checked.
    rebinding = service in _REBINDING_SERVICES or "rebind" in prefix
    evidence["rebinding"] = rebinding
    if private:
        yield Hit(
            f"The link uses {service} to disguise an address in {describe(private[0])} "
            f"({private[0].address}) as a name.",
            evidence,
        )
    elif rebinding:
        yield Hit(
            f"The link uses {service} to switch the name between addresses "
            f"({', '.join(c.address for c in classes)}) after it has been checked "
            "(DNS rebinding).",
            evidence,
        )
    else:
        yield Hit(
            f"The link uses {service} to disguise the IP address {classes[0].address} as a name.",
            evidence,
            severity=Severity.MEDIUM,
        )


_REBINDING_SERVICES = frozenset({"rbndr.us"})


@rule(
    "UV205",
    "public-address-literal",
    Severity.MEDIUM,
    reads={"ip", "host", "host_kind", "host_for_display"},
    needs="ip",
)
def public_address_literal(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A public IP address instead of a name.

    ## What it does
    Flags web URLs whose host is a globally reachable IP address.

    ## Why is this bad?
    Legitimate sign-in and payment pages live on names with certificates a person can
    recognise. A bare address hides who runs the page.

    ## Example
    `https://203.0.114.7/login` (any public address).
    """
    if url is None or url.ip is None:
        return
    cls = classify(url.ip)
    settings = ctx.settings
    if (
        cls.globally_reachable
        and in_any(url.ip, settings.allowed_networks) is None
        and blocked_network_of(url.ip, settings) is None
    ):
        yield Hit(
            f"The link points to the bare IP address {url.host_for_display} instead of a "
            "site name.",
            address_evidence(cls),
        )


def raw_host(raw: str) -> str | None:
    """The host as written in the raw input (before browser normalisation), roughly."""
    text = raw.strip()
    colon = text.find(":")
    if colon <= 0:
        return None
    rest = text[colon + 1 :].lstrip("/\\")
    end = len(rest)
    for sep in "/\\?#":
        i = rest.find(sep)
        if i != -1 and i < end:
            end = i
    authority = rest[:end]
    authority = authority.rsplit("@", 1)[-1]
    if authority.startswith("["):
        return authority.split("]", 1)[0] + "]"
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


@rule(
    "UV206",
    "obfuscated-address",
    Severity.HIGH,
    cwe=180,
    reads={"host", "host_kind", "ip", "host_as_written"},
    needs="ip",
)
def obfuscated_address(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """An IP-address host written in a disguised spelling.

    ## What it does
    Flags IPv4 hosts written as a decimal integer, in octal or hex, shortened (`127.1`),
    with full-width digits or ideographic dots, or percent-encoded, and IPv6 hosts that
    write an IPv4 address inside them: anything but the plain dotted form the browser
    shows after parsing.

    ## Why is this bad?
    There is no honest reason to disguise an address. These spellings exist to slip past
    filters and past the eye of the person asked to approve the link.

    ## Example
    `https://2130706433/`, `https://0x7f.0.0.1/`, `https://0177.0.0.1/`, `https://１２７．０．０．１/`.
    """
    if url is None or url.ip is None:
        return
    written = url.host_as_written
    if written is None:
        return
    if url.host_kind is HostKind.IPV4:
        if written.lower().rstrip(".") == url.host:
            return
        meaning = url.host
    else:
        # An IPv6 literal disguises an IPv4 address when it writes one in dotted form, or
        # is an IPv4-mapped, -compatible or -translated address (which reaches IPv4 only).
        via = classify(url.ip).via
        if "." not in written and "%" not in written and via not in _IPV4_IN_IPV6_FORMS:
            return
        embedded = classify(url.ip).embedded
        if embedded is not None and via in _IPV4_IN_IPV6_FORMS:
            meaning = f"the IPv4 address {embedded.address}"
        else:
            meaning = f"[{url.host}]"
    yield Hit(
        f"The address is disguised: written as {written!r}, it means {meaning}.",
        {"written": written, "address": url.host},
    )


_IPV4_IN_IPV6_FORMS = frozenset({"ipv4-mapped", "ipv4-compatible", "ipv4-translated"})


@rule(
    "UV207",
    "blocked-network",
    Severity.CRITICAL,
    cwe=918,
    reads={"host", "host_kind", "host_for_display", "ip"},
    needs="ip",
)
def blocked_network(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """An IP-address host in a network the policy blocks.

    ## What it does
    Flags IP literals inside `networks.blocked` of the policy, or inside a network listed in
    one of its `networks.blocked_files` feeds (the finding names the list and the line), for
    ranges that are public on the Internet but private to the organisation (its own address
    space, a partner VPN) or known to be hostile. An IPv6 literal that embeds an IPv4 address
    is matched by both. A narrower network in `networks.allowed` carves an exception out of a
    blocked one.

    ## Why is this bad?
    The organisation has said that nothing should send users there.

    ## Example
    With `networks: {blocked: ["203.0.113.0/24"]}`: `https://203.0.113.10/`. With
    `networks: {blocked_files: [drop.txt]}` and `203.0.113.0/24 ; SBL1` on line 4 of
    `drop.txt`: the same URL, "on your blocklist drop.txt, line 4".
    """
    if url is None or url.ip is None:
        return
    found = blocked_network_of(url.ip, ctx.settings)
    if found is None:
        return
    net, listed = found
    # A narrower allowed network carves an exception out of a blocked one (the
    # organisation blocks a provider's /16 but uses one /24 in it); an equal or wider
    # one does not undo the block.
    allowed = in_any(url.ip, ctx.settings.allowed_networks)
    if allowed is not None and allowed.prefixlen > net.prefixlen:
        return
    if listed is None:
        yield Hit(
            f"The link points to {url.host_for_display}, in a network your policy blocks ({net}).",
            {"address": url.host, "network": str(net)},
        )
        return
    yield Hit(
        f"The link points to {url.host_for_display}, in {net}, on your blocklist "
        f"{listed.describe()}.",
        {"address": url.host, "network": str(net), **feed_evidence(listed)},
    )


@rule("UV208", "blocked-domain", Severity.CRITICAL, reads={"host", "host_kind", "host_unicode"})
def blocked_domain(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A host the policy blocks.

    ## What it does
    Flags hosts equal to, or under, a domain listed in `domains.blocked` of the policy or in
    one of its `domains.blocked_files` feeds (the finding names the list and the line). A
    feed's entry is lifted by a domain in `domains.allowed` or `domains.allowed_files` that
    is the same or more specific (a feed that lists a whole hosting service, where the
    organisation uses one site on it); an entry in `domains.blocked` is the organisation's
    own word and is never lifted.

    ## Why is this bad?
    The organisation has said that nothing should send users there: known phishing, a
    retired service, a competitor's look-alike.

    ## Example
    With `domains: {blocked: ["evil.example"]}`: `https://login.evil.example/`. With
    `domains: {blocked_files: [urlhaus-domains.txt]}` and `evil.example` on line 812:
    the same URL, "on your blocklist urlhaus-domains.txt, line 812".
    """
    if url is None or url.host_kind is not HostKind.DOMAIN:
        return
    settings = ctx.settings
    hit = host_matches(url.host, settings.blocked_domains)
    if hit is None and url.host_unicode != url.host:
        hit = host_matches(url.host_unicode, settings.blocked_domains)
    if hit is not None:
        yield Hit(
            f"The link goes to {url.host_unicode}, under {hit}, which your policy blocks.",
            {"host": url.host, "domain": hit},
        )
        return
    listed = settings.blocked_domain_feeds.match_domain(url.host)
    if listed is None:
        return
    allowed = allowed_domain(url.host, settings)
    if allowed is not None and len(allowed) >= len(listed.entry):
        return
    yield Hit(
        f"The link goes to {url.host_unicode}, under {listed.entry}, on your blocklist "
        f"{listed.describe()}.",
        {"host": url.host, "domain": listed.entry, **feed_evidence(listed)},
    )


def feed_evidence(hit: FeedHit) -> dict[str, Any]:
    """The evidence that names a feed entry: list, file, line."""
    return {"list": hit.list_name, "file": hit.path, "line": hit.line}


def _lists_urls(url: Facts, ctx: CheckContext) -> bool:
    # UV211 reads the whole href, but only when the policy lists URLs.
    settings = ctx.settings
    return bool(settings.blocked_urls or settings.blocked_url_feeds)


@rule("UV211", "blocked-url", Severity.CRITICAL, reads={"href"}, when=_lists_urls)
def blocked_url(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A URL the policy blocks.

    ## What it does
    Flags a URL listed in `urls.blocked` of the policy or in one of its `urls.blocked_files`
    feeds (URLhaus, OpenPhish; the finding names the list and the line). An entry matches
    the URL a browser opens (its WHATWG href), whatever its fragment: `HTTP://Evil.Example/a`
    in a feed matches `http://evil.example/a#x`. Other URLs on the same host are not matched:
    a URL feed lists one page (often on a shared or compromised site), not the site.

    ## Why is this bad?
    The page is known to serve malware or phishing: the organisation's threat intelligence
    says so.

    ## Example
    With `urls: {blocked_files: [urlhaus.txt]}` and `http://203.0.113.9/bins/x.sh` on line
    812: that URL, "on your blocklist urlhaus.txt, line 812".
    """
    if url is None:
        return
    settings = ctx.settings
    if not settings.blocked_urls and not settings.blocked_url_feeds:
        return
    key = url_key(url.href)
    if key in settings.blocked_urls:
        yield Hit(
            f"The link is a URL your policy blocks ({clip(key)}).",
            {"url": clip(key)},
        )
        return
    listed = settings.blocked_url_feeds.match_url(url.href)
    if listed is not None:
        yield Hit(
            f"The link is on your blocklist {listed.describe()}.",
            {"url": clip(key), **feed_evidence(listed)},
        )
