"""Vet one URL: parse it as a browser does, run the policy's rules, decide. Orchestration only.

A :class:`Vetter` is built once from a policy and shared: it is immutable apart from its DNS
and TLS caches and its cache of per-host findings, which are safe across threads and tasks.
The offline part of a vet is pure; DNS, when the policy enables it, and the TLS probe, when the
policy asks for it, are the only I/O, each bounded by the policy's deadline. The stages run in
that order: offline rules, DNS, then the TLS probe, only for a URL not already blocked and only
to an address DNS approved.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

from urlvet.checks.addresses import NEVER_RESOLVED_TLDS, internal_target
from urlvet.checks.base import (
    MAX_REDIRECT_HOPS,
    CheckContext,
    CheckSettings,
    Hit,
    Rule,
    compared_site,
    host_view,
    redirector_parameters,
    url_context,
)
from urlvet.findings import Decision, Finding, Severity, Verdict, frozen_evidence
from urlvet.memo import memo_size
from urlvet.policy import CompiledPolicy, Policy
from urlvet.server import Server, as_server, is_loopback_host
from urlvet.url import (
    CARRIED_PARAMETER_KEPT_LENGTH,
    MAX_CARRIED_LENGTH,
    PLAIN_PATH,
    PLAIN_ROOT,
    HostKind,
    InvalidURL,
    ParsedURL,
    first_carried_item,
    head_url,
    may_carry,
    on_head,
    parse,
    plain_split,
    query_split,
)

if TYPE_CHECKING:
    from urlvet.resolve import Resolution, Resolver
    from urlvet.tls import Probe, Prober

# Longer input is not parsed at all: it is already blocked as over-long, and parsing and
# classifying megabytes of text would only give an attacker a lever on our latency.
PARSE_LIMIT = 65_536

DESTINATION_CACHE_SIZE = 1024
"""Verdicts on the destinations of redirects kept per Vetter (at most the host cache's size;
none when it is 0)."""
PLAIN_FINDINGS_KEPT = 8192
"""Distinct tuples of findings the plain shapes of a Vetter share (see _shared_findings)."""
QUERY_FINDINGS_KEPT = 8192
"""Findings of the rules that read the query a Vetter keeps, one entry per head, path, server
and parameters that may carry a URL (see :meth:`Vetter.query_shape`)."""
QUERY_CLASSES_KEPT = 4096
"""Classes of links on which the rules that read the query find nothing, kept per Vetter
(see :meth:`Vetter._query_class`)."""
QUERY_KEY_LIMIT = 1024
"""The longest head, path and carrying parameters, together, whose findings are kept: longer ones
are computed each time, so that hostile queries cannot make the entries take much memory."""

TailCondition = Callable[[ParsedURL, CheckSettings], bool]
"""A rule's :attr:`~urlvet.checks.base.Rule.reads_plain_tail_on`."""

HOST_CACHE_SIZE = 65_536
"""How many (host, server) pairs a Vetter keeps the per-host findings of. An entry is a tuple
of findings, empty for most hosts: 65,536 of them take a few tens of megabytes at most."""


class PlainShape(NamedTuple):
    """The verdict on a representative plain URL (see :func:`urlvet.url.plain_split`), which
    every plain URL of the same head, shape and server shares but for its URL and href.

    Kept as the verdict's values rather than a :class:`Verdict`: an audit keeps one per
    (head, shape) of tens of thousands of hosts, and a model costs five times the memory.
    """

    head: str
    """The scheme and authority as written."""
    shape: str
    """The representative tail (``urlvet.url.PLAIN_ROOT`` or ``PLAIN_PATH``)."""
    href_head: str
    """The href up to the tail: the representative's href without its tail."""
    decision: Decision
    findings: tuple[Finding, ...]
    host: str | None
    host_unicode: str | None
    host_kind: str | None
    registrable_domain: str | None
    server: str | None

    @property
    def verdict(self) -> Verdict:
        """The verdict on the head with the representative tail."""
        return self.verdict_for(self.head + self.shape, self.shape)

    def verdict_for(self, url: str, tail: str) -> Verdict:
        """The verdict on ``url``, a plain URL of this shape whose tail is ``tail``: built as
        pydantic's model_copy builds a copy, from values validated when the shape was judged,
        at a third of its cost (a test compares it with a validated Verdict)."""
        return _built_verdict(
            {
                "url": url,
                "href": self.href_head + tail,
                "decision": self.decision,
                "findings": self.findings,
                "host": self.host,
                "host_unicode": self.host_unicode,
                "host_kind": self.host_kind,
                "registrable_domain": self.registrable_domain,
                "server": self.server,
                "tls": None,
            }
        )


class QueryShape(NamedTuple):
    """What :meth:`Vetter.query_shape` finds for a URL that carries a URL in its query."""

    shape: PlainShape
    """The plain shape of the URL's head and path: every rule's findings but for those of
    the rules that read the query."""
    tail: str
    """The URL after its head."""
    findings: tuple[Finding, ...]
    """The findings of the rules that read the query, on the URL itself (most often none)."""


_VERDICT_FIELDS = frozenset(Verdict.model_fields)


def _built_verdict(values: dict[str, Any]) -> Verdict:
    """A Verdict of ``values``, every field given with a value of its declared type (the
    engine built them: text, a Decision, a tuple of Findings, None for the TLS facts), set as
    pydantic's validation would set them but without the validation round-trip, a good part of
    the cost of a verdict that is computed rather than copied (a test compares the two)."""
    verdict: Verdict = object.__new__(Verdict)
    object.__setattr__(verdict, "__dict__", values)
    object.__setattr__(verdict, "__pydantic_fields_set__", set(_VERDICT_FIELDS))
    object.__setattr__(verdict, "__pydantic_extra__", None)
    object.__setattr__(verdict, "__pydantic_private__", None)
    return verdict


class _Offline(NamedTuple):
    # A tuple rather than a frozen dataclass: built for every URL, and cheaper to build.
    raw: str
    url: ParsedURL | None
    ctx: CheckContext
    findings: list[Finding]


class Vetter:
    """Vets URLs under one policy. Immutable and safe to share across threads and tasks."""

    __slots__ = (
        "__dict__",
        "_compiled",
        "_destination_cache",
        "_destination_facts",
        "_host_cache",
        "_host_cache_size",
        "_host_lock",
        "_host_rules",
        "_plain_cache",
        "_plain_conditions",
        "_plain_findings",
        "_plain_kinds",
        "_plain_limit",
        "_query_clean",
        "_query_findings",
        "_query_rules",
        "_url_rules",
        "policy",
    )
    policy: Policy
    _compiled: CompiledPolicy
    _url_rules: Mapping[tuple[HostKind, bool], tuple[Rule, ...]]
    _host_rules: Mapping[tuple[HostKind, bool], tuple[Rule, ...]]
    _host_cache: dict[tuple[str, HostKind, Server | None], tuple[Finding, ...]]
    _host_cache_size: int
    _host_lock: threading.Lock
    _destination_cache: dict[tuple[str, int], Verdict]
    _destination_facts: dict[str, tuple[str, HostKind, bool, bool]]
    _plain_cache: dict[tuple[str, str, Server | None], PlainShape | None]
    _plain_findings: dict[int, tuple[Finding, ...]]
    _plain_kinds: frozenset[tuple[HostKind, bool]]
    _plain_conditions: dict[tuple[HostKind, bool], tuple[TailCondition, ...]]
    _plain_limit: int
    _query_rules: dict[tuple[HostKind, bool], tuple[Rule, ...]]
    _query_findings: dict[tuple[str, str, Server | None, tuple[str, ...]], tuple[Finding, ...]]
    _query_clean: set[tuple[Any, ...]]

    def __init__(
        self, policy: Policy | None = None, *, host_cache_size: int = HOST_CACHE_SIZE
    ) -> None:
        """A Vetter for ``policy`` (the default policy when None).

        ``host_cache_size``: how many (host, server) pairs to keep the per-host findings of
        (see :attr:`urlvet.checks.base.Rule.per_host`); 0 runs every rule on every URL.
        """
        chosen = policy if policy is not None else Policy()
        compiled = chosen.compiled
        if host_cache_size < 0:
            raise ValueError("host_cache_size must be 0 or more")
        # With every memo off (urlvet.memo), a Vetter keeps nothing either: the reference.
        host_cache_size = memo_size(host_cache_size)
        object.__setattr__(self, "policy", chosen)
        object.__setattr__(self, "_compiled", compiled)
        # The url rules that can fire, per host kind and whether a server asked: a third of
        # them cannot for a given URL (address-literal rules on a name, server rules with no
        # server), and skipping them is a measurable share of vetting one URL. The per-host
        # ones apart, when there is a cache to keep their findings in.
        cached = host_cache_size > 0
        rules: dict[tuple[HostKind, bool], tuple[Rule, ...]] = {}
        host_rules: dict[tuple[HostKind, bool], tuple[Rule, ...]] = {}
        for kind in HostKind:
            for has_server in (False, True):
                fit = [r for r in compiled.rules_url if r.applies_to(kind, has_server)]
                rules[kind, has_server] = tuple(r for r in fit if not (cached and r.per_host))
                host_rules[kind, has_server] = tuple(r for r in fit if cached and r.per_host)
        # Where every rule that can fire is blind to a plain tail (Rule.plain_tail), a plain
        # URL is judged by the verdict on its head with a representative tail: one full vet
        # per (head, shape, server), the per-host idea carried over to the whole URL. Only
        # with the caches on (0 keeps every URL on the ordinary path, the reference).
        # A rule blind on most hosts only names the hosts where it is not
        # (Rule.reads_plain_tail_on): a shape on one of those is not shared.
        settings = compiled.settings
        blind_raw = all(r.blind_to_plain_tail(settings) for r in compiled.rules_raw)
        plain_conditions: dict[tuple[HostKind, bool], tuple[TailCondition, ...]] = {}
        for kind in HostKind:
            for has_server in (False, True):
                fit = [r for r in compiled.rules_url if r.applies_to(kind, has_server)]
                some = [r for r in fit if r.blind_to_plain_tail_on_some_hosts(settings)]
                if (
                    cached
                    and blind_raw
                    and all(r.blind_to_plain_tail(settings) or r in some for r in fit)
                ):
                    # Each condition once (the server rules share theirs).
                    plain_conditions[kind, has_server] = tuple(
                        {r.reads_plain_tail_on: None for r in some if r.reads_plain_tail_on}
                    )
        object.__setattr__(self, "_plain_kinds", frozenset(plain_conditions))
        object.__setattr__(self, "_plain_conditions", plain_conditions)
        object.__setattr__(self, "_plain_cache", {})
        object.__setattr__(self, "_plain_findings", {})
        object.__setattr__(self, "_plain_limit", min(PARSE_LIMIT, settings.max_url_length))
        # Where every other rule that can fire ignores a query of URL characters
        # (Rule.plain_query), a URL of urlvet.url.query_split takes their findings from the
        # plain shape of its head and path, and only the rules that read the query run on it.
        blind_raw = all(r.blind_to_plain_query(settings) for r in compiled.rules_raw)
        query_rules: dict[tuple[HostKind, bool], tuple[Rule, ...]] = {}
        for kind, has_server in plain_conditions:
            fit = [r for r in compiled.rules_url if r.applies_to(kind, has_server)]
            if blind_raw and all(r.reads_query or r.blind_to_plain_query(settings) for r in fit):
                query_rules[kind, has_server] = tuple(r for r in fit if r.reads_query)
        object.__setattr__(self, "_query_rules", query_rules)
        object.__setattr__(self, "_query_findings", {})
        object.__setattr__(self, "_query_clean", set())
        object.__setattr__(self, "_url_rules", rules)
        object.__setattr__(self, "_host_rules", host_rules)
        object.__setattr__(self, "_host_cache", {})
        object.__setattr__(self, "_host_cache_size", host_cache_size)
        object.__setattr__(self, "_host_lock", threading.Lock())
        object.__setattr__(self, "_destination_cache", {})
        object.__setattr__(self, "_destination_facts", {})

    def __setattr__(self, name: str, value: Any) -> None:
        # Shared across threads and tasks: a Vetter never changes (its caches aside).
        raise AttributeError(f"a Vetter is immutable: build a new one instead of setting {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Vetter is immutable: cannot delete {name!r}")

    @property
    def compiled(self) -> CompiledPolicy:
        """The compiled policy."""
        return self._compiled

    @cached_property
    def resolver(self) -> Resolver | None:
        """The DNS resolver (with its cache) when the policy enables DNS, else None."""
        if not self._compiled.dns_enabled:
            return None
        from urlvet.resolve import Resolver

        return Resolver(nameservers=self._compiled.nameservers, timeout=self._compiled.dns_timeout)

    @cached_property
    def prober(self) -> Prober | None:
        """The TLS handshake prober (with its cache) when the policy asks for the probe."""
        if not self._compiled.tls_probe:
            return None
        from urlvet.tls import Prober

        return Prober(timeout=self._compiled.tls_timeout, ca_file=self._compiled.tls_ca_file)

    def vet(
        self, url: str | bytes, server: Server | str | None = None, *, message: str | None = None
    ) -> Verdict:
        """The verdict on ``url`` asked for by ``server`` (a Server, a server URL, or "stdio").

        Raises :class:`urlvet.errors.InputError` only for a malformed *server*; any URL, even
        garbage, gets a verdict.
        """
        asked_by = as_server(server)
        resolver = self.resolver
        if resolver is None and self.prober is None:
            plain = self._plain(url, asked_by, message)
            if plain is not None:
                return plain
        state = self._offline(url, asked_by, message)
        resolution = None
        if resolver is not None and self._wants_dns(state):
            assert state.url is not None
            resolution = resolver.resolve(state.url.host.rstrip("."))
        self._add_dns(state, resolution)
        probe = None
        target = self._tls_target(state, resolution)
        if target is not None and self.prober is not None:
            probe = self.prober.probe(*target)
        return self._finish(state, probe)

    async def avet(
        self, url: str | bytes, server: Server | str | None = None, *, message: str | None = None
    ) -> Verdict:
        """The asyncio twin of :meth:`vet`: DNS lookups do not block the event loop."""
        asked_by = as_server(server)
        resolver = self.resolver
        if resolver is None and self.prober is None:
            plain = self._plain(url, asked_by, message)
            if plain is not None:
                return plain
        state = self._offline(url, asked_by, message)
        resolution = None
        if resolver is not None and self._wants_dns(state):
            assert state.url is not None
            resolution = await resolver.aresolve(state.url.host.rstrip("."))
        self._add_dns(state, resolution)
        probe = None
        target = self._tls_target(state, resolution)
        if target is not None and self.prober is not None:
            probe = await self.prober.aprobe(*target)
        return self._finish(state, probe)

    def vet_many(
        self, urls: Iterable[str | bytes], server: Server | str | None = None
    ) -> Iterator[Verdict]:
        """The verdicts on ``urls``, in order, all asked for by ``server``: :meth:`vet` for
        callers with many URLs (the server is parsed once; hosts that recur are judged once).

        Raises :class:`urlvet.errors.InputError` at once for a malformed *server*.
        """
        asked_by = as_server(server)
        return (self.vet(url, asked_by) for url in urls)

    def vet_offline(
        self, url: str | bytes, server: Server | str | None = None, *, message: str | None = None
    ) -> Verdict:
        """Like :meth:`vet` but never resolves names nor probes, whatever the policy says."""
        asked_by = as_server(server)
        plain = self._plain(url, asked_by, message)
        if plain is not None:
            return plain
        return self._finish(self._offline(url, asked_by, message), None)

    def vet_destination(self, url: str, depth: int) -> Verdict:
        """The offline verdict on the URL a link forwards to, ``depth`` redirects in.

        For the redirect rules (UV213, UV214): the destination is judged on its own, with no
        server (how the link relates to the server is judged on the link), and without DNS.
        """
        # A plain destination carries no URL, so how deep it lies changes nothing (only the
        # rules on carried URLs read the depth): its shape's verdict is its own.
        found = self.plain_shape(url, None)
        if found is not None:
            return found[0].verdict_for(url, found[1])
        return self._other_destination(url, depth)

    def destination_findings(self, url: str, depth: int) -> tuple[Finding, ...]:
        """The findings of :meth:`vet_destination`, all that the redirect rules read of it:
        a plain destination's are its shape's, without a verdict built for it."""
        found = self.plain_shape(url, None)
        if found is not None:
            return found[0].findings
        return self._other_destination(url, depth).findings

    def _other_destination(self, url: str, depth: int) -> Verdict:
        """:meth:`vet_destination` on a destination that is not plain (or with no caches)."""
        if self._host_cache_size == 0:
            return self._finish(self._offline(url, None, None, depth), None)
        # Links that forward somewhere repeat their destinations (one sign-in callback, one
        # landing page): each is vetted once, like a host's per-host findings.
        key = (url, depth)
        cache = self._destination_cache
        verdict = cache.get(key)
        if verdict is None:
            verdict = self._finish(self._offline(url, None, None, depth), None)
            self._keep(cache, key, verdict, min(self._host_cache_size, DESTINATION_CACHE_SIZE))
        return verdict

    # -- internals ---------------------------------------------------------------------------

    def _offline(
        self, url: str | bytes, server: Server | None, message: str | None, hops: int = 0
    ) -> _Offline:
        raw, decode_error = _as_text(url)
        compiled = self._compiled
        parsed: ParsedURL | None = None
        parse_error = decode_error
        if parse_error is None:
            if len(raw) > PARSE_LIMIT:
                parse_error = f"the URL is longer than {PARSE_LIMIT:,} characters"
            else:
                try:
                    parsed = parse(raw)
                except InvalidURL as exc:
                    parse_error = str(exc)
        ctx = url_context(
            compiled.settings,
            server,
            raw,
            parse_error,
            message,
            self if hops < MAX_REDIRECT_HOPS else None,
            hops,
        )
        findings: list[Finding] = []
        severities = compiled.severities
        for rule in compiled.rules_raw:
            for hit in rule.check(parsed, ctx):
                findings.append(_finding(rule, hit, severities.get(rule.code)))
        if parsed is not None:
            applicable = (parsed.host_kind, server is not None)
            host_rules = self._host_rules[applicable]
            if host_rules:
                findings.extend(self._host_findings(parsed, server, host_rules))
            for rule in self._url_rules[applicable]:
                for hit in rule.check(parsed, ctx):
                    findings.append(_finding(rule, hit, severities.get(rule.code)))
        if message:
            for rule in compiled.rules_message:
                for hit in rule.check(parsed, ctx):
                    findings.append(_finding(rule, hit, severities.get(rule.code)))
        return _Offline(raw, parsed, ctx, findings)

    def _host_findings(
        self, url: ParsedURL, server: Server | None, rules: tuple[Rule, ...]
    ) -> tuple[Finding, ...]:
        """The per-host rules' findings for the URL's host: computed once per (host, server)
        on the host alone (:func:`host_view`), then reused for every URL on that host."""
        key = (url.host, url.host_kind, server)
        cache = self._host_cache
        found = cache.get(key)
        if found is None:
            view = host_view(url)
            ctx = CheckContext(settings=self._compiled.settings, server=server)
            severities = self._compiled.severities
            found = tuple(
                _finding(rule, hit, severities.get(rule.code))
                for rule in rules
                for hit in rule.check(view, ctx)
            )
            self._keep(cache, key, found, self._host_cache_size)
        return found

    def _keep(self, cache: dict[Any, Any], key: Any, value: Any, size: int) -> None:
        """Put ``value`` in one of the Vetter's caches, first in, first out: the oldest entry
        makes room (an audit's hosts come in runs; a log that cycles over more hosts than
        the cache holds only pays the rules again, as without a cache)."""
        with self._host_lock:
            if len(cache) >= size:
                del cache[next(iter(cache))]
            cache[key] = value

    def _plain(
        self, url: str | bytes, server: Server | None, message: str | None = None
    ) -> Verdict | None:
        """The offline verdict on a plain URL from its shape's, or None (see
        :meth:`plain_shape`); None with a message too, which the message rules read."""
        if message:
            return None
        found = self.plain_shape(url, server)
        if found is not None:
            return found[0].verdict_for(str(url), found[1])
        carried = self.query_shape(url, server)
        if carried is None:
            return None
        return self.query_verdict(str(url), carried)

    def query_shape(self, url: str | bytes, server: Server | None) -> QueryShape | None:
        """For a URL of :func:`urlvet.url.query_split` (a plain head and path, then a query of
        URL characters: a URL carried in a parameter, say): the plain shape of its head and
        path, its tail, and the findings of the rules that read the query, run on the URL
        itself; None when it is no such URL or must be vetted on the ordinary path (a rule
        that can fire reads the query without declaring it, or the head and path have no
        shared shape). Offline, no message, no redirect before it."""
        if url.__class__ is not str or not self._query_rules:
            return None
        raw = str(url)  # the same object: checked above
        if len(raw) > self._plain_limit:
            return None  # UV105 reads the length of the whole URL
        split = query_split(raw)
        if split is None:
            return None
        head, path, search, _fragment = split
        key = (head, PLAIN_ROOT if path == "/" else PLAIN_PATH, server)
        cache = self._plain_cache
        plain = cache.get(key, _UNSEEN)
        if plain is _UNSEEN:
            plain = self._plain_shape(head, key[1], server)
            self._keep(cache, key, plain, self._host_cache_size)
        if plain is None:
            return None
        base = head_url(head)
        if base is None:
            return None
        rules = self._query_rules.get((base.host_kind, server is not None))
        if rules is None:
            return None
        tail = raw[len(head) :]
        found: tuple[Finding, ...] = ()
        if rules and search:  # the rules that read the query never fire without one
            found = self._query_findings_of(raw, plain, tail, base, server, rules, split)
        return QueryShape(plain, tail, found)

    def _query_findings_of(
        self,
        raw: str,
        plain: PlainShape,
        tail: str,
        base: ParsedURL,
        server: Server | None,
        rules: tuple[Rule, ...],
        split: tuple[str, str, str, str],
    ) -> tuple[Finding, ...]:
        """The findings of the query-reading ``rules`` on ``raw`` (see :meth:`query_shape`).

        They read the query only through the URLs its parameters carry (Rule.reads_query):
        none carries one, none fires; otherwise their hits are a function of the head, the
        path (which names a redirector's parameters), the server and the parameters whose
        value may hold a URL (``urlvet.url.carried_urls`` reads no other), and are kept by
        those. Links repeat their carried parameters (one sign-in callback for thousands of
        links, with a client id and a state of their own); a test compares with the ordinary
        path."""
        head, path, search, fragment = split
        carrying = tuple(
            part
            for part in search[1:].split("&")
            if may_carry(value := part.partition("=")[2]) and len(value) <= MAX_CARRIED_LENGTH
        )
        if not carrying:
            return ()
        key = None
        if len(head) + len(path) + sum(len(part) for part in carrying) <= QUERY_KEY_LIMIT:
            key = (head, path, server, carrying)
            kept = self._query_findings.get(key)
            if kept is not None:
                return kept
        # Links on thousands of hosts carry the same callback: where the rules find nothing
        # for one, they find nothing for any link of the same class (see _query_class).
        klass = self._query_class(base, path, server, carrying)
        clean = self._query_clean
        if klass is not None and klass in clean:
            found: tuple[Finding, ...] = ()
        else:
            # The URL as parse() gives it, from its head's: the parser copies the tail as it
            # is (a test compares the two).
            parsed = on_head(base, raw, plain.href_head + tail, path, search, fragment)
            ctx = url_context(self._compiled.settings, server, raw, None, None, self, 0)
            severities = self._compiled.severities
            found = tuple(
                _finding(rule, hit, severities.get(rule.code))
                for rule in rules
                for hit in rule.check(parsed, ctx)
            )
            if klass is not None and not found:
                with self._host_lock:
                    if len(clean) >= QUERY_CLASSES_KEPT:
                        clean.clear()
                    clean.add(klass)
        if key is not None:
            memo = self._query_findings
            with self._host_lock:
                # Emptied when full rather than first in, first out: taking the oldest key
                # of a dict that keeps losing its first entries walks past the holes they
                # leave, and links on thousands of sign-in hosts would pay that at each one.
                if len(memo) >= QUERY_FINDINGS_KEPT:
                    memo.clear()
                memo[key] = found
        return found

    def _query_class(
        self, head: ParsedURL, path: str, server: Server | None, carrying: tuple[str, ...]
    ) -> tuple[Any, ...] | None:
        """All that the rules that read the query read of a link but its host's name, when
        they find nothing on it: a link of the same class gets no finding from them either.
        The link is ``head`` (its head's parse) with the path ``path`` (as the parser keeps
        it: see :func:`urlvet.url.query_split`) and parameters of which ``carrying`` may
        carry a URL. None when the parameters are too long to be kept.

        The rules read a link's host only through its kind, whether it is a listed
        redirector's page (its host and path), and whether its site is the site of a URL it
        carries or of the server; its name appears only in the text of what they find. What
        they read of a carried URL is the URL itself, except for a plain one
        (:func:`urlvet.url.plain_split`, written as it is), of which they read what its
        plain shape has: its findings as a destination are its shape's, and its scheme,
        host and site are its head's. Of those, with no server, they read only the codes and
        severities of the findings (which findings count, and how much), the scheme, the
        host's kind, whether the host is this computer or inside the user's network (UV210,
        UV214), and whether its site is the link's (UV213, UV214); a plain URL carries no URL
        of its own (its query has no ':' and no '%'). With a server, UV406 also compares the
        URL's site with the server's and its host with the domains the policy expects from
        the server, so the class then keeps the head itself. So the class holds, per
        carrying parameter, its name and either its value or, for a plain URL, its shape and
        those facts (the head itself with a server), and whether that URL is on the link's
        site. A test compares the class's answers with the ordinary path's."""
        site = compared_site(head)  # the link's: its host is its head's
        server_site = None
        if server is not None and server.parsed is not None:
            server_site = compared_site(server.parsed)
        size = 0
        items = []
        for part in carrying:
            name, _, value = part.partition("=")
            # With no '+' and no '%', form decoding leaves the value as it is.
            plain = "+" not in value and "%" not in value
            found = self.plain_shape(value, None) if plain else None
            there: str | None
            carried: tuple[Any, ...] | str
            if found is not None:
                shape = found[0]
                there = shape.registrable_domain or (shape.host or "").rstrip(".").lower()
                if server is None:
                    # What the rules read of the URL but its name: see the docstring.
                    marks = tuple([(f.code, f.severity) for f in shape.findings])
                    carried = (shape.shape, self._destination_facts_of(shape), marks)
                    size += len(name) + 8 * len(marks)
                else:
                    carried = (shape.head, shape.shape)
                    size += len(name) + len(shape.head)
            else:
                if len(part) > CARRIED_PARAMETER_KEPT_LENGTH:
                    return None
                carried = value
                size += len(part)
                item = first_carried_item(name, value)
                there = None if item is None else compared_site(item.target)
            items.append((name, carried, there == site))
        if size > QUERY_KEY_LIMIT:
            return None
        redirector = redirector_parameters(head, self._compiled.settings, path)
        return (head.host_kind, server, redirector, site == server_site, tuple(items))

    def _destination_facts_of(self, shape: PlainShape) -> tuple[str, HostKind, bool, bool]:
        """What the rules that read the query read of a plain URL a link carries, besides its
        shape's findings and its site: its scheme, its host's kind, whether the host is this
        computer and whether it is inside the user's network (UV210's question). All are
        facts of its head, kept per head."""
        facts = self._destination_facts.get(shape.head)
        if facts is None:
            representative = shape.head + shape.shape
            target = parse(representative)
            ctx = url_context(self._compiled.settings, None, representative, None, None, None, 0)
            facts = (
                target.scheme,
                target.host_kind,
                is_loopback_host(target),
                internal_target(target, ctx) is not None,
            )
            self._keep(self._destination_facts, shape.head, facts, self._host_cache_size)
        return facts

    def query_verdict(self, url: str, found: QueryShape) -> Verdict:
        """The offline verdict on ``url``, a URL of :meth:`query_shape`, from what that gave:
        the shape's verdict with its own URL and href, and the findings on its query with
        the shape's, in the order the ordinary path gives them."""
        shape, tail, extra = found
        if not extra:
            return shape.verdict_for(url, tail)
        findings = sorted((*shape.findings, *extra), key=_order)
        return _built_verdict(
            {
                "url": url,
                "href": shape.href_head + tail,
                "decision": self._compiled.decide([f.severity for f in findings]),
                "findings": tuple(findings),
                "host": shape.host,
                "host_unicode": shape.host_unicode,
                "host_kind": shape.host_kind,
                "registrable_domain": shape.registrable_domain,
                "server": shape.server,
                "tls": None,
            }
        )

    def plain_split(self, url: str | bytes) -> tuple[str, str, str] | None:
        """:func:`urlvet.url.plain_split` of ``url`` when its verdict may come from a plain
        shape (see :meth:`plain_shape`): a plain URL, as text, within the policy's length
        limit, with the shapes on; else None. Every plain URL of one head, representative
        tail and server gets one shape."""
        if url.__class__ is not str or not self._plain_kinds:
            return None
        raw = str(url)  # the same object: checked above
        if len(raw) > self._plain_limit:
            return None  # over the policy's limit: UV105 reads the length of the whole URL
        return plain_split(raw)

    def plain_shape(self, url: str | bytes, server: Server | None) -> tuple[PlainShape, str] | None:
        """The shape whose verdict a plain URL (see :func:`urlvet.url.plain_split`) shares,
        and the URL's tail; None when ``url`` is not plain or must be vetted on its own (its
        shape has a rule that reads the tail, or the caches are off). Offline, no message:
        for callers that build on the shared part of verdicts (the audit's records)."""
        split = self.plain_split(url)
        if split is None:
            return None
        head, tail, shape = split
        key = (head, shape, server)
        cache = self._plain_cache
        plain = cache.get(key, _UNSEEN)
        if plain is _UNSEEN:
            plain = self._plain_shape(head, shape, server)
            self._keep(cache, key, plain, self._host_cache_size)
        if plain is None:
            return None
        return plain, tail

    def _plain_shape(self, head: str, shape: str, server: Server | None) -> PlainShape | None:
        """The verdict on ``head`` + ``shape``, when every URL of that head and shape may
        share it: it parses, its href ends with the shape as written, and every rule that can
        fire on its kind of host is blind to a plain tail."""
        state = self._offline(head + shape, server, None)
        url = state.url
        if url is None or not url.href.endswith(shape):
            return None
        conditions = self._plain_conditions.get((url.host_kind, server is not None))
        if conditions is None:
            return None
        settings = self._compiled.settings
        if any(reads_tail(url, settings) for reads_tail in conditions):
            return None
        v = self._finish(state, None)
        # Equal strings kept once (a shape is kept for every head of an audit's hosts): the
        # href's head is most often the head as written, a host's Unicode form the host.
        href_head = url.href[: -len(shape)]
        host = v.host
        host_unicode = v.host_unicode
        return PlainShape(
            head,
            shape,
            head if href_head == head else href_head,
            v.decision,
            self._shared_findings(v.findings),
            host,
            host if host_unicode == host else host_unicode,
            v.host_kind,
            v.registrable_domain,
            v.server,
        )

    def _shared_findings(self, findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
        """``findings``, or an equal tuple kept from an earlier shape: the findings on the
        scheme and port (UV101, UV107) are the same on thousands of hosts, and a finding costs
        about a kilobyte to keep."""
        if not findings:
            return findings
        table = self._plain_findings
        # Kept by the hash of their codes and messages (equal findings are checked below: a
        # tuple whose evidence differs is kept apart by not being shared): the text of
        # thousands of findings would take megabytes to hold, and the repr of their evidence
        # costs five times the hash.
        key = hash(tuple([(f.code, f.message) for f in findings]))
        kept = table.get(key)
        if kept is not None and kept == findings:
            return kept
        if len(table) < PLAIN_FINDINGS_KEPT:
            table[key] = findings
        return findings

    def _wants_dns(self, state: _Offline) -> bool:
        url = state.url
        if (
            url is None
            or url.host_kind is not HostKind.DOMAIN
            or (url.scheme not in ("http", "https") and not self._probes(url))
        ):
            return False
        if is_loopback_host(url):
            return False
        if url.host.rstrip(".").rsplit(".", 1)[-1].lower() in NEVER_RESOLVED_TLDS:
            return False  # RFC 7686: .onion names are never sent to DNS
        # Already blocked offline: a lookup would add latency and tell the domain's DNS
        # operator about the user for nothing.
        block_at = self._compiled.block_at
        return not any(f.severity.rank >= block_at for f in state.findings)

    def _add_dns(self, state: _Offline, resolution: Resolution | None) -> None:
        if resolution is None:
            return
        ctx = CheckContext(
            settings=state.ctx.settings,
            server=state.ctx.server,
            raw=state.raw,
            resolution=resolution,
            message=state.ctx.message,
        )
        severities = self._compiled.severities
        for rule in self._compiled.rules_dns:
            for hit in rule.check(state.url, ctx):
                state.findings.append(_finding(rule, hit, severities.get(rule.code)))

    # -- the TLS stage (after DNS) -----------------------------------------------------------

    def _probes(self, url: ParsedURL) -> bool:
        return self._compiled.tls_probe and url.scheme in ("https", "wss")

    def _tls_target(
        self, state: _Offline, resolution: Resolution | None
    ) -> tuple[str, int, str] | None:
        """(address, port, host) to probe, or None: only an https:/wss: URL that nothing has
        blocked, only to an address the DNS answer (or the IP literal) offers and every
        address of the host may be probed (urlvet.tls.probe_address)."""
        url = state.url
        if url is None or not self._probes(url):
            return None
        compiled = self._compiled
        block_at = compiled.block_at
        if any(f.severity.rank >= block_at for f in state.findings):
            return None  # nobody will open it: no reason to tell its operator we looked
        if url.host_kind is HostKind.DOMAIN:
            if resolution is None or not resolution.ok:
                return None
            candidates: tuple[str, ...] = resolution.addresses
        elif url.host_kind in (HostKind.IPV4, HostKind.IPV6):
            candidates = (url.host,)
        else:
            return None
        from urlvet.tls import probe_address

        address = probe_address(
            candidates, compiled.settings.blocked_networks, compiled.tls_probe_networks
        )
        if address is None:
            return None
        return address, url.port or 443, url.host.rstrip(".")

    def _finish(self, state: _Offline, probe: Probe | None = None) -> Verdict:
        findings = state.findings
        if probe is not None:
            ctx = CheckContext(
                settings=state.ctx.settings,
                server=state.ctx.server,
                raw=state.raw,
                message=state.ctx.message,
                tls=probe,
                earlier=frozenset(f.code for f in findings),
            )
            severities = self._compiled.severities
            for rule in self._compiled.rules_tls:
                for hit in rule.check(state.url, ctx):
                    findings.append(_finding(rule, hit, severities.get(rule.code)))
        if len(findings) > 1:
            findings.sort(key=_order)
        decision = self._compiled.decide([f.severity for f in findings])
        url = state.url
        server = state.ctx.server
        # The TLS facts are the one value given as a dict (the model makes TlsFacts of it):
        # without them every value is already of its field's type.
        build = _validate_verdict if probe is not None else _built_verdict
        verdict: Verdict = build(
            {
                "url": state.raw,
                "href": url.href if url is not None else None,
                "decision": decision,
                "findings": tuple(findings),
                "host": url.host if url is not None and url.host else None,
                "host_unicode": url.host_unicode if url is not None and url.host else None,
                "host_kind": url.host_kind.value if url is not None else None,
                "registrable_domain": url.registrable_domain if url is not None else None,
                "server": server.label() if server is not None else None,
                "tls": _tls_facts(probe) if probe is not None else None,
            }
        )
        return verdict


# The model's own validator, called directly (the validation Verdict(...) runs, without
# BaseModel.__init__'s keyword handling around it): for the one verdict with TLS facts.
_validate_verdict = Verdict.__pydantic_validator__.validate_python


_UNSEEN: Any = object()


# One set of field names for every finding the engine builds: each of its own would cost
# about 250 bytes, and findings are kept by the thousand (per host, per plain shape). The
# model is frozen, so pydantic never adds to the set (a copy gets a set of its own); the set
# is compared by value, so these findings equal validated ones.
_FINDING_FIELDS: set[str] = set(Finding.model_fields)


def _finding(rule: Rule, hit: Hit, override: Severity | None) -> Finding:
    # Built as _built_verdict builds a verdict: every value is of its field's type (the
    # rule's code, name and CWE, a Severity, the hit's text and a dict of its evidence).
    finding: Finding = object.__new__(Finding)
    object.__setattr__(
        finding,
        "__dict__",
        {
            "code": rule.code,
            "name": rule.name,
            "severity": override or hit.severity or rule.severity,
            "message": hit.message,
            "evidence": frozen_evidence(hit.evidence),
            "cwe": rule.cwe,
        },
    )
    object.__setattr__(finding, "__pydantic_fields_set__", _FINDING_FIELDS)
    object.__setattr__(finding, "__pydantic_extra__", None)
    object.__setattr__(finding, "__pydantic_private__", None)
    return finding


def _tls_facts(probe: Probe) -> dict[str, Any]:
    cert = probe.certificate
    return {
        "address": probe.address,
        "port": probe.port,
        "host": probe.host,
        "status": probe.status,
        "version": probe.version,
        "issuer": cert.issuer if cert is not None else None,
        "subject": cert.subject if cert is not None else None,
        "names": cert.names if cert is not None else (),
        "valid_from": cert.not_before.isoformat() if cert is not None else None,
        "valid_to": cert.not_after.isoformat() if cert is not None else None,
        "detail": probe.detail or None,
    }


def _order(f: Finding) -> tuple[int, str]:
    return (-f.severity.rank, f.code)


def _as_text(url: Any) -> tuple[str, str | None]:
    if isinstance(url, str):
        if not url.isascii():
            try:
                url.encode("utf-8")
            except UnicodeEncodeError:
                return url, "the URL contains an unpaired surrogate (invalid Unicode)"
        return url, None
    if isinstance(url, bytes | bytearray):
        try:
            return bytes(url).decode("utf-8"), None
        except UnicodeDecodeError as exc:
            return bytes(url).decode(
                "utf-8", "replace"
            ), f"the URL is not valid UTF-8 ({exc.reason})"
    return repr(url), f"a URL must be text, not {type(url).__name__}"


_DEFAULT: list[Vetter] = []


def default_vetter() -> Vetter:
    """A Vetter with the default policy, built on first use."""
    if not _DEFAULT:
        _DEFAULT.append(Vetter())
    return _DEFAULT[0]


def vet(
    url: str | bytes, server: Server | str | None = None, policy: Policy | None = None
) -> Verdict:
    """Vet one URL. With no policy, the default policy (which resolves names with DNS)."""
    vetter = default_vetter() if policy is None else Vetter(policy)
    return vetter.vet(url, server)


__all__ = ["Decision", "Vetter", "default_vetter", "vet"]
