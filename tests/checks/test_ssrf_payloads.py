"""PayloadsAllTheThings' SSRF payloads: every one aimed at an internal target is blocked.

Offline and with no server. A payload counts as blocked by its target only when a rule about
the target fires (address, name, scheme or a refused URL), not merely plaintext-http; each is
also vetted with https:// so that the block cannot come from UV101 alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from support import OFFLINE
from support.corpora import load

PAYLOADS: list[dict[str, Any]] = load("ssrf/ssrf_payloads.json")

# Rules that say "this leads somewhere internal or dangerous".
TARGET_RULES = {"UV100", "UV102", "UV201", "UV202", "UV203", "UV204", "UV206"}

# Aimed at an internal target, but only DNS can show it: the name is ordinary until resolved.
# The DNS rules (UV220) cover these against NSD serving tests/dns/zone/ (the DNS issue).
DNS_ONLY = {
    "http://localh.st": "localh.st resolves to 127.0.0.1",
    "http://spoofed.redacted.oastify.com": "a collaborator name answering 127.0.0.1",
}

# Aimed at an internal target through a public site that redirects or proxies: neither the
# URL nor its DNS shows the target; only following the redirect would. Not decidable before
# the user opens the link: not claimed.
REDIRECT_ONLY = {
    "https://307.r3dir.me/--to/?url=http://localhost": "open-redirect service",
    "https://62epax5fhvj3zzmzigyoe5ipkbn7fysllvges3a.302.r3dir.me": "open-redirect service",
    "http://nicob.net/redir6a": "a redirect on a public host",
    "http://nicob.net/redir-http-169.254.169.254:80-": "a redirect on a public host",
    "https://help.redacted.com/plugins/servlet/oauth/users/icon-uri?consumerUri="
    "http://169.254.169.254/metadata/v1/maintenance": "SSRF in that site's own server",
    "http://4d0cf09b9b2d761a7d87be99d17507bce8b86f3b.flaws.cloud/proxy/169.254.169.254/"
    "latest/meta-data/iam/security-credentials/flaws/": "a public proxy",
}


def _aimed_inside(p: dict[str, Any]) -> bool:
    # "as parsed: X" rows are parser tricks aimed at a server-side parser; their target is
    # whatever host the browser parses, not an internal one.
    return not p["target"].startswith("as parsed:")


def _https(payload: str) -> str:
    if payload.startswith("http://"):
        return "https://" + payload[len("http://") :]
    if payload.startswith("http:"):
        return "https:" + payload[len("http:") :]
    return payload


def _by_target(p: dict[str, Any]) -> list[Any]:
    return [
        pytest.param(p["payload"], id=repr(p["payload"])[:70])
        for p in PAYLOADS
        if _aimed_inside(p) and p["payload"] not in DNS_ONLY and p["payload"] not in REDIRECT_ONLY
    ]


def test_the_exception_lists_name_real_payloads() -> None:
    payloads = {p["payload"] for p in PAYLOADS}
    assert set(DNS_ONLY) <= payloads
    assert set(REDIRECT_ONLY) <= payloads


@pytest.mark.parametrize("payload", _by_target({}))
def test_payload_aimed_at_an_internal_target_is_blocked_by_its_target(payload: str) -> None:
    verdict = OFFLINE.vet(payload)
    assert verdict.decision.value == "block"
    assert set(verdict.codes) & TARGET_RULES, verdict.codes
    secure = OFFLINE.vet(_https(payload))
    assert secure.decision.value == "block", secure.codes
    assert set(secure.codes) & TARGET_RULES


@pytest.mark.parametrize("payload", sorted(DNS_ONLY))
def test_dns_only_payloads_need_dns(payload: str) -> None:
    # Offline the name is ordinary: only plaintext-http blocks the http:// form.
    assert not set(OFFLINE.vet(_https(payload)).codes) & TARGET_RULES


@pytest.mark.parametrize("row", PAYLOADS, ids=lambda p: repr(p["payload"])[:70])
def test_payload_host_is_the_browsers(row: dict[str, Any]) -> None:
    verdict = OFFLINE.vet(row["payload"])
    if row["whatwg_hostname"] == "PARSE-FAILURE":
        assert verdict.href is None
        assert "UV100" in verdict.codes
        return
    host = verdict.host or ""
    shown = f"[{host}]" if verdict.host_kind == "ipv6" else host
    assert shown == row["whatwg_hostname"]


def test_block_rate() -> None:
    inside = [p for p in PAYLOADS if _aimed_inside(p)]
    blocked = [p for p in inside if OFFLINE.vet(p["payload"]).decision.value == "block"]
    by_target = [p for p in inside if set(OFFLINE.vet(p["payload"]).codes) & TARGET_RULES]
    decidable = [
        p for p in inside if p["payload"] not in DNS_ONLY and p["payload"] not in REDIRECT_ONLY
    ]
    assert len(PAYLOADS) == 173
    assert len(inside) == 156
    assert len(by_target) == len(decidable) == 148  # 100 % of IP literals and special names
    # As given (http:// included), everything but the three https redirect links blocks.
    assert len(blocked) == 153


# Of the redirect-only payloads, those that carry the internal target as a query parameter
# are warned about (UV210): the redirect itself stays invisible, the parameter does not.
PARAMETER_CARRIED = {
    "https://307.r3dir.me/--to/?url=http://localhost",
    "https://help.redacted.com/plugins/servlet/oauth/users/icon-uri?consumerUri="
    "http://169.254.169.254/metadata/v1/maintenance",
}


@pytest.mark.parametrize("payload", sorted(REDIRECT_ONLY))
def test_redirect_payloads_warn_when_the_target_is_a_parameter(payload: str) -> None:
    verdict = OFFLINE.vet(_https(payload))
    assert ("UV210" in verdict.codes) is (payload in PARAMETER_CARRIED), verdict.codes
    if payload in PARAMETER_CARRIED:
        assert verdict.decision.value == "warn"
