"""Which IP addresses a browser may be sent to: urlvet's special-purpose address table.

The table is our own, transcribed from the IANA IPv4 and IPv6 Special-Purpose Address
Registries (the "Globally Reachable" column decides), plus what those registries leave out and
an SSRF defence needs: multicast, cloud metadata endpoints, and unallocated IPv6 space.
Python's ``ipaddress.is_global``/``is_private`` are deliberately not used: their answers have
changed between patch releases of Python.

IPv6 addresses that embed an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4,
Teredo) are classified by the IPv4 address a packet would really reach.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache

from urlvet.memo import memo_size

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class AddressRange:
    """One row of the table."""

    network: str
    name: str
    """The registry's name for the block, or ours for the additions."""
    category: str
    """A short stable label: loopback, private-use, link-local, cloud-metadata, multicast ..."""
    globally_reachable: bool
    source: str = "IANA"


@dataclass(frozen=True, slots=True)
class AddressClass:
    """What an address is, as far as sending a browser to it goes."""

    address: str
    """The address in canonical text form."""
    category: str
    """``global`` for ordinary public unicast, otherwise the table's category."""
    name: str
    """A human-readable name of the block."""
    network: str | None
    """The most specific block of the table that holds the address, if any."""
    globally_reachable: bool
    """False when a browser sent there reaches a private, local or special-purpose target."""
    embedded: AddressClass | None = None
    """For IPv6 that embeds IPv4: the classification of the IPv4 address reached."""
    via: str | None = None
    """How the IPv4 address is embedded: ipv4-mapped, ipv4-compatible, nat64, 6to4, teredo."""

    @property
    def effective(self) -> AddressClass:
        """The classification that decides: the embedded address's where there is one."""
        return self.embedded if self.embedded is not None else self


_IANA_V4: tuple[AddressRange, ...] = (
    AddressRange("0.0.0.0/8", '"This network"', "this-network", False),
    AddressRange("0.0.0.0/32", '"This host on this network"', "unspecified", False),
    AddressRange("10.0.0.0/8", "Private-Use", "private-use", False),
    AddressRange("100.64.0.0/10", "Shared Address Space (CGNAT)", "shared-address-space", False),
    AddressRange("127.0.0.0/8", "Loopback", "loopback", False),
    AddressRange("169.254.0.0/16", "Link Local", "link-local", False),
    AddressRange("172.16.0.0/12", "Private-Use", "private-use", False),
    AddressRange("192.0.0.0/24", "IETF Protocol Assignments", "protocol-assignment", False),
    AddressRange("192.0.0.0/29", "IPv4 Service Continuity Prefix", "protocol-assignment", False),
    AddressRange("192.0.0.8/32", "IPv4 dummy address", "protocol-assignment", False),
    AddressRange("192.0.0.9/32", "Port Control Protocol Anycast", "anycast", True),
    AddressRange("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "anycast", True),
    AddressRange("192.0.0.170/32", "NAT64/DNS64 Discovery", "protocol-assignment", False),
    AddressRange("192.0.0.171/32", "NAT64/DNS64 Discovery", "protocol-assignment", False),
    AddressRange("192.0.2.0/24", "Documentation (TEST-NET-1)", "documentation", False),
    AddressRange("192.31.196.0/24", "AS112-v4", "anycast", True),
    AddressRange("192.52.193.0/24", "AMT", "anycast", True),
    # Deprecated (RFC 7526); the registry leaves "globally reachable" empty. Nothing a user
    # should be sent to lives there.
    AddressRange("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "deprecated", False),
    AddressRange("192.88.99.2/32", "6a44-relay anycast address", "protocol-assignment", False),
    AddressRange("192.168.0.0/16", "Private-Use", "private-use", False),
    AddressRange("192.175.48.0/24", "Direct Delegation AS112 Service", "anycast", True),
    AddressRange("198.18.0.0/15", "Benchmarking", "benchmarking", False),
    AddressRange("198.51.100.0/24", "Documentation (TEST-NET-2)", "documentation", False),
    AddressRange("203.0.113.0/24", "Documentation (TEST-NET-3)", "documentation", False),
    AddressRange("240.0.0.0/4", "Reserved", "reserved", False),
    AddressRange("255.255.255.255/32", "Limited Broadcast", "broadcast", False),
)

_IANA_V6: tuple[AddressRange, ...] = (
    AddressRange("::1/128", "Loopback Address", "loopback", False),
    AddressRange("::/128", "Unspecified Address", "unspecified", False),
    AddressRange("::ffff:0:0/96", "IPv4-mapped Address", "ipv4-mapped", False),
    AddressRange("64:ff9b::/96", "IPv4-IPv6 Translation (NAT64)", "nat64", True),
    AddressRange("64:ff9b:1::/48", "IPv4-IPv6 Translation (local-use NAT64)", "nat64-local", False),
    AddressRange("100::/64", "Discard-Only Address Block", "discard", False),
    AddressRange("100:0:0:1::/64", "Dummy IPv6 Prefix", "protocol-assignment", False),
    AddressRange("2001::/23", "IETF Protocol Assignments", "protocol-assignment", False),
    # Teredo: the registry says N/A; the address is classified by the IPv4 client it embeds.
    AddressRange("2001::/32", "TEREDO", "teredo", True),
    AddressRange("2001:1::1/128", "Port Control Protocol Anycast", "anycast", True),
    AddressRange("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "anycast", True),
    AddressRange("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "anycast", True),
    AddressRange("2001:2::/48", "Benchmarking", "benchmarking", False),
    AddressRange("2001:3::/32", "AMT", "anycast", True),
    AddressRange("2001:4:112::/48", "AS112-v6", "anycast", True),
    # Deprecated ORCHID (RFC 7343 replaced it); the registry leaves the column empty.
    AddressRange("2001:10::/28", "Deprecated (previously ORCHID)", "deprecated", False),
    AddressRange("2001:20::/28", "ORCHIDv2", "orchid", True),
    AddressRange("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs)", "orchid", True),
    AddressRange("2001:db8::/32", "Documentation", "documentation", False),
    # 6to4: the registry says N/A; classified by the IPv4 address in bits 16-47.
    AddressRange("2002::/16", "6to4", "6to4", True),
    AddressRange("2620:4f:8000::/48", "Direct Delegation AS112 Service", "anycast", True),
    AddressRange("3fff::/20", "Documentation", "documentation", False),
    AddressRange("5f00::/16", "Segment Routing (SRv6) SIDs", "srv6", False),
    AddressRange("fc00::/7", "Unique-Local", "unique-local", False),
    AddressRange("fe80::/10", "Link-Local Unicast", "link-local", False),
)

# Not in the special-purpose registries, but never a page to send a user to.
_EXTRA: tuple[AddressRange, ...] = (
    AddressRange("224.0.0.0/4", "Multicast", "multicast", False, "RFC 5771"),
    AddressRange("ff00::/8", "Multicast", "multicast", False, "RFC 4291"),
    AddressRange("fec0::/10", "Site-Local (deprecated)", "site-local", False, "RFC 3879"),
    AddressRange("::/96", "IPv4-compatible (deprecated)", "ipv4-compatible", False, "RFC 4291"),
    AddressRange("::ffff:0:0:0/96", "IPv4-translated", "ipv4-translated", False, "RFC 2765"),
    AddressRange(
        "169.254.169.254/32",
        "Cloud metadata (AWS, GCP, Azure, OpenStack...)",
        "cloud-metadata",
        False,
        "cloud",
    ),
    AddressRange("169.254.170.2/32", "AWS ECS task metadata", "cloud-metadata", False, "cloud"),
    AddressRange(
        "169.254.170.23/32", "AWS EKS Pod Identity agent", "cloud-metadata", False, "cloud"
    ),
    AddressRange("169.254.169.123/32", "AWS time sync", "cloud-metadata", False, "cloud"),
    AddressRange("169.254.169.253/32", "AWS VPC DNS resolver", "cloud-metadata", False, "cloud"),
    AddressRange("169.254.0.23/32", "Tencent Cloud metadata", "cloud-metadata", False, "cloud"),
    AddressRange("fd00:ec2::254/128", "AWS metadata (IPv6)", "cloud-metadata", False, "cloud"),
    AddressRange("fd00:ec2::23/128", "AWS DNS / time (IPv6)", "cloud-metadata", False, "cloud"),
    AddressRange("100.100.100.200/32", "Alibaba Cloud metadata", "cloud-metadata", False, "cloud"),
    # Azure's WireServer is a public address that only answers from inside Azure, where it
    # hands out VM configuration: an SSRF target although it is globally routed.
    AddressRange("168.63.129.16/32", "Azure WireServer", "cloud-metadata", False, "cloud"),
    AddressRange("192.0.0.192/32", "Oracle Cloud metadata", "cloud-metadata", False, "cloud"),
)


def table() -> tuple[AddressRange, ...]:
    """Every row of the table, IANA rows first."""
    return _IANA_V4 + _IANA_V6 + _EXTRA


class _Lookup:
    """Longest-prefix match over the table, one dict per prefix length."""

    def __init__(self, rows: Iterable[AddressRange], bits: int) -> None:
        by_len: dict[int, dict[int, AddressRange]] = {}
        for row in rows:
            net = ipaddress.ip_network(row.network)
            if net.max_prefixlen != bits:
                continue
            by_len.setdefault(net.prefixlen, {})[int(net.network_address)] = row
        self.bits = bits
        self.levels = sorted(by_len.items(), reverse=True)
        self.masks = {plen: ((1 << bits) - 1) ^ ((1 << (bits - plen)) - 1) for plen in by_len}

    def match(self, value: int) -> AddressRange | None:
        for plen, rows in self.levels:
            row = rows.get(value & self.masks[plen])
            if row is not None:
                return row
        return None


@cache
def _lookups(extra: tuple[AddressRange, ...] = ()) -> tuple[_Lookup, _Lookup]:
    rows = table() + extra
    return _Lookup(rows, 32), _Lookup(rows, 128)


_GLOBAL_UNICAST_V6 = ipaddress.IPv6Network("2000::/3")


def classify(address: IPAddress | str) -> AddressClass:
    """Classify one address. Strings are parsed strictly (canonical IP text only)."""
    if isinstance(address, str):
        address = ipaddress.ip_address(address.strip("[]"))
    return _classify(address)


# Several rules classify the same address for one URL (and addresses repeat across URLs): a
# bounded memo of this pure function, thread-safe in CPython.
@lru_cache(maxsize=memo_size(4096))
def _classify(address: IPAddress) -> AddressClass:
    v4, v6 = _lookups()
    if isinstance(address, ipaddress.IPv4Address):
        row = v4.match(int(address))
        if row is None:
            return AddressClass(str(address), "global", "Public unicast", None, True)
        return AddressClass(
            str(address), row.category, row.name, row.network, row.globally_reachable
        )

    value = int(address)
    row = v6.match(value)
    embedded = _embedded_ipv4(address, row)
    if embedded is not None:
        inner, via = embedded
        inner_class = _classify(inner)
        if row is not None:
            return AddressClass(
                str(address),
                row.category,
                row.name,
                row.network,
                inner_class.globally_reachable and row.category != "nat64-local",
                inner_class,
                via,
            )
    if row is not None:
        return AddressClass(
            str(address), row.category, row.name, row.network, row.globally_reachable
        )
    if address in _GLOBAL_UNICAST_V6:
        return AddressClass(str(address), "global", "Public unicast", None, True)
    return AddressClass(
        str(address), "reserved", "Reserved by the IETF (not allocated)", None, False
    )


def _embedded_ipv4(
    address: ipaddress.IPv6Address, row: AddressRange | None
) -> tuple[ipaddress.IPv4Address, str] | None:
    if row is None:
        return None
    value = int(address)
    low32 = ipaddress.IPv4Address(value & 0xFFFFFFFF)
    if row.category == "ipv4-mapped":
        return low32, "ipv4-mapped"
    if row.category == "ipv4-translated":
        return low32, "ipv4-translated"
    if row.category == "ipv4-compatible" and value > 1:
        return low32, "ipv4-compatible"
    if row.category == "nat64":
        return low32, "nat64"
    if row.category == "nat64-local":
        # RFC 8215 lets an operator use any RFC 6052 prefix length from /48 to /96 inside
        # 64:ff9b:1::/48, so the position of the IPv4 address cannot be known from the
        # address alone. The block is never globally reachable (IANA), whatever it embeds;
        # the address is decoded only to explain the finding: the /96 layout when the middle
        # bits are zero, else the /48 layout (bits 48-63 and 72-87, skipping the u octet).
        if (value >> 32) & ((1 << 48) - 1) == 0:
            return low32, "nat64-local"
        high = (value >> 64) & 0xFFFF
        low = (value >> 40) & 0xFFFF
        return ipaddress.IPv4Address((high << 16) | low), "nat64-local"
    if row.category == "6to4":
        return ipaddress.IPv4Address((value >> 80) & 0xFFFFFFFF), "6to4"
    if row.category == "teredo":
        # The client's address, obfuscated by inverting every bit (RFC 4380).
        return ipaddress.IPv4Address((value & 0xFFFFFFFF) ^ 0xFFFFFFFF), "teredo"
    return None


def is_globally_reachable(address: IPAddress | str) -> bool:
    """True when a browser sent to ``address`` reaches the public Internet (see classify)."""
    return classify(address).globally_reachable


def parse_networks(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """Parse CIDR strings (host bits allowed) into networks; raises ValueError on bad input."""
    return tuple(ipaddress.ip_network(v.strip(), strict=False) for v in values)


def in_networks(address: IPAddress, networks: Iterable[IPNetwork]) -> IPNetwork | None:
    """The most specific of ``networks`` that holds ``address``, or None."""
    best: IPNetwork | None = None
    for net in networks:
        if (
            address.version == net.version
            and address in net
            and (best is None or net.prefixlen > best.prefixlen)
        ):
            best = net
    return best
