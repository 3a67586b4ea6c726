"""UV2xx: where the URL points on the network, judged from the URL alone (no DNS)."""

from __future__ import annotations

import pytest

from support import OFFLINE, codes
from urlvet import Decision, Policy, Vetter
from urlvet.checks.addresses import embedded_addresses, raw_host


def decision(url: str, server: str | None = None, vetter: Vetter = OFFLINE) -> str:
    return vetter.vet(url, server).decision.value


# -- UV201 non-public-address-literal, UV206 obfuscated-address: every spelling ---------------

LOOPBACK_SPELLINGS = [
    "https://127.0.0.1/",
    "https://2130706433/",  # decimal dword
    "https://0x7f000001/",  # hex dword
    "https://0x7f.0x0.0x0.0x1/",  # hex octets
    "https://0177.0.0.1/",  # octal first octet
    "https://017700000001/",  # octal dword
    "https://0177.0x0.0.1/",  # mixed
    "https://127.1/",  # short form (a.d)
    "https://127.0.1/",  # short form (a.b.d)
    "https://１２７．０．０．１/",  # fullwidth digits and dots
    "https://127。0。0。1/",  # ideographic full stops
    "https://127｡0｡0｡1/",  # halfwidth ideographic full stops
    "https://%31%32%37.0.0.1/",  # percent-encoded
    "https://127%2e0%2e0%2e1/",  # percent-encoded dots
    "https://0x7F.1/",
    "https://127.0.0.1./",  # a trailing dot
    "https://[::1]/",
    "https://[0000::1]/",
    "https://[0:0:0:0:0:0:0:1]/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::ffff:7f00:1]/",
    "https://[0:0:0:0:0:ffff:127.0.0.1]/",
    "https://[::127.0.0.1]/",  # IPv4-compatible
    "https://[64:ff9b::127.0.0.1]/",  # NAT64
    "https://[2002:7f00:1::]/",  # 6to4
    "https://user@127.0.0.1/",
    "https://127.0.0.1:8443/",
]


@pytest.mark.parametrize("url", LOOPBACK_SPELLINGS)
def test_every_spelling_of_loopback_is_blocked(url: str) -> None:
    verdict = OFFLINE.vet(url)
    assert verdict.decision.value == "block"
    assert "UV201" in verdict.codes


@pytest.mark.parametrize(
    "url",
    [
        "https://[::]/",
        "https://0/",
        "https://0.0.0.0/",
        "https://169.254.169.254/",
        "https://2852039166/",
        "https://0xa9fea9fe/",
        "https://0251.0376.0251.0376/",
        "https://[::ffff:a9fe:a9fe]/",
        "https://[fd00:ec2::254]/",
        "https://100.100.100.200/",
        "https://192.0.0.192/",
        "https://168.63.129.16/",
        "https://10.0.0.1/",
        "https://172.16.0.1/",
        "https://192.168.1.1/",
        "https://3232235777/",
        "https://100.64.0.1/",
        "https://198.18.0.1/",
        "https://224.0.0.1/",
        "https://239.255.255.250/",
        "https://255.255.255.255/",
        "https://240.0.0.1/",
        "https://192.0.2.1/",
        "https://[fe80::1]/",
        "https://[fc00::1]/",
        "https://[ff02::1]/",
        "https://[2001:db8::1]/",
        "https://[2001:0:4136:e378:8000:63bf:3f57:fdf2]/",  # Teredo to 192.168.2.13
        "https://[64:ff9b:1::a00:1]/",  # local-use NAT64
    ],
)
def test_non_public_address_literal_is_blocked(url: str) -> None:
    verdict = OFFLINE.vet(url)
    assert verdict.decision.value == "block"
    assert "UV201" in verdict.codes
    assert "UV205" not in verdict.codes


@pytest.mark.parametrize(
    ("url", "obfuscated"),
    [
        ("https://127.0.0.1/", False),
        ("https://127.0.0.1./", False),
        ("https://[::1]/", False),
        ("https://[fe80::1]/", False),
        ("https://8.8.8.8/", False),
        ("https://2130706433/", True),
        ("https://0x7f.1/", True),
        ("https://0177.0.0.1/", True),
        ("https://１２７．０．０．１/", True),
        ("https://%31%32%37.0.0.1/", True),
        ("https://134744072/", True),  # 8.8.8.8: disguised although public
        ("https://[::ffff:127.0.0.1]/", True),
        ("https://[::ffff:7f00:1]/", True),  # the hex form of a mapped address too
        ("https://[::ffff:808:808]/", True),
        ("https://[64:ff9b::8.8.8.8]/", True),  # dotted form inside IPv6
        ("https://[64:ff9b::808:808]/", False),  # a real NAT64 address, plainly written
    ],
)
def test_obfuscated_address(url: str, obfuscated: bool) -> None:
    assert ("UV206" in codes(url)) is obfuscated


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "https://[::ffff:7f00:1]/",
            "The address is disguised: written as '[::ffff:7f00:1]', it means the IPv4 "
            "address 127.0.0.1.",
        ),
        (
            "https://0x7f.1/",
            "The address is disguised: written as '0x7f.1', it means 127.0.0.1.",
        ),
        (
            "https://[64:ff9b::8.8.8.8]/",
            "The address is disguised: written as '[64:ff9b::8.8.8.8]', it means [64:ff9b::808:808].",
        ),
    ],
)
def test_obfuscated_address_says_what_it_means_once(url: str, message: str) -> None:
    [finding] = [f for f in OFFLINE.vet(url).findings if f.code == "UV206"]
    assert finding.message == message


def test_obfuscated_public_address_blocks_although_public() -> None:
    verdict = OFFLINE.vet("https://134744072/")
    assert set(verdict.codes) == {"UV205", "UV206"}
    assert verdict.decision.value == "block"


@pytest.mark.parametrize(
    ("raw", "host"),
    [
        ("https://0x7f.1/x", "0x7f.1"),
        ("https://user:pw@127.1:80/", "127.1"),
        ("http:127.0.0.1/", "127.0.0.1"),
        ("https://[::1]:8080/", "[::1]"),
        ("https://a.b\\c", "a.b"),
        ("nocolon", None),
    ],
)
def test_raw_host_reads_the_host_as_written(raw: str, host: str | None) -> None:
    assert raw_host(raw) == host


# -- UV205 public-address-literal ------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["https://8.8.8.8/", "https://[2606:4700:4700::1111]/", "https://[::ffff:8.8.8.8]/"]
)
def test_public_address_literal_warns(url: str) -> None:
    verdict = OFFLINE.vet(url)
    assert "UV205" in verdict.codes
    assert "UV201" not in verdict.codes


def test_public_address_literal_is_quiet_for_names_and_allowed_networks() -> None:
    assert "UV205" not in codes("https://example.com/")
    allowed = Vetter(Policy(dns={"enabled": False}, networks={"allowed": ["8.8.8.0/24"]}))
    assert codes("https://8.8.8.8/", vetter=allowed) == set()


# -- UV201 exemptions: a local server's callback, allowed networks ---------------------------


@pytest.mark.parametrize("server", ["stdio", "http://127.0.0.1:9000/mcp", "http://localhost/"])
def test_local_server_may_send_the_user_to_loopback(server: str) -> None:
    verdict = OFFLINE.vet("http://127.0.0.1:33418/callback", server)
    assert verdict.decision.value == "allow"
    assert verdict.codes == ("UV404",)


@pytest.mark.parametrize("server", [None, "https://mcp.example.com/mcp", "https://10.0.0.5/"])
def test_remote_or_unknown_server_may_not(server: str | None) -> None:
    verdict = OFFLINE.vet("http://127.0.0.1:33418/callback", server)
    assert verdict.decision.value == "block"
    assert "UV201" in verdict.codes


def test_local_server_may_not_send_the_user_to_a_private_network() -> None:
    verdict = OFFLINE.vet("https://192.168.1.1/", "stdio")
    assert "UV201" in verdict.codes
    assert verdict.decision.value == "block"


def test_allowed_network_silences_address_rules() -> None:
    corp = Vetter(Policy(dns={"enabled": False}, networks={"allowed": ["10.20.0.0/16"]}))
    assert "UV201" not in codes("https://10.20.1.2/", vetter=corp)
    assert "UV201" not in codes("https://[::ffff:10.20.1.2]/", vetter=corp)
    assert "UV201" in codes("https://10.21.1.2/", vetter=corp)


# -- UV207 blocked-network ---------------------------------------------------------------------


def test_blocked_network() -> None:
    vetter = Vetter(Policy(dns={"enabled": False}, networks={"blocked": ["203.0.114.0/24"]}))
    assert "UV207" in codes("https://203.0.114.10/", vetter=vetter)
    assert "UV207" in codes("https://[::ffff:203.0.114.10]/", vetter=vetter)  # embedded
    assert "UV207" not in codes("https://203.0.115.10/", vetter=vetter)
    assert "UV205" not in codes("https://203.0.114.10/", vetter=vetter)
    assert decision("https://203.0.114.10/", vetter=vetter) == "block"


def test_narrower_allowed_network_carves_out_of_a_blocked_one() -> None:
    vetter = Vetter(
        Policy(
            dns={"enabled": False},
            networks={"blocked": ["34.210.62.0/25"], "allowed": ["34.210.62.107/32"]},
        )
    )
    assert "UV207" not in codes("https://34.210.62.107/", vetter=vetter)
    assert "UV207" in codes("https://34.210.62.106/", vetter=vetter)
    wider = Vetter(
        Policy(
            dns={"enabled": False},
            networks={"blocked": ["34.210.62.0/25"], "allowed": ["34.0.0.0/8"]},
        )
    )
    assert "UV207" in codes("https://34.210.62.107/", vetter=wider)


# -- UV202 localhost-name, UV203 internal-name ---------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://localhost/",
        "https://LOCALHOST./",
        "https://app.localhost/",
        "https://a.b.localhost:3000/",
    ],
)
def test_localhost_names(url: str) -> None:
    assert "UV202" in codes(url)
    assert "UV203" not in codes(url)
    assert decision(url) == "block"


@pytest.mark.parametrize(
    "url",
    [
        "https://router/",
        "https://intranet/",
        "https://ip6-localhost/",
        "https://printer.local/",
        "https://nas.lan/",
        "https://wiki.corp/",
        "https://host.internal/",
        "https://metadata.google.internal/",
        "https://box.home.arpa/",
        "https://home.arpa/",
        "https://db.localdomain/",
        "https://svc.ns.svc.cluster.local/",
        "https://vault.service.consul/",
    ],
)
def test_internal_names(url: str) -> None:
    verdict = OFFLINE.vet(url)
    assert "UV203" in verdict.codes
    assert verdict.decision.value == "block"


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/",
        "https://local.example.com/",  # "local" as a label of a public name is fine
        "https://corp.example.com/",
        "https://internal.dev/",  # .dev is a public TLD
        "https://www.example.test/",  # resolves nowhere: DNS rules say so, not UV203
    ],
)
def test_public_names_are_not_internal(url: str) -> None:
    assert not codes(url) & {"UV202", "UV203", "UV204"}


def test_allowed_domain_silences_internal_name() -> None:
    vetter = Vetter(Policy(dns={"enabled": False}, domains={"allowed": ["corp"]}))
    assert "UV203" not in codes("https://wiki.corp/", vetter=vetter)
    assert "UV203" in codes("https://wiki.lan/", vetter=vetter)


def test_internal_suffixes_come_from_the_policy() -> None:
    vetter = Vetter(
        Policy(dns={"enabled": False}, domains={"internal_suffixes": ["acme-internal.net"]})
    )
    assert "UV203" in codes("https://wiki.acme-internal.net/", vetter=vetter)
    # The list replaces the default one: home.arpa (under the real TLD .arpa) is no longer in it.
    assert "UV203" not in codes("https://nas.home.arpa/", vetter=vetter)


def test_a_name_under_a_top_level_domain_the_suffix_list_does_not_know_is_internal() -> None:
    vetter = Vetter(
        Policy(dns={"enabled": False}, domains={"internal_suffixes": ["acme-internal.net"]})
    )
    # .local is out of the policy's list, but still no public top-level domain.
    verdict = vetter.vet("https://printer.local/", server="https://mcp.example.com/mcp")
    (finding,) = [f for f in verdict.findings if f.code == "UV203"]
    assert finding.evidence["reason"] == "unknown-tld"
    assert verdict.decision is Decision.BLOCK
    assert "UV203" in codes("https://kubernetes.default.svc/")
    assert "UV203" in codes("https://my.router/")
    # Reserved names that resolve nowhere are left to DNS; real TLDs are not internal.
    for url in (
        "https://evil.example/",
        "https://a.test/",
        "https://例え.テスト/",
        "https://a.dev/",
    ):
        assert "UV203" not in codes(url), url
    allowed = Vetter(Policy(dns={"enabled": False}, domains={"allowed": ["corp.lab"]}))
    assert "UV203" not in codes("https://wiki.corp.lab/", vetter=allowed)


# -- UV204 address-in-name: wildcard DNS services ---------------------------------------------


@pytest.mark.parametrize(
    ("url", "embedded", "result"),
    [
        ("https://10.0.0.1.nip.io/", ["10.0.0.1"], "block"),
        ("https://app.192.168.1.1.nip.io/", ["192.168.1.1"], "block"),
        ("https://app-10-0-0-1.nip.io/", ["10.0.0.1"], "block"),
        ("https://0a000001.nip.io/", ["10.0.0.1"], "block"),  # hex form
        ("https://app-c0a80101.nip.io/", ["192.168.1.1"], "block"),
        ("https://169.254.169.254.nip.io/", ["169.254.169.254"], "block"),
        ("https://company.127.0.0.1.nip.io/", ["127.0.0.1"], "block"),
        ("https://127-0-0-1.sslip.io/", ["127.0.0.1"], "block"),  # dashed
        ("https://www-192-168-1-1.sslip.io/", ["192.168.1.1"], "block"),
        ("https://7f000001.sslip.io/", ["127.0.0.1"], "block"),  # hex
        ("https://--1.sslip.io/", ["::1"], "block"),  # IPv6 dashed
        ("https://fe80--1.sslip.io/", ["fe80::1"], "block"),
        ("https://10.0.0.1.xip.io/", ["10.0.0.1"], "block"),
        ("https://localtest.me/", [], "block"),  # always loopback
        ("https://app.localtest.me/", [], "block"),
        ("https://lvh.me/", [], "block"),
        ("https://sub.lvh.me/", [], "block"),
        ("https://1ynrnhl.xip.io/", [], "block"),  # base36: no readable address
        ("https://make-127.0.0.1-rr.1u.ms/", ["127.0.0.1"], "block"),
        (
            "https://make-1.2.3.4-rebind-169.254-169.254-rr.1u.ms/",
            ["1.2.3.4", "169.254.169.254"],
            "block",
        ),
        ("https://make-1.2.3.4-rebind-8.8.8.8-rr.1u.ms/", ["1.2.3.4", "8.8.8.8"], "block"),
        ("https://7f000001.c0a80001.rbndr.us/", ["127.0.0.1", "192.168.0.1"], "block"),
        ("https://08080808.01010101.rbndr.us/", ["8.8.8.8", "1.1.1.1"], "block"),  # rebinding
        ("https://8.8.8.8.nip.io/", ["8.8.8.8"], "warn"),  # a public address: disguise only
        ("https://app-1-1-1-1.sslip.io/", ["1.1.1.1"], "warn"),
    ],
)
def test_wildcard_dns_names_are_classified_by_their_embedded_address(
    url: str, embedded: list[str], result: str
) -> None:
    verdict = OFFLINE.vet(url)
    assert "UV204" in verdict.codes
    assert verdict.decision.value == result
    (finding,) = [f for f in verdict.findings if f.code == "UV204"]
    found = [e["address"] for e in finding.evidence.get("embedded", [])]
    assert found == embedded


def test_wildcard_names_are_not_flagged_elsewhere() -> None:
    assert "UV204" not in codes("https://nip.io.example.com/")
    assert "UV204" not in codes("https://10.0.0.1.example.com/")


@pytest.mark.parametrize(
    ("label", "addresses"),
    [
        ("1.2.3.4.5.6", ["1.2.3.4", "2.3.4.5", "3.4.5.6"]),
        ("999.1.1.1", []),
        ("1111.2.3.4", []),
        ("a0a000001", []),
        ("x.--1", ["::1"]),
        ("2a01-4f8-c17-b8f--2", ["2a01:4f8:c17:b8f::2"]),
    ],
)
def test_embedded_addresses(label: str, addresses: list[str]) -> None:
    assert [str(a) for a in embedded_addresses(label)] == addresses


# -- UV208 blocked-domain ----------------------------------------------------------------------


def test_blocked_domain_matches_the_domain_and_below_in_any_spelling() -> None:
    vetter = Vetter(Policy(dns={"enabled": False}, domains={"blocked": ["evil.example", "faß.de"]}))
    assert "UV208" in codes("https://evil.example/", vetter=vetter)
    assert "UV208" in codes("https://login.EVIL.example./", vetter=vetter)
    assert "UV208" in codes("https://faß.de/", vetter=vetter)
    assert "UV208" in codes("https://xn--fa-hia.de/", vetter=vetter)
    assert "UV208" not in codes("https://fass.de/", vetter=vetter)
    assert "UV208" not in codes("https://notevil.example/", vetter=vetter)
    assert decision("https://evil.example/", vetter=vetter) == "block"


def test_finding_evidence_names_the_range() -> None:
    verdict = OFFLINE.vet("https://[::ffff:169.254.169.254]/")
    (finding,) = [f for f in verdict.findings if f.code == "UV201"]
    assert finding.evidence["category"] == "cloud-metadata"
    assert finding.evidence["embedded_ipv4"] == "169.254.169.254"
    assert finding.evidence["via"] == "ipv4-mapped"
    assert "cloud metadata" in finding.message
    assert finding.cwe == 918


def test_local_use_nat64_is_named_by_its_block() -> None:
    verdict = OFFLINE.vet("https://[64:ff9b:1:808:8:800::]/")
    (finding,) = [f for f in verdict.findings if f.code == "UV201"]
    assert finding.evidence["category"] == "nat64-local"
    assert "hidden inside" not in finding.message


@pytest.mark.parametrize(
    "url",
    [
        "https://duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion/",
        "https://login.example.ONION./",
    ],
)
def test_an_onion_service_is_a_warning(url: str) -> None:
    v = OFFLINE.vet(url)
    assert v.decision is Decision.WARN
    assert "UV209" in v.codes


@pytest.mark.parametrize(
    "url", ["https://onion.example.com/", "https://www.torproject.org/", "https://x.onion.to/"]
)
def test_onion_elsewhere_in_a_name_is_not_an_onion_service(url: str) -> None:
    assert "UV209" not in OFFLINE.vet(url).codes


def test_a_policy_can_allow_a_known_onion_mirror() -> None:
    onion = "duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion"
    vetter = Vetter(Policy(dns={"enabled": False}, domains={"allowed": [onion]}))
    assert "UV209" not in vetter.vet(f"https://{onion}/").codes


@pytest.mark.parametrize(
    ("url", "server", "fires"),
    [
        ("https://www.example.com/out?next=http%3A%2F%2F192.168.1.1%2Fadmin", None, True),
        ("https://www.example.com/?u=http://0x7f.1/", None, True),  # any spelling
        ("https://www.example.com/?u=HTTP://[::ffff:a9fe:a9fe]/latest", None, True),
        ("https://www.example.com/?u=http://printer.local/", None, True),
        ("https://www.example.com/?u=http://intranet/", None, True),
        ("https://www.example.com/?u=http%3A%2F%2Flocalhost%3A8080%2F", None, True),
        ("https://www.example.com/?u=https://www.google.com/", None, False),
        ("https://www.example.com/?u=http://8.8.8.8/", None, False),  # public
        ("https://www.example.com/?text=see+http://localhost+for+more", None, False),
        ("https://www.example.com/?u=javascript://localhost/%0aalert(1)", None, False),
        # An app's own sign-in callback (RFC 8252), from any server; any loopback page
        # for a local server.
        (
            "https://accounts.google.com/o/oauth2/v2/auth?redirect_uri=http://127.0.0.1:8/cb",
            None,
            False,
        ),
        (
            "https://accounts.google.com/o/oauth2/v2/auth?redirect_uri=http://10.0.0.5/cb",
            None,
            True,
        ),
        ("https://www.example.com/?next=http://localhost:3000/", "stdio", False),
        ("https://www.example.com/?next=http://localhost:3000/", "https://mcp.example.com/", True),
    ],
)
def test_an_internal_url_in_a_parameter_is_a_warning(
    url: str, server: str | None, fires: bool
) -> None:
    v = OFFLINE.vet(url, server)
    assert ("UV210" in v.codes) is fires, v.codes


def test_an_allowed_network_in_a_parameter_is_not_reported() -> None:
    vetter = Vetter(Policy(dns={"enabled": False}, networks={"allowed": ["10.20.0.0/16"]}))
    assert "UV210" not in vetter.vet("https://www.example.com/?u=http://10.20.1.2/").codes
    assert "UV210" in vetter.vet("https://www.example.com/?u=http://10.30.1.2/").codes
