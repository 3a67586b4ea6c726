"""Policies: what urlvet checks, how serious each finding is, and what the organisation trusts.

A policy is data, reviewed like code: a YAML or TOML file validated by pydantic models that
reject unknown keys. ``extends:`` names the parent: a built-in policy (``default``,
``strict``, shipped in ``urlvet/policies/``), a file relative to the child, or ``none``; a file
without it starts from ``default``. The child's scalar settings win, and its lists of domains,
networks and trusted parties add to the parent's. Every error names the file, the line and
the key.
"""

from __future__ import annotations

import ipaddress
import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from urlvet.addresses import parse_networks
from urlvet.checks import registry
from urlvet.checks.base import CheckSettings, IPNetwork, Rule, last_two_labels
from urlvet.errors import PolicyError
from urlvet.feeds import FeedKind, FeedSet, FeedSpec, load_feeds, url_key
from urlvet.findings import Decision, Severity
from urlvet.url import InvalidURL, normalize_domain, parse, site_of

MAX_POLICY_BYTES = 1_000_000
MAX_EXTENDS_DEPTH = 8

# Suffixes that resolve only inside a network. The RFC 2606 names (.example, .test,
# .invalid) are not here: they resolve nowhere, and DNS checks report that.
DEFAULT_INTERNAL_SUFFIXES = (
    "local",
    "localdomain",
    "internal",
    "intranet",
    "lan",
    "home",
    "home.arpa",
    "corp",
    "private",
    "priv",
    "intra",
    "localnet",
    "metadata.google.internal",
    "consul",
    "cluster.local",
)
DEFAULT_WILDCARD_DNS = (
    "nip.io",
    "sslip.io",
    "xip.io",
    "nip.direct",
    "traefik.me",
    "local.gd",
    "1u.ms",
    "rbndr.us",
    "backname.io",
    "xip.name",
    "nip.codes",
)
# Public domains whose every name answers a loopback address (127.0.0.1, ::1): names of this
# computer that no resolver, hosts file or browser treats as special. Sources:
# github.com/EvilBMP/local-dns README ("Public wildcard domains pointing to localhost", commit
# 6229361): 127-0-0-1.org.uk, lacolhost.com, localtest.me, localhost.tv, localhst.co.uk,
# lvh.me, vcap.me; github.com/fszlin/lo0.in README: lo0.in; colasloth.github.io: colasloth.com;
# names long used for the same purpose in Rails and Docker development setups (localho.st,
# smackaho.st, fuf.me, yoogle.com) and get.localhost.direct (localhost.direct). Two names under
# them are the services' own web pages (readme.localtest.me, localhost.tv itself): blocking
# them costs nothing an MCP server needs.
DEFAULT_LOOPBACK_DNS = (
    "localho.st",
    "smackaho.st",
    "lvh.me",
    "localtest.me",
    "vcap.me",
    "127-0-0-1.org.uk",
    "lacolhost.com",
    "localhost.tv",
    "localhst.co.uk",
    "localhost.direct",
    "lo0.in",
    "colasloth.com",
    "fuf.me",
    "yoogle.com",
)
# Services that shorten any URL for anyone: a link on them says nothing about where it leads.
# From github.com/PeterDaveHello/url-shorteners `list` (CC BY-SA 4.0, commit f0080c1), keeping
# the services open to everyone (not a brand's own shortener, such as youtu.be or amzn.to, that
# only leads to the brand's site), cross-checked with the shortening-service feature of the
# UCI "Phishing Websites" data set (Mohammad, Thabtah and McCluskey), as reproduced by
# phishing-detection tools (`bit\.ly|goo\.gl|shorte\.st|...`). IP loggers (iplogger.org and
# its mirrors) are in the first list: they record the visitor's address before forwarding.
DEFAULT_SHORTENERS = (
    "bit.ly",
    "bitly.com",
    "j.mp",
    "tinyurl.com",
    "tinyurl.mobi",
    "tiny.cc",
    "tiny.one",
    "tiny.pl",
    "tiny.ee",
    "is.gd",
    "v.gd",
    "da.gd",
    "x.gd",
    "ow.ly",
    "buff.ly",
    "rebrand.ly",
    "rb.gy",
    "cutt.ly",
    "shorturl.at",
    "shorturl.com",
    "short.gy",
    "shorter.me",
    "t.ly",
    "s.id",
    "bl.ink",
    "b.link",
    "dub.sh",
    "kutt.it",
    "goo.gl",
    "goo.su",
    "t.co",
    "lnkd.in",
    "clck.ru",
    "vk.cc",
    "surl.li",
    "snip.ly",
    "u.to",
    "q.gs",
    "ity.im",
    "bc.vc",
    "adfoc.us",
    "ouo.io",
    "ouo.press",
    "tny.im",
    "urlz.fr",
    "lc.cx",
    "ulvis.net",
    "zws.im",
    "urlr.me",
    "cli.re",
    "t2m.io",
    "qr.net",
    "qrco.de",
    "me2.kr",
    "han.gl",
    "reurl.cc",
    "ppt.cc",
    "pse.is",
    "lihi.cc",
    "ssur.cc",
    "migre.me",
    "ff.im",
    "budurl.com",
    "dlvr.it",
    "ift.tt",
    "trib.al",
    "href.li",
    "iplogger.org",
    "iplogger.com",
    "iplogger.ru",
    "iplogger.info",
    "iplogger.co",
    "ipgrabber.ru",
    "ipgraber.ru",
)
# Pages of big sites that forward the browser to a URL written in a parameter, without a
# question (host, *.domain for the domain and its subdomains, then /path and ?parameters).
# Google's /url (the target in q= or, for search results, url=; abused for phishing as Sophos
# reported in 2021) and Meet's /linkredirect?dest=, Bing's click-tracker /ck/a (the target in
# u= as "a1" and base64url), Microsoft Defender for Office 365 Safe Links
# (*.safelinks.protection.outlook.com/?url=), Facebook's, Messenger's and Instagram's link shims
# (l.php?u=), YouTube's /redirect?q=, LinkedIn's /redir/redirect?url=, Slack's
# slack-redir.net/link?url=, Tumblr's t.umblr.com/redirect?z=, VK's /away.php?to=,
# DuckDuckGo's /l/?uddg=, Steam's /linkfilter/?url= and Google Ads' /pagead/aclk?adurl=.
DEFAULT_REDIRECTORS = (
    "*.google.com/url?q,url",
    "*.google.co.uk/url?q,url",
    "*.google.de/url?q,url",
    "*.google.fr/url?q,url",
    "*.google.ca/url?q,url",
    "*.google.com.au/url?q,url",
    "*.google.co.in/url?q,url",
    "*.google.co.jp/url?q,url",
    "*.google.com.br/url?q,url",
    "*.google.es/url?q,url",
    "*.google.it/url?q,url",
    "*.google.nl/url?q,url",
    "meet.google.com/linkredirect?dest",
    "www.googleadservices.com/pagead/aclk?adurl",
    "*.bing.com/ck/a?u",
    "*.safelinks.protection.outlook.com?url",
    "l.facebook.com/l.php?u",
    "lm.facebook.com/l.php?u",
    "l.messenger.com/l.php?u",
    "l.instagram.com?u",
    "*.youtube.com/redirect?q",
    "www.linkedin.com/redir/redirect?url",
    "slack-redir.net/link?url",
    "t.umblr.com/redirect?z",
    "vk.com/away.php?to",
    "duckduckgo.com/l?uddg",
    "steamcommunity.com/linkfilter?url,u",
)
DEFAULT_TRUSTED_THIRD_PARTIES = (
    "accounts.google.com",
    "oauth2.googleapis.com",
    "login.microsoftonline.com",
    "login.live.com",
    "login.windows.net",
    "github.com/login/oauth",
    "github.com/login/device",
    "github.com/apps",
    "gitlab.com/oauth",
    "appleid.apple.com",
    "www.facebook.com/dialog/oauth",
    "www.facebook.com/v19.0/dialog/oauth",
    "api.twitter.com/oauth",
    "twitter.com/i/oauth2",
    "x.com/i/oauth2",
    "www.linkedin.com/oauth",
    "slack.com/oauth",
    "slack.com/openid",
    "discord.com/oauth2",
    "auth.atlassian.com",
    "login.salesforce.com",
    "*.okta.com",
    "*.auth0.com",
    "*.onelogin.com",
    "account.box.com",
    "www.dropbox.com/oauth2",
    "checkout.stripe.com",
    "connect.stripe.com",
    "www.paypal.com/signin",
    "www.paypal.com/connect",
    "www.paypal.com/checkoutnow",
    # Authorization endpoints from the providers' published OpenID configurations and OAuth
    # documentation (sources in urlvet/data/identity_providers.txt).
    "zoom.us/oauth/authorize",
    "accounts.spotify.com/authorize",
    "accounts.zoho.com/oauth/v2/auth",
    "login.xero.com/identity/connect/authorize",
    "api.login.yahoo.com/oauth2/request_auth",
    "www.amazon.com/ap/oa",
    "id.twitch.tv/oauth2/authorize",
    "bitbucket.org/site/oauth2/authorize",
    "app.hubspot.com/oauth/authorize",
    "www.reddit.com/api/v1/authorize",
    "ims-na1.adobelogin.com/ims/authorize",
    "oauth.yandex.com/authorize",
    "oauth.yandex.ru/authorize",
    "secure.login.gov/openid_connect/authorize",
    "access.line.me/oauth2",
    "kauth.kakao.com/oauth/authorize",
    "nid.naver.com/oauth2.0/authorize",
    "oauth.vk.com/authorize",
    "www.strava.com/oauth/authorize",
    "id.heroku.com/oauth/authorize",
    "cloud.digitalocean.com/v1/oauth/authorize",
    "api.notion.com/v1/oauth/authorize",
    "www.figma.com/oauth",
    "appcenter.intuit.com/connect/oauth2",
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Thresholds(_Strict):
    """The lowest severity that makes the decision warn, and the lowest that blocks."""

    warn: Severity = Field(Severity.LOW, description="Findings at or above this warn.")
    block: Severity = Field(Severity.HIGH, description="Findings at or above this block.")

    @model_validator(mode="after")
    def _ordered(self) -> Thresholds:
        if self.warn.rank > self.block.rank:
            raise ValueError(
                f"warn ({self.warn.value}) must not be above block ({self.block.value})"
            )
        return self


class Limits(_Strict):
    """Size limits on what is vetted."""

    max_url_length: int = Field(
        2048, ge=16, le=1_000_000, description="Longer URLs raise UV105 (overlong-url)."
    )


def _cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value.strip(), strict=False)
    except ValueError:
        raise ValueError(f"{value!r} is not an IP network in CIDR form") from None
    return value.strip()


def _norm_domain(value: str) -> str:
    # The browser's own spelling (WHATWG host parsing: UTS #46, A-labels), so that a listed
    # `faß.de` matches the host a browser opens (xn--fa-hia.de, not IDNA 2003's fass.de).
    if "*" in value:
        # `*` is a valid character in a WHATWG host, so `*.evil.example` would be kept as a
        # literal name that never matches anything.
        raise ValueError(
            f"{value!r}: write the domain without '*': a listed domain already matches "
            "itself and every name under it"
        )
    return normalize_domain(value)


def _trusted_entry(value: str) -> str:
    host, slash, path = value.strip().partition("/")
    wildcard = host.startswith("*.")
    name = _norm_domain(host.removeprefix("*."))
    if any(c in path for c in "?#\\ "):
        raise ValueError(f"{value!r}: a trusted path prefix cannot hold '?', '#' or spaces")
    return ("*." if wildcard else "") + name + (slash + path.rstrip("/") if path else "")


def _redirector_entry(value: str) -> str:
    where, question, params = value.strip().partition("?")
    names = [p.strip() for p in params.split(",")]
    if not question or not all(names):
        raise ValueError(
            f"{value!r}: write a redirector as host/path?parameter[,parameter...] (the "
            "parameters that hold the destination)"
        )
    return _trusted_entry(where) + "?" + ",".join(names)


def _selector(value: str) -> str:
    if not registry.expand(value):
        raise ValueError(f"unknown rule code, prefix or name {value!r}")
    return value


def _rule_key(value: str) -> str:
    if registry.get(value) is None and value not in {r.name for r in registry.rules().values()}:
        raise ValueError(f"unknown rule code {value!r}")
    return value


def _url_entry(value: str) -> str:
    try:
        url = parse(value.strip())
    except InvalidURL as exc:
        raise ValueError(f"{value!r} is not a URL a browser opens: {exc}") from None
    return url_key(url.href)


Cidr = Annotated[str, AfterValidator(_cidr)]
BlockedUrl = Annotated[str, AfterValidator(_url_entry)]
DomainName = Annotated[str, AfterValidator(_norm_domain)]
TrustedEntry = Annotated[str, AfterValidator(_trusted_entry)]
RedirectorEntry = Annotated[str, AfterValidator(_redirector_entry)]
Selector = Annotated[str, AfterValidator(_selector)]
RuleKey = Annotated[str, AfterValidator(_rule_key)]


class FeedFile(_Strict):
    """A feed file with options; a plain string is a path with the defaults."""

    path: str = Field(description="The file, relative to the policy file that names it.")
    name: str | None = Field(
        None, description="How findings name the list (default: the path as written)."
    )
    format: Literal["auto", "domains", "hosts", "adblock", "urls", "cidr", "csv"] = Field(
        "auto",
        description="auto detects each line's format (and reads *.csv as CSV); csv needs `column`.",
    )
    column: str | None = Field(None, description="For CSV: the header of the column to read.")
    on_error: Literal["error", "skip"] = Field(
        "error",
        description="error: a bad line is an error naming the file and line; skip: bad lines "
        "are counted, reported and skipped.",
    )


FeedFiles = list[str | FeedFile]
_FEED_FILES_DOC = (
    " Paths of feed files, relative to the policy file; gzip is read as such; `#` starts a comment."
)


class Networks(_Strict):
    """IP networks the organisation declares legitimate or blocks."""

    allowed: list[Cidr] = Field(
        default_factory=list,
        description="CIDRs declared legitimate (a corporate split horizon, a Tailscale range): "
        "address rules stay quiet for them; a narrower allowed network carves an exception "
        "out of a blocked one.",
    )
    blocked: list[Cidr] = Field(
        default_factory=list, description="Extra CIDRs to block although they are public."
    )
    blocked_files: FeedFiles = Field(
        default_factory=list,
        description="Feeds of networks to block (UV207, UV220): one CIDR or address a line, "
        "or CSV." + _FEED_FILES_DOC,
    )


class Domains(_Strict):
    """Domain lists. A domain matches itself and every name under it."""

    allowed: list[DomainName] = Field(
        default_factory=list,
        description="Domains the organisation vouches for: internal-name and lookalike rules "
        "stay quiet for them.",
    )
    blocked: list[DomainName] = Field(
        default_factory=list, description="Domains never to open (UV208)."
    )
    blocked_files: FeedFiles = Field(
        default_factory=list,
        description="Feeds of domains never to open (UV208): one domain a line, hosts files, "
        "Adblock-style ||domain^, or CSV." + _FEED_FILES_DOC,
    )
    allowed_files: FeedFiles = Field(
        default_factory=list,
        description="Feeds of domains to vouch for, as `allowed`; an allowed domain as specific "
        "as a blocklisted one lifts a feed's block." + _FEED_FILES_DOC,
    )
    internal_suffixes: list[DomainName] = Field(
        default_factory=lambda: list(DEFAULT_INTERNAL_SUFFIXES),
        description="Suffixes of names that only resolve inside a network (UV203).",
    )
    wildcard_dns: list[DomainName] = Field(
        default_factory=lambda: list(DEFAULT_WILDCARD_DNS),
        description="Services that resolve names with an address in them (UV204).",
    )
    loopback_dns: list[DomainName] = Field(
        default_factory=lambda: list(DEFAULT_LOOPBACK_DNS),
        description="Public domains whose every name resolves to this computer (UV204), "
        "blocked without asking DNS.",
    )
    shorteners: list[DomainName] = Field(
        default_factory=lambda: list(DEFAULT_SHORTENERS),
        description="URL shorteners: a link on them hides where it leads (UV212).",
    )


class Urls(_Strict):
    """URLs the organisation blocks. An entry matches the URL a browser opens (WHATWG href)
    exactly, whatever its fragment."""

    blocked: list[BlockedUrl] = Field(
        default_factory=list, description="URLs never to open (UV211)."
    )
    blocked_files: FeedFiles = Field(
        default_factory=list,
        description="Feeds of URLs never to open (UV211): one URL a line (URLhaus, OpenPhish), "
        "or CSV." + _FEED_FILES_DOC,
    )


class ServerExpectation(_Strict):
    """What the policy expects of one configured server."""

    domains: list[DomainName] = Field(description="Domains this server may send users to (UV405).")


class DnsPolicy(_Strict):
    """Whether and how urlvet resolves names to check where they really lead."""

    enabled: bool = Field(True, description="Resolve domain names (A and AAAA).")
    nameservers: list[str] = Field(
        default_factory=list,
        description="host[:port] of nameservers to ask; empty for the system's configuration.",
    )
    timeout: float = Field(
        2.0, gt=0, le=30, description="Total deadline in seconds for one URL's lookups."
    )
    failure_severity: Severity | None = Field(
        None,
        description="Severity of NXDOMAIN, SERVFAIL, timeouts and empty answers (UV222-UV225); "
        "none keeps the rules' default (medium, which warns).",
    )

    @field_validator("nameservers")
    @classmethod
    def _nameservers(cls, values: list[str]) -> list[str]:
        for v in values:
            parse_nameserver(v)
        return values


def _probe_network(value: str) -> str:
    from urlvet.addresses import classify

    net = ipaddress.ip_network(_cidr(value), strict=False)
    # Inside one non-public block of the special-purpose table, or refused: 0.0.0.0/0 and
    # 10.0.0.0/7 begin and end on non-public addresses, and hold the whole internet.
    cls = classify(str(net.network_address))
    block = ipaddress.ip_network(cls.network) if cls.network else None
    if cls.globally_reachable or block is None or not net.subnet_of(block):  # type: ignore[arg-type]
        raise ValueError(
            f"{value!r} holds public addresses: list only the non-public networks the probe "
            "may reach (public addresses are probed anyway)"
        )
    return str(net)


ProbeNetwork = Annotated[str, AfterValidator(_probe_network)]


class TlsPolicy(_Strict):
    """The TLS handshake probe (off by default) and the offline HSTS preload knowledge."""

    probe: bool = Field(
        False,
        description="Probe https: and wss: hosts with a TLS handshake (UV601-UV607). Off by "
        "default: a handshake tells the host's operator that someone looked.",
    )
    timeout: float = Field(
        3.0, gt=0, le=30, description="Deadline in seconds for one probe (connect and handshake)."
    )
    ca_file: str | None = Field(
        None,
        description="A PEM file of CA certificates that replaces the system's trust store "
        "(relative to the policy file).",
    )
    new_certificate_days: int = Field(
        7, ge=0, le=366, description="A certificate issued fewer days ago is new (UV606)."
    )
    failure_severity: Severity | None = Field(
        None,
        description="Severity of a failed or timed-out handshake (UV601, UV607); none keeps "
        "the rules' default (medium, which warns).",
    )
    hsts_preloaded_severity: Severity | None = Field(
        None,
        description="Severity of UV101 (plaintext-http) for a host on the HSTS preload list; "
        "none keeps the rule's default.",
    )
    probe_networks: list[ProbeNetwork] = Field(
        default_factory=list,
        description="Non-public networks the probe may connect to (a test bed, a private PKI). "
        "Every other private, loopback or special-purpose address is never probed, whatever "
        "networks.allowed says.",
    )


def parse_nameserver(text: str) -> tuple[str, int]:
    """``"127.0.0.1"``, ``"127.0.0.1:5353"``, ``"[::1]:53"`` -> (address, port)."""
    t = text.strip()
    host, port = t, 53
    if t.startswith("["):
        host, _, rest = t[1:].partition("]")
        if rest:
            if not rest.startswith(":") or not rest[1:].isdigit():
                raise ValueError(f"{text!r} is not address[:port]")
            port = int(rest[1:])
    elif t.count(":") == 1:
        host, p = t.split(":")
        if not p.isdigit():
            raise ValueError(f"{text!r} is not address[:port]")
        port = int(p)
    try:
        ipaddress.ip_address(host)
    except ValueError as exc:
        raise ValueError(f"{text!r}: a nameserver must be an IP address") from exc
    if not 0 < port < 65536:
        raise ValueError(f"{text!r}: port out of range")
    return host, port


class Policy(_Strict):
    """A urlvet policy. Every field has a safe default; ``Policy()`` is the balanced default."""

    extends: str | None = Field(
        None,
        description="The policy this one starts from: a built-in policy's name (default, "
        "strict), a file relative to this one, or none. Without it: default.",
    )
    thresholds: Thresholds = Field(default_factory=Thresholds)
    select: list[Selector] = Field(
        default_factory=lambda: ["UV"],
        description="Rule codes, prefixes or names to run (default: all).",
    )
    ignore: list[Selector] = Field(
        default_factory=list, description="Rule codes, prefixes or names not to run."
    )
    severity: dict[RuleKey, Severity] = Field(
        default_factory=dict, description="Per-rule severity overrides: code or name -> severity."
    )
    trusted_third_parties: list[TrustedEntry] = Field(
        default_factory=lambda: list(DEFAULT_TRUSTED_THIRD_PARTIES),
        description="host, *.domain, or host/path-prefix that any server may send users to.",
    )
    redirectors: list[RedirectorEntry] = Field(
        default_factory=lambda: list(DEFAULT_REDIRECTORS),
        description="host, *.domain, or host/path-prefix, then ?parameter[,parameter...]: "
        "pages that forward the browser to the URL in those parameters (UV213).",
    )
    networks: Networks = Field(default_factory=Networks)
    domains: Domains = Field(default_factory=Domains)
    urls: Urls = Field(default_factory=Urls)
    servers: dict[str, ServerExpectation] = Field(
        default_factory=dict, description="Per configured server name: what it may open."
    )
    protected_domains: list[DomainName] = Field(
        default_factory=list,
        description="Extra domains to protect from lookalikes, added to the shipped list.",
    )
    use_default_protected_domains: bool = Field(
        True, description="Protect the shipped list of popular and sensitive domains."
    )
    limits: Limits = Field(default_factory=Limits)
    dns: DnsPolicy = Field(default_factory=DnsPolicy)
    tls: TlsPolicy = Field(default_factory=TlsPolicy)

    def with_changes(self, **changes: Any) -> Policy:
        """A new, validated policy with some top-level fields replaced."""
        data = self.model_dump(mode="json")
        data.update(changes)
        return Policy.model_validate(data)

    @cached_property
    def compiled(self) -> CompiledPolicy:
        """The policy compiled for fast evaluation (computed once per policy object)."""
        return _compile(self)


@dataclass(frozen=True)
class CompiledPolicy:
    """A policy turned into lookup tables. Immutable; safe to share across threads."""

    rules: tuple[Rule, ...]
    severities: Mapping[str, Severity]
    """Explicit severity for a rule code (policy overrides); absent -> hit or rule default."""
    settings: CheckSettings
    warn_at: int
    block_at: int
    dns_enabled: bool
    nameservers: tuple[tuple[str, int], ...] | None
    dns_timeout: float
    tls_probe: bool = False
    """Run the TLS handshake probe."""
    tls_timeout: float = 3.0
    tls_ca_file: str | None = None
    tls_probe_networks: tuple[IPNetwork, ...] = ()
    """Non-public networks the probe may reach (tls.probe_networks)."""

    @cached_property
    def rules_raw(self) -> tuple[Rule, ...]:
        """Selected rules on the raw input."""
        return tuple(r for r in self.rules if r.kind == "raw")

    @cached_property
    def rules_url(self) -> tuple[Rule, ...]:
        """Selected rules on the parsed URL."""
        return tuple(r for r in self.rules if r.kind == "url")

    @cached_property
    def rules_dns(self) -> tuple[Rule, ...]:
        """Selected rules on DNS answers."""
        return tuple(r for r in self.rules if r.kind == "dns")

    @cached_property
    def rules_tls(self) -> tuple[Rule, ...]:
        """Selected rules on the TLS probe's result."""
        return tuple(r for r in self.rules if r.kind == "tls")

    @cached_property
    def rules_message(self) -> tuple[Rule, ...]:
        """Selected rules on the server's message."""
        return tuple(r for r in self.rules if r.kind == "message")

    def decide(self, severities: list[Severity]) -> Decision:
        """The decision for findings of these severities."""
        # A plain loop: called for every URL, usually with none or one severity, where max()
        # with a generator and a default costs several times as much.
        top = -1
        for severity in severities:
            rank = severity.rank
            if rank > top:
                top = rank
        if top >= self.block_at:
            return Decision.BLOCK
        if top >= self.warn_at:
            return Decision.WARN
        return Decision.ALLOW


def _compile(policy: Policy) -> CompiledPolicy:
    table = registry.rules()
    selected: set[str] = set()
    for s in policy.select:
        selected.update(registry.expand(s))
    for s in policy.ignore:
        selected.difference_update(registry.expand(s))
    severities: dict[str, Severity] = {}
    if policy.dns.failure_severity is not None:
        for code in ("UV222", "UV223", "UV224", "UV225"):
            severities[code] = policy.dns.failure_severity
    if policy.tls.failure_severity is not None:
        for code in ("UV601", "UV607"):
            severities[code] = policy.tls.failure_severity
    for key, sev in policy.severity.items():
        for code in registry.expand(key):
            severities[code] = sev
    trusted: dict[str, tuple[str, ...]] = {}
    for entry in policy.trusted_third_parties:
        host, slash, path = entry.strip().partition("/")
        key = host.lower().rstrip(".")
        trusted[key] = (*trusted.get(key, ()), ("/" + path) if slash else "")
    redirectors: dict[str, tuple[tuple[str, frozenset[str]], ...]] = {}
    for entry in policy.redirectors:
        where, _, params = entry.partition("?")
        host, slash, path = where.partition("/")
        key = host.lower().rstrip(".")
        prefix = ("/" + path) if slash else ""
        redirectors[key] = (*redirectors.get(key, ()), (prefix, frozenset(params.split(","))))
    settings = CheckSettings(
        max_url_length=policy.limits.max_url_length,
        trusted_third_parties=trusted,
        trusted_tails=last_two_labels(trusted),
        allowed_domains=frozenset(policy.domains.allowed),
        blocked_domains=frozenset(policy.domains.blocked),
        allowed_networks=parse_networks(policy.networks.allowed),
        blocked_networks=parse_networks(policy.networks.blocked),
        internal_suffixes=frozenset(policy.domains.internal_suffixes),
        wildcard_dns_suffixes=frozenset(policy.domains.wildcard_dns),
        loopback_dns_suffixes=frozenset(policy.domains.loopback_dns),
        shorteners=frozenset(policy.domains.shorteners),
        shortener_sites=frozenset(site_of(d)[0] or d for d in policy.domains.shorteners),
        redirectors=redirectors,
        redirector_tails=last_two_labels(redirectors),
        server_domains={k: frozenset(v.domains) for k, v in policy.servers.items()},
        lookalike=_lookalike_index(policy),
        blocked_domain_feeds=_feeds(policy.domains.blocked_files, "domains"),
        allowed_domain_feeds=_feeds(policy.domains.allowed_files, "domains"),
        blocked_network_feeds=_feeds(policy.networks.blocked_files, "networks"),
        blocked_urls=frozenset(policy.urls.blocked),
        blocked_url_feeds=_feeds(policy.urls.blocked_files, "urls"),
        hsts_preloaded_severity=policy.tls.hsts_preloaded_severity,
        new_certificate_days=policy.tls.new_certificate_days,
    )
    nameservers = (
        tuple(parse_nameserver(n) for n in policy.dns.nameservers)
        if policy.dns.nameservers
        else None
    )
    return CompiledPolicy(
        rules=tuple(r for c, r in table.items() if c in selected),
        severities=severities,
        settings=settings,
        warn_at=policy.thresholds.warn.rank,
        block_at=policy.thresholds.block.rank,
        dns_enabled=policy.dns.enabled,
        nameservers=nameservers,
        dns_timeout=policy.dns.timeout,
        tls_probe=policy.tls.probe,
        tls_timeout=policy.tls.timeout,
        tls_ca_file=policy.tls.ca_file,
        tls_probe_networks=parse_networks(policy.tls.probe_networks),
    )


def feed_specs(files: FeedFiles, kind: FeedKind) -> list[FeedSpec]:
    """The feed files of one policy key as specs to load (paths as the policy holds them)."""
    specs = []
    for item in files:
        entry = FeedFile(path=item) if isinstance(item, str) else item
        specs.append(
            FeedSpec(
                path=entry.path,
                list_name=entry.name or entry.path,
                kind=kind,
                format=entry.format,
                column=entry.column,
                on_error=entry.on_error,
            )
        )
    return specs


def _feeds(files: FeedFiles, kind: FeedKind) -> FeedSet:
    return load_feeds(feed_specs(files, kind)) if files else FeedSet()


def _lookalike_index(policy: Policy) -> Any:
    """The lookalike index for this policy's protected domains, if the lookalike rules exist."""
    import importlib

    try:
        lookalike = importlib.import_module("urlvet.lookalike")
    except ImportError:
        return None
    build = getattr(lookalike, "index_for_policy", None)
    if build is None:
        return None
    return build(tuple(policy.protected_domains), policy.use_default_protected_domains)


# --- loading -------------------------------------------------------------------------------

_ADDITIVE = {
    ("trusted_third_parties",),
    ("protected_domains",),
    ("ignore",),
    ("networks", "allowed"),
    ("networks", "blocked"),
    ("domains", "allowed"),
    ("domains", "blocked"),
    ("domains", "internal_suffixes"),
    ("domains", "wildcard_dns"),
    ("domains", "loopback_dns"),
    ("domains", "shorteners"),
    ("redirectors",),
    ("domains", "blocked_files"),
    ("domains", "allowed_files"),
    ("networks", "blocked_files"),
    ("urls", "blocked"),
    ("urls", "blocked_files"),
    ("tls", "probe_networks"),
}

FEED_KEYS: tuple[tuple[str, str], ...] = (
    ("domains", "blocked_files"),
    ("domains", "allowed_files"),
    ("networks", "blocked_files"),
    ("urls", "blocked_files"),
)
"""The policy keys that name feed files."""


def merge(
    parent: Mapping[str, Any], child: Mapping[str, Any], path: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The child's settings over the parent's; additive lists are joined, not replaced."""
    out = dict(parent)
    for key, value in child.items():
        here = (*path, key)
        if key in out and isinstance(out[key], dict) and isinstance(value, dict):
            out[key] = merge(out[key], value, here)
        elif here in _ADDITIVE and isinstance(out.get(key), list) and isinstance(value, list):
            out[key] = out[key] + [v for v in value if v not in out[key]]
        else:
            out[key] = value
    return out


@dataclass
class _Source:
    """One policy file as read: its path, each key's line, and its data."""

    path: str
    lines: dict[tuple[str, ...], int]
    data: dict[str, Any]


BUILTIN_POLICIES: tuple[str, ...] = ("default", "strict")
"""The policies shipped inside the package, by name (``urlvet/policies/NAME.yaml``)."""

DEFAULT_PARENT = "default"
"""What a policy file without ``extends`` starts from."""

NO_PARENT = "none"
"""``extends: none``: the file starts from nothing (its lists replace the built-in ones)."""

PolicySpec = str | Path
"""A built-in policy's name (a ``str`` without ``/``, ``\\`` or ``.``) or a policy file."""


def is_policy_name(spec: PolicySpec) -> bool:
    """True when ``spec`` names a built-in policy rather than a file.

    The rule is by form, never by what exists on disk: a name is a ``str`` with no ``/``,
    ``\\`` or ``.`` in it (``strict``); anything else is a path (``strict.yaml``,
    ``./strict``, ``rules/team.yaml``). A ``Path`` object is always a path.
    """
    return isinstance(spec, str) and not any(c in spec for c in "/\\.") and bool(spec.strip())


def builtin_policy_path(name: str) -> Path:
    """The file of a built-in policy. Raises PolicyError for an unknown name."""
    if name not in BUILTIN_POLICIES:
        raise PolicyError(
            f"{name!r} is not a built-in policy (built-in: {', '.join(BUILTIN_POLICIES)}); "
            f"a policy file is named by a path with a '/' or a suffix, e.g. ./{name}.yaml"
        )
    return Path(str(resources.files("urlvet.policies").joinpath(f"{name}.yaml")))


def builtin_policy_name(path: str | Path) -> str | None:
    """The name of the built-in policy stored at ``path``, or None for any other file."""
    resolved = Path(path).resolve()
    for name in BUILTIN_POLICIES:
        if builtin_policy_path(name).resolve() == resolved:
            return name
    return None


def policy_file(spec: PolicySpec) -> Path:
    """The file a policy spec names: a built-in policy's file, or the path itself. Raises
    PolicyError for an unknown name, and for a missing ``default.yaml``-like file (which
    was the built-in policy's file name before policies had names)."""
    if is_policy_name(spec):
        return builtin_policy_path(str(spec))
    path = Path(spec)
    if (
        path.stem in BUILTIN_POLICIES
        and path.suffix in (".yaml", ".yml", ".toml", ".json")
        and not path.exists()
    ):
        raise PolicyError(
            f"{path}: no such policy file (the built-in policy is named {path.stem!r}, "
            f"without a suffix: --policy {path.stem}, load_policy({path.stem!r}))"
        )
    return path


def load_policy(path: PolicySpec) -> Policy:
    """Load a policy (YAML, TOML or JSON), following ``extends``. Raises PolicyError.

    ``path`` is a built-in policy's name (``"default"``, ``"strict"``) or a file. A file
    without ``extends`` starts from the built-in ``default`` policy: its lists of domains,
    networks and trusted parties add to the default's, its other settings replace them.
    ``extends: none`` starts from nothing: the file's lists replace the built-in lists.
    """
    merged, sources = _load_chain(policy_file(path), depth=0, seen=())
    try:
        return Policy.model_validate(merged)
    except ValidationError as exc:
        raise _policy_error(exc, sources) from None


def policy_sources(path: PolicySpec) -> list[_Source]:
    """The files of a policy's ``extends`` chain, the file itself first, each with the line of
    every key (as the file wrote it, before merging). Raises PolicyError."""
    return _load_chain(policy_file(path), depth=0, seen=())[1]


def _parent_of(path: Path, source: _Source, written: Any) -> Path | None:
    """The file ``extends`` names (None for ``extends: none``). Raises PolicyError."""
    line = source.lines.get(("extends",), 1)
    if written is None:
        return builtin_policy_path(DEFAULT_PARENT)
    if not isinstance(written, str) or not written.strip():
        raise PolicyError(
            f"{path}:{line}: extends: must be a built-in policy's name "
            f"({', '.join(BUILTIN_POLICIES)}), {NO_PARENT!r} or a file name"
        )
    if written == NO_PARENT:
        return None
    if is_policy_name(written):
        try:
            return builtin_policy_path(written)
        except PolicyError as exc:
            raise PolicyError(f"{path}:{line}: extends: {exc}") from None
    parent = path.parent / written
    if not parent.is_file():
        hint = ""
        stem = Path(written).stem
        if stem in BUILTIN_POLICIES and Path(written).name == written:
            hint = f" (for the built-in policy write `extends: {stem}`)"
        raise PolicyError(f"{path}:{line}: extends: no such policy file {str(parent)!r}{hint}")
    return parent


def _load_chain(
    path: Path, depth: int, seen: tuple[Path, ...]
) -> tuple[dict[str, Any], list[_Source]]:
    resolved = path.resolve()
    source = read_policy_source(path)
    data = _with_feed_paths(source, path)
    _anchor_paths(data, path)
    parent_path = _parent_of(path, source, data.pop("extends", None))
    if parent_path is None:
        return data, [source]
    line = source.lines.get(("extends",), 1)
    if parent_path.resolve() in (*seen, resolved):
        chain = " -> ".join(p.name for p in (*seen, resolved, parent_path.resolve()))
        raise PolicyError(f"{path}:{line}: extends: circular 'extends' chain ({chain})")
    if depth >= MAX_EXTENDS_DEPTH:
        raise PolicyError(
            f"{path}:{line}: extends: policies extend each other more than {MAX_EXTENDS_DEPTH} deep"
        )
    parent, sources = _load_chain(parent_path, depth + 1, (*seen, resolved))
    return merge(parent, data), [source, *sources]


def _with_feed_paths(source: _Source, path: Path) -> dict[str, Any]:
    """The file's data with each feed path made relative to the file that names it.

    Each feed keeps the path as written for its findings ("on your blocklist urlhaus.txt").
    A missing file is an error here, naming the policy file and line.
    """
    data = dict(source.data)
    for section, key in FEED_KEYS:
        block = data.get(section)
        if not isinstance(block, dict) or not isinstance(block.get(key), list):
            continue
        items = []
        for i, item in enumerate(block[key]):
            written = item if isinstance(item, str) else None
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                written = item["path"]
            if written is None:
                items.append(item)  # the model reports what is wrong with it
                continue
            # Absolute: the policy travels to pool and Spark workers, whose working
            # directory need not be the one the policy was named from.
            full = (path.parent / written).absolute()
            if not full.is_file():
                line = source.lines.get((section, key, str(i)), 1)
                raise PolicyError(f"{path}:{line}: {section}.{key}: no such feed file {written!r}")
            entry = dict(item) if isinstance(item, dict) else {}
            entry["path"] = str(full)
            entry.setdefault("name", written)
            items.append(entry)
        data[section] = {**block, key: items}
    return data


def _anchor_paths(data: dict[str, Any], path: Path) -> None:
    """File names in a policy are relative to the policy file, not to the working directory."""
    tls = data.get("tls")
    if isinstance(tls, dict) and isinstance(tls.get("ca_file"), str):
        ca_file = Path(tls["ca_file"]).expanduser()
        if not ca_file.is_absolute():
            data["tls"] = {**tls, "ca_file": str((path.parent / ca_file).absolute())}


def read_policy_source(path: Path) -> _Source:
    """Read and parse one policy file with the line of every key. Raises PolicyError."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read policy file: {exc.strerror or exc}") from None
    if len(raw) > MAX_POLICY_BYTES:
        raise PolicyError(f"{path}: policy file is larger than {MAX_POLICY_BYTES:,} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise PolicyError(f"{path}:{line}: the file is not valid UTF-8") from None
    try:
        if path.suffix.lower() == ".toml":
            return _read_toml(path, text)
        if path.suffix.lower() == ".json":
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise PolicyError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
            if not isinstance(data, dict):
                raise PolicyError(f"{path}:1: a policy must be a mapping of keys to values")
            return _Source(str(path), _text_key_lines(text), data)
        return _read_yaml(path, text)
    except RecursionError:
        # All three parsers recurse per nesting level: `[[[[...` in a file under the size
        # limit must be an error naming the file, not a traceback.
        raise PolicyError(f"{path}: values are nested too deeply for a policy file") from None
    except MemoryError:
        raise PolicyError(
            f"{path}: the policy file takes more memory to read than there is: "
            "it is not a policy (keys nested or repeated beyond any policy's needs)"
        ) from None


MAX_KEY_PARTS = 64
"""The most parts a dotted TOML key (``a.b.c``) or table name may have: the deepest policy
key has four, and the TOML parser's cost grows with the square of a key's parts (a key of
25,000 parts took seconds and gigabytes), so longer ones are refused before it runs."""

# What is not a key in TOML text: strings of the four kinds and comments, taken out before
# the dots of keys are counted. Each alternative is possessive or lazy up to its own closing
# quote, so that the scan is linear in the text.
_TOML_NOT_KEYS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*+"|\'[^\'\n]*+\'|#[^\n]*+'
)
# Where a key ends: its value, the next entry of an inline table or array, a line break.
_TOML_KEY_ENDS = re.compile(r"[=,{}\n]")


def _check_toml_keys(path: Path, text: str) -> None:
    """Refuse a key or table name of more than :data:`MAX_KEY_PARTS` parts, naming its line.
    Outside strings and comments, dots stand only in keys and in numbers and times (one
    each), so the dots between two ends of a key bound its parts."""
    if text.count(".") < MAX_KEY_PARTS:
        return
    bare = _TOML_NOT_KEYS.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    line = 1
    at = 0
    for end in _TOML_KEY_ENDS.finditer(bare):
        if bare.count(".", at, end.start()) >= MAX_KEY_PARTS:
            raise PolicyError(
                f"{path}:{line}: a key of more than {MAX_KEY_PARTS} dotted parts: "
                "no policy key is that deep"
            )
        if end.group(0) == "\n":
            line += 1
        at = end.end()
    if bare.count(".", at) >= MAX_KEY_PARTS:
        raise PolicyError(
            f"{path}:{line}: a key of more than {MAX_KEY_PARTS} dotted parts: "
            "no policy key is that deep"
        )


def _read_toml(path: Path, text: str) -> _Source:
    _check_toml_keys(path, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # Python 3.11's TOMLDecodeError has no line attribute; its message ends with one.
        message = str(exc)
        where = re.search(r"\(at line (\d+), column \d+\)$", message)
        line = int(where.group(1)) if where else 1
        reason = message[: where.start()].strip() if where else message
        raise PolicyError(f"{path}:{line}: invalid TOML: {reason}") from None
    return _Source(str(path), _text_key_lines(text), data)


def _text_key_lines(text: str) -> dict[tuple[str, ...], int]:
    # TOML and JSON parsers give no positions: find each key's first assignment. Good enough
    # to point a person at the line; tables ([dns]) prefix the keys below them.
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    for no, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s.startswith("[") and not s.startswith("[["):
            table = tuple(p.strip().strip('"') for p in s.strip("[]").split("."))
            lines.setdefault(table, no)
            continue
        key = s.split("=", 1)[0].split(":", 1)[0].strip().strip('"')
        if key and ("=" in s or ":" in s):
            lines.setdefault((*table, key), no)
    return lines


class _NoAliasLoader(yaml.SafeLoader):
    """Safe YAML without anchors and aliases (no "billion laughs")."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.MarkedYAMLError(
                None,
                None,
                "YAML aliases (*name) are not allowed in policy files",
                event.start_mark,
            )
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if getattr(event, "anchor", None):
            raise yaml.MarkedYAMLError(
                None,
                None,
                "YAML anchors (&name) are not allowed in policy files",
                event.start_mark,
            )
        return super().compose_node(parent, index)


def yaml_nodes(path: Path, text: str) -> tuple[Any, Any]:
    """The YAML document's node tree (with line marks) and its data, without anchors or
    aliases. Raises PolicyError naming the file and line."""
    try:
        node = yaml.compose(text, Loader=_NoAliasLoader)
        data = yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise PolicyError(f"{path}:{line}: invalid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise PolicyError(f"{path}: invalid YAML: {exc}") from None
    except RecursionError:
        raise PolicyError(f"{path}: values are nested too deeply") from None
    return node, data


def _read_yaml(path: Path, text: str) -> _Source:
    try:
        node = yaml.compose(text, Loader=_NoAliasLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise PolicyError(f"{path}:{line}: invalid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise PolicyError(f"{path}: invalid YAML: {exc}") from None
    if node is None:
        return _Source(str(path), {}, {})
    if not isinstance(node, yaml.MappingNode):
        raise PolicyError(f"{path}:{node.start_mark.line + 1}: a policy must be a mapping of keys")
    lines: dict[tuple[str, ...], int] = {}
    _yaml_lines(path, node, (), lines)
    try:
        data = yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise PolicyError(f"{path}:{line}: invalid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise PolicyError(f"{path}: invalid YAML: {exc}") from None
    return _Source(str(path), lines, data)


def _yaml_lines(
    file: Path, node: Any, path: tuple[str, ...], out: dict[tuple[str, ...], int]
) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value)
            k = (*path, name)
            if name in seen:
                # PyYAML keeps the last of two equal keys without a word: in a security
                # policy a silently dropped setting is a bug waiting to be found.
                line = key.start_mark.line + 1
                raise PolicyError(f"{file}:{line}: {'.'.join(k)}: duplicate key")
            seen.add(name)
            out.setdefault(k, key.start_mark.line + 1)
            _yaml_lines(file, value, k, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            k = (*path, str(i))
            out.setdefault(k, item.start_mark.line + 1)
            _yaml_lines(file, item, k, out)


def _policy_error(exc: ValidationError, sources: list[_Source]) -> PolicyError:
    messages = []
    for err in exc.errors():
        loc = tuple(str(p) for p in err["loc"] if p != "[key]")
        where, line = _locate(loc, sources)
        key = ".".join(loc) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        messages.append(f"{where}:{line}: {key}: {msg}")
    return PolicyError("\n".join(messages))


def _locate(loc: tuple[str, ...], sources: list[_Source]) -> tuple[str, int]:
    for depth in range(len(loc), 0, -1):
        for src in sources:
            line = src.lines.get(loc[:depth])
            if line is not None:
                return src.path, line
    return (sources[0].path if sources else "<policy>"), 1


def policy_json_schema() -> dict[str, Any]:
    """The JSON Schema of policy files."""
    schema = Policy.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "urlvet policy"
    return schema
