"""The TLS rules (UV601-UV607) on probe results: where each rule's line falls.

The rules read a :class:`urlvet.tls.Probe` and never do I/O; tests/test_tls.py runs them on
real handshakes. Here the probe results are built directly, to pin the boundaries (the age
of a certificate, its dates, the protocol versions) without waiting for a calendar.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from urlvet.checks.base import CheckContext, CheckSettings, defined_rules
from urlvet.checks.registry import rules
from urlvet.findings import Severity
from urlvet.tls import Certificate, Probe, ProbeStatus

DAY = dt.timedelta(days=1)
HOST = "shop.example.com"


def probe(
    status: ProbeStatus = "ok",
    *,
    issued: dt.timedelta = 100 * DAY,
    expires: dt.timedelta = 100 * DAY,
    names: tuple[str, ...] = (HOST,),
    version: str | None = "TLSv1.3",
) -> Probe:
    # The dates are taken now, not when the module was imported: a loaded machine may take
    # minutes to reach a test, and the boundaries below are seconds wide.
    now = dt.datetime.now(dt.UTC)
    cert = Certificate("shop", "Example CA", now - issued, now + expires, names)
    if status != "ok":
        return Probe(HOST, "93.184.215.14", 443, status, detail="why")
    return Probe(HOST, "93.184.215.14", 443, "ok", version, cert)


def fired(result: Probe, *, earlier: frozenset[str] = frozenset(), days: int = 7) -> dict[str, Any]:
    rules()  # every family registered
    ctx = CheckContext(
        settings=CheckSettings(new_certificate_days=days), tls=result, earlier=earlier
    )
    out: dict[str, Any] = {}
    for code, r in defined_rules().items():
        if r.kind == "tls":
            for hit in r.check(None, ctx):
                out[code] = hit
    return out


def test_a_sound_certificate_raises_nothing() -> None:
    assert fired(probe()) == {}


def test_no_probe_raises_nothing() -> None:
    rules()
    ctx = CheckContext(settings=CheckSettings())
    assert not [h for r in defined_rules().values() if r.kind == "tls" for h in r.check(None, ctx)]


@pytest.mark.parametrize(
    ("status", "code"), [("failed", "UV601"), ("untrusted", "UV602"), ("timeout", "UV607")]
)
def test_each_failure_has_its_own_code(status: ProbeStatus, code: str) -> None:
    assert set(fired(probe(status))) == {code}


@pytest.mark.parametrize(
    ("issued", "expires", "expected"),
    [
        (100 * DAY, -dt.timedelta(seconds=5), {"UV604"}),  # just expired
        (100 * DAY, dt.timedelta(seconds=60), set()),  # expires in a minute: still valid
        (-dt.timedelta(minutes=5), 90 * DAY, {"UV604"}),  # valid in five minutes
    ],
)
def test_validity_dates(issued: dt.timedelta, expires: dt.timedelta, expected: set[str]) -> None:
    assert set(fired(probe(issued=issued, expires=expires))) == expected


@pytest.mark.parametrize(
    ("age", "days", "fires"),
    [
        (6 * DAY + dt.timedelta(hours=23), 7, True),
        (7 * DAY, 7, False),
        (dt.timedelta(hours=1), 7, True),
        (dt.timedelta(hours=1), 0, False),  # 0 turns the rule off
        (20 * DAY, 30, True),
    ],
)
def test_new_certificate_threshold(age: dt.timedelta, days: int, fires: bool) -> None:
    assert ("UV606" in fired(probe(issued=age), days=days)) is fires


def test_new_certificate_is_low_alone_and_high_beside_a_lookalike() -> None:
    alone = fired(probe(issued=DAY))["UV606"]
    assert alone.severity is None  # the rule's default: low
    assert rules()["UV606"].severity is Severity.LOW
    beside = fired(probe(issued=DAY), earlier=frozenset({"UV107", "UV303"}))["UV606"]
    assert beside.severity is Severity.HIGH
    assert beside.evidence["with_lookalike"] is True
    other = fired(probe(issued=DAY), earlier=frozenset({"UV401"}))["UV606"]
    assert other.severity is None


@pytest.mark.parametrize(
    ("version", "old"),
    [("TLSv1.3", False), ("TLSv1.2", False), ("TLSv1.1", True), ("TLSv1", True), ("SSLv3", True)],
)
def test_outdated_versions(version: str, old: bool) -> None:
    assert ("UV605" in fired(probe(version=version))) is old


def test_a_wildcard_does_not_cover_two_labels() -> None:
    assert "UV603" not in fired(probe(names=("*.example.com",)))
    deep = Probe(
        "a.shop.example.com",
        "93.184.215.14",
        443,
        "ok",
        "TLSv1.3",
        Certificate(
            None,
            "CA",
            dt.datetime(2025, 1, 1, tzinfo=dt.UTC),
            dt.datetime(2099, 1, 1, tzinfo=dt.UTC),
            ("*.example.com",),
        ),
    )
    assert "UV603" in fired(deep)


def test_the_evidence_carries_the_certificate_facts() -> None:
    fresh = probe(issued=2 * DAY)
    assert fresh.certificate is not None
    hit = fired(fresh)["UV606"]
    facts = hit.evidence
    assert facts["issuer"] == "Example CA"
    assert facts["names"] == [HOST]
    assert facts["version"] == "TLSv1.3"
    assert facts["address"] == "93.184.215.14"
    assert facts["valid_from"] == fresh.certificate.not_before.isoformat()
    assert "issued 2 days ago" in hit.message
