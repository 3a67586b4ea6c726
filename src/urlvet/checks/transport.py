"""UV1xx: transport and form. Is this a URL a browser should open, and is it what it seems?"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from urllib.parse import unquote

from urlvet.checks.base import CheckContext, Facts, Hit, rule
from urlvet.findings import Severity
from urlvet.hsts import hsts_preload_list_date, is_hsts_preloaded
from urlvet.server import is_loopback_host
from urlvet.text import cut, hidden_characters
from urlvet.url import HostKind

_DANGEROUS = frozenset({"javascript", "data", "file", "vbscript", "blob", "filesystem"})


@rule(
    "UV100",
    "unparseable-url",
    Severity.CRITICAL,
    kind="raw",
    cwe=20,
    reads={"parse_error"},
    needs="parse_error",
)
def unparseable_url(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A URL that a browser refuses to parse.

    ## What it does
    Flags input that the WHATWG URL parser, the one browsers use, rejects: no scheme, a
    malformed host or port, forbidden characters in the host, a Unicode host that UTS #46
    rejects (disallowed characters, broken bidirectional text, an empty or over-long name),
    text that is not valid Unicode. Exactly what the URL Standard refuses: an all-ASCII host
    with an undecodable `xn--` label is kept by browsers, and by urlvet (it is shown as is,
    never decoded).

    ## Why is this bad?
    A client cannot show the user where such a URL leads, and other parsers may read it
    differently from the browser. urlvet never guesses: what a browser refuses is blocked.

    ## Example
    `https://exa mple.com/`, `https://[::1/`, `https://example.com:99999/`, `not a url`.
    """
    if url.parse_error is not None:
        yield Hit(
            f"This is not a valid web address: {url.parse_error}.", {"reason": url.parse_error}
        )


@rule(
    "UV101",
    "plaintext-http",
    Severity.HIGH,
    cwe=319,
    reads={"scheme", "host", "host_kind", "host_for_display", "ip"},
)
def plaintext_http(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A URL that uses plain `http:` (or `ws:`) instead of an encrypted scheme.

    ## What it does
    Flags `http:` and `ws:` URLs. A local server (stdio, or a server on loopback) may send the
    user to a loopback `http:` page, as OAuth callbacks do; nobody else may.

    An `http:` link to a host on Chromium's HSTS preload list (the host itself, or a parent
    listed with its subdomains, preloaded TLDs such as `.dev` and `.app` included) is still
    reported, with the fact in the message and evidence (`hsts_preloaded`): every major
    browser upgrades it to `https:` before sending a byte. The policy's
    `tls.hsts_preloaded_severity` sets the severity for those hosts (default: unchanged).

    ## Why is this bad?
    Anyone on the network path can read and change a plain-HTTP page: a sign-in or payment
    page sent over it hands credentials to whoever is listening. A preloaded host is safe
    in a browser, but not in every program that may open the link.

    ## Example
    `http://accounts.example.com/login` (use `https://accounts.example.com/login`).

    ## References
    - RFC 6797: HTTP Strict Transport Security; https://hstspreload.org/
    """
    if url is None or url.scheme not in ("http", "ws"):
        return
    if ctx.server is not None and ctx.server.is_local and is_loopback_host(url):
        return
    if url.scheme == "http" and url.host_kind is HostKind.DOMAIN and is_hsts_preloaded(url.host):
        yield Hit(
            f"The link uses unencrypted http://, but {url.host_for_display} is on the HSTS "
            "preload list: browsers open it over https:// before sending anything. Other "
            "programs may not.",
            {"scheme": url.scheme, "hsts_preloaded": True, "hsts_list": hsts_preload_list_date()},
            ctx.settings.hsts_preloaded_severity,
        )
        return
    yield Hit(
        f"The link uses unencrypted {url.scheme}://, so others on the network can read "
        "or change the page.",
        {"scheme": url.scheme},
    )


@rule("UV102", "dangerous-scheme", Severity.CRITICAL, cwe=79, reads={"scheme"})
def dangerous_scheme(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A URL whose scheme is not a web page: `javascript:`, `data:`, `file:`, and any other.

    ## What it does
    Flags every scheme other than `https:` and `http:` (and `wss:`/`ws:`, which are not pages
    either). `javascript:`, `data:`, `vbscript:`, `blob:` and `file:` are named as dangerous;
    any other scheme (`ms-settings:`, `smb:`, custom app schemes) hands the URL to another
    program.

    ## Why is this bad?
    `javascript:` and `data:` run attacker code in a browser context; `file:` and `smb:`
    reach the user's disk and network shares; custom schemes launch local apps with
    attacker-chosen arguments. An MCP server has no reason to send any of them.

    ## Example
    `javascript:alert(document.cookie)`, `data:text/html,<script>...`, `file:///etc/passwd`.
    """
    if url is None or url.scheme in ("https", "http"):
        return
    label = "dangerous" if url.scheme in _DANGEROUS else "not a web page"
    yield Hit(
        f"The link uses the {url.scheme}: scheme, which is {label}: it does not open an "
        "ordinary web page.",
        {"scheme": url.scheme},
    )


@rule(
    "UV103",
    "credentials-in-url",
    Severity.MEDIUM,
    cwe=522,
    reads={"username", "password", "has_userinfo"},
    needs="has_userinfo",
)
def credentials_in_url(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A URL that carries a username or password before the host.

    ## What it does
    Flags `https://user:secret@host/` and `https://user@host/`.

    ## Why is this bad?
    Credentials in a URL end up in browser history, logs and referrers, and the part before
    the `@` is routinely mistaken for the host. Modern sign-in flows never need it.

    ## Example
    `https://admin:hunter2@portal.example.com/`.
    """
    if url is None or not url.has_userinfo:
        return
    yield Hit(
        "The link carries a user name or password before the site name.",
        {"username": url.username, "has_password": bool(url.password)},
    )


@rule(
    "UV104",
    "userinfo-deception",
    Severity.HIGH,
    cwe=451,
    reads={
        "has_userinfo",
        "username",
        "password",
        "host",
        "host_for_display",
        "host_kind",
        "host_unicode",
        "registrable_domain",
        "authority_as_written",
    },
)
def userinfo_deception(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A URL written so that a person reads one host and the browser opens another.

    ## What it does
    Flags three disguises of the host:

    - userinfo (before `@`) that contains a dot-separated name or an address;
    - a backslash before an `@` in the authority: browsers end the host at the backslash,
      while a reader (and other URL parsers, Python's `urllib` among them) takes the part
      after the `@` for the host;
    - a character that looks like `/` inside the host (fraction slash U+2044, division slash
      U+2215, big solidus U+29F8, ...), so that the host reads as a site followed by a path.

    ## Why is this bad?
    `https://google.com@evil.example/` opens evil.example; a person reads google.com. This is
    a classic phishing disguise. `https://evil.example\\@example.com/` opens evil.example,
    while people and lenient parsers see example.com. `https://google.com⁄evil.example/`
    is one host under the site `com⁄evil.example`, which no person reads as such.

    ## Example
    `https://accounts.google.com@evil.example/login`, `https://paypal.com:443@198.51.100.7/`,
    `https://evil.example\\@example.com/`, `https://accounts.google.com∕login.evil.example/`.
    """
    if url is None:
        return
    if url.has_userinfo:
        shown = unquote(url.username + (":" + url.password if url.password else ""))
        head = shown.split(":", 1)[0]
        if "." in head or "/" in shown or head.lower() in ("localhost",):
            yield Hit(
                f"The link starts with {shown!r}, which looks like a site name, but the "
                f"browser will open {url.host_for_display}.",
                {"userinfo": shown, "real_host": url.host},
            )
            return
    if url.host_kind is not HostKind.DOMAIN:
        return
    written = url.authority_as_written
    if written is not None and "\\" in written and "@" in written.split("\\", 1)[1]:
        seen = written.rsplit("@", 1)[1]
        yield Hit(
            f"The link is written as \u201c{cut(written, 120)}\u201d: it reads as "
            f"\u201c{cut(seen, 120)}\u201d, but the browser ends the address at the backslash "
            f"and opens {url.host_for_display}.",
            {"written_as": written, "reads_as": seen, "real_host": url.host},
        )
        return
    if url.host_unicode.isascii():
        return
    slashes = sorted({c for c in url.host_unicode if c in _SLASH_LOOKALIKES})
    if slashes:
        c = slashes[0]
        before = url.host_unicode.split(c, 1)[0]
        yield Hit(
            f"The address contains {c!r} ({unicodedata.name(c, 'a slash-like character')}), "
            f"which looks like '/': it reads as {before!r} followed by a path, but the "
            f"browser opens the site {url.registrable_domain or url.host_for_display}.",
            {
                "characters": [f"U+{ord(ch):04X}" for ch in slashes],
                "reads_as": before,
                "real_host": url.host,
            },
        )


# Characters that survive the browser's host processing (UTS #46) and look like '/'. Fullwidth
# and small solidus forms are not here: UTS #46 maps them to '/', which ends the host.
_SLASH_LOOKALIKES = frozenset("\u2044\u2215\u29f8\u2571\u29f6\u1735\u27cb\u3033")


@rule("UV105", "overlong-url", Severity.HIGH, kind="raw", cwe=400, reads={"length"})
def overlong_url(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """A URL longer than the policy's limit.

    ## What it does
    Flags input longer than `limits.max_url_length` characters (2,048 by default).

    ## Why is this bad?
    A very long URL cannot be shown in full on a consent screen, so the user cannot check
    it; it is also a common way to push the real destination or an injection payload out of
    view, and to stress parsers.

    ## Example
    `https://example.com/?q=` followed by 100,000 characters.
    """
    limit = ctx.settings.max_url_length
    if url.length > limit:
        yield Hit(
            f"The link is {url.length:,} characters long, more than the {limit:,} "
            "allowed; it cannot be shown or checked in full.",
            {"length": url.length, "limit": limit},
        )


@rule("UV106", "hidden-characters", Severity.HIGH, kind="raw", cwe=451, reads={"raw"})
def hidden_characters_in_input(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """Control, bidirectional-override or invisible characters in the URL as given.

    ## What it does
    Flags C0/C1 controls (tab, newline, NUL...), bidi controls (U+202E RIGHT-TO-LEFT
    OVERRIDE and friends), zero-width and other invisible or format characters anywhere
    in the raw input, before the browser silently strips or encodes them.

    ## Why is this bad?
    These characters make the text a person reads differ from the URL the browser opens:
    an override can reverse `moc.elgoog` into view, a newline can hide the real host, a
    zero-width joiner can split a brand name. No honest URL needs them.

    ## Example
    `https://example.com/\u202egnp.exe`, `https://exa\u200bmple.com/`, `https://a.com\\n@b.com`.
    """
    found = hidden_characters(url.raw)
    if not found:
        return
    kinds = sorted({k for _, _, k in found})
    shown = ", ".join(code for _, code, _ in found[:8])
    more = f" and {len(found) - 8} more" if len(found) > 8 else ""
    yield Hit(
        f"The link contains hidden or direction-changing characters ({shown}{more}) "
        "that can make it look like a different address.",
        {
            "characters": [{"index": i, "codepoint": c, "kind": k} for i, c, k in found[:32]],
            "count": len(found),
            "kinds": kinds,
        },
    )


@rule(
    "UV107", "non-standard-port", Severity.LOW, reads={"scheme", "port", "host", "host_kind", "ip"}
)
def non_standard_port(url: Facts, ctx: CheckContext) -> Iterator[Hit]:
    """An https URL on a port other than 443.

    ## What it does
    Flags web URLs with an explicit, non-default port. A local server's loopback callback is
    exempt, and so is the host of the server that asked (its own origin, or another port of
    the machine it runs on, which the server's operator controls).

    ## Why is this bad?
    Sign-in, payment and account pages are served on the default port. An unusual port
    points at a development server, an admin interface or an internal service.

    ## Example
    `https://accounts.example.com:8443/login`.
    """
    if url is None or url.port is None or url.scheme not in ("http", "https"):
        return
    if url.host_kind is HostKind.EMPTY:
        return
    server = ctx.server
    if server is not None and server.is_local and is_loopback_host(url):
        return
    if (
        server is not None
        and server.parsed is not None
        and server.parsed.host.rstrip(".").lower() == url.host.rstrip(".").lower()
    ):
        return
    yield Hit(f"The link uses the unusual port {url.port}.", {"port": url.port})
