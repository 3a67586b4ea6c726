"""UV4xx: the URL against the server that asked for it."""

from __future__ import annotations

import re
from collections.abc import Iterator

from urlvet.checks.base import (
    CheckContext,
    CheckSettings,
    Facts,
    Hit,
    carried,
    clip,
    compared_site,
    ends_as_no_key,
    host_matches,
    rule,
)
from urlvet.findings import Severity
from urlvet.server import is_loopback_host
from urlvet.url import (
    MAX_DOMAIN_LENGTH,
    HostKind,
    ParsedURL,
    first_parent_dot,
    site_of,
)


def trusted_third_party(url: ParsedURL, settings: CheckSettings) -> str | None:
    """The policy entry that vouches for this URL as a trusted third party, or None: how the
    fact ``trusted_entry`` is computed."""
    if ends_as_no_key(url.host, settings.trusted_tails):
        return None  # no key ends as the host does: nearly every host
    for key, prefix in _trusted_entries(url, settings):
        if (
            not prefix
            or url.pathname == prefix
            or url.pathname.startswith(prefix.rstrip("/") + "/")
        ):
            return key + prefix
    return None


def _trusted_entries(url: ParsedURL, settings: CheckSettings) -> Iterator[tuple[str, str]]:
    """(key, path prefix) of each trusted-third-party entry for the URL's host: the host
    itself, then "*.parent" for each parent, longest first."""
    table = settings.trusted_third_parties
    if not table or url.host_kind is not HostKind.DOMAIN or url.scheme != "https":
        return
    host = url.host.rstrip(".").lower()
    # The host itself, then "*.parent" for each parent, longest first; walked with slices
    # rather than a list, as up to four rules ask for every URL.
    # Entries are at most MAX_DOMAIN_LENGTH long: a longer host starts at its first parent
    # that short ("*." + parent), which keeps a host of 100,000 labels linear.
    if len(host) <= MAX_DOMAIN_LENGTH:
        key = host
        dot = host.find(".")
    else:
        dot = first_parent_dot(host)
        if dot < 0:
            return
        key = "*." + host[dot + 1 :]
        dot = host.find(".", dot + 1)
    while True:
        prefixes = table.get(key)
        if prefixes is not None:
            for prefix in prefixes:
                yield key, prefix
        if dot < 0:
            return
        key = "*." + host[dot + 1 :]
        dot = host.find(".", dot + 1)


def _expected_domains(ctx: CheckContext) -> frozenset[str] | None:
    server = ctx.server
    if server is None or not server.name:
        return None
    return ctx.settings.server_domains.get(server.name)


SITE_FACTS = frozenset(
    {"host", "host_kind", "host_for_display", "registrable_domain", "trusted_entry", "scheme", "ip"}
)
"""What the rules that compare the URL's site with the server's read (UV401, UV403, UV405)."""


@rule(
    "UV401",
    "cross-site-from-server",
    Severity.MEDIUM,
    cwe=601,
    reads=SITE_FACTS,
    needs_server=True,
)
def cross_site_from_server(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """The URL's site is not the site of the remote server that asked for it.

    ## What it does
    Compares the URL's registrable domain (its site, with the Public Suffix List's private
    section, so `a.github.io` and `b.github.io` differ) with the site of the server's own
    endpoint. Third parties the policy trusts (identity providers) are exempt and reported
    as information (UV403); servers with declared expected domains are judged by UV405.

    ## Why is this bad?
    A server that sends users to somebody else's site is the shape of most phishing: the
    user trusts the server they connected, and the page belongs to someone else.

    ## Example
    Server `https://mcp.example.com/mcp` asking to open `https://example-billing.net/pay`.
    """
    server = ctx.server
    if url is None or server is None or server.parsed is None or server.is_local:
        return
    if url.host_kind not in (HostKind.DOMAIN, HostKind.IPV4, HostKind.IPV6):
        return
    if _expected_domains(ctx) is not None or url.trusted_entry is not None:
        return
    ours, theirs = compared_site(server.parsed), compared_site(url)
    if ours != theirs:
        yield Hit(
            f"The link goes to {url.host_for_display}, which is not part of the site of "
            f"the server that asked ({server.parsed.host_for_display}).",
            {"url_site": theirs, "server_site": ours},
        )


@rule(
    "UV402",
    "server-domain-embedded",
    Severity.HIGH,
    cwe=451,
    reads={"host", "host_kind", "registrable_domain", "trusted_entry", "scheme", "ip"},
    needs_server=True,
)
def server_domain_embedded(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """The server's own domain written inside a host that belongs to someone else.

    ## What it does
    Flags hosts such as `mcp.example.com.evil.example` or `example-com.evil.example` when
    the server is `mcp.example.com`: the server's name is there to be read, but the site is
    another. The name is matched on whole labels, with dots or hyphens between them, so
    `data-co.uk` does not contain `a.co`. For a server with expected domains in the policy
    (stdio servers included) those domains are looked for too.

    ## Why is this bad?
    People look for a familiar name anywhere in the address bar. Putting the expected name
    in a subdomain of an attacker's domain is a standard phishing trick.

    ## Example
    Server `https://mcp.example.com/`, URL `https://mcp.example.com.login.evil.example/`.
    """
    server = ctx.server
    if url is None or server is None or url.host_kind is not HostKind.DOMAIN:
        return
    names = _names_of_server(ctx)
    site = compared_site(url)
    if not names or site in names or _under_any(url.host, names):
        return
    host = url.host.rstrip(".").lower()
    # A name spelt out in the host has its first label somewhere in the host text: when no
    # name's does, nothing below can match (the common case, checked first as it is cheap).
    if not any(name.partition(".")[0] in host for name in names):
        return
    if url.trusted_entry is not None:
        return
    tokens = _TOKEN_SPLIT.split(host)
    for name in sorted(names, key=lambda n: (-n.count("."), n)):
        wanted = _TOKEN_SPLIT.split(name)  # "acme-corp.com": acme, corp, com
        n = len(wanted)
        if any(tokens[i : i + n] == wanted for i in range(len(tokens) - n + 1)):
            yield Hit(
                f"The link's address contains the server's name ({name}) but really goes "
                f"to {site}.",
                {"server_site": name, "url_site": site, "host": url.host},
            )
            return


_TOKEN_SPLIT = re.compile(r"[.-]")


def _names_of_server(ctx: CheckContext) -> frozenset[str]:
    """The sites a person would recognise as the server's: its own, and its expected ones."""
    names: set[str] = set()
    server = ctx.server
    if server is not None and server.registrable_domain:
        names.add(server.registrable_domain)
    expected = _expected_domains(ctx)
    if expected:
        for domain in expected:
            names.add(site_of(domain)[0] or domain)
    return frozenset(names)


def _under_any(host: str, domains: frozenset[str]) -> bool:
    return host_matches(host, domains) is not None


@rule(
    "UV403",
    "trusted-third-party",
    Severity.INFO,
    reads=SITE_FACTS,
    needs="trusted_entry",
    needs_server=True,
)
def trusted_third_party_rule(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """The URL is on a third party the policy trusts, such as an identity provider.

    ## What it does
    Reports, as information, a URL on another site than the server's when the policy lists
    it in `trusted_third_parties` (accounts.google.com, login.microsoftonline.com, GitHub's
    OAuth pages...), and lowers the cross-site finding to this.

    ## Why is this bad?
    It is not: signing in with a well-known identity provider is the normal OAuth flow. The
    finding is there so the consent screen can say whose page it is.

    ## Example
    Server `https://mcp.example.com/` asking to open
    `https://accounts.google.com/o/oauth2/v2/auth?client_id=...`.
    """
    if url is None or ctx.server is None:
        return
    entry = url.trusted_entry
    if entry is None:
        return
    if ctx.server.registrable_domain and ctx.server.registrable_domain == url.registrable_domain:
        return
    yield Hit(
        f"The link goes to {url.host_for_display}, a third party your policy trusts "
        "(such as a sign-in provider).",
        {"trusted_entry": entry, "host": url.host},
    )


@rule(
    "UV404",
    "local-callback",
    Severity.INFO,
    reads={"scheme", "effective_port", "host", "host_kind", "ip"},
    needs_server=True,
)
def local_callback(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A local server sends the user to a page on this computer.

    ## What it does
    Reports, as information, a loopback URL (plain `http:` allowed) asked for by a local
    server (stdio, or a server on loopback), as OAuth callbacks of local tools do.

    ## Why is this bad?
    It is not, for a local server: it is how a local tool receives an OAuth code. The same
    URL from a remote server is blocked (UV201, UV202).

    ## Example
    A stdio server asking to open `http://127.0.0.1:33418/callback`.
    """
    if url is None or ctx.server is None or not ctx.server.is_local:
        return
    if url.scheme in ("http", "https") and is_loopback_host(url):
        yield Hit(
            "The link opens a page on this computer, as a local tool's sign-in callback does.",
            {"host": url.host, "port": url.effective_port},
        )


@rule(
    "UV405",
    "unexpected-domain-for-server",
    Severity.MEDIUM,
    cwe=601,
    reads=SITE_FACTS,
    needs_server=True,
)
def unexpected_domain_for_server(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """The URL is outside the domains the policy expects from this server.

    ## What it does
    For servers listed under `servers:` in the policy (by the name the client's
    configuration gives them, stdio servers included), flags URLs whose host is not one of
    the expected domains or under one. Trusted third parties stay allowed.

    ## Why is this bad?
    A stdio server has no site of its own to compare against; the security team says which
    sites it legitimately opens, and anything else is a surprise worth a warning.

    ## Example
    With `servers: {github: {domains: [github.com]}}`, the `github` server asking to open
    `https://gist-github.example/`.
    """
    expected = _expected_domains(ctx)
    if url is None or expected is None or ctx.server is None:
        return
    if url.host_kind is HostKind.DOMAIN and host_matches(url.host, expected):
        return
    if url.trusted_entry is not None:
        return
    if ctx.server.is_local and is_loopback_host(url):
        return
    yield Hit(
        f"The server {ctx.server.name!r} is expected to open {', '.join(sorted(expected))}, "
        f"but this link goes to {url.host_for_display}.",
        {"expected": sorted(expected), "host": url.host},
    )


@rule(
    "UV406",
    "sign-in-redirect-off-site",
    Severity.MEDIUM,
    cwe=601,
    reads={
        "host",
        "host_kind",
        "host_for_display",
        "registrable_domain",
        "carried",
        "ip",
        "scheme",
    },
    needs="carried",
    needs_server=True,
)
def sign_in_redirect_off_site(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A sign-in on another site whose grant comes back to neither the server nor this computer.

    ## What it does
    For a URL on a site other than the remote server's (an identity provider's authorization
    page, typically), reads its OAuth `redirect_uri` parameters (also inside URLs carried in
    its other parameters, and however many times they were percent-encoded) and flags one that
    leads to a site that is neither the server's own, nor one the policy expects from the
    server, nor a loopback address (a local client's callback).

    ## Why is this bad?
    After the user signs in, the provider sends the grant (an authorization code or a token
    for the user's account there) to the `redirect_uri`. A trusted provider's page with a
    redirect elsewhere is consent phishing: the sign-in is real, and the access it grants
    goes to whoever registered that redirect, not to the server the user is working with.

    ## Example
    Server `https://mcp.example.com/mcp` asking to open
    `https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=...&redirect_uri=https%3A%2F%2Fevil.example%2Fcb`.
    """
    server = ctx.server
    if url is None or server is None or server.parsed is None or server.is_local:
        return
    if not url.carried:
        return
    ours = compared_site(server.parsed)
    if compared_site(url) == ours:
        return  # the server's own sign-in: where it sends its own grant is its own affair
    expected = _expected_domains(ctx)
    for item in carried(url, ctx):
        if item.name != "redirect_uri":
            continue
        value, target = item.value, item.target
        if target.scheme not in ("http", "https") or is_loopback_host(target):
            continue
        if compared_site(target) == ours:
            continue
        if (
            expected is not None
            and target.host_kind is HostKind.DOMAIN
            and host_matches(target.host, expected)
        ):
            continue
        yield Hit(
            f"After you sign in at {url.host_for_display}, it sends you, and the access you "
            f"grant, to {target.host_for_display}, which is not the site of the server that "
            f"asked ({server.parsed.host_for_display}).",
            {
                "redirect_uri": clip(value),
                "redirect_site": compared_site(target),
                "server_site": ours,
            },
        )
        return
