"""Vet one URL: parse it as a browser does, run the policy's rules, decide. Orchestration only.

A :class:`Vetter` is built once from a policy and shared: it is immutable apart from its DNS
and TLS caches and its two memos, which are safe across threads and tasks. The offline part
of a vet is pure; DNS, when the policy enables it, and the TLS probe, when the policy asks for
it, are the only I/O, each bounded by the policy's deadline. The stages run in that order:
offline rules, DNS, then the TLS probe, only for a URL not already blocked and only to an
address DNS approved.

The offline rules are shared out by what they declare they read (``Rule.reads``): the rules
that read only facts of the host are judged once per (host, kind, server); the rules that read
facts links share (scheme, port, user info, the URLs carried in the query...) once per tuple
of those facts and the server; the rules that read the URL's own text run on every URL. Both
memos are one :class:`~urlvet.engine.memo.Memo` keyed by values, so a verdict can only be
shared between URLs that agree on every fact the rules read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import cached_property
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from urlvet.checks.addresses import NEVER_RESOLVED_TLDS
from urlvet.checks.base import (
    HOST_FACTS,
    LINK_FACTS,
    CheckContext,
    Hit,
    Rule,
    url_context,
)
from urlvet.engine.facts import URLFacts
from urlvet.engine.memo import Memo
from urlvet.findings import Decision, Finding, Severity, Verdict, frozen_evidence
from urlvet.policy import CompiledPolicy, Policy
from urlvet.server import Server, as_server, is_loopback_host
from urlvet.url import HostKind, InvalidURL, ParsedURL, parse

if TYPE_CHECKING:
    from urlvet.resolve import Resolution, Resolver
    from urlvet.tls import Probe, Prober

# Longer input is not parsed at all: it is already blocked as over-long, and parsing and
# classifying megabytes of text would only give an attacker a lever on our latency.
PARSE_LIMIT = 65_536

HOST_CACHE_SIZE = 65_536
"""How many entries each of a Vetter's two memos keeps: (host, server) pairs for the rules
that read only the host, tuples of shared facts for the others. An entry is a tuple of
findings, empty for most: 65,536 of them take a few tens of megabytes at most."""


class Plan(NamedTuple):
    """The policy's offline rules shared out by what they read (see the module's docstring)."""

    host: tuple[Rule, ...]
    """Rules that read only facts of the host."""
    link: tuple[Rule, ...]
    """Rules that read facts links share, and perhaps of the host."""
    link_key: tuple[str, ...]
    """The facts the link rules read, together: their memo's key with the server."""
    text: tuple[Rule, ...]
    """Rules that read the URL's own text: run on every URL."""


def plan(rules: Sequence[Rule]) -> Plan:
    """Share ``rules`` (the policy's ``raw`` and ``url`` rules, in order) out by their reads."""
    host = tuple(r for r in rules if r.host_only)
    link = tuple(r for r in rules if not r.host_only and r.all_reads <= HOST_FACTS | LINK_FACTS)
    text = tuple(r for r in rules if r not in host and r not in link)
    key = sorted({name for r in link for name in r.all_reads})
    return Plan(host, link, tuple(key), text)


_VERDICT_FIELDS = frozenset(Verdict.model_fields)


def _built_verdict(values: dict[str, Any]) -> Verdict:
    """A Verdict of ``values``, every field given with a value of its declared type (the
    engine built them: text, a Decision, a tuple of Findings, None for the TLS facts), set as
    pydantic's validation would set them but without the validation round-trip, a good part of
    the cost of a verdict (a test compares the two)."""
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
    message: str | None


class Vetter:
    """Vets URLs under one policy. Immutable and safe to share across threads and tasks."""

    __slots__ = (
        "__dict__",
        "_compiled",
        "_host_memo",
        "_link_key",
        "_link_memo",
        "_plan",
        "policy",
    )
    policy: Policy
    _compiled: CompiledPolicy
    _plan: Plan
    _link_key: Any
    _host_memo: Memo[tuple[str, HostKind, Server | None], tuple[Finding, ...]]
    _link_memo: Memo[tuple[Any, ...], tuple[Finding, ...]]

    def __init__(
        self, policy: Policy | None = None, *, host_cache_size: int = HOST_CACHE_SIZE
    ) -> None:
        """A Vetter for ``policy`` (the default policy when None).

        ``host_cache_size``: how many entries each of its two memos keeps (see the module's
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
        object.__setattr__(
            self, "_link_key", attrgetter(*shared.link_key) if shared.link_key else None
        )
        object.__setattr__(self, "_host_memo", Memo(host_cache_size))
        object.__setattr__(self, "_link_memo", Memo(host_cache_size))

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
        """The Vetter's two memos by name (``host``, ``link``), for their counts."""
        return {"host": self._host_memo, "link": self._link_memo}

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
        resolver = self.resolver
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
        state = self._offline(url, as_server(server), message)
        resolver = self.resolver
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
        return self._finish(self._offline(url, as_server(server), message), None)

    def vet_destination(self, url: str, depth: int) -> Verdict:
        """The offline verdict on the URL a link forwards to, ``depth`` redirects in.

        For the redirect rules (UV213, UV214): the destination is judged on its own, with no
        server (how the link relates to the server is judged on the link), and without DNS.
        """
        return self._finish(self._offline(url, None, None, depth), None)

    def destination_findings(self, url: str, depth: int) -> tuple[Finding, ...]:
        """The findings of :meth:`vet_destination`, all that the redirect rules read of it."""
        findings = self._offline(url, None, None, depth).findings
        if len(findings) > 1:
            findings.sort(key=_order)
        return tuple(findings)

    # -- the offline stage -------------------------------------------------------------------

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
        facts = URLFacts(raw, parsed, parse_error, hops, compiled.settings)
        # The rules read the URL only through their views of its facts: the context holds
        # what is the same for every URL of this server.
        ctx = url_context(compiled.settings, server, "", None, None, self, 0)
        findings: list[Finding] = []
        shared = self._plan
        if parsed is None:
            findings.extend(self._judge(compiled.rules_raw, facts, ctx))
        else:
            if shared.host:
                key = (parsed.host, parsed.host_kind, server)
                findings.extend(
                    self._host_memo.get(key, lambda: self._judge(shared.host, facts, ctx))
                )
            if shared.link:
                link_key = (server, self._link_key(facts))
                findings.extend(
                    self._link_memo.get(link_key, lambda: self._judge(shared.link, facts, ctx))
                )
            if shared.text:
                findings.extend(self._judge(shared.text, facts, ctx))
        if message:
            findings.extend(self._judge_message(raw, parsed, parse_error, server, message))
        return _Offline(raw, parsed, ctx, findings, message)

    def _judge(
        self, rules: Iterable[Rule], facts: URLFacts, ctx: CheckContext
    ) -> tuple[Finding, ...]:
        """The findings of ``rules`` on ``facts``, each rule seeing only what it declares; a
        family's analysis computed once for its members."""
        severities = self._compiled.severities
        analyses: dict[str, Any] = {}
        return tuple(
            _finding(rule, hit, severities.get(rule.code))
            for rule in rules
            for hit in rule.run(facts, ctx, analyses)
        )

    def _judge_message(
        self,
        raw: str,
        parsed: ParsedURL | None,
        parse_error: str | None,
        server: Server | None,
        message: str,
    ) -> list[Finding]:
        """The findings of the rules on the server's message shown beside the URL."""
        compiled = self._compiled
        ctx = url_context(compiled.settings, server, raw, parse_error, message, None, 0)
        severities = compiled.severities
        return [
            _finding(rule, hit, severities.get(rule.code))
            for rule in compiled.rules_message
            for hit in rule.check(parsed, ctx)
        ]

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
            message=state.message,
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
                message=state.message,
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
