"""UV6xx: TLS. What a browser would find on arrival at an ``https:`` link's host.

These rules read the :class:`urlvet.tls.Probe` the engine put in the context. The probe is
off by default (``tls.probe`` in a policy, ``--tls`` on the command line); without it, as for
``http:`` links and hosts that did not pass the address checks, these rules stay silent. They
never do I/O themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from urlvet.checks.base import CheckContext, Hit, rule
from urlvet.findings import Severity
from urlvet.tls import Certificate, Probe, certificate_covers
from urlvet.url import ParsedURL

__all__ = [
    "certificate_expired",
    "certificate_facts",
    "certificate_name_mismatch",
    "new_certificate",
    "outdated_tls",
    "tls_handshake_failed",
    "tls_timeout",
    "untrusted_certificate",
]

_OLD_VERSIONS = frozenset({"SSLv3", "TLSv1", "TLSv1.1"})
_LOOKALIKE_FAMILY = "UV3"


def certificate_facts(probe: Probe) -> dict[str, Any]:
    """The probe's facts as evidence: where it connected, and the certificate it saw."""
    facts: dict[str, Any] = {
        "address": probe.address,
        "port": probe.port,
        "host": probe.host,
        "status": probe.status,
        "version": probe.version,
    }
    cert = probe.certificate
    if cert is not None:
        facts.update(
            issuer=cert.issuer,
            subject=cert.subject,
            names=list(cert.names[:32]),
            valid_from=cert.not_before.isoformat(),
            valid_to=cert.not_after.isoformat(),
        )
    if probe.detail:
        facts["detail"] = probe.detail
    return facts


def _probe(ctx: CheckContext) -> Probe | None:
    probe = ctx.tls
    return probe if isinstance(probe, Probe) else None


def _where(probe: Probe) -> str:
    return f"{probe.host} ({probe.address} port {probe.port})"


@rule("UV601", "tls-handshake-failed", Severity.MEDIUM, kind="tls")
def tls_handshake_failed(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """A host that does not complete a TLS handshake on the link's port.

    ## What it does
    With the TLS probe on, reports an `https:` or `wss:` link whose host refused the
    connection, reset it, answered with something that is not TLS, or shares no protocol
    version with a browser. The severity follows `tls.failure_severity` when the policy sets
    it (as `dns.failure_severity` does for the DNS failures).

    ## Why is this bad?
    A browser shows an error page instead of the site: the link is broken, points at a
    service that is not a website, or the host is down. urlvet cannot tell the user whose
    page this is.

    ## Example
    `https://example.com:8080/` where port 8080 serves plain HTTP, or nothing at all.
    """
    probe = _probe(ctx)
    if probe is None or probe.status != "failed":
        return
    yield Hit(
        f"The site {_where(probe)} did not complete a secure connection: {probe.detail}. "
        "A browser would show an error instead of the page.",
        certificate_facts(probe),
    )


@rule("UV602", "untrusted-certificate", Severity.HIGH, kind="tls", cwe=295)
def untrusted_certificate(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """A certificate whose chain does not verify to a trusted certificate authority.

    ## What it does
    With the TLS probe on, reports a host whose certificate chain does not lead to a trust
    anchor: a self-signed certificate, one from a private or unknown authority, a chain with
    a missing intermediate or a bad signature. The anchors are the system's trust store, or
    those of `tls.ca_file` (`--ca-file`) alone when the policy gives one.

    ## Why is this bad?
    Anyone can make a certificate for any name; only the chain to a trusted authority says
    the server is the site it claims to be. A browser stops the user with a full-page
    warning, and a user who clicks through may be talking to whoever sits on the network
    path.

    ## Example
    `https://login.example.com/` serving a self-signed certificate.

    ## References
    - CWE-295: Improper Certificate Validation
    """
    probe = _probe(ctx)
    if probe is None or probe.status != "untrusted":
        return
    facts = certificate_facts(probe)
    facts["verify_code"] = probe.verify_code
    yield Hit(
        f"The certificate of {_where(probe)} is not trusted ({probe.detail}): "
        "nothing proves the server is the site it claims to be.",
        facts,
    )


@rule("UV603", "certificate-name-mismatch", Severity.HIGH, kind="tls", cwe=297)
def certificate_name_mismatch(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """A trusted certificate that was issued for other names than the link's host.

    ## What it does
    With the TLS probe on, reports a host whose certificate verifies but does not cover the
    host: none of its subjectAltName entries equals the host or matches it as a one-label
    wildcard. As in browsers, the subject's common name is not considered.

    ## Why is this bad?
    A certificate proves the identity of the names in it, not of whatever host serves it. A
    browser refuses such a page with a full-page warning; a server that answers for a name it
    holds no certificate for is misconfigured, or is not the site the link names.

    ## Example
    `https://paypal-login.example.net/` answered with a certificate for `*.hosting.example`.

    ## References
    - CWE-297: Improper Validation of Certificate with Host Mismatch
    """
    probe = _probe(ctx)
    if probe is None or probe.status != "ok" or probe.certificate is None:
        return
    cert = probe.certificate
    if certificate_covers(cert.names, probe.host):
        return
    shown = ", ".join(cert.names[:5]) or "no names"
    more = f" and {len(cert.names) - 5} more" if len(cert.names) > 5 else ""
    yield Hit(
        f"The certificate of {_where(probe)} is for {shown}{more}, not for {probe.host}: "
        "the browser would refuse the page.",
        certificate_facts(probe),
    )


@rule("UV604", "certificate-expired", Severity.HIGH, kind="tls", cwe=298)
def certificate_expired(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """A certificate that has expired, or is not valid yet.

    ## What it does
    With the TLS probe on, reports a host whose certificate's validity period does not
    include the present moment (the chain itself verified).

    ## Why is this bad?
    A browser refuses an expired certificate with a full-page warning. An abandoned site
    keeps serving its last certificate; a certificate that is not valid yet points at a
    misconfigured server or clock. Either way the user cannot rely on the page being the
    site's.

    ## Example
    `https://shop.example.com/` whose certificate ran out last month.

    ## References
    - CWE-298: Improper Validation of Certificate Expiration
    """
    probe = _probe(ctx)
    if probe is None or probe.status != "ok" or probe.certificate is None:
        return
    cert = probe.certificate
    now = datetime.now(UTC)
    if now > cert.not_after:
        yield Hit(
            f"The certificate of {_where(probe)} expired on {cert.not_after:%Y-%m-%d}: the "
            "browser would refuse the page.",
            certificate_facts(probe),
        )
    elif now < cert.not_before:
        yield Hit(
            f"The certificate of {_where(probe)} is not valid until "
            f"{cert.not_before:%Y-%m-%d}: the browser would refuse the page.",
            certificate_facts(probe),
        )


@rule("UV605", "outdated-tls", Severity.MEDIUM, kind="tls", cwe=327)
def outdated_tls(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """A host that only speaks a TLS version older than 1.2.

    ## What it does
    With the TLS probe on, reports a host whose handshake negotiates TLS 1.1, TLS 1.0 or
    SSL 3. urlvet offers TLS 1.2 and 1.3 first, as browsers do, and asks once more with the
    old versions allowed only when the host refuses those.

    ## Why is this bad?
    TLS 1.0 and 1.1 were deprecated by RFC 8996 in 2021; current browsers refuse them. A
    host that speaks nothing newer is unmaintained, and its connections rest on broken
    primitives.

    ## Example
    `https://legacy.example.com/` that negotiates TLSv1.

    ## References
    - CWE-327: Use of a Broken or Risky Cryptographic Algorithm
    - RFC 8996: Deprecating TLS 1.0 and TLS 1.1
    """
    probe = _probe(ctx)
    if probe is None or probe.version not in _OLD_VERSIONS:
        return
    yield Hit(
        f"The site {_where(probe)} speaks {probe.version}, which browsers no longer accept "
        "(TLS 1.2 is the oldest version still considered safe).",
        certificate_facts(probe),
    )


@rule("UV606", "new-certificate", Severity.LOW, kind="tls")
def new_certificate(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """A certificate issued only days ago, raised to high on a lookalike name.

    ## What it does
    With the TLS probe on, notes a host whose verified certificate was issued fewer than
    `tls.new_certificate_days` days ago (7 by default). On its own it is low; when a
    lookalike rule (UV3xx) also fired on the URL it is high.

    ## Why is this bad?
    Free, automatically issued certificates are how most phishing pages get their padlock:
    the lookalike domain is registered and certified the day the campaign starts. A fresh
    certificate on an ordinary site means nothing (they renew every few weeks); on a name
    built to look like another site it is a strong sign of a phishing page.

    ## Example
    `https://paypa1-secure.com/` with a certificate issued two days ago.
    """
    probe = _probe(ctx)
    if probe is None or probe.status != "ok" or probe.certificate is None:
        return
    cert: Certificate = probe.certificate
    days = ctx.settings.new_certificate_days
    age = datetime.now(UTC) - cert.not_before
    if age.total_seconds() < 0 or age.days >= days:
        return
    lookalike = any(code.startswith(_LOOKALIKE_FAMILY) for code in ctx.earlier)
    when = "today" if age.days == 0 else ("1 day ago" if age.days == 1 else f"{age.days} days ago")
    message = (
        f"The certificate of {probe.host} was issued {when} ({cert.not_before:%Y-%m-%d})"
        f" by {cert.issuer or 'an unnamed authority'}."
    )
    if lookalike:
        message += (
            " A certificate this new on a name that looks like another site's is how"
            " phishing pages get their padlock."
        )
    facts = certificate_facts(probe)
    facts.update(age_days=age.days, threshold_days=days, with_lookalike=lookalike)
    yield Hit(message, facts, Severity.HIGH if lookalike else None)


@rule("UV607", "tls-timeout", Severity.MEDIUM, kind="tls")
def tls_timeout(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    """A host that does not complete a TLS handshake before the deadline.

    ## What it does
    With the TLS probe on, reports a host that accepts no connection, or accepts one and
    never finishes the handshake, within `tls.timeout` seconds (3 by default). The severity
    follows `tls.failure_severity` when the policy sets it.

    ## Why is this bad?
    urlvet cannot see the certificate, so it cannot say whose page this is. A host that
    stalls some clients and not others can also hide what it serves from a check.

    ## Example
    `https://slow.example.com/` that accepts the connection and stays silent.
    """
    probe = _probe(ctx)
    if probe is None or probe.status != "timeout":
        return
    yield Hit(
        f"The site {_where(probe)} did not complete a secure connection within the "
        "deadline, so urlvet could not check its certificate.",
        certificate_facts(probe),
    )
