"""Vet one URL: parse it as a browser does, run the policy's rules, decide. Orchestration only.

A :class:`Vetter` is built once from a policy and shared: it is immutable apart from its DNS
cache, which is safe across threads and tasks. The offline part of a vet is pure; DNS, when
the policy enables it, is the only I/O, and is bounded by the policy's deadline.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

from urlvet.checks.addresses import NEVER_RESOLVED_TLDS
from urlvet.checks.base import MAX_REDIRECT_HOPS, CheckContext, Hit, Rule
from urlvet.findings import Decision, Finding, Severity, Verdict
from urlvet.policy import CompiledPolicy, Policy
from urlvet.server import Server, as_server, is_loopback_host
from urlvet.url import HostKind, InvalidURL, ParsedURL, parse

if TYPE_CHECKING:
    from urlvet.resolve import Resolution, Resolver

# Longer input is not parsed at all: it is already blocked as over-long, and parsing and
# classifying megabytes of text would only give an attacker a lever on our latency.
PARSE_LIMIT = 65_536


class _Offline(NamedTuple):
    # A tuple rather than a frozen dataclass: built for every URL, and cheaper to build.
    raw: str
    url: ParsedURL | None
    ctx: CheckContext
    findings: list[Finding]


class Vetter:
    """Vets URLs under one policy. Immutable and safe to share across threads and tasks."""

    __slots__ = ("__dict__", "_compiled", "_url_rules", "policy")
    policy: Policy
    _compiled: CompiledPolicy
    _url_rules: Mapping[tuple[HostKind, bool], tuple[Rule, ...]]

    def __init__(self, policy: Policy | None = None) -> None:
        chosen = policy if policy is not None else Policy()
        compiled = chosen.compiled
        object.__setattr__(self, "policy", chosen)
        object.__setattr__(self, "_compiled", compiled)
        # The url rules that can fire, per host kind and whether a server asked: a third of
        # them cannot for a given URL (address-literal rules on a name, server rules with no
        # server), and skipping them is a measurable share of vetting one URL.
        object.__setattr__(
            self,
            "_url_rules",
            {
                (kind, has_server): tuple(
                    r for r in compiled.rules_url if r.applies_to(kind, has_server)
                )
                for kind in HostKind
                for has_server in (False, True)
            },
        )

    def __setattr__(self, name: str, value: Any) -> None:
        # Shared across threads and tasks: a Vetter never changes (its DNS cache aside).
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

    def vet(
        self, url: str | bytes, server: Server | str | None = None, *, message: str | None = None
    ) -> Verdict:
        """The verdict on ``url`` asked for by ``server`` (a Server, a server URL, or "stdio").

        Raises :class:`urlvet.errors.InputError` only for a malformed *server*; any URL, even
        garbage, gets a verdict.
        """
        state = self._offline(url, as_server(server), message)
        resolution = None
        resolver = self.resolver
        if resolver is not None and self._wants_dns(state):
            assert state.url is not None
            resolution = resolver.resolve(state.url.host.rstrip("."))
        return self._finish(state, resolution)

    async def avet(
        self, url: str | bytes, server: Server | str | None = None, *, message: str | None = None
    ) -> Verdict:
        """The asyncio twin of :meth:`vet`: DNS lookups do not block the event loop."""
        state = self._offline(url, as_server(server), message)
        resolution = None
        resolver = self.resolver
        if resolver is not None and self._wants_dns(state):
            assert state.url is not None
            resolution = await resolver.aresolve(state.url.host.rstrip("."))
        return self._finish(state, resolution)

    def vet_offline(
        self, url: str | bytes, server: Server | str | None = None, *, message: str | None = None
    ) -> Verdict:
        """Like :meth:`vet` but never resolves names, whatever the policy says."""
        return self._finish(self._offline(url, as_server(server), message), None)

    def vet_destination(self, url: str, depth: int) -> Verdict:
        """The offline verdict on the URL a link forwards to, ``depth`` redirects in.

        For the redirect rules (UV213, UV214): the destination is judged on its own, with no
        server (how the link relates to the server is judged on the link), and without DNS.
        """
        return self._finish(self._offline(url, None, None, depth), None)

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
        ctx = CheckContext(
            settings=compiled.settings,
            server=server,
            raw=raw,
            parse_error=parse_error,
            message=message,
            destinations=self if hops < MAX_REDIRECT_HOPS else None,
            hops=hops,
        )
        findings: list[Finding] = []
        severities = compiled.severities
        for rule in compiled.rules_raw:
            for hit in rule.check(parsed, ctx):
                findings.append(_finding(rule, hit, severities.get(rule.code)))
        if parsed is not None:
            for rule in self._url_rules[parsed.host_kind, server is not None]:
                for hit in rule.check(parsed, ctx):
                    findings.append(_finding(rule, hit, severities.get(rule.code)))
        if message:
            for rule in compiled.rules_message:
                for hit in rule.check(parsed, ctx):
                    findings.append(_finding(rule, hit, severities.get(rule.code)))
        return _Offline(raw, parsed, ctx, findings)

    def _wants_dns(self, state: _Offline) -> bool:
        url = state.url
        if (
            url is None
            or url.host_kind is not HostKind.DOMAIN
            or url.scheme not in ("http", "https")
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

    def _finish(self, state: _Offline, resolution: Resolution | None) -> Verdict:
        findings = state.findings
        if resolution is not None:
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
                    findings.append(_finding(rule, hit, severities.get(rule.code)))
        if len(findings) > 1:
            findings.sort(key=_order)
        decision = self._compiled.decide([f.severity for f in findings])
        url = state.url
        server = state.ctx.server
        verdict: Verdict = _validate_verdict(
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
            }
        )
        return verdict


# The models' own validators, called directly: the validation Verdict(...) and Finding(...) run,
# without BaseModel.__init__'s keyword handling around it (a third of the cost of building
# them, paid for every URL).
_validate_verdict = Verdict.__pydantic_validator__.validate_python
_validate_finding = Finding.__pydantic_validator__.validate_python


def _finding(rule: Rule, hit: Hit, override: Severity | None) -> Finding:
    finding: Finding = _validate_finding(
        {
            "code": rule.code,
            "name": rule.name,
            "severity": override or hit.severity or rule.severity,
            "message": hit.message,
            "evidence": dict(hit.evidence),
            "cwe": rule.cwe,
        }
    )
    return finding


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
