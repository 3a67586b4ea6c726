"""UV407: a sign-in at a real identity provider whose grant goes to another party, whoever
asks (a stdio server included).

The identity providers and their authorization endpoints are ``urlvet.identity`` (from their
published OpenID configurations). UV406 compares a grant's destination with a remote server's
site; this rule needs no server: a grant that leaves both the provider and this computer, a
token handed out in the address, or a callback in a scheme no web app uses, is the shape of
consent phishing.
"""

from __future__ import annotations

from collections.abc import Iterator

from urlvet.checks.base import (
    CheckContext,
    Facts,
    Hit,
    clip,
    compared_site,
    host_matches,
    rule,
)
from urlvet.findings import Severity
from urlvet.identity import authorization_endpoint, may_be_identity_provider
from urlvet.server import is_loopback_host
from urlvet.url import HostKind, InvalidURL, ParsedURL, form_decode, parse, percent_decode

_UNSAFE_SCHEMES = frozenset({"storagerelay", "javascript", "data", "vbscript", "file", "blob"})
"""Callback schemes no registered web or native app uses for a grant (Google's
``storagerelay`` is its own pop-up relay, which a third party's link has no business naming)."""
_DECODE_ROUNDS = 3


def _parameters(url: Facts) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in url.search[1:].split("&"):
        name, _, value = part.partition("=")
        out.setdefault(form_decode(name).lower(), form_decode(value))
    return out


def _decoded(value: str) -> str:
    text = value.strip()
    for _ in range(_DECODE_ROUNDS):
        if "%" not in text[:16]:
            break
        text = percent_decode(text).strip()
    return text


def _scheme_of(text: str) -> str:
    head, colon, _ = text.partition(":")
    return head.lower() if colon and head.isascii() and head.replace("+", "").isalnum() else ""


def _grant_is_expected(target: ParsedURL, url: Facts, ctx: CheckContext) -> bool:
    """True when the grant goes back to this computer, the provider's own site, the asking
    remote server's site or a site the policy expects from the server."""
    if is_loopback_host(target):
        return True
    site = compared_site(target)
    if site == compared_site(url):
        return True
    server = ctx.server
    if server is None:
        return False
    if server.parsed is not None and not server.is_local and site == compared_site(server.parsed):
        return True
    expected = ctx.settings.server_domains.get(server.name) if server.name else None
    return bool(
        expected and target.host_kind is HostKind.DOMAIN and host_matches(target.host, expected)
    )


def _at_identity_provider(url: Facts, ctx: CheckContext) -> bool:
    return may_be_identity_provider(url.registrable_domain)


@rule(
    "UV407",
    "sign-in-grant-to-other-party",
    Severity.MEDIUM,
    cwe=601,
    reads={
        "host",
        "host_kind",
        "host_for_display",
        "registrable_domain",
        "scheme",
        "pathname",
        "search",
    },
    when=_at_identity_provider,
)
def sign_in_grant_to_other_party(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A sign-in at a real identity provider that sends its grant to another party.

    ## What it does
    On an identity provider's authorization endpoint (Google, Microsoft, GitHub, Apple, Okta,
    Auth0, Zoom, Slack... from their published OpenID configurations; the list and sources
    are `urlvet/data/identity_providers.txt`), reads `redirect_uri` (percent-decoded as often
    as it was encoded) and `response_type`. A callback in a scheme no app uses
    (`storagerelay:`, `javascript:`, `data:`) is high; a callback that is neither this
    computer (loopback), nor the provider's own site, nor the asking remote server's site
    (or one the policy expects from it) is high when the grant is a token in the address
    (`response_type=token`) and medium for a code. For a code and a remote server, UV406
    reports it instead; this rule covers stdio servers and unknown askers too.

    ## Why is this bad?
    The sign-in page is real, so everything the user checks is right; what the user grants
    (mail, files, an account) goes to whoever registered the callback. A local server has no
    site of its own, so its grants should come back to this computer.

    ## Example
    From a stdio server:
    `https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=...&response_type=token&redirect_uri=https%3A%2F%2Ftoken-collector.net%2Fcb`.
    """
    if url is None or not url.search or not may_be_identity_provider(url.registrable_domain):
        return
    if authorization_endpoint(url) is None:
        return
    params = _parameters(url)
    redirect = params.get("redirect_uri")
    if not redirect:
        return
    text = _decoded(redirect)
    scheme = _scheme_of(text)
    evidence: dict[str, object] = {"redirect_uri": clip(text), "provider": url.host}
    if scheme in _UNSAFE_SCHEMES:
        yield Hit(
            f"After you sign in at {url.host_for_display}, the grant is handed to a "
            f"{scheme}: callback, which no app of yours uses.",
            evidence,
            severity=Severity.HIGH,
        )
        return
    if scheme not in ("http", "https"):
        return  # a native app's own scheme (com.example.app:/cb), or none
    try:
        target = parse(text)
    except InvalidURL:
        return
    if _grant_is_expected(target, url, ctx):
        return
    token = "token" in params.get("response_type", "").replace("+", " ").split()
    remote = ctx.server is not None and ctx.server.parsed is not None and not ctx.server.is_local
    if remote and not token:
        return  # UV406 reports a code sent off the remote server's site
    evidence["redirect_site"] = compared_site(target)
    evidence["response_type"] = clip(params.get("response_type", ""), 60)
    what = "a token for your account" if token else "the access you grant"
    yield Hit(
        f"After you sign in at {url.host_for_display}, it sends {what} to "
        f"{target.host_for_display}, which is neither this computer nor the provider"
        + (" nor the server that asked." if remote else "."),
        evidence,
        severity=Severity.HIGH if token else None,
    )
