"""The DNS rules (UV220-UV226) on real answers from NSD on loopback, and on the SSRF corpus."""

from __future__ import annotations

import asyncio
import ipaddress

import pytest

from support.dnscases import (
    DNS_ONLY_CASES,
    NOT_DNS_ONLY,
    corpus_hosts,
    dns_codes,
    dns_hits,
    hosts_of,
)
from support.dnsserver import CountingRelay
from urlvet.checks.base import CheckContext, CheckSettings, defined_rules, missing_sections
from urlvet.checks.resolution import internal_name_reason
from urlvet.findings import Severity
from urlvet.resolve import Resolution, Resolver

pytestmark = pytest.mark.dns

Z = "urlvet.test"
SETTINGS = CheckSettings(
    internal_suffixes=frozenset({"local", "internal", "lan", "corp", "home.arpa", "localdomain"})
)

# zone name -> the DNS rules that must fire (and no others).
EXPECTED: dict[str, set[str]] = {
    "public": set(),
    "v4only": set(),
    "private-10": {"UV220"},
    "private-192": {"UV220"},
    "loopback": {"UV220"},
    "metadata": {"UV220"},
    "loopback6": {"UV220"},
    "mapped-loopback": {"UV220"},
    "mapped-private": {"UV220"},
    "mixed": {"UV220"},
    "mixed-family": {"UV220"},
    "to-corp": {"UV220", "UV221"},
    "to-internal": {"UV221", "UV222"},
    "to-single-label": {"UV221", "UV223"},
    "to-localhost": {"UV221", "UV223"},
    "to-public-elsewhere": set(),
    "ttl0": {"UV226"},
    "ttl1": {"UV226"},
    "short": {"UV226"},
    "chain": set(),
    "chain-private": {"UV220"},
    "loop-a": {"UV223"},
    "dangling": {"UV222"},
    "txt-only": {"UV225"},
    "does-not-exist": {"UV222"},
    "big": set(),
}


@pytest.fixture(scope="module")
def resolver(nsd: tuple[str, int]) -> Resolver:
    return Resolver([nsd], timeout=2.0)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_zone_case_raises_exactly_the_expected_codes(resolver: Resolver, name: str) -> None:
    res = resolver.resolve(f"{name}.{Z}")
    assert dns_codes(res, SETTINGS) == EXPECTED[name], res


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_async_answers_raise_the_same_codes(nsd: tuple[str, int], name: str) -> None:
    res = asyncio.run(Resolver([nsd]).aresolve(f"{name}.{Z}"))
    assert dns_codes(res, SETTINGS) == EXPECTED[name]


def test_timeout_is_reported(blackhole_ns: tuple[str, int]) -> None:
    res = Resolver([blackhole_ns], timeout=0.3).resolve(f"public.{Z}")
    assert dns_codes(res, SETTINGS) == {"UV224"}


def test_private_answer_beside_a_timeout_still_blocks(nsd: tuple[str, int]) -> None:
    # The AAAA query is never answered; the A answer holds a private address.
    with CountingRelay(nsd, drop=frozenset({"AAAA"})) as relay:
        res = Resolver([relay.address], timeout=0.3).resolve(f"mixed.{Z}")
    assert dns_codes(res, SETTINGS) == {"UV220", "UV224"}


def test_closed_nameserver_port_is_a_lookup_failure() -> None:
    res = Resolver().resolve(f"public.{Z}")  # conftest's guard: 127.0.0.1:1
    assert dns_codes(res, SETTINGS) == {"UV223"}


# -- the SSRF corpus ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", DNS_ONLY_CASES, ids=hosts_of(DNS_ONLY_CASES))
def test_dns_only_corpus_payload_is_blocked(resolver: Resolver, case: object) -> None:
    from support.dnscases import DnsOnlyCase

    assert isinstance(case, DnsOnlyCase)
    res = resolver.resolve(case.host)
    assert case.target in res.addresses
    hits = dns_hits(res, SETTINGS)
    assert "UV220" in hits
    flagged = {f["address"] for f in hits["UV220"][0].evidence["flagged"]}
    assert case.target in flagged
    assert defined_rules()["UV220"].severity is Severity.CRITICAL


def test_corpus_hosts_are_all_classified() -> None:
    # Every domain-like host of the corpus files is either a DNS-only case served by the test
    # zones or listed with the reason DNS is not what catches it: a new corpus entry fails here
    # until someone decides which.
    known = set(hosts_of(DNS_ONLY_CASES)) | set(NOT_DNS_ONLY)
    found = set(corpus_hosts())
    assert found - known == set()
    assert known - found == set()


def test_rebinding_service_is_caught_by_both_address_and_ttl(resolver: Resolver) -> None:
    res = resolver.resolve("make-1.2.3.4-rebind-169.254-169.254-rr.1u.ms")
    assert dns_codes(res, SETTINGS) == {"UV220", "UV226"}
    message = dns_hits(res, SETTINGS)["UV220"][0].message
    assert "1.2.3.4" in message
    assert "rebinding" in message


# -- policy networks ---------------------------------------------------------------------------


def nets(*cidrs: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(c) for c in cidrs)


@pytest.mark.parametrize("name", ["private-10", "mapped-private", "mixed", "to-corp"])
def test_allowed_network_silences_private_answers(resolver: Resolver, name: str) -> None:
    settings = CheckSettings(allowed_networks=nets("10.0.0.0/8"))
    assert "UV220" not in dns_codes(resolver.resolve(f"{name}.{Z}"), settings)


def test_allowed_network_does_not_cover_other_private_ranges(resolver: Resolver) -> None:
    settings = CheckSettings(allowed_networks=nets("10.0.0.0/8"))
    assert "UV220" in dns_codes(resolver.resolve(f"private-192.{Z}"), settings)


def test_blocked_network_blocks_a_public_answer(resolver: Resolver) -> None:
    settings = CheckSettings(blocked_networks=nets("93.184.215.0/24"))
    hits = dns_hits(resolver.resolve(f"public.{Z}"), settings)
    flagged = hits["UV220"][0].evidence["flagged"]
    assert flagged == [
        {
            "address": "93.184.215.14",
            "category": "blocked-by-policy",
            "network": "93.184.215.0/24",
            "place": "a network your organisation's policy blocks",
        }
    ]


def test_ipv4_mapped_loopback_is_judged_by_the_ipv4_address(resolver: Resolver) -> None:
    hits = dns_hits(resolver.resolve(f"mapped-loopback.{Z}"), SETTINGS)
    (entry,) = hits["UV220"][0].evidence["flagged"]
    assert entry["category"] == "loopback"
    assert entry["via"] == "ipv4-mapped"
    assert entry["reaches"] == "127.0.0.1"
    assert "this computer itself" in hits["UV220"][0].message


def test_cloud_metadata_answer_names_the_danger(resolver: Resolver) -> None:
    message = dns_hits(resolver.resolve(f"metadata.{Z}"), SETTINGS)["UV220"][0].message
    assert "cloud metadata service" in message


# -- the rules themselves ----------------------------------------------------------------------


def test_no_resolution_means_no_dns_findings() -> None:
    assert dns_codes(None, SETTINGS) == set()


def test_short_ttl_without_addresses_is_not_reported() -> None:
    res = Resolution("x.example", "no-answer", (), (), 0)
    assert "UV226" not in dns_codes(res, SETTINGS)


@pytest.mark.parametrize(
    ("name", "internal"),
    [
        ("db.corp", True),
        ("fileserver", True),
        ("localhost", True),
        ("app.localhost", True),
        ("printer.home.arpa", True),
        ("intranet.internal.", True),
        ("corp.example.com", False),
        ("internal.example.com", False),
        ("example.com", False),
    ],
)
def test_internal_names(name: str, internal: bool) -> None:
    assert (internal_name_reason(name, SETTINGS) is not None) is internal


RULES = {
    "UV220": ("private-address-resolution", Severity.CRITICAL, 918),
    "UV221": ("cname-to-internal-name", Severity.HIGH, 918),
    "UV222": ("dns-name-not-found", Severity.MEDIUM, None),
    "UV223": ("dns-lookup-failed", Severity.MEDIUM, None),
    "UV224": ("dns-timeout", Severity.MEDIUM, None),
    "UV225": ("dns-no-address", Severity.MEDIUM, None),
    "UV226": ("short-dns-ttl", Severity.LOW, 367),
}


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_is_registered_and_documented(code: str) -> None:
    import urlvet.checks.resolution  # noqa: F401

    rule = defined_rules()[code]
    name, severity, cwe = RULES[code]
    assert (rule.name, rule.severity, rule.kind, rule.cwe) == (name, severity, "dns", cwe)
    assert missing_sections(rule.doc) == []
    assert rule.summary


def test_messages_name_the_host_in_plain_words(resolver: Resolver) -> None:
    for name in EXPECTED:
        res = resolver.resolve(f"{name}.{Z}")
        for hits in dns_hits(res, SETTINGS).values():
            for hit in hits:
                assert res.name in hit.message
                assert hit.message.endswith(".")


def test_rules_never_raise_on_odd_resolutions() -> None:
    odd = [
        Resolution("x.example", "ok", ("not-an-address",), (), 300),
        Resolution("x.example", "ok", (), ("",), None),
        Resolution("x.example", "weird-status", (), (), None),
    ]
    for res in odd:
        ctx = CheckContext(settings=SETTINGS, resolution=res)
        for rule in defined_rules().values():
            if rule.kind == "dns":
                list(rule.check(None, ctx))


def test_onion_names_are_never_sent_to_dns(nsd: tuple[str, int]) -> None:
    # RFC 7686: a resolver must not be asked about .onion. The relay counts what reaches NSD.
    from urlvet import Policy, Vetter

    with CountingRelay(nsd) as relay:
        host, port = relay.address
        vetter = Vetter(Policy(dns={"nameservers": [f"{host}:{port}"]}))
        onion = vetter.vet(
            "https://duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion/"
        )
        assert "UV209" in onion.codes
        assert not [c for c in onion.codes if c.startswith("UV22")]
        assert relay.total() == 0
        vetter.vet(f"https://public.{Z}/")  # the control: an ordinary name is asked
        assert relay.total() == 2
