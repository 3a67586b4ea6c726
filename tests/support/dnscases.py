"""The SSRF corpus entries that only DNS can catch, and a helper that runs the DNS rules.

"DNS-only" means: the URL's host is an ordinary-looking domain name, and only its DNS answer
shows that it leads to an internal target. The zones in tests/dns/zone/ serve each of these
names with the answer the real service gives, so the tests need no internet.

For the engine-level test: resolve ``host`` with a ``Resolver([nsd])`` (the ``nsd`` fixture)
and vet ``payload`` with that resolver; the verdict must block with UV220.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from support.corpora import CORPORA
from urlvet.checks.base import CheckContext, CheckSettings, Hit, defined_rules

SSRF_CORPUS = CORPORA / "ssrf"


@dataclass(frozen=True)
class DnsOnlyCase:
    """One corpus URL whose host leads to an internal target through its DNS answer."""

    payload: str
    host: str
    """The host as a browser parses it (A-label, lower case)."""
    target: str
    """The internal address the real service answers (one of them, for rebinding services)."""
    source: str
    """The corpus file it comes from."""


DNS_ONLY_CASES: tuple[DnsOnlyCase, ...] = (
    # ssrf_payloads.json (PayloadsAllTheThings)
    DnsOnlyCase(
        "http://169.254.169.254.nip.io/",
        "169.254.169.254.nip.io",
        "169.254.169.254",
        "ssrf_payloads.json",
    ),
    DnsOnlyCase(
        "http://company.127.0.0.1.nip.io",
        "company.127.0.0.1.nip.io",
        "127.0.0.1",
        "ssrf_payloads.json",
    ),
    DnsOnlyCase("http://localtest.me", "localtest.me", "127.0.0.1", "ssrf_payloads.json"),
    DnsOnlyCase("http://localh.st", "localh.st", "127.0.0.1", "ssrf_payloads.json"),
    DnsOnlyCase(
        "http://spoofed.redacted.oastify.com",
        "spoofed.redacted.oastify.com",
        "127.0.0.1",
        "ssrf_payloads.json",
    ),
    DnsOnlyCase(
        "http://make-1.2.3.4-rebind-169.254-169.254-rr.1u.ms",
        "make-1.2.3.4-rebind-169.254-169.254-rr.1u.ms",
        "169.254.169.254",
        "ssrf_payloads.json",
    ),
    # Also caught by its name (.internal), but a DNS name with an internal answer all the same.
    DnsOnlyCase(
        "http://metadata.google.internal/computeMetadata/v1/",
        "metadata.google.internal",
        "169.254.169.254",
        "ssrf_payloads.json",
    ),
    # ssrf_req_filter_tests.json (y-mehta/ssrf-req-filter)
    DnsOnlyCase(
        "http://customer1.app.localhost.my.company.127.0.0.1.nip.io",
        "customer1.app.localhost.my.company.127.0.0.1.nip.io",
        "127.0.0.1",
        "ssrf_req_filter_tests.json",
    ),
    DnsOnlyCase(
        "http://mail.ebc.apple.com",
        "mail.ebc.apple.com",
        "127.0.0.6",
        "ssrf_req_filter_tests.json",
    ),
    DnsOnlyCase(
        "http://spoofed.burpcollaborator.net",
        "spoofed.burpcollaborator.net",
        "127.0.0.1",
        "ssrf_req_filter_tests.json",
    ),
    DnsOnlyCase(
        "http://169.254.169.254.xip.io",
        "169.254.169.254.xip.io",
        "169.254.169.254",
        "ssrf_req_filter_tests.json",
    ),
    DnsOnlyCase(
        "http://1ynrnhl.xip.io", "1ynrnhl.xip.io", "169.254.169.254", "ssrf_req_filter_tests.json"
    ),
    DnsOnlyCase(
        "http://www.owasp.org.1ynrnhl.xip.io",
        "www.owasp.org.1ynrnhl.xip.io",
        "169.254.169.254",
        "ssrf_req_filter_tests.json",
    ),
    DnsOnlyCase(
        "https://A.127.0.0.1.1time.10.0.0.1.1time.repeat.8f058b82-4c39-4dfe-91f7-9b07bcd7fbd5"
        ".rebind.network",
        "a.127.0.0.1.1time.10.0.0.1.1time.repeat.8f058b82-4c39-4dfe-91f7-9b07bcd7fbd5"
        ".rebind.network",
        "127.0.0.1",
        "ssrf_req_filter_tests.json",
    ),
    DnsOnlyCase(
        "http://metadata.nicob.net",
        "metadata.nicob.net",
        "169.254.169.254",
        "ssrf_req_filter_tests.json",
    ),
)

# Every other domain-like host of the two corpus files, and why DNS is not what catches it.
NOT_DNS_ONLY: dict[str, str] = {
    "localhost": "resolved by the browser itself, never by DNS: a name rule",
    "ip6-localhost": "an /etc/hosts name, single label: a name rule",
    "ip6-loopback": "an /etc/hosts name, single label: a name rule",
    "test": "single-label name: a name rule",
    "attacker": "single-label name: a name rule",
    "instance-data": "single-label name (AWS search domain): a name rule",
    "metadata": "single-label name (GCP search domain): a name rule",
    "foo": "single-label name: a name rule",
    "rancher-metadata": "single-label name: a name rule",
    "307.r3dir.me": "an HTTP redirect service: its own DNS answer is public",
    "62epax5fhvj3zzmzigyoe5ipkbn7fysllvges3a.302.r3dir.me": "an HTTP redirect service",
    "nicob.net": "an HTTP redirect (/redir...) from a public host",
    "help.redacted.com": "a proxy on a public host, the internal URL in the query",
    "4d0cf09b9b2d761a7d87be99d17507bce8b86f3b.flaws.cloud": "a proxy on a public host",
    "example.com": "public",
    "evil.com": "public",
    "metadata.packet.net": "public (Equinix metadata answers only from inside)",
    "${aws_lambda_runtime_api}": "a template placeholder, not a host",
    "google.com": "public (an allowed case of the corpus)",
    "github.com": "public (an allowed case of the corpus)",
    "facebook.com": "public (an allowed case of the corpus)",
    "cloudflare.com": "public (an allowed case of the corpus)",
    "postman-echo.com": "public (an allowed case of the corpus)",
}


def corpus_hosts() -> dict[str, list[str]]:
    """Host -> payloads, for every domain-like host of the two corpus files."""
    import ipaddress

    from urlvet.url import InvalidURL, parse

    hosts: dict[str, list[str]] = {}
    payloads = json.loads((SSRF_CORPUS / "ssrf_payloads.json").read_text())
    filter_cases = json.loads((SSRF_CORPUS / "ssrf_req_filter_tests.json").read_text())["cases"]
    urls = [p["payload"] for p in payloads] + [c["url"] for c in filter_cases if "url" in c]
    for url in urls:
        try:
            host = parse(url).host
        except InvalidURL:
            continue
        if not host or host == "0":
            continue
        try:
            ipaddress.ip_address(host)
            continue
        except ValueError:
            hosts.setdefault(host, []).append(url)
    return hosts


def dns_hits(resolution: object, settings: CheckSettings | None = None) -> dict[str, list[Hit]]:
    """Run every registered ``dns`` rule on a resolution: code -> hits (codes that fired)."""
    import urlvet.checks.resolution  # noqa: F401  (registers the rules)

    ctx = CheckContext(settings=settings or CheckSettings(), resolution=resolution)
    fired: dict[str, list[Hit]] = {}
    for code, rule in sorted(defined_rules().items()):
        if rule.kind != "dns":
            continue
        hits = list(rule.check(None, ctx))
        if hits:
            fired[code] = hits
    return fired


def dns_codes(resolution: object, settings: CheckSettings | None = None) -> set[str]:
    """The codes of the dns rules that fire on a resolution."""
    return set(dns_hits(resolution, settings))


def hosts_of(cases: Iterable[DnsOnlyCase]) -> list[str]:
    """The hosts of some cases, for parametrize ids."""
    return [c.host for c in cases]
