"""Vet one URL: parse it as a browser does, run the policy's rules, decide. Orchestration only.

A :class:`Vetter` is built once from a policy and shared: it is immutable apart from its DNS
and TLS caches and its memos, which are safe across threads and tasks. The offline part
of a vet is pure; DNS, when the policy enables it, and the TLS probe, when the policy asks for
it, are the only I/O, each bounded by the policy's deadline. The stages run in that order:
offline rules, DNS, then the TLS probe (:mod:`urlvet.engine.online`), only for a URL not
already blocked and only to an address DNS approved.

The offline rules are shared out by what they declare they read (``Rule.reads``): the rules
that read only facts of the host are judged once per (host, kind, server); the rules that read
facts links share (scheme, port, user info, the URLs carried in the query...) once per tuple
of those facts and the server, those that read the query apart; the rules that read the URL's
own text run on every URL. Each memo is a :class:`~urlvet.engine.memo.Memo` keyed by values,
so a verdict can only be shared between URLs that agree on every fact the rules read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from urlvet.checks.base import (
    CheckContext,
    Rule,
    url_context,
)
from urlvet.engine.facts import URLFacts, facts_of
from urlvet.engine.memo import Memo
from urlvet.engine.online import Offline as _Offline
from urlvet.engine.online import add_dns, add_tls, dns_name, tls_target
from urlvet.engine.plan import KeyFn, Plan, authority_key_reader, key_reader, plan
from urlvet.engine.verdicts import (
    finding_of,
    order,
    verdict_of,
)
from urlvet.findings import Decision, Finding, Verdict
from urlvet.policy import CompiledPolicy, Policy
from urlvet.server import Server, as_server
from urlvet.url import HostKind, ParsedURL

if TYPE_CHECKING:
    from urlvet.resolve import Resolver
    from urlvet.tls import Probe, Prober

HOST_CACHE_SIZE = 65_536
"""How many (host, kind, server) entries a Vetter's host memo keeps: a tuple of findings,
empty for most; 65,536 of them take a few tens of megabytes at most."""
LINK_MEMO_SIZE = 65_536
"""How many tuples of link facts the link memo keeps (at most the host memo's size)."""
DESTINATION_MEMO_SIZE = 8_192
"""How many destinations of redirects (a URL's text and depth) the destination memo keeps."""
DESTINATION_KEPT_LENGTH = 1_024
"""The longest destination the destination memo keeps: longer ones are vetted each time, so
that hostile parameters of the longest length read cannot fill it with megabytes."""
QUERY_MEMO_SIZE = 16_384
"""How many tuples of facts with the URLs a query carries the query memo keeps (at most the
host memo's size): a key holds those URLs parsed, a kilobyte or two, and links that carry the
same URL (one sign-in callback) are few next to those that carry none."""


class Vetter:
    """Vets URLs under one policy. Immutable and safe to share across threads and tasks."""

    __slots__ = (
        "__dict__",
        "_compiled",
        "_destination_memo",
        "_gates",
        "_host_memo",
        "_link_key",
        "_link_memo",
        "_plan",
        "_query_key",
        "_query_memo",
        "_query_needed",
        "policy",
    )
    policy: Policy
    _compiled: CompiledPolicy
    _plan: Plan
    _link_key: KeyFn
    _gates: bool
    _host_memo: Memo[
        tuple[str, HostKind, Server | None], tuple[tuple[Finding, ...], tuple[Rule, ...]]
    ]
    _link_memo: Memo[tuple[Any, ...], tuple[Finding, ...]]
    _query_key: KeyFn
    _query_memo: Memo[tuple[Any, ...], tuple[Finding, ...]]
    _query_needed: Callable[[URLFacts], Any] | None
    _destination_memo: Memo[tuple[str, int], tuple[Finding, ...]]

    def __init__(
        self, policy: Policy | None = None, *, host_cache_size: int = HOST_CACHE_SIZE
    ) -> None:
        """A Vetter for ``policy`` (the default policy when None).

        ``host_cache_size``: how many entries each of its memos keeps (see the module's
        docstring); 0 runs every rule on every URL, and so does every Vetter when
        ``URLVET_MEMOS=off`` (see :mod:`urlvet.memo`).
        """
        chosen = policy if policy is not None else Policy()
        compiled = chosen.compiled
        if host_cache_size < 0:
            raise ValueError("host_cache_size must be 0 or more")
        shared = plan((*compiled.rules_raw, *compiled.rules_url))
        object.__setattr__(self, "policy", chosen)
        object.__setattr__(self, "_compiled", compiled)
        object.__setattr__(self, "_plan", shared)
        object.__setattr__(self, "_link_key", authority_key_reader(shared.link_key))
        object.__setattr__(self, "_host_memo", Memo(host_cache_size))
        # A rule's condition on its host is a shortcut like the memos: off with them.
        object.__setattr__(self, "_gates", self._host_memo.size > 0)
        object.__setattr__(self, "_link_memo", Memo(min(host_cache_size, LINK_MEMO_SIZE)))
        object.__setattr__(self, "_query_key", key_reader(shared.query_key))
        # The query rules all need a fact (the URLs the query carries): a URL without it skips
        # them. A shortcut like the memos: off with them.
        needs = shared.query_needs if self._gates else None
        object.__setattr__(self, "_query_needed", None if needs is None else attrgetter(needs))
        object.__setattr__(self, "_query_memo", Memo(min(host_cache_size, QUERY_MEMO_SIZE)))
        destinations = Memo[tuple[str, int], tuple[Finding, ...]](
            min(host_cache_size, DESTINATION_MEMO_SIZE)
        )
        object.__setattr__(self, "_destination_memo", destinations)

    def __setattr__(self, name: str, value: Any) -> None:
        # Shared across threads and tasks: a Vetter never changes (its caches aside).
        raise AttributeError(f"a Vetter is immutable: build a new one instead of setting {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Vetter is immutable: cannot delete {name!r}")

    @property
    def compiled(self) -> CompiledPolicy:
        """The compiled policy."""
        return self._compiled

    @property
    def memos(self) -> dict[str, Memo[Any, Any]]:
        """The Vetter's memos by name (``host``, ``link``, ``query``, ``destination``), for
        their counts."""
        return {
            "host": self._host_memo,
            "link": self._link_memo,
            "query": self._query_memo,
            "destination": self._destination_memo,
        }

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
        state = self._offline(url, as_server(server), message)
        compiled = self._compiled
        resolver = self.resolver
        if resolver is None and not compiled.tls_probe:  # an offline policy: nothing to add
            return self._finish(state, None)
        name = None if resolver is None else dns_name(compiled, state.url, state.findings)
        resolution = None if name is None else resolver.resolve(name)  # type: ignore[union-attr]
        add_dns(compiled, state, resolution)
        target = tls_target(compiled, state.url, state.findings, resolution)
        probe = None if target is None else self.prober.probe(*target)  # type: ignore[union-attr]
        return self._finish(state, probe)

    async def avet(
        self, url: str | bytes, server: Server | str | None = None, *, message: str | None = None
    ) -> Verdict:
        """The asyncio twin of :meth:`vet`: DNS lookups do not block the event loop."""
        state = self._offline(url, as_server(server), message)
        compiled = self._compiled
        resolver = self.resolver
        name = None if resolver is None else dns_name(compiled, state.url, state.findings)
        resolution = None if name is None else await resolver.aresolve(name)  # type: ignore[union-attr]
        add_dns(compiled, state, resolution)
        target = tls_target(compiled, state.url, state.findings, resolution)
        probe = None if target is None else await self.prober.aprobe(*target)  # type: ignore[union-attr]
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
        return self._finish(self._offline(url, as_server(server), message), None)

    def vet_destination(self, url: str, depth: int) -> Verdict:
        """The offline verdict on the URL a link forwards to, ``depth`` redirects in.

        For the rules on redirects: the destination is judged on its own, with no
        server (how the link relates to the server is judged on the link), and without DNS.
        """
        return self._finish(self._offline(url, None, None, depth), None)

    def destination_findings(self, url: str | ParsedURL, depth: int) -> tuple[Finding, ...]:
        """The findings of :meth:`vet_destination`, all that the redirect rules read of it:
        a function of the URL's text and its depth, kept for texts up to
        :data:`DESTINATION_KEPT_LENGTH` long (links repeat their destinations: one sign-in
        callback, one landing page for a campaign's links)."""
        raw = url.raw if isinstance(url, ParsedURL) else url
        if len(raw) > DESTINATION_KEPT_LENGTH:
            return self._destination(url, depth)
        return self._destination_memo.get((raw, depth), self._destination, url, depth)

    def _destination(self, url: str | ParsedURL, depth: int) -> tuple[Finding, ...]:
        findings = self._offline(url, None, None, depth).findings
        if len(findings) > 1:
            findings.sort(key=order)
        return tuple(findings)

    # -- the offline stage -------------------------------------------------------------------

    def _offline(
        self,
        url: str | bytes | ParsedURL,
        server: Server | None,
        message: str | None,
        hops: int = 0,
    ) -> _Offline:
        compiled = self._compiled
        facts = facts_of(url, hops, compiled.settings)
        parsed = facts.url
        ctx = self._context if server is None else self._context_for(server)
        findings: list[Finding] = []
        shared = self._plan
        needed = self._query_needed
        if parsed is None:
            self._run(compiled.rules_raw, facts, ctx, findings)
        else:
            live: tuple[Rule, ...] = ()
            if shared.host or shared.gated:
                key = (parsed.host, parsed.host_kind, server)
                on_host, live = self._host_memo.get(key, self._judge_host, facts, ctx)
                findings.extend(on_host)
            # With no server, the rules that need one are left out (with the memos on).
            alone = server is None and self._gates
            if shared.link:
                link_key = (server, self._link_key(parsed, facts))
                rules = shared.link_serverless if alone else shared.link
                findings.extend(self._link_memo.get(link_key, self._judge, rules, facts, ctx))
            if shared.query and (needed is None or needed(facts)):
                query_key = (server, self._query_key(parsed, facts))
                rules = shared.query_serverless if alone else shared.query
                findings.extend(self._query_memo.get(query_key, self._judge, rules, facts, ctx))
            self._run(shared.text, facts, ctx, findings)
            if live:
                self._run(live, facts, ctx, findings)
        if message:
            findings.extend(self._judge_message(facts, server, message))
        return _Offline(facts.raw, parsed, ctx, findings, message)

    @cached_property
    def _context(self) -> CheckContext:
        return self._context_for(None)  # the same for every URL no server asked for

    def _context_for(self, server: Server | None) -> CheckContext:
        # The rules read the URL only through their views of its facts: no URL text here.
        return url_context(self._compiled.settings, server, "", None, None, self, 0)

    def _judge(
        self, rules: Iterable[Rule], facts: URLFacts, ctx: CheckContext
    ) -> tuple[Finding, ...]:
        """The findings of ``rules`` on ``facts``, each rule seeing only what it declares; a
        family's analysis computed once for its members; a rule that needs a fact the URL
        does not have (``Rule.needs``) left out."""
        found: list[Finding] = []
        if self._gates:  # a shortcut like the memos: off with them
            rules = [r for r in rules if r.needs is None or getattr(facts, r.needs)]
        self._run(rules, facts, ctx, found)
        return tuple(found)

    def _run(
        self, rules: Iterable[Rule], facts: URLFacts, ctx: CheckContext, out: list[Finding]
    ) -> None:
        """:meth:`_judge`, the findings added to ``out``."""
        severities = self._compiled.severities
        analyses: dict[str, Any] = {}
        hush = self._gates  # a family's quiet analysis runs no member: off with the memos
        for rule in rules:
            # Rule.run, without its call for a rule outside a family (nearly every run).
            hits = (
                rule.check(rule.viewer(facts), ctx)
                if rule.member is None or rule.analysis is None
                else rule.run(facts, ctx, analyses, hush=hush)
            )
            for hit in hits:
                out.append(finding_of(rule, hit, severities.get(rule.code)))

    def _judge_host(
        self, facts: URLFacts, ctx: CheckContext
    ) -> tuple[tuple[Finding, ...], tuple[Rule, ...]]:
        """The findings of the rules that read only facts of the host, and the rules of the
        URL's text whose condition the host passes (all of them with every memo off)."""
        shared = self._plan
        found = self._judge(shared.host, facts, ctx)
        if not self._gates:
            return found, shared.gated
        live = tuple(r for r in shared.gated if r.when is None or r.when(r.when_viewer(facts), ctx))
        return found, live

    def _judge_message(self, facts: URLFacts, server: Server | None, message: str) -> list[Finding]:
        """The findings of the rules on the server's message shown beside the URL."""
        compiled = self._compiled
        ctx = url_context(compiled.settings, server, facts.raw, facts.parse_error, message, None, 0)
        severities = compiled.severities
        return [
            finding_of(rule, hit, severities.get(rule.code))
            for rule in compiled.rules_message
            for hit in rule.check(facts.url, ctx)
        ]

    def _finish(self, state: _Offline, probe: Probe | None = None) -> Verdict:
        findings = state.findings
        if probe is not None:
            add_tls(self._compiled, state, probe)
        if len(findings) > 1:
            findings.sort(key=order)
        decision = self._compiled.decide([f.severity for f in findings])
        server = state.ctx.server
        label = server.label() if server is not None else None
        return verdict_of(state.raw, state.url, decision, tuple(findings), label, probe)


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
