"""What a check is: a small pure function registered under a stable code.

A check receives the parsed URL (or the raw text, for checks on the raw input) and a
:class:`CheckContext`, and yields :class:`Hit` values. The engine turns hits into findings with
the severity the policy gives the rule. Checks never do I/O: DNS answers arrive already
resolved in the context.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Protocol

from urlvet.feeds import EMPTY, FeedHit, FeedSet
from urlvet.findings import Finding, Severity, Verdict
from urlvet.server import Server
from urlvet.text import cut
from urlvet.url import (
    MAX_DOMAIN_LENGTH,
    CarriedURL,
    HostKind,
    ParsedURL,
    carried_urls,
    first_parent_dot,
    may_carry,
    new_parsed,
)

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
RuleKind = Literal["raw", "url", "dns", "tls", "message"]

DOMAIN_HOSTS = frozenset({HostKind.DOMAIN})
"""For ``rule(hosts=...)``: rules about names."""
IP_HOSTS = frozenset({HostKind.IPV4, HostKind.IPV6})
"""For ``rule(hosts=...)``: rules about IP-address literals."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One reason a rule fires on one URL."""

    message: str
    """Plain language for a person, naming the thing found."""
    evidence: Mapping[str, Any] = field(default_factory=dict)
    """Facts the rule relied on, for machines and for experts."""
    severity: Severity | None = None
    """A severity for this hit other than the rule's default (the policy's override still wins)."""


@dataclass(frozen=True, slots=True)
class CheckSettings:
    """What the checks need from a policy, compiled once. Plain data, immutable."""

    max_url_length: int = 2048
    trusted_third_parties: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Third parties any server may send users to: host (or ``*.domain``) -> path prefixes
    ('' for any path)."""
    allowed_domains: frozenset[str] = frozenset()
    """Domains the organisation vouches for; the domain and its subdomains match."""
    blocked_domains: frozenset[str] = frozenset()
    """Domains never to open; the domain and its subdomains match."""
    allowed_networks: tuple[IPNetwork, ...] = ()
    """Networks declared legitimate (a corporate range): address rules stay quiet there."""
    blocked_networks: tuple[IPNetwork, ...] = ()
    """Extra networks to block although they are public."""
    internal_suffixes: frozenset[str] = frozenset()
    """Name suffixes that only resolve inside a network (local, internal, corp, ...)."""
    wildcard_dns_suffixes: frozenset[str] = frozenset()
    """Services that resolve names with an address in them (nip.io, sslip.io, ...)."""
    loopback_dns_suffixes: frozenset[str] = frozenset()
    """Public domains whose every name resolves to this computer (lvh.me, localtest.me, ...)."""
    shorteners: frozenset[str] = frozenset()
    """URL shorteners (bit.ly, tinyurl.com, ...): the domain and its subdomains match."""
    shortener_sites: frozenset[str] = frozenset()
    """The registrable domains of ``shorteners``: a host on none of them is on no shortener,
    which one set lookup tells (most links) without walking the host's parents."""
    redirectors: Mapping[str, tuple[tuple[str, frozenset[str]], ...]] = field(default_factory=dict)
    """Pages that forward to a URL in a parameter: host (or ``*.domain``) -> (path prefix, '' for
    any path; the parameters that hold the destination)."""
    server_domains: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Per server name: the domains it is expected to send users to."""
    lookalike: Any = None
    """The lookalike index compiled from the protected domains (see checks/lookalike.py)."""
    blocked_domain_feeds: FeedSet = EMPTY
    """Feeds of domains never to open (``domains.blocked_files``)."""
    allowed_domain_feeds: FeedSet = EMPTY
    """Feeds of domains the organisation vouches for (``domains.allowed_files``)."""
    blocked_network_feeds: FeedSet = EMPTY
    """Feeds of networks to block (``networks.blocked_files``)."""
    blocked_urls: frozenset[str] = frozenset()
    """URLs never to open: normalised hrefs without their fragment (``urls.blocked``)."""
    blocked_url_feeds: FeedSet = EMPTY
    """Feeds of URLs never to open (``urls.blocked_files``)."""
    hsts_preloaded_severity: Severity | None = None
    """UV101's severity for a host on the HSTS preload list (None: the rule's own)."""
    new_certificate_days: int = 7
    """A certificate issued fewer days ago than this is new (UV606)."""


class DestinationVetter(Protocol):
    """What vets the URL a link forwards to (the engine's Vetter), for the redirect rules."""

    def vet_destination(self, url: str, depth: int) -> Verdict:
        """The offline verdict on ``url``, judged on its own (no server), ``depth`` hops in."""
        ...

    def destination_findings(self, url: str, depth: int) -> tuple[Finding, ...]:
        """The findings of :meth:`vet_destination` (the same, in the same order)."""
        ...


MAX_REDIRECT_HOPS = 3
"""How many redirects in a row are followed and vetted (a redirector inside a redirector...)."""


@dataclass(frozen=True, slots=True)
class CheckContext:
    """Everything a check may look at besides the URL itself."""

    settings: CheckSettings
    server: Server | None = None
    raw: str = ""
    """The URL as given."""
    parse_error: str | None = None
    """Why a browser refuses the URL, when it does."""
    resolution: Any = None
    """The DNS answers for the host (urlvet.resolve.Resolution), for ``dns`` rules."""
    message: str | None = None
    """The server's message shown beside the URL, for ``message`` rules."""
    tls: Any = None
    """The TLS handshake probe's result (urlvet.tls.Probe), for ``tls`` rules."""
    earlier: frozenset[str] = frozenset()
    """For ``tls`` rules: the codes the earlier stages raised on this URL."""
    destinations: DestinationVetter | None = None
    """Vets the URL a link forwards to; None when no more hops may be followed."""
    hops: int = 0
    """How many redirects led to this URL (0 for the link itself)."""
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """Scratch space where rules that ask the same question about one URL (the six lookalike
    rules share one analysis) keep the answer, so that it is computed once per URL. Each entry
    records the URL it was computed for, since a context may be reused for other URLs. Never
    read by the engine; a new context starts empty."""


_CONTEXT_SLOTS = {f.name: CheckContext.__dict__[f.name].__set__ for f in fields(CheckContext)}


def url_context(
    settings: CheckSettings,
    server: Server | None,
    raw: str,
    parse_error: str | None,
    message: str | None,
    destinations: DestinationVetter | None,
    hops: int,
) -> CheckContext:
    """``CheckContext(settings=..., server=..., raw=..., parse_error=..., message=...,
    destinations=..., hops=...)``, the context of the offline rules on one URL, built for
    every URL: set through the slots' own descriptors, at half the cost of the frozen
    dataclass's ``__init__`` (which sets each of its eleven fields with object.__setattr__;
    a test compares the two)."""
    ctx: CheckContext = object.__new__(CheckContext)
    slots = _CONTEXT_SLOTS
    slots["settings"](ctx, settings)
    slots["server"](ctx, server)
    slots["raw"](ctx, raw)
    slots["parse_error"](ctx, parse_error)
    slots["resolution"](ctx, None)
    slots["message"](ctx, message)
    slots["tls"](ctx, None)
    slots["earlier"](ctx, _NO_CODES)
    slots["destinations"](ctx, destinations)
    slots["hops"](ctx, hops)
    slots["memo"](ctx, {})
    return ctx


_NO_CODES: frozenset[str] = frozenset()

CheckFn = Callable[[ParsedURL | None, CheckContext], Iterable[Hit]]

_SECTIONS = ("## What it does", "## Why is this bad?", "## Example")
_CODE = re.compile(r"^UV[1-9]\d\d$")


@dataclass(frozen=True, slots=True)
class Rule:
    """A registered rule: stable code and name, default severity, documentation, check."""

    code: str
    name: str
    family: str
    severity: Severity
    kind: RuleKind
    check: CheckFn = field(repr=False)
    doc: str = field(repr=False)
    cwe: int | None = None
    hosts: frozenset[HostKind] | None = None
    """For a ``url`` rule: the only host kinds it can fire on (None: any kind)."""
    needs_server: bool = False
    """For a ``url`` rule: True when it can only fire for a URL that a server asked for."""
    per_host: bool = False
    """For a ``url`` rule: True when its hits depend only on the URL's host, the server and the
    policy, so that the engine runs it once per (host, server) and reuses the hits for every
    URL on that host. Such a rule is given :func:`host_view` of the URL: it must read nothing
    but the host's fields (``host``, ``host_unicode``, ``host_kind``, ``registrable_domain``,
    ``public_suffix``, ``suffix_is_private``, ``ip``) and the context's ``settings`` and
    ``server``. A rule that also reads the scheme, the user info, the port, the path, the
    query, the fragment or the raw text stays per URL (the default)."""
    plain_tail: bool | Callable[[CheckSettings], bool] = False
    """For a ``url`` or ``raw`` rule: True when its hits on a URL with a plain tail (see
    :func:`urlvet.url.plain_split`) are exactly its hits on the same URL with the tail cut to
    ``/`` (a root path) or ``/x`` (any other path), so that the engine may vet one URL of each
    shape per (scheme and authority, server) and reuse the verdict for every plain URL of
    that shape. A callable decides from the policy's settings (a rule that reads the whole URL
    only when the policy lists URLs, say). Per-host rules are blind to the tail by
    construction. A rule that is not keeps the URLs it applies to on the ordinary path."""
    reads_plain_tail_on: Callable[[ParsedURL, CheckSettings], bool] | None = None
    """For a ``url`` rule that is blind to a plain tail on most hosts only: True for a URL
    (a head with a representative tail) whose host is one where the rule reads the tail, so
    that the URLs of that head keep the ordinary path (a trusted third party trusted on some
    paths of its host only, say). The rule counts as blind everywhere else."""
    plain_query: bool | Callable[[CheckSettings], bool] = False
    """For a ``url`` or ``raw`` rule: True when its hits on a URL whose tail is a plain path
    and then a query and fragment that the parser copies as they are (see
    :func:`urlvet.url.query_split`: URLs carried in parameters, say) are exactly its hits on
    the same URL with the query and fragment cut off, so that the engine may take them from
    the plain shape of the head and the path (see :attr:`plain_tail`) and run only the rules
    that :attr:`reads_query` on the URL itself. A callable decides from the policy's
    settings. Per-host rules ignore the query by construction."""
    reads_query: bool = False
    """For a ``url`` rule: True when it reads the query only through :func:`carried` and
    :func:`redirector_destination` (the URLs carried in its parameters) and never fires on a
    URL that carries none: on a URL of :func:`urlvet.url.query_split`, the engine runs these
    rules on the URL and takes every other rule's hits from a shape. Their hits are then a
    function of the URL's head and path, the server and the parameters whose value may hold
    a URL, which the engine keeps them by (a query's other parameters, a client id or a
    state, change nothing)."""

    def blind_to_plain_query(self, settings: CheckSettings) -> bool:
        """True when this rule's hits cannot tell a query of :func:`urlvet.url.query_split`
        from none (see :attr:`plain_query`)."""
        if self.per_host:
            return True
        if callable(self.plain_query):
            return bool(self.plain_query(settings))
        return self.plain_query

    def blind_to_plain_tail(self, settings: CheckSettings) -> bool:
        """True when this rule's hits cannot tell a plain tail from its representative."""
        if self.per_host:
            return True
        if callable(self.plain_tail):
            return bool(self.plain_tail(settings))
        return self.plain_tail

    def blind_to_plain_tail_on_some_hosts(self, settings: CheckSettings) -> bool:
        """True when this rule is blind to a plain tail except on the hosts that
        :attr:`reads_plain_tail_on` picks out (and not blind everywhere)."""
        return self.reads_plain_tail_on is not None and not self.blind_to_plain_tail(settings)

    def applies_to(self, host_kind: HostKind, has_server: bool) -> bool:
        """False when the rule cannot fire on such a URL, so the engine need not run it (the
        check still returns nothing there when called; a test pins that)."""
        if self.needs_server and not has_server:
            return False
        return self.hosts is None or host_kind in self.hosts

    @property
    def summary(self) -> str:
        """The first paragraph of the 'What it does' section."""
        text = self.doc.split("## What it does", 1)[-1].strip()
        return text.split("\n\n", 1)[0].replace("\n", " ").strip()

    def section(self, heading: str) -> str:
        """The body of one documentation section ('What it does', 'Why is this bad?', ...)."""
        parts = self.doc.split(f"## {heading}", 1)
        if len(parts) < 2:
            return ""
        return parts[1].split("\n## ", 1)[0].strip()


_DEFINED: dict[str, Rule] = {}


def rule(
    code: str,
    name: str,
    severity: Severity,
    kind: RuleKind = "url",
    cwe: int | None = None,
    hosts: Iterable[HostKind] | None = None,
    needs_server: bool = False,
    per_host: bool = False,
    plain_tail: bool | Callable[[CheckSettings], bool] = False,
    reads_plain_tail_on: Callable[[ParsedURL, CheckSettings], bool] | None = None,
    plain_query: bool | Callable[[CheckSettings], bool] = False,
    reads_query: bool = False,
) -> Callable[[CheckFn], CheckFn]:
    """Register a check under ``code``. Its docstring is the rule's documentation.

    ``hosts`` and ``needs_server`` declare which URLs a ``url`` rule can fire on at all (see
    :meth:`Rule.applies_to`); the engine skips the rule for the others. ``per_host`` declares
    that its hits depend on the host, the server and the policy only (see
    :attr:`Rule.per_host`); the engine then computes them once per host. ``plain_tail``
    declares that its hits ignore a plain tail (see :attr:`Rule.plain_tail`), and
    ``reads_plain_tail_on`` that they do except on the URLs it picks out (see
    :attr:`Rule.reads_plain_tail_on`). ``plain_query`` declares that they ignore a query of
    URL characters (see :attr:`Rule.plain_query`), ``reads_query`` that they read one and
    fire on no URL without one (see :attr:`Rule.reads_query`).
    """
    if per_host and kind != "url":
        raise ValueError(f"{code}: only a url rule can be per_host")
    if reads_query and (kind != "url" or plain_query):
        raise ValueError(f"{code}: only a url rule that does not ignore the query reads it")
    if not _CODE.match(code):
        raise ValueError(f"bad rule code {code!r}")

    def register(fn: CheckFn) -> CheckFn:
        doc = _dedent_doc(fn.__doc__ or "")
        if code in _DEFINED and _DEFINED[code].check is not fn:
            raise ValueError(f"rule code {code} is defined twice")
        _DEFINED[code] = Rule(
            code=code,
            name=name,
            family=f"UV{code[2]}xx",
            severity=severity,
            kind=kind,
            check=fn,
            doc=doc,
            cwe=cwe,
            hosts=frozenset(hosts) if hosts is not None else None,
            needs_server=needs_server,
            per_host=per_host,
            plain_tail=plain_tail,
            reads_plain_tail_on=reads_plain_tail_on,
            plain_query=plain_query,
            reads_query=reads_query,
        )
        return fn

    return register


def host_view(url: ParsedURL) -> ParsedURL:
    """``url`` reduced to its host: what a ``per_host`` rule is given.

    Everything that is not a fact about the host is blank (no scheme, user info, port, path,
    query or fragment; no raw text), so a per-host rule's hits are a function of the host
    alone by construction and cannot depend on which URL of the host came first.
    """
    return new_parsed(
        "",  # raw
        "",  # href
        "",  # scheme
        "",  # username
        "",  # password
        url.host,
        url.host_unicode,
        url.host_kind,
        None,  # port
        "",  # pathname
        "",  # search
        "",  # hash
        url.registrable_domain,
        url.public_suffix,
        url.suffix_is_private,
        url.ip,
    )


def defined_rules() -> Mapping[str, Rule]:
    """The rules registered so far (use urlvet.checks.registry for the complete table)."""
    return _DEFINED


def missing_sections(doc: str) -> list[str]:
    """The required documentation sections that ``doc`` lacks."""
    return [s for s in _SECTIONS if s not in doc]


def _dedent_doc(doc: str) -> str:
    import inspect

    return inspect.cleandoc(doc)


def host_matches(host: str, domains: AbstractSet[str]) -> str | None:
    """The longest of ``domains`` equal to ``host`` or a parent of it (label-aligned), or None.

    A walk over the host's few parents with set lookups: the cost does not grow with the set.
    """
    if not domains:
        return None
    # The parents are the slices after each dot, tried longest first, without building them
    # all: several rules ask this for every URL.
    # Listed domains are at most MAX_DOMAIN_LENGTH long, so a longer host starts at its first
    # parent that short (linear, where every slice of a 100,000-label host would be quadratic).
    name = host.rstrip(".").lower()
    if len(name) <= MAX_DOMAIN_LENGTH and name in domains:
        return name
    dot = name.find(".") if len(name) <= MAX_DOMAIN_LENGTH else first_parent_dot(name)
    while dot >= 0:
        parent = name[dot + 1 :]
        if parent in domains:
            return parent
        dot = name.find(".", dot + 1)
    return None


def compared_site(url: ParsedURL) -> str:
    """The site of ``url`` as the rules compare sites: its registrable domain, or its host
    (lower case, no final dot) when it has none (an IP address, a public suffix, a single
    label)."""
    return url.registrable_domain or url.host.rstrip(".").lower()


def allowed_domain(host: str, settings: CheckSettings) -> str | None:
    """The closest domain the policy vouches for (``domains.allowed`` or its feeds) equal to
    ``host`` or a parent of it, or None."""
    found = host_matches(host, settings.allowed_domains)
    if settings.allowed_domain_feeds:
        hit: FeedHit | None = settings.allowed_domain_feeds.match_domain(host)
        if hit is not None and (found is None or len(hit.entry) > len(found)):
            return hit.entry
    return found


def shortest_parent_in(host: str, domains: AbstractSet[str]) -> str | None:
    """The shortest of ``domains`` equal to ``host`` or a parent of it (label-aligned), or None."""
    if not domains:
        return None
    name = host.rstrip(".").lower()
    lowest = len(name) - MAX_DOMAIN_LENGTH - 1  # no listed domain is longer
    dot = name.rfind(".")
    while dot >= 0 and dot >= lowest:
        parent = name[dot + 1 :]
        if parent in domains:
            return parent
        dot = name.rfind(".", 0, dot)
    return name if len(name) <= MAX_DOMAIN_LENGTH and name in domains else None


def internal_name_reason(name: str, settings: CheckSettings) -> str | None:
    """Why ``name`` can only mean something inside a private network, or None.

    Single-label names and ``localhost`` names are internal everywhere; other suffixes come
    from the policy's ``internal_suffixes``.
    """
    host = name.rstrip(".").lower()
    if not host:
        return None
    if host == "localhost" or host.endswith(".localhost"):
        return "localhost names always mean this computer itself"
    if "." not in host:
        return "a name of one label is completed with the local network's search domain"
    suffix = host_matches(host, settings.internal_suffixes)
    if suffix is not None:
        return f"names under .{suffix} exist only inside private networks"
    return None


EVIDENCE_LIMIT = 300
"""Characters of a quoted value that evidence keeps (:func:`clip`)."""


def clip(text: str, limit: int = EVIDENCE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters for evidence, with a visible mark where it was cut."""
    return cut(text, limit)


def host_table_entry(host: str, table: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The most specific entry of a table keyed by host or ``*.domain`` for ``host``: the host
    itself, then ``*.parent`` for each parent (``*.example.com`` matches ``example.com`` and
    every name under it), or None."""
    if not table:
        return None
    name = host.rstrip(".").lower()
    if len(name) <= MAX_DOMAIN_LENGTH:
        if name in table:
            return name, table[name]
        star = "*." + name
        if star in table:
            return star, table[star]
    dot = name.find(".") if len(name) <= MAX_DOMAIN_LENGTH else first_parent_dot(name)
    while dot >= 0:
        key = "*." + name[dot + 1 :]
        if key in table:
            return key, table[key]
        dot = name.find(".", dot + 1)
    return None


def redirector_parameters(
    url: ParsedURL, settings: CheckSettings, pathname: str | None = None
) -> frozenset[str] | None:
    """The parameters that hold the destination when ``url`` is on a page the policy lists as a
    redirector (``redirectors``), or None. With ``pathname``: for the URL of ``url``'s scheme
    and host with that path."""
    if url.host_kind is not HostKind.DOMAIN or url.scheme not in ("http", "https"):
        return None
    entry = host_table_entry(url.host, settings.redirectors)
    if entry is None:
        return None
    path = url.pathname if pathname is None else pathname
    for prefix, params in entry[1]:
        if not prefix or path == prefix or path.startswith(prefix.rstrip("/") + "/"):
            return frozenset(params)
    return None


def carried(url: ParsedURL, ctx: CheckContext) -> tuple[CarriedURL, ...]:
    """The URLs ``url`` carries (see ``url.carried_urls``), read once per URL for all rules."""
    return _carried_analysis(url, ctx)[0]


def redirector_destination(url: ParsedURL, ctx: CheckContext) -> CarriedURL | None:
    """The URL a listed redirector page forwards to (its first destination parameter that holds
    an absolute URL), or None when ``url`` is no redirector or carries none."""
    items, position = _carried_analysis(url, ctx)
    return None if position is None else items[position]


def redirector_position(url: ParsedURL, ctx: CheckContext) -> int | None:
    """Where :func:`redirector_destination` stands in :func:`carried` (its index), or None.

    Rules that leave the redirector's destination to UV213 skip it by this position: items
    are values, and a second copy of the same parameter is an equal item of its own."""
    return _carried_analysis(url, ctx)[1]


_NOTHING_CARRIED: tuple[tuple[CarriedURL, ...], int | None] = ((), None)


def _carried_analysis(
    url: ParsedURL, ctx: CheckContext
) -> tuple[tuple[CarriedURL, ...], int | None]:
    # Four rules ask; the answer is computed once per URL, kept by the URL's href (a value:
    # the answer is a function of the parse, and the parse a function of the href).
    memo = ctx.memo.get("carried")
    if memo is not None and memo[0] == url.href:
        answer: tuple[tuple[CarriedURL, ...], int | None] = memo[1]
        return answer
    if not url.search or not may_carry(url.search):
        return _NOTHING_CARRIED
    items = carried_urls(url)
    redirect = None
    if items:
        params = redirector_parameters(url, ctx.settings)
        if params:
            redirect = next(
                (n for n, i in enumerate(items) if i.depth == 1 and i.name in params), None
            )
    answer = (items, redirect)
    ctx.memo["carried"] = (url.href, answer)
    return answer
