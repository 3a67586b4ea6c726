"""UV215: a link wrapped by a mail or security gateway or an ad network, judged by where it
really leads.

The decoders are ``urlvet.wrappers`` (one per documented or publicly reverse-engineered
format); the destination is vetted on its own through ``CheckContext.destinations``, as
UV213 vets a redirector's.
"""

from __future__ import annotations

from collections.abc import Iterator

from urlvet.checks.base import (
    CheckContext,
    Facts,
    Hit,
    clip,
    onward,
    redirector_entry,
    redirector_parameters,
    rule,
)
from urlvet.findings import Finding, Severity
from urlvet.url import HostKind, form_decode
from urlvet.wrappers import Unwrapped, may_be_wrapper_site, unwrap

_UNREAD_SCHEMES = ("data:",)
"""Schemes of a redirector's destination that the carried-URL reader does not take as a page
(see ``urlvet.url.CARRIED_SCHEMES``) but a redirector still opens."""
DESTINATION_FINDINGS_LIMIT = 8
"""Findings of a destination listed in a finding's evidence."""


def _redirected_data(url: Facts, ctx: CheckContext) -> Unwrapped | None:
    """A listed redirector's destination in a scheme the carried-URL reader leaves out."""
    params = redirector_parameters(url, ctx.settings)
    if not params or not url.search:
        return None
    for part in url.search[1:].split("&"):
        name, _, value = part.partition("=")
        if form_decode(name) in params:
            text = form_decode(value).strip()
            if text.lower().startswith(_UNREAD_SCHEMES):
                return Unwrapped(f"the redirector of {url.host}", text)
    return None


def _wraps_or_redirects(url: Facts, ctx: CheckContext) -> bool:
    # Only a wrapper's site, or a page the policy lists as a redirector, can wrap a link.
    return url.host_kind is HostKind.DOMAIN and (
        may_be_wrapper_site(url.registrable_domain)
        or redirector_entry(url.host, ctx.settings) is not None
    )


def _counted(findings: tuple[Finding, ...]) -> list[Finding]:
    return [f for f in findings if f.severity is not Severity.INFO]


@rule(
    "UV215",
    "wrapped-link",
    Severity.INFO,
    cwe=601,
    reads={
        "host",
        "host_kind",
        "registrable_domain",
        "scheme",
        "pathname",
        "search",
        "hash",
        "hops",
    },
    when=_wraps_or_redirects,
)
def wrapped_link(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A link rewritten by a mail gateway or an ad network, judged by the URL inside it.

    ## What it does
    Decodes the formats that mail and security gateways and ad networks write in place of a
    link: Proofpoint URL Defense v2 and v3 (`urldefense.com/v3/__...__`), Mimecast URL
    Protect (its `domain`), Barracuda Link Protection, Sophos Time-of-Click, Trend Micro
    click-time protection, Cisco's path-style redirector, Google's AMP viewer (`/amp/s/`),
    Yahoo's `RU=` path segment, DoubleClick's click-trackers and `href.li`; and a `data:` URL
    behind a listed redirector (`google.com/url?q=data:...`). The URL inside is vetted as if it
    were the link (wrappers in wrappers up to three hops): its findings are listed in the
    evidence and this finding takes the worst one's severity; a clean destination is reported
    as information, so the consent screen can say where the link leads.

    ## Why is this bad?
    A wrapper names the gateway, which every filter trusts; the page that opens is the one
    inside, and a phishing page, a private address or a `data:` page is as dangerous wrapped.

    ## Example
    `https://urldefense.com/v3/__https://paypal-account-verify.com/signin__;!!BhdT!kx1o$`,
    `https://www.google.com/url?q=data:text/html;base64,PHNjcmlwdD4=`.
    """
    if url is None or url.host_kind is not HostKind.DOMAIN:
        return
    wrapper_site = may_be_wrapper_site(url.registrable_domain)
    if not wrapper_site and "data" not in url.search.lower():
        return  # neither a wrapper nor a redirector carrying data: (nearly every link)
    found = (unwrap(url) if wrapper_site else None) or _redirected_data(url, ctx)
    if found is None:
        return
    evidence: dict[str, object] = {"wrapper": found.wrapper, "destination": clip(found.destination)}
    destinations = onward(url, ctx)
    if destinations is None:
        yield Hit(
            f"The link is wrapped by {found.wrapper} more times than are followed: where it "
            "leads is unknown.",
            evidence,
            severity=Severity.MEDIUM,
        )
        return
    counted = _counted(destinations.destination_findings(found.destination, url.hops + 1))
    evidence["destination_findings"] = [
        {"code": f.code, "name": f.name, "severity": f.severity.value, "message": f.message}
        for f in counted[:DESTINATION_FINDINGS_LIMIT]
    ]
    worst = max(counted, key=lambda f: f.severity.rank, default=None)
    there = f" There: {worst.message}" if worst else ""
    yield Hit(
        f"The link is wrapped by {found.wrapper}: it really opens "
        f"{clip(found.destination, 120)}.{there}",
        evidence,
        severity=worst.severity if worst else Severity.INFO,
    )
