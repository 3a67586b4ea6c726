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
from dataclasses import dataclass, field, fields, replace
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Literal, Protocol

from urlvet.errors import UrlvetError
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
)

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
RuleKind = Literal["raw", "url", "dns", "tls", "message", "interaction"]

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
    trusted_tails: frozenset[str] | None = None
    """The last two labels of every key of :attr:`trusted_third_parties` (a host under a key
    ends with them): a host that ends otherwise has no entry. None when a key has one label."""
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
    redirector_tails: frozenset[str] | None = None
    """The last two labels of every key of :attr:`redirectors`, as :attr:`trusted_tails`."""
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

    def destination_findings(self, url: str | ParsedURL, depth: int) -> tuple[Finding, ...]:
        """The findings of :meth:`vet_destination` (the same, in the same order); ``url``
        may be given parsed (a carried URL's target), which saves parsing it again."""
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
    dataclass's ``__init__`` (a test compares the two)."""
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
    return ctx


_NO_CODES: frozenset[str] = frozenset()

HOST_FACTS = frozenset(
    {
        "host",
        "host_unicode",
        "host_kind",
        "host_for_display",
        "labels",
        "registrable_domain",
        "public_suffix",
        "suffix_is_private",
        "ip",
    }
)
"""Facts of the URL's host alone: a rule that reads nothing else is judged once per
(host, server) and its findings shared by every URL on that host."""
LINK_FACTS = frozenset(
    {
        "scheme",
        "username",
        "password",
        "has_userinfo",
        "port",
        "effective_port",
        "is_special",
        "path_is_root",
        "parse_error",
        "hops",
        "carried",
        "redirect_position",
        "authority_as_written",
        "host_as_written",
        "trusted_entry",
    }
)
"""Facts of the URL beyond its host that links share often (most carry no URL, use the
scheme's port, have no user info): a rule that reads only these and host facts is judged
once per distinct tuple of them."""
QUERY_FACTS = frozenset({"carried", "redirect_position", "hops"})
"""The facts of :data:`LINK_FACTS` that come from the query (and the chain of redirects):
the rules that read them are kept apart from the others, whose findings links of one host
share whatever their queries carry."""
URL_TEXT_FACTS = frozenset({"raw", "href", "pathname", "search", "hash", "length"})
"""Facts that are the URL's own text, or parts of it that hold ids: nearly every URL has its
own, so a rule that reads one is run on every URL (a memo keyed by them would only cost)."""
FACT_NAMES = HOST_FACTS | LINK_FACTS | URL_TEXT_FACTS
"""Every fact a rule may declare it reads (see :class:`Facts`)."""
FactName = str
"""One of :data:`FACT_NAMES`."""

if TYPE_CHECKING:

    class Facts(ParsedURL):
        """What a rule is handed: the facts of one URL, of which it may read only those it
        declares (:func:`rule`'s ``reads``). The URL's parts and the host's facts are those
        of :class:`~urlvet.url.ParsedURL`; these are the others."""

        parse_error: str | None
        """Why a browser refuses the URL, when it does (the URL's parts are then absent)."""
        hops: int
        """How many redirects led to this URL (0 for the link itself)."""
        length: int
        """The length of the URL as given, in characters."""
        path_is_root: bool
        """True when the path is empty or ``/``."""
        carried: tuple[CarriedURL, ...]
        """The URLs carried in the query (:func:`urlvet.url.carried_urls`)."""
        redirect_position: int | None
        """Where a listed redirector page's destination stands in ``carried``, or None."""
        authority_as_written: str | None
        """The authority as written in the input (:func:`written_authority`)."""
        host_as_written: str | None
        """The host as written in the input, before the browser normalises it."""
        trusted_entry: str | None
        """The policy's trusted third party entry (host and path prefix) that vouches for
        the URL, or None."""

else:
    Facts = ParsedURL


class UndeclaredFact(UrlvetError):
    """A rule read a fact it did not declare: its declaration must name every fact it reads,
    since the engine shares the rule's findings between URLs that agree on those facts."""


URL_PARTS = (
    "href",
    "scheme",
    "username",
    "password",
    "host",
    "host_unicode",
    "host_kind",
    "port",
    "pathname",
    "search",
    "hash",
    "registrable_domain",
    "public_suffix",
    "suffix_is_private",
    "ip",
    "has_userinfo",
    "effective_port",
    "is_special",
    "labels",
    "host_for_display",
)
"""The facts that are the parse's own fields and properties."""


class UnparsedURL(UrlvetError):
    """A rule that runs on input that does not parse (a ``raw`` rule) read a part of the URL."""


class _Unparsed:
    """Where a view of input that does not parse reads the URL's parts: each raises."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        raise UnparsedURL(f"the input does not parse: it has no {name}")


_UNPARSED = _Unparsed()


class FactView:
    """A view of one URL's facts that holds only the facts a rule declares: reading any other
    raises :class:`UndeclaredFact`. One class is made per set of declared facts
    (:func:`view_class`), with a property per fact: the parse's own fields and properties are
    read from the parse, the others from the facts, each by one C-level getter."""

    __slots__ = ("_facts", "_url")
    _owner: str = ""
    _reads: frozenset[str] = frozenset()

    def __init__(self, facts: Any) -> None:
        self._facts = facts
        url = facts.url
        self._url = url if url is not None else _UNPARSED

    def __getattr__(self, name: str) -> Any:
        # Only reached for a name that is not a declared fact.
        raise UndeclaredFact(
            f"{self._owner} reads the fact {name!r} but declares only "
            f"{sorted(self._reads)}: add it to the rule's reads"
        )


_VIEW_CLASSES: dict[tuple[str, frozenset[str]], type[FactView]] = {}


def view_class(owner: str, reads: frozenset[str]) -> type[FactView]:
    """The view class for a rule (``owner``, its code) that reads ``reads``: made once."""
    key = (owner, reads)
    made = _VIEW_CLASSES.get(key)
    if made is None:
        namespace: dict[str, Any] = {"__slots__": (), "_owner": owner, "_reads": reads}
        for name in reads:
            where = "_url" if name in URL_PARTS else "_facts"
            namespace[name] = property(attrgetter(f"{where}.{name}"), doc=f"The fact {name}.")
        made = type(f"FactView_{owner}", (FactView,), namespace)
        _VIEW_CLASSES[key] = made
    return made


CheckFn = Callable[[Any, CheckContext], Iterable[Hit]]
"""A check: given a view of the URL's facts (a parsed URL for ``dns`` and ``tls`` rules,
which are not shared) and the context, it yields its hits."""
WhenFn = Callable[[Any, CheckContext], bool]
"""A rule's condition on its host: given a view of the facts of the host the rule reads and
the context, False when the rule cannot find anything on any URL of that host."""
MemberFn = Callable[[Any, CheckContext, Any], Iterable[Hit]]
"""A rule of a family: given the view, the context and the family's one analysis."""

_SECTIONS = ("## What it does", "## Why is this bad?", "## Example")
_CODE = re.compile(r"^UV[1-9]\d\d$")


@dataclass(frozen=True, slots=True)
class Family:
    """Rules that report several codes from one analysis of the URL (the lookalike rules share
    one reading of the host): the engine computes :attr:`analysis` once per URL and hands it
    to each member rule."""

    name: str
    analysis: Callable[[Any, CheckContext], Any] = field(repr=False)
    """Given a view of the facts it reads and the context: the analysis."""
    reads: frozenset[str] = frozenset()
    """The facts the analysis reads."""
    quiet: Callable[[Any], bool] | None = field(default=None, repr=False)
    """Given the analysis: True when no member can find anything with it (a host that
    imitates nothing). The engine then runs no member (see :func:`family`)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """A registered rule: stable code and name, default severity, documentation, check, and
    the facts of the URL it reads."""

    code: str
    name: str
    family: str
    severity: Severity
    kind: RuleKind
    check: CheckFn = field(repr=False)
    doc: str = field(repr=False)
    cwe: int | None = None
    reads: frozenset[str] = frozenset()
    """For a ``raw`` or ``url`` rule: every fact of the URL it reads (:data:`FACT_NAMES`);
    it is handed a view that holds only those, and its findings are shared between URLs that
    agree on them (and on the server and the policy). Empty for other kinds, which are
    handed the parsed URL and never shared."""
    analysis: Family | None = None
    """For a member of a family: the family, whose analysis the engine hands to
    :attr:`member` (see :func:`member`)."""
    member: MemberFn | None = field(default=None, repr=False)
    """For a member of a family: the rule's check given the family's analysis."""
    viewer: type[FactView] = field(default=FactView, repr=False, compare=False)
    """The class of the views this rule is handed (made once, from its reads)."""
    when: WhenFn | None = field(default=None, repr=False)
    """For a rule that reads the URL's own text: what the policy and its host must be for it
    to find anything, a test of the facts of the host it reads (see :func:`rule`)."""
    when_viewer: type[FactView] = field(default=FactView, repr=False, compare=False)
    """The class of the views :attr:`when` is handed: the facts of the host the rule reads."""
    needs: str | None = None
    """A fact the rule reads and finds nothing without: on a URL where it is empty (false),
    the rule finds nothing (see :func:`rule`)."""
    needs_server: bool = False
    """True for a rule that finds nothing on a URL no server asked for (see :func:`rule`)."""

    @property
    def host_only(self) -> bool:
        """True when the rule reads only facts of the host (:data:`HOST_FACTS`)."""
        return self.kind == "url" and self.reads <= HOST_FACTS

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

    def view(self, facts: Any) -> Any:
        """``facts`` seen through this rule's declaration (see :class:`FactView`)."""
        return self.viewer(facts)

    @property
    def all_reads(self) -> frozenset[str]:
        """What the rule reads, its family's analysis included."""
        if self.analysis is None:
            return self.reads
        return self.reads | self.analysis.reads

    def run(
        self, facts: Any, ctx: CheckContext, analyses: dict[str, Any], *, hush: bool = False
    ) -> Iterable[Hit]:
        """The rule's hits on ``facts``; a family's analysis is computed once per URL and kept
        in ``analyses`` (by family name) for the other members. With ``hush``, a member of a
        family whose analysis is quiet (:attr:`Family.quiet`) is not run."""
        family = self.analysis
        if family is None or self.member is None:
            return self.check(self.viewer(facts), ctx)
        view = None
        analysis = analyses.get(family.name, _UNSET)
        if analysis is _UNSET:  # the first member: the analysis reads its view
            view = self.viewer(facts)
            analysis = analyses[family.name] = family.analysis(view, ctx)
        if hush and family.quiet is not None and family.quiet(analysis):
            return ()
        return self.member(self.viewer(facts) if view is None else view, ctx, analysis)


_UNSET = object()
"""A family's analysis not yet computed for the URL (None is an analysis)."""

_DEFINED: dict[str, Rule] = {}


def _checked_reads(code: str, kind: RuleKind, reads: Iterable[str]) -> frozenset[str]:
    declared = frozenset(reads)
    unknown = declared - FACT_NAMES
    if unknown:
        raise ValueError(f"{code}: unknown facts {sorted(unknown)} in reads")
    if kind in ("raw", "url") and not declared:
        raise ValueError(f"{code}: a {kind} rule must declare the facts it reads")
    return declared


def rule(
    code: str,
    name: str,
    severity: Severity,
    kind: RuleKind = "url",
    cwe: int | None = None,
    reads: Iterable[str] = (),
    when: WhenFn | None = None,
    needs: str | None = None,
    needs_server: bool = False,
) -> Callable[[CheckFn], CheckFn]:
    """Register a check under ``code``. Its docstring is the rule's documentation.

    ``reads`` names every fact of the URL the check reads (:data:`FACT_NAMES`; required for
    ``raw`` and ``url`` rules): the check is handed a view that holds only those, and the
    engine shares its findings between URLs that agree on them. A ``raw`` rule runs on input
    that does not parse too (then only ``raw``, ``length``, ``parse_error`` and ``hops`` are
    there); a ``url`` rule only on a parsed URL.

    ``when``, for a rule that reads the URL's own text: a test of the policy and of the facts
    of the host the rule reads (it is handed a view of only those), False when the rule cannot
    find anything on a URL of that host (a wrapper's decoder on a host that wraps nothing, a
    list of blocked URLs in a policy that has none). The engine keeps its answer
    per host and runs the rule only on the hosts it passes; with every memo off
    (``URLVET_MEMOS=off``) the rule runs everywhere, so that the differential tests hold the
    test to the rule's own answer.

    ``needs``: a fact of ``reads`` that the rule finds nothing without (the URLs a query
    carries, for the rules on redirects): on a URL where it is empty, the rule cannot find
    anything. When every rule of a stage needs it, the engine skips the stage on such URLs;
    with every memo off it runs them all, and ``tests/test_engine.py`` holds each declaration
    to the rule's own answers.

    ``needs_server``: the rule finds nothing on a URL no server asked for (it compares the URL
    with the server: an audit of a log without ``--server``, a redirect's destination). The
    engine leaves it out of such URLs' stages, with the same provisos as ``needs``.
    """
    if not _CODE.match(code):
        raise ValueError(f"bad rule code {code!r}")
    declared = _checked_reads(code, kind, reads)
    if needs is not None and needs not in declared:
        raise ValueError(f"{code}: needs {needs!r}, which it does not declare it reads")

    def register(fn: CheckFn) -> CheckFn:
        viewer = view_class(code, declared)
        made = Rule(code, name, f"UV{code[2]}xx", severity, kind, fn, _doc(fn), cwe, declared)
        if when is not None:
            made = replace(
                made, when=when, when_viewer=view_class(f"{code} (when)", declared & HOST_FACTS)
            )
        if needs is not None:
            made = replace(made, needs=needs)
        if needs_server:
            made = replace(made, needs_server=True)
        _register(made, viewer)
        return fn

    return register


def family(
    name: str, reads: Iterable[str], quiet: Callable[[Any], bool] | None = None
) -> Callable[[Callable[..., Any]], Family]:
    """Declare a family's one analysis (a function of a view of ``reads`` and the context);
    its member rules are registered with :func:`member`.

    ``quiet``: given the analysis, True when no member can find anything with it (for the
    lookalike rules: a host that imitates nothing, most hosts). The engine then runs none of
    the members on that URL; like ``needs``, not with every memo off, and
    ``tests/test_engine.py`` holds the declaration to the members' own answers."""
    declared = _checked_reads(name, "url", reads)

    def register(fn: Callable[[Any, CheckContext], Any]) -> Family:
        return Family(name, fn, declared, quiet)

    return register


def member(
    of: Family,
    code: str,
    name: str,
    severity: Severity,
    cwe: int | None = None,
    reads: Iterable[str] = (),
) -> Callable[[MemberFn], MemberFn]:
    """Register a ``url`` rule of the family ``of``: its check is given the family's analysis
    as a third argument, computed once per URL for every member. ``reads``: what the member
    reads beyond what the analysis reads."""
    if not _CODE.match(code):
        raise ValueError(f"bad rule code {code!r}")
    declared = frozenset(reads) | of.reads
    _checked_reads(code, "url", declared)

    def register(fn: MemberFn) -> MemberFn:
        def check(url: Any, ctx: CheckContext) -> Iterable[Hit]:
            return fn(url, ctx, of.analysis(url, ctx))

        found = Rule(code, name, f"UV{code[2]}xx", severity, "url", check, _doc(fn), cwe, declared)
        _register(_with_family(found, of, fn), view_class(code, declared))
        return fn

    return register


def _with_family(found: Rule, of: Family, fn: MemberFn) -> Rule:
    return Rule(
        found.code,
        found.name,
        found.family,
        found.severity,
        found.kind,
        found.check,
        found.doc,
        found.cwe,
        found.reads,
        of,
        fn,
    )


def _register(made: Rule, viewer: type[FactView]) -> None:
    known = _DEFINED.get(made.code)
    if known is not None and known.doc != made.doc:
        raise ValueError(f"rule code {made.code} is defined twice")
    _DEFINED[made.code] = replace(made, viewer=viewer)


def _doc(fn: Callable[..., Any]) -> str:
    import inspect

    return inspect.cleandoc(fn.__doc__ or "")


def defined_rules() -> Mapping[str, Rule]:
    """The rules registered so far (use urlvet.checks.registry for the complete table)."""
    return _DEFINED


def missing_sections(doc: str) -> list[str]:
    """The required documentation sections that ``doc`` lacks."""
    return [s for s in _SECTIONS if s not in doc]


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


def last_two_labels_of(name: str) -> str:
    """The last two labels of ``name`` (all of it when it has fewer)."""
    return name[name.rfind(".", 0, max(name.rfind("."), 0)) + 1 :]


def last_two_labels(table: Mapping[str, object]) -> frozenset[str] | None:
    """The last two labels of each key of a table keyed by host or ``*.domain`` (what a host
    the table has an entry for ends with), or None when a key has fewer."""
    keys = [key.removeprefix("*.") for key in table]
    if any(key.count(".") < 1 for key in keys):
        return None
    return frozenset(last_two_labels_of(key) for key in keys)


def ends_as_no_key(host: str, tails: frozenset[str] | None) -> bool:
    """True when ``host`` cannot have an entry in a table whose keys end with ``tails`` (from
    :func:`last_two_labels`; None: any host may): one look-up rules out nearly every host."""
    return tails is not None and last_two_labels_of(host.rstrip(".").lower()) not in tails


def redirector_entry(host: str, settings: CheckSettings) -> tuple[str, Any] | None:
    """:func:`host_table_entry` of ``host`` in the policy's ``redirectors``, None at once for
    a host that does not end as any of its keys (:func:`ends_as_no_key`)."""
    if ends_as_no_key(host, settings.redirector_tails):
        return None
    return host_table_entry(host, settings.redirectors)


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
    entry = redirector_entry(url.host, settings)
    if entry is None:
        return None
    path = url.pathname if pathname is None else pathname
    for prefix, params in entry[1]:
        if not prefix or path == prefix or path.startswith(prefix.rstrip("/") + "/"):
            return frozenset(params)
    return None


def carried(url: Facts, ctx: CheckContext) -> tuple[CarriedURL, ...]:
    """The URLs ``url`` carries (see ``url.carried_urls``): the fact ``carried``."""
    return url.carried


def redirector_destination(url: Facts, ctx: CheckContext) -> CarriedURL | None:
    """The URL a listed redirector page forwards to (its first destination parameter that holds
    an absolute URL), or None when ``url`` is no redirector or carries none."""
    position = url.redirect_position
    return None if position is None else url.carried[position]


def redirector_position(url: Facts, ctx: CheckContext) -> int | None:
    """Where :func:`redirector_destination` stands in :func:`carried` (its index), or None:
    the fact ``redirect_position``.

    Rules that leave the redirector's destination to UV213 skip it by this position: items
    are values, and a second copy of the same parameter is an equal item of its own."""
    return url.redirect_position


def onward(url: Facts, ctx: CheckContext) -> DestinationVetter | None:
    """What vets the URL a link forwards to, or None when no more redirects may be followed
    (``url`` lies :data:`MAX_REDIRECT_HOPS` deep): read through the fact ``hops``."""
    if url.hops >= MAX_REDIRECT_HOPS:
        return None
    return ctx.destinations


def written_authority(raw: str) -> str | None:
    """The authority as written in ``raw`` (after ``//``, up to the first '/', '?' or '#'):
    how the fact ``authority_as_written`` is computed."""
    start = raw.find("//")
    if start < 0 or start > 64:
        return None
    end = len(raw)
    for stop in "/?#":
        k = raw.find(stop, start + 2)
        if 0 <= k < end:
            end = k
    return raw[start + 2 : end][:2048]


def redirect_position_of(
    url: ParsedURL, items: tuple[CarriedURL, ...], settings: CheckSettings
) -> int | None:
    """How the fact ``redirect_position`` is computed from the URL and its ``carried`` items:
    the index of the first item of depth 1 in one of the parameters a listed redirector page
    forwards with, or None."""
    if not items:
        return None
    params = redirector_parameters(url, settings)
    if not params:
        return None
    return next((n for n, i in enumerate(items) if i.depth == 1 and i.name in params), None)


def carried_of(url: ParsedURL) -> tuple[CarriedURL, ...]:
    """How the fact ``carried`` is computed: :func:`urlvet.url.carried_urls`."""
    return carried_urls(url)
