"""The TLS handshake probe (UV601-UV607) and the HSTS preload knowledge (UV101).

Real TLS servers on loopback (tests/support/tlsserver.py) with certificates made here by trustme and
cryptography; the names point at them through the NSD fixture (tests/dns/zone/
tlsprobe.test.zone). The policy lets the probe reach 127.0.0.2 only: the servers on
127.0.0.3 record every connection, and must see none. Every server records the bytes it
receives after the handshake: a probe must send none.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme
from click.testing import CliRunner

from support.tlsserver import TlsServer, legacy_tls_supported, self_signed
from urlvet import Decision, Policy, PolicyError, Severity, Vetter, load_policy
from urlvet.cli import main
from urlvet.findings import Verdict
from urlvet.hsts import is_hsts_preloaded
from urlvet.tls import Prober, certificate_covers, probe_address

pytestmark = pytest.mark.dns

ALLOWED = "127.0.0.2"
FORBIDDEN = "127.0.0.3"
TIMEOUT = 1.0
ZONE = "tlsprobe.test"
NOW = dt.datetime.now(dt.UTC)


# -- the servers ------------------------------------------------------------------------------


class Pki:
    """A test CA whose certificate is the probe's only trust anchor, and a CA nobody trusts."""

    def __init__(self, directory: Path) -> None:
        self.ca = trustme.CA(organization_name="Urlvet Test CA")
        self.stranger = trustme.CA(organization_name="Unknown CA")
        self.ca_file = directory / "anchors.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_file))

    def leaf(self, *names: str, ca: trustme.CA | None = None, **dates: Any) -> tuple[bytes, bytes]:
        cert = (ca or self.ca).issue_cert(*names, **dates)
        chain = b"".join(p.bytes() for p in cert.cert_chain_pems)
        return chain, cert.private_key_pem.bytes()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


def _name(label: str) -> str:
    return f"{label}.{ZONE}"


@pytest.fixture(scope="module")
def servers(pki: Pki) -> Iterator[dict[str, TlsServer]]:
    day = dt.timedelta(days=1)
    specs: dict[str, tuple[str, tuple[bytes, bytes] | None]] = {
        "good": (ALLOWED, pki.leaf(_name("good"))),
        "expired": (
            ALLOWED,
            pki.leaf(_name("expired"), not_before=NOW - 90 * day, not_after=NOW - 2 * day),
        ),
        "not-yet-valid": (
            ALLOWED,
            pki.leaf(_name("not-yet-valid"), not_before=NOW + 2 * day, not_after=NOW + 90 * day),
        ),
        "wrong-name": (ALLOWED, pki.leaf("someone-else.test", "*.elsewhere.test")),
        "self-signed": (ALLOWED, self_signed(_name("self-signed"))),
        "other-ca": (ALLOWED, pki.leaf(_name("other-ca"), ca=pki.stranger)),
        "fresh": (
            ALLOWED,
            pki.leaf(_name("fresh"), not_before=NOW - day, not_after=NOW + 89 * day),
        ),
        "lookalike": (
            ALLOWED,
            pki.leaf("paypal-login.net", not_before=NOW - day, not_after=NOW + 89 * day),
        ),
        "ip": (ALLOWED, pki.leaf(ALLOWED)),
        "wss": (ALLOWED, pki.leaf(_name("wss"))),
        "forbidden": (FORBIDDEN, pki.leaf(_name("forbidden"), _name("mixed"), FORBIDDEN)),
        "plain": (ALLOWED, None),
        "silent": (ALLOWED, None),
    }
    running: dict[str, TlsServer] = {}
    try:
        for label, (address, pem) in specs.items():
            mode: Any = label if pem is None else "tls"  # plain and silent serve no certificate
            running[label] = TlsServer(address, mode, *(pem or ())).__enter__()
        yield running
    finally:
        for server in running.values():
            server.close()


def url_of(servers: dict[str, TlsServer], label: str, scheme: str = "https") -> str:
    host = "paypal-login.net" if label == "lookalike" else _name(label)
    return f"{scheme}://{host}:{servers[label].port}/account"


def tls_policy(nsd: tuple[str, int], pki: Pki, **tls: Any) -> Policy:
    """DNS from the NSD fixture, the probe on, trusting the test CA, reaching 127.0.0.2 only."""
    host, port = nsd
    section: dict[str, Any] = {
        "probe": True,
        "ca_file": str(pki.ca_file),
        "timeout": TIMEOUT,
        "probe_networks": [f"{ALLOWED}/32"],
        **tls,
    }
    return Policy().with_changes(
        dns={"nameservers": [f"{host}:{port}"]},
        networks={"allowed": [f"{ALLOWED}/32"]},
        ignore=["UV107"],  # every test server is on a port of its own
        tls=section,
    )


@pytest.fixture
def vetter(nsd: tuple[str, int], pki: Pki) -> Vetter:
    return Vetter(tls_policy(nsd, pki))


def vet_both(vetter: Vetter, url: str) -> Verdict:
    """The verdict of vet and of avet (a fresh vetter for each, so neither hits a cache),
    which must agree."""
    policy = vetter.policy
    sync = Vetter(policy).vet(url)
    async_ = asyncio.run(Vetter(policy).avet(url))
    assert sync.codes == async_.codes
    assert sync.decision is async_.decision
    assert (sync.tls is None) == (async_.tls is None)
    if sync.tls is not None and async_.tls is not None:
        assert sync.tls.status == async_.tls.status
    return sync


def finding(verdict: Verdict, code: str) -> Any:
    return next(f for f in verdict.findings if f.code == code)


def assert_handshake_only(server: TlsServer) -> None:
    """Every connection the server saw completed no more than a handshake: no byte after."""
    server.wait_closed()
    assert server.connections, "the probe never connected"
    for conn in server.connections:
        assert bytes(conn.received_after_handshake) == b""


# -- what each certificate gets ---------------------------------------------------------------


def test_a_good_certificate_is_allowed_with_its_facts(
    vetter: Vetter, servers: dict[str, TlsServer]
) -> None:
    verdict = vet_both(vetter, url_of(servers, "good"))
    assert verdict.decision is Decision.ALLOW
    assert not [c for c in verdict.codes if c.startswith("UV6")]
    assert verdict.tls is not None
    assert verdict.tls.status == "ok"
    assert verdict.tls.address == ALLOWED
    assert verdict.tls.host == _name("good")
    assert verdict.tls.issuer == "Urlvet Test CA"
    assert verdict.tls.names == (_name("good"),)
    assert verdict.tls.version in ("TLSv1.2", "TLSv1.3")
    assert verdict.tls.valid_to is not None
    assert_handshake_only(servers["good"])
    assert all(c.handshake for c in servers["good"].connections)


def test_an_expired_certificate_is_uv604(vetter: Vetter, servers: dict[str, TlsServer]) -> None:
    verdict = vet_both(vetter, url_of(servers, "expired"))
    assert "UV604" in verdict.codes
    assert verdict.decision is Decision.BLOCK
    f = finding(verdict, "UV604")
    assert "expired on" in f.message
    assert f.evidence["valid_to"].startswith(str((NOW - dt.timedelta(days=2)).date()))
    assert_handshake_only(servers["expired"])


def test_a_certificate_not_yet_valid_is_uv604(
    vetter: Vetter, servers: dict[str, TlsServer]
) -> None:
    verdict = vet_both(vetter, url_of(servers, "not-yet-valid"))
    assert "UV604" in verdict.codes
    assert "not valid until" in finding(verdict, "UV604").message


def test_a_certificate_for_other_names_is_uv603(
    vetter: Vetter, servers: dict[str, TlsServer]
) -> None:
    verdict = vet_both(vetter, url_of(servers, "wrong-name"))
    assert "UV603" in verdict.codes
    assert verdict.decision is Decision.BLOCK
    f = finding(verdict, "UV603")
    assert "someone-else.test" in f.message
    assert f.evidence["names"] == ["someone-else.test", "*.elsewhere.test"]


def test_a_self_signed_certificate_is_uv602(vetter: Vetter, servers: dict[str, TlsServer]) -> None:
    verdict = vet_both(vetter, url_of(servers, "self-signed"))
    assert verdict.codes == ("UV602",)
    f = finding(verdict, "UV602")
    assert "self-signed" in f.message
    assert f.evidence["verify_code"] == 18  # X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
    assert verdict.tls is not None
    assert verdict.tls.status == "untrusted"
    assert_handshake_only(servers["self-signed"])


def test_a_certificate_from_an_authority_not_trusted_is_uv602(
    vetter: Vetter, servers: dict[str, TlsServer]
) -> None:
    verdict = vet_both(vetter, url_of(servers, "other-ca"))
    assert verdict.codes == ("UV602",)


def test_the_system_trust_store_does_not_trust_the_test_ca(
    nsd: tuple[str, int], pki: Pki, servers: dict[str, TlsServer]
) -> None:
    policy = tls_policy(nsd, pki, ca_file=None)
    verdict = Vetter(policy).vet(url_of(servers, "good"))
    assert verdict.codes == ("UV602",)


def test_a_certificate_issued_yesterday_is_uv606_low(
    vetter: Vetter, servers: dict[str, TlsServer]
) -> None:
    verdict = vet_both(vetter, url_of(servers, "fresh"))
    assert verdict.codes == ("UV606",)
    f = finding(verdict, "UV606")
    assert f.severity is Severity.LOW
    assert "issued 1 day ago" in f.message
    assert f.evidence["age_days"] == 1
    assert verdict.decision is Decision.WARN


def test_a_new_certificate_on_a_lookalike_is_uv606_high(
    vetter: Vetter, servers: dict[str, TlsServer]
) -> None:
    verdict = vet_both(vetter, url_of(servers, "lookalike"))
    assert "UV306" in verdict.codes  # combo-squatting: paypal + login
    f = finding(verdict, "UV606")
    assert f.severity is Severity.HIGH
    assert f.evidence["with_lookalike"] is True
    assert verdict.decision is Decision.BLOCK


def test_new_certificate_days_comes_from_the_policy(
    nsd: tuple[str, int], pki: Pki, servers: dict[str, TlsServer]
) -> None:
    policy = tls_policy(nsd, pki, new_certificate_days=1)
    assert "UV606" not in Vetter(policy).vet(url_of(servers, "fresh")).codes


def test_an_ip_literal_host_is_probed_and_matched_against_ip_names(
    vetter: Vetter, servers: dict[str, TlsServer]
) -> None:
    url = f"https://{ALLOWED}:{servers['ip'].port}/"
    strict = Vetter(vetter.policy.with_changes(ignore=["UV107", "UV201", "UV205"]))
    verdict = strict.vet(url)
    assert verdict.tls is not None
    assert verdict.tls.status == "ok"
    assert verdict.tls.names == (ALLOWED,)
    assert not [c for c in verdict.codes if c.startswith("UV6")]


def test_a_wss_url_is_probed_where_the_policy_lets_it_through(
    vetter: Vetter, servers: dict[str, TlsServer]
) -> None:
    # wss: is not a web page (UV102 blocks it by default, and nothing blocked is probed).
    assert vetter.vet(url_of(servers, "wss", scheme="wss")).tls is None
    websockets = Vetter(vetter.policy.with_changes(ignore=["UV107", "UV102"]))
    verdict = vet_both(websockets, url_of(servers, "wss", scheme="wss"))
    assert verdict.tls is not None
    assert verdict.tls.status == "ok"


def test_tls_1_0_and_1_1_only_is_uv605(nsd: tuple[str, int], pki: Pki, tmp_path: Path) -> None:
    reason = legacy_tls_supported()
    if reason is not None:
        pytest.skip(reason)
    chain, key = pki.leaf(_name("legacy"))
    with TlsServer(
        ALLOWED, "tls", chain, key, versions=(ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1)
    ) as server:
        verdict = vet_both(
            Vetter(tls_policy(nsd, pki)), f"https://{_name('legacy')}:{server.port}/"
        )
        assert "UV605" in verdict.codes
        assert verdict.tls is not None
        assert verdict.tls.version in ("TLSv1", "TLSv1.1")
        assert_handshake_only(server)


# -- failures ---------------------------------------------------------------------------------


def test_a_server_that_is_not_tls_is_uv601(vetter: Vetter, servers: dict[str, TlsServer]) -> None:
    verdict = vet_both(vetter, url_of(servers, "plain"))
    assert verdict.codes == ("UV601",)
    assert "does not speak TLS" in finding(verdict, "UV601").message


def test_a_closed_port_is_uv601(vetter: Vetter, servers: dict[str, TlsServer]) -> None:
    verdict = vet_both(vetter, f"https://{_name('closed')}:1/")
    assert verdict.codes == ("UV601",)
    assert "refused" in finding(verdict, "UV601").message


def test_a_server_that_accepts_and_never_answers_is_uv607_within_the_deadline(
    vetter: Vetter, pki: Pki, servers: dict[str, TlsServer]
) -> None:
    verdict = vet_both(vetter, url_of(servers, "silent"))
    assert verdict.codes == ("UV607",)
    assert servers["silent"].connections, "the probe did reach the silent server"
    # The probe alone (a vet adds its DNS lookup): the deadline must end a handshake that
    # never comes. Not a speed figure: generous slack for a loaded machine; without the
    # bound this would hang.
    target = (ALLOWED, servers["silent"].port, _name("silent"))
    started = time.monotonic()
    result = Prober(timeout=TIMEOUT, ca_file=str(pki.ca_file)).probe(*target)
    sync_took = time.monotonic() - started
    started = time.monotonic()
    async_result = asyncio.run(Prober(timeout=TIMEOUT, ca_file=str(pki.ca_file)).aprobe(*target))
    async_took = time.monotonic() - started
    assert result.status == async_result.status == "timeout"
    assert TIMEOUT * 0.9 <= sync_took < TIMEOUT + 2.0
    assert TIMEOUT * 0.9 <= async_took < TIMEOUT + 2.0


def test_failure_severity_comes_from_the_policy(
    nsd: tuple[str, int], pki: Pki, servers: dict[str, TlsServer]
) -> None:
    policy = tls_policy(nsd, pki, failure_severity="high")
    verdict = Vetter(policy).vet(url_of(servers, "plain"))
    assert finding(verdict, "UV601").severity is Severity.HIGH
    assert verdict.decision is Decision.BLOCK


# -- where the probe never goes ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "changes"),
    [
        ("forbidden", {}),
        # The address rule switched off: the probe still refuses the address.
        ("forbidden", {"ignore": ["UV107", "UV220"]}),
        # The organisation declares the network legitimate for links, not for probes.
        ("forbidden", {"networks": {"allowed": [f"{ALLOWED}/32", f"{FORBIDDEN}/32"]}}),
        # One forbidden address among allowed ones: the host did not pass.
        ("mixed", {"networks": {"allowed": [f"{ALLOWED}/32", f"{FORBIDDEN}/32"]}}),
    ],
)
def test_a_name_that_resolves_to_a_disallowed_address_is_never_probed(
    nsd: tuple[str, int],
    pki: Pki,
    servers: dict[str, TlsServer],
    label: str,
    changes: dict[str, Any],
) -> None:
    forbidden = servers["forbidden"]
    before = len(forbidden.connections)
    policy = tls_policy(nsd, pki).with_changes(**changes)
    url = f"https://{_name(label)}:{forbidden.port}/"
    verdict = vet_both(Vetter(policy), url)
    assert verdict.tls is None
    assert not [c for c in verdict.codes if c.startswith("UV6")]
    time.sleep(0.2)  # a connection in flight would be accepted by now
    assert len(forbidden.connections) == before == 0


def test_an_ip_literal_outside_the_probe_networks_is_never_probed(
    nsd: tuple[str, int], pki: Pki, servers: dict[str, TlsServer]
) -> None:
    forbidden = servers["forbidden"]
    policy = tls_policy(nsd, pki).with_changes(
        ignore=["UV107", "UV201"], networks={"allowed": [f"{FORBIDDEN}/32"]}
    )
    verdict = vet_both(Vetter(policy), f"https://{FORBIDDEN}:{forbidden.port}/")
    assert verdict.tls is None
    time.sleep(0.2)
    assert forbidden.connections == []


def test_the_probe_is_off_by_default(
    nsd: tuple[str, int], pki: Pki, servers: dict[str, TlsServer]
) -> None:
    good = servers["good"]
    before = len(good.connections)
    policy = tls_policy(nsd, pki).with_changes(tls={"probe_networks": [f"{ALLOWED}/32"]})
    verdict = Vetter(policy).vet(url_of(servers, "good"))
    assert verdict.tls is None
    assert len(good.connections) == before


def test_an_http_url_is_never_probed(vetter: Vetter, servers: dict[str, TlsServer]) -> None:
    good = servers["good"]
    before = len(good.connections)
    verdict = vetter.vet(f"http://{_name('good')}:{good.port}/")
    assert verdict.tls is None
    assert len(good.connections) == before


def test_probe_networks_cannot_hold_public_addresses() -> None:
    for wide in ("0.0.0.0/0", "::/0", "8.0.0.0/8", "10.0.0.0/7"):
        with pytest.raises(ValueError, match="public addresses"):
            Policy().with_changes(tls={"probe_networks": [wide]})
    assert Policy().with_changes(tls={"probe_networks": ["10.0.0.0/8"]}).tls.probe_networks


def test_probe_address_takes_only_hosts_whose_every_address_may_be_probed() -> None:
    import ipaddress

    loop = [ipaddress.ip_network("127.0.0.2/32")]
    blocked = [ipaddress.ip_network("203.0.113.0/24")]
    assert probe_address(["93.184.215.14", "2606:2800:21f:cb07::1"]) == "93.184.215.14"
    assert probe_address(["93.184.215.14", "10.0.0.5"]) is None
    assert probe_address(["127.0.0.1"]) is None
    assert probe_address(["::ffff:127.0.0.2"]) is None
    assert probe_address(["::ffff:127.0.0.2"], probe_networks=loop) is None  # v6 form not listed
    assert probe_address(["127.0.0.2"], probe_networks=loop) == "127.0.0.2"
    assert probe_address(["127.0.0.3"], probe_networks=loop) is None
    assert probe_address(["169.254.169.254"]) is None
    assert probe_address(["198.51.100.7"]) is None  # documentation range: not global
    assert probe_address(["93.184.215.14"], blocked_networks=blocked) == "93.184.215.14"
    assert probe_address(["203.0.113.9"], blocked_networks=blocked) is None
    assert probe_address([]) is None


# -- one handshake, nothing more, once ----------------------------------------------------------


def test_one_target_is_probed_once_per_run(
    nsd: tuple[str, int], pki: Pki, servers: dict[str, TlsServer]
) -> None:
    chain, key = pki.leaf(_name("good"))
    with TlsServer(ALLOWED, "tls", chain, key) as server:
        vetter = Vetter(tls_policy(nsd, pki))
        base = f"https://{_name('good')}:{server.port}"
        for path in ("/a", "/b", "/a?x=1"):
            assert vetter.vet(base + path).tls is not None

        async def many() -> list[Verdict]:
            fresh = Vetter(vetter.policy)
            return await asyncio.gather(*(fresh.avet(f"{base}/{i}") for i in range(20)))

        assert all(v.tls is not None for v in asyncio.run(many()))
        server.wait_closed()
        assert len(server.connections) == 2  # one for the sync vetter, one for the async one
        assert_handshake_only(server)


def test_no_server_received_a_byte_after_the_handshake(servers: dict[str, TlsServer]) -> None:
    # Runs after the tests above have probed them all, sync and async.
    probed = [s for s in servers.values() if s.mode == "tls" and s.connections]
    assert len(probed) >= 8
    for server in probed:
        assert_handshake_only(server)
    assert sum(s.handshakes for s in probed) >= 10


def test_the_prober_refuses_an_unreadable_ca_file(tmp_path: Path) -> None:
    from urlvet.errors import InputError

    bad = tmp_path / "not-a-ca.pem"
    bad.write_text("not a certificate\n")
    with pytest.raises(InputError, match="cannot load trust anchors"):
        Prober(ca_file=str(bad))
    with pytest.raises(InputError, match="cannot load trust anchors"):
        Prober(ca_file=str(tmp_path / "missing.pem"))


# -- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "host", "covered"),
    [
        (["www.example.com"], "www.example.com", True),
        (["WWW.Example.com."], "www.example.com", True),
        (["*.example.com"], "www.example.com", True),
        (["*.example.com"], "a.b.example.com", False),
        (["*.example.com"], "example.com", False),
        (["*.com"], "example.com", False),
        (["w*.example.com"], "www.example.com", False),
        (["example.com"], "www.example.com", False),
        (["127.0.0.2"], "127.0.0.2", True),
        (["127.0.0.2"], "127.0.0.3", False),
        (["*.0.0.2"], "127.0.0.2", False),
        (["2001:db8::1"], "2001:db8:0::1", True),
        ([], "example.com", False),
    ],
)
def test_certificate_covers_as_browsers_match(names: list[str], host: str, covered: bool) -> None:
    assert certificate_covers(names, host) is covered


# -- HSTS preload (offline) -------------------------------------------------------------------


def test_an_http_link_to_a_preloaded_host_says_so() -> None:
    vetter = Vetter(Policy().with_changes(dns={"enabled": False}))
    for url in ("http://get.dev/", "http://app/", "http://shop.example.app/login"):
        verdict = vetter.vet(url)
        f = finding(verdict, "UV101")
        assert f.severity is Severity.HIGH  # by default the severity stays
        assert f.evidence["hsts_preloaded"] is True
        assert "HSTS preload list" in f.message
    plain = finding(vetter.vet("http://example.com/"), "UV101")
    assert "hsts_preloaded" not in plain.evidence
    assert is_hsts_preloaded("foo.dev")
    assert not is_hsts_preloaded("example.com")


def test_the_preload_lookup_agrees_with_the_hstspreload_package() -> None:
    import warnings

    import hstspreload

    hosts = [
        "google.com",
        "www.google.com",
        "accounts.google.com",
        "paypal.com",
        "www.paypal.com",
        "github.com",
        "api.github.com",
        "example.com",
        "foo.dev",
        "dev",
        "app",
        "x.y.z.app",
        "bank",
        "my.bank",
        "gmail.com",
        "mail.gmail.com",
        "twitter.com",
        "x.com",
        "login.microsoftonline.com",
        "example.org",
        "stripe.com",
        "checkout.stripe.com",
        "a.b.c.d.e.f.example.com",
        "com",
        "co.uk",
        "bbc.co.uk",
        "www.bbc.co.uk",
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        expected = {h: hstspreload.in_hsts_preload(h) for h in hosts}
    assert {h: is_hsts_preloaded(h) for h in hosts} == expected
    assert any(expected.values())
    assert not all(expected.values())


def test_the_preload_lookup_agrees_with_the_package_over_listed_names() -> None:
    """Names taken from the list's own file (every bucket of every layer), a subdomain of
    each, a near miss of each, and the parents, looked up both ways."""
    import random
    import warnings
    from pathlib import Path

    import hstspreload

    data = Path(hstspreload.__file__).with_name("hstspreload.bin").read_bytes()
    listed: list[str] = []
    for layer in hstspreload._JUMPTABLE:
        for jump in layer:
            if jump is None:
                continue
            i, end = jump[0], jump[0] + jump[1]
            while i < end:
                n = data[i + 1]
                listed.append(data[i + 2 : i + 2 + n].decode("ascii"))
                i += 2 + n
    assert len(listed) > 100_000
    rng = random.Random(5)
    names = rng.sample(listed, 1500)
    hosts = set(names)
    for name in names[:500]:
        hosts.add("www." + name)
        hosts.add(name[:-1] + ("x" if name[-1] != "x" else "y"))
        hosts.add(name.split(".", 1)[-1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        expected = {h: hstspreload.in_hsts_preload(h) for h in sorted(hosts)}
    assert {h: is_hsts_preloaded(h) for h in sorted(hosts)} == expected
    assert 0.2 < sum(expected.values()) / len(expected) < 0.95


def test_the_policy_may_lower_uv101_for_preloaded_hosts() -> None:
    policy = Policy().with_changes(dns={"enabled": False}, tls={"hsts_preloaded_severity": "low"})
    vetter = Vetter(policy)
    assert finding(vetter.vet("http://get.dev/"), "UV101").severity is Severity.LOW
    assert vetter.vet("http://get.dev/").decision is Decision.WARN
    assert finding(vetter.vet("http://example.com/"), "UV101").severity is Severity.HIGH


# -- policy files and the command line --------------------------------------------------------


def test_ca_file_in_a_policy_is_relative_to_the_policy_file(tmp_path: Path) -> None:
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "policy.yaml").write_text("tls:\n  probe: true\n  ca_file: anchors.pem\n")
    policy = load_policy(tmp_path / "team" / "policy.yaml")
    assert policy.tls.ca_file == str(tmp_path / "team" / "anchors.pem")


def test_a_bad_probe_network_in_a_policy_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("tls:\n  probe: true\n  probe_networks:\n    - 0.0.0.0/0\n")
    with pytest.raises(PolicyError, match=r"p.yaml:4: tls.probe_networks.0: .*public"):
        load_policy(path)


def _cli_args(nsd: tuple[str, int], pki: Pki, policy_file: Path) -> list[str]:
    host, port = nsd
    policy_file.write_text(
        json.dumps(
            {
                "networks": {"allowed": [f"{ALLOWED}/32"]},
                "ignore": ["UV107"],
                "tls": {"timeout": TIMEOUT, "probe_networks": [f"{ALLOWED}/32"]},
            }
        )
    )
    return [
        "--policy",
        str(policy_file),
        "--nameserver",
        f"{host}:{port}",
        "--tls",
        "--ca-file",
        str(pki.ca_file),
    ]


def test_check_tls_writes_the_certificate_facts_in_json(
    nsd: tuple[str, int], pki: Pki, servers: dict[str, TlsServer], tmp_path: Path
) -> None:
    args = _cli_args(nsd, pki, tmp_path / "p.json")
    result = CliRunner().invoke(
        main, ["check", *args, "--format", "json", url_of(servers, "expired")]
    )
    assert result.exit_code == 1, result.output
    (data,) = json.loads(result.output)
    assert data["tls"]["status"] == "ok"
    assert data["tls"]["issuer"] == "Urlvet Test CA"
    assert data["tls"]["names"] == [_name("expired")]
    assert [f["code"] for f in data["findings"]] == ["UV604"]


def test_check_without_tls_does_not_probe(
    nsd: tuple[str, int], pki: Pki, servers: dict[str, TlsServer], tmp_path: Path
) -> None:
    args = [a for a in _cli_args(nsd, pki, tmp_path / "p.json") if a != "--tls"]
    before = len(servers["good"].connections)
    result = CliRunner().invoke(main, ["check", *args, "--format", "json", url_of(servers, "good")])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["tls"] is None
    assert len(servers["good"].connections) == before


def test_consent_tls_shows_the_certificate_line(
    nsd: tuple[str, int], pki: Pki, servers: dict[str, TlsServer], tmp_path: Path
) -> None:
    args = _cli_args(nsd, pki, tmp_path / "p.json")
    url = url_of(servers, "fresh")
    result = CliRunner().invoke(
        main, ["consent", *args, "--server", "https://mcp.example.com/mcp", url]
    )
    assert result.exit_code == 0, result.output
    assert f"Certificate: issued 1 day ago by Urlvet Test CA for {_name('fresh')}" in result.output
    as_json = CliRunner().invoke(
        main,
        ["consent", *args, "--server", "https://mcp.example.com/mcp", "--format", "json", url],
    )
    summary = json.loads(as_json.output)
    assert summary["certificate"].startswith("issued 1 day ago by Urlvet Test CA")


def test_consent_and_hook_probe_only_when_asked(
    nsd: tuple[str, int], pki: Pki, servers: dict[str, TlsServer], tmp_path: Path
) -> None:
    args = [a for a in _cli_args(nsd, pki, tmp_path / "p.json") if a != "--tls"]
    good = servers["good"]
    before = len(good.connections)
    url = url_of(servers, "good")
    consent = CliRunner().invoke(
        main, ["consent", *args, "--server", "https://mcp.example.com/mcp", url]
    )
    assert consent.exit_code == 0, consent.output
    assert "Certificate:" not in consent.output
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Go", "url": url, "elicitationId": "e1"},
    }
    hook = CliRunner().invoke(
        main,
        ["hook", *args, "--server", "https://mcp.example.com/mcp"],
        input=json.dumps(message) + "\n",
    )
    assert hook.exit_code == 0, hook.output
    assert '"tls":null' in hook.output.replace(" ", "")
    time.sleep(0.2)
    assert len(good.connections) == before


def test_consent_html_shows_the_certificate_escaped(
    nsd: tuple[str, int], pki: Pki, servers: dict[str, TlsServer], tmp_path: Path
) -> None:
    args = _cli_args(nsd, pki, tmp_path / "p.json")
    result = CliRunner().invoke(
        main,
        [
            "consent",
            *args,
            "--server",
            "https://mcp.example.com/mcp",
            "--format",
            "html",
            url_of(servers, "self-signed"),
        ],
    )
    assert result.exit_code == 1, result.output
    assert '<span id="certificate">not trusted (self-signed certificate)</span>' in result.output


def test_audit_tls_probes_each_target_once(nsd: tuple[str, int], pki: Pki, tmp_path: Path) -> None:
    chain, key = pki.leaf(_name("good"))
    with TlsServer(ALLOWED, "tls", chain, key) as server:
        urls = tmp_path / "urls.txt"
        base = f"https://{_name('good')}:{server.port}"
        urls.write_text("".join(f"{base}/page/{i}\n" for i in range(30)))
        args = _cli_args(nsd, pki, tmp_path / "p.json")
        result = CliRunner().invoke(main, ["audit", *args, "--format", "jsonl", str(urls)])
        assert result.exit_code == 0, result.output
        records = [json.loads(line) for line in result.output.splitlines()]
        assert len(records) == 30
        assert {r["tls"]["status"] for r in records} == {"ok"}
        server.wait_closed()
        assert len(server.connections) == 1
        assert_handshake_only(server)


def test_hook_tls_puts_the_certificate_in_the_answer(
    nsd: tuple[str, int], pki: Pki, servers: dict[str, TlsServer], tmp_path: Path
) -> None:
    args = _cli_args(nsd, pki, tmp_path / "p.json")
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "message": "Sign in",
            "url": url_of(servers, "self-signed"),
            "elicitationId": "e1",
        },
    }
    result = CliRunner().invoke(
        main,
        ["hook", *args, "--server", "https://mcp.example.com/mcp"],
        input=json.dumps(message) + "\n",
    )
    assert result.exit_code == 0, result.output
    assert '"UV602"' in result.output
    assert "untrusted" in result.output


def _through_proxy(options: list[str], elicit_url: str) -> tuple[list[Any], list[Any]]:
    """Run ``urlvet proxy OPTIONS -- jsonrpc_server``, have the server ask the client to open
    ``elicit_url``: (what reached the client, what the server received back)."""
    import subprocess
    import sys

    from support.proxy_harness import JSONRPC_SERVER, env, proxy_command

    cmd = proxy_command(*options, command=[sys.executable, str(JSONRPC_SERVER)])
    elicit = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "elicitation/create",
        "params": {"mode": "url", "elicitationId": "e-7", "url": elicit_url, "message": "Go"},
    }
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "test/send",
            "params": {"lines": [json.dumps(elicit)]},
        },
        {"jsonrpc": "2.0", "id": 2, "method": "test/received"},
    ]
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env()
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        client: list[Any] = []
        for request in requests:
            if request["id"] == 2:
                time.sleep(0.3)  # a decline is written right after the message: let it land
            proc.stdin.write(json.dumps(request).encode() + b"\n")
            proc.stdin.flush()
            while True:
                line = proc.stdout.readline()
                assert line, proc.stderr.read() if proc.stderr else b""
                data = json.loads(line)
                if data.get("id") == request["id"] and "method" not in data:
                    break
                client.append(data)
        received = [json.loads(text) for text in data["result"]["lines"]]
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    return client, received


def test_proxy_tls_declines_a_link_to_an_untrusted_certificate(
    nsd: tuple[str, int], pki: Pki, servers: dict[str, TlsServer], tmp_path: Path
) -> None:
    args = _cli_args(nsd, pki, tmp_path / "p.json")
    target = servers["self-signed"]
    before = len(target.connections)
    url = url_of(servers, "self-signed")
    client, received = _through_proxy([*args, "--server", "https://mcp.example.com/mcp"], url)
    # Blocked: the client never sees the request, only urlvet's warning that it was blocked.
    assert [m.get("method") for m in client] == ["notifications/message"]
    assert url not in json.dumps(client)
    (decline,) = [m for m in received if m.get("id") == 7]
    assert decline == {"jsonrpc": "2.0", "id": 7, "result": {"action": "decline"}}
    assert len(target.connections) == before + 1
    assert_handshake_only(target)
    # Without --tls the proxy does not probe: the same link reaches the client.
    plain = [a for a in args if a != "--tls"]
    client, _ = _through_proxy([*plain, "--server", "https://mcp.example.com/mcp"], url)
    assert [m.get("id") for m in client] == [7]
    assert len(target.connections) == before + 1


def test_a_ca_file_that_cannot_be_read_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "check",
            "--no-dns",
            "--tls",
            "--ca-file",
            str(tmp_path / "nope.pem"),
            "https://a.example/",
        ],
    )
    assert result.exit_code == 2
    assert "cannot load trust anchors" in result.output
    assert "Traceback" not in result.output


def test_tls_without_dns_says_names_are_not_probed(servers: dict[str, TlsServer], pki: Pki) -> None:
    before = len(servers["good"].connections)
    result = CliRunner().invoke(
        main, ["check", "--no-dns", "--tls", "--ca-file", str(pki.ca_file), url_of(servers, "good")]
    )
    assert "reaches IP-literal hosts only" in result.output
    assert len(servers["good"].connections) == before


def test_version_names_the_hsts_preload_list_date() -> None:
    import hstspreload

    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    year, month, day = (int(p) for p in hstspreload.__version__.split("."))
    assert f"HSTS preload list: {year:04d}-{month:02d}-{day:02d}" in result.output
