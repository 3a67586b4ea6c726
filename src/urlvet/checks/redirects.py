"""UV212-UV214: where a link really leads when it is not the page it names.

A URL shortener hides its destination; a redirector on a big site (Google's `/url`, Bing's
click-tracker, Outlook Safe Links, Facebook's link shim...) forwards the browser to a URL written
in a parameter; and any page may send the browser on to the URL in its `next`, `continue` or
`redirect_uri` parameter. The destinations are read with ``url.carried_urls`` (the same reader
UV210 and UV406 use) and vetted on their own through ``CheckContext.destinations``: their
findings count here, folded into one finding of this family, so that the link's own codes and
its destination's never collide.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from urlvet.checks.addresses import internal_target
from urlvet.checks.base import (
    CheckContext,
    Facts,
    Hit,
    allowed_domain,
    carried,
    clip,
    compared_site,
    host_matches,
    onward,
    redirector_destination,
    redirector_position,
    rule,
)
from urlvet.findings import Finding, Severity
from urlvet.server import is_loopback_host
from urlvet.url import CarriedURL, HostKind, ParsedURL

REDIRECT_PARAMETERS = frozenset(
    {
        "redirect_uri",
        "redirect_url",
        "redirect",
        "continue",
        "next",
        "return_to",
        "returnto",
        "return_url",
        "returnurl",
        "url",
        "u",
        "dest",
        "destination",
        "target",
        "goto",
    }
)
"""Parameter names that ask a site to send the browser on (UV214), compared in lower case.
Not ``q``: on most sites it is a search query (``google.com/search?q=http://...`` is a search for
a URL); where it is a redirect's target (``google.com/url?q=``), the policy's ``redirectors``
say so and UV213 reads it."""

# A nested verdict's findings of these codes are not counted again: UV210 reads the link's
# parameters at every depth already, so the outer verdict has them.
_COUNTED_OUTSIDE = frozenset({"UV210"})

# Findings about where a destination sends the browser next, rather than about the page itself.
_ONWARD = frozenset({"UV212", "UV213", "UV214"})

DESTINATION_FINDINGS_LIMIT = 8
"""Findings of a destination listed in a finding's evidence."""


def _counted(findings: tuple[Finding, ...]) -> list[Finding]:
    return [
        f for f in findings if f.severity is not Severity.INFO and f.code not in _COUNTED_OUTSIDE
    ]


def _destination_evidence(item: CarriedURL, counted: list[Finding]) -> dict[str, Any]:
    return {
        "destination": clip(item.target.href),
        "parameter": clip(" > ".join(item.path), 100),
        "encoding": item.encoding,
        "destination_findings": [
            {"code": f.code, "name": f.name, "severity": f.severity.value, "message": f.message}
            for f in counted[:DESTINATION_FINDINGS_LIMIT]
        ],
    }


def _top(counted: list[Finding], floor: Severity | None) -> Severity | None:
    top = floor
    for f in counted:
        if top is None or f.severity.rank > top.rank:
            top = f.severity
    return top


def _where(target: ParsedURL) -> str:
    # The A-label form: a destination's Unicode form may be the very spoof this is about.
    if target.host_kind is HostKind.DOMAIN:
        return target.host
    return target.host_for_display if target.host else f"a {target.scheme}: URL"


@rule(
    "UV212",
    "url-shortener",
    Severity.LOW,
    reads={"host", "host_kind", "path_is_root", "registrable_domain", "scheme"},
)
def url_shortener(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A link on a URL shortener, which hides where it leads.

    ## What it does
    Flags a link with a path on a URL shortener (`bit.ly`, `tinyurl.com`, `ow.ly`,
    `rebrand.ly`, `t.co`...; the list is `domains.shorteners` in the policy, built from
    published lists). The shortener's own home page (no path) is left alone. The consent
    screen says that the destination is unknown.

    ## Why is this bad?
    Nobody can tell from a short link where it goes: not the person asked to open it, and not
    urlvet, which never fetches a URL. Phishing uses shorteners for exactly that, and a server
    that means well has no reason to hide its own link behind one.

    ## Example
    `https://bit.ly/3Kx9TqZ`, `https://tinyurl.com/y7k3pz2m`.
    """
    if url is None or url.host_kind is not HostKind.DOMAIN or url.scheme not in ("http", "https"):
        return
    if url.path_is_root:
        return
    site = url.registrable_domain
    if site is not None and site not in ctx.settings.shortener_sites:
        return
    shortener = host_matches(url.host, ctx.settings.shorteners)
    if shortener is None or allowed_domain(url.host.rstrip(".").lower(), ctx.settings):
        return
    yield Hit(
        f"The link goes through {shortener}, a URL shortener: where it really leads is unknown "
        "until it is opened.",
        {"host": url.host, "shortener": shortener},
    )


@rule(
    "UV213",
    "open-redirect",
    Severity.LOW,
    cwe=601,
    reads={
        "host",
        "host_kind",
        "host_for_display",
        "registrable_domain",
        "carried",
        "redirect_position",
        "hops",
    },
    needs="carried",
)
def open_redirect(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A redirector page of a big site that forwards the browser to another site.

    ## What it does
    For a link on a page the policy lists under `redirectors` (Google's `/url`, Bing's
    `/ck/a`, Outlook Safe Links, Facebook's `l.php`, YouTube's `/redirect`...), reads the
    destination from its parameter (percent-decoded as many times as it was encoded; Bing's
    `a1` + base64url undone), reports it, and vets it as if it had been the link: the
    destination's findings are listed in the evidence and the finding takes the severity of the
    worst of them (low when there are none). For a destination on the redirector's own site,
    only where it sends the browser next counts (a redirect, a shortener, an unsafe parameter
    of its own), as for UV214. Redirectors inside redirectors are followed up to three hops. A policy severity
    override for this code replaces the destination's severity too.

    ## Why is this bad?
    The address a person reads names the big site, and the page that opens is another. A
    server that sends users through `google.com/url` gets past filters and past the eye; what
    matters is the destination, so that is what is judged.

    ## Example
    `https://www.google.com/url?q=https://xn--pypal-4ve.com/signin`,
    `https://www.bing.com/ck/a?...&u=a1aHR0cHM6Ly9ldmlsLmV4YW1wbGUv`.
    """
    # Only a listed redirector page (a domain's) has a destination: most links have none,
    # and its position, read once per link, says so before anything else is read.
    item = None if url is None else redirector_destination(url, ctx)
    if item is None:
        return
    target = item.target
    same_site = target.host_kind is HostKind.DOMAIN and compared_site(target) == compared_site(url)
    destinations = onward(url, ctx)
    if same_site and destinations is None:
        return
    counted: list[Finding] = []
    final = target.href
    if destinations is not None:
        nested = destinations.destination_findings(item.target, url.hops + 1)
        counted = _counted(nested)
        if same_site:
            # A hop within the redirector's own site: its pages are judged with the link, but
            # where that hop sends the browser next (a redirect of its own) still counts.
            counted = [f for f in counted if f.code in _ONWARD]
            if not counted:
                return
        for f in nested:
            if f.code == "UV213" and isinstance(f.evidence.get("final_destination"), str):
                final = f.evidence["final_destination"]
    evidence = _destination_evidence(item, counted)
    evidence["redirector"] = url.host
    evidence["final_destination"] = clip(final)
    there = f" There: {counted[0].message}" if counted else ""
    yield Hit(
        f"The link names {url.host_for_display}, but it is a redirect: it really opens "
        f"{_where(target)}.{there}",
        evidence,
        severity=_top(counted, Severity.LOW),
    )


@rule(
    "UV214",
    "unsafe-destination-in-parameter",
    Severity.MEDIUM,
    cwe=601,
    reads={
        "host",
        "host_kind",
        "host_for_display",
        "registrable_domain",
        "carried",
        "redirect_position",
        "hops",
    },
    needs="carried",
)
def unsafe_destination_in_parameter(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A parameter such as `next` or `continue` that sends the browser on to an unsafe URL.

    ## What it does
    Reads the parameters that ask a site to send the browser on afterwards (`redirect_uri`,
    `continue`, `next`, `return_to`, `url`, `u`, `dest`, `target`, `goto`...), at any
    depth of nesting and however many times they were percent-encoded, and vets each URL found
    on its own. When the destination has findings, they count: this finding lists them and
    takes the severity of the worst. Destinations inside the user's network are UV210's; a
    loopback `redirect_uri` (an app's own sign-in callback) and destinations that are clean
    are left alone; for a destination on the link's own site, only where it sends the browser
    next counts (a shortener, a redirect, an unsafe parameter of its own). The destinations of
    UV213's redirectors are reported there instead.

    ## Why is this bad?
    After a sign-in, or at once on an open redirect, the site sends the browser to that
    parameter: a real login page with `next=` set to a lookalike, or to a `javascript:` URL,
    delivers the user to the attacker from a trusted address.

    ## Example
    `https://www.example.com/account/login?next=https%3A%2F%2Fxn--pypal-4ve.com%2F`,
    `https://shop.example.net/go?dest=javascript%3Aalert(document.cookie)`.
    """
    destinations = None if url is None or not url.carried else onward(url, ctx)
    if url is None or destinations is None:
        return
    items = carried(url, ctx)
    if not items:
        return
    # By position, never by identity: a second copy of the redirector's parameter is equal
    # to the first, and is read here all the same.
    redirect = redirector_position(url, ctx)
    for position, item in enumerate(items):
        # Deeper URLs are vetted inside the one that carries them, so that they count once.
        if item.depth != 1 or position == redirect or item.name.lower() not in REDIRECT_PARAMETERS:
            continue
        target = item.target
        if target.scheme in ("http", "https"):
            if is_loopback_host(target) and item.name == "redirect_uri":
                continue
            if internal_target(target, ctx) is not None:
                continue  # UV210 reports it
        nested = destinations.destination_findings(item.target, url.hops + 1)
        counted = _counted(nested)
        if target.host_kind is HostKind.DOMAIN and compared_site(target) == compared_site(url):
            # The site sending you on within itself: its own pages are judged with the link;
            # only where that page sends you next still counts.
            counted = [f for f in counted if f.code in _ONWARD]
        if not counted:
            continue
        yield Hit(
            f"The link's parameter {clip(item.name, 40)!r} sends you on to {_where(target)} "
            f"after {url.host_for_display or 'this page'}. There: {counted[0].message}",
            _destination_evidence(item, counted),
            severity=_top(counted, None),
        )
        return
