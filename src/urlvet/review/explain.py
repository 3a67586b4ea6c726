"""Why a verdict came out as it did: for each finding, which policy file, line and key set its
severity or listed what matched; which findings the policy ignored or allowed away; and which
threshold turned the findings into the decision.

Lines come from the policy files as written (``extends`` chain included, the file that wins
named); what no file sets is the built-in default.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from urlvet.checks import registry
from urlvet.checks.addresses import in_any
from urlvet.checks.base import allowed_domain, host_matches
from urlvet.errors import UrlvetError
from urlvet.feeds import url_key
from urlvet.findings import Decision, Finding, Severity, Verdict
from urlvet.policy import FEED_KEYS, Policy, policy_sources
from urlvet.server import Server
from urlvet.url import normalize_domain, parse

_DNS_FAILURE_CODES = frozenset({"UV222", "UV223", "UV224", "UV225"})


@dataclass(frozen=True)
class FindingWhy:
    """Why one finding has its severity, and what in the policy it matched."""

    code: str
    severity: str
    """What set the severity, in words."""
    matched: tuple[str, ...] = ()
    """Policy entries the finding matched (a blocked domain, a feed line), in words."""

    def to_json_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"code": self.code, "severity": self.severity, "matched": list(self.matched)}


@dataclass(frozen=True)
class Explanation:
    """The reasons behind one verdict."""

    findings: tuple[FindingWhy, ...]
    decision: str
    """Which threshold made the decision, in words."""
    ignored: tuple[str, ...] = ()
    """Findings the policy's select/ignore turned off, each with the key that did."""
    allowed: tuple[str, ...] = ()
    """Findings the policy's allowed domains and networks lifted, each with the entry."""

    def lines(self) -> list[str]:
        """The explanation as indented lines for a terminal."""
        out = []
        for why in self.findings:
            out.append(f"    {why.code}: {why.severity}")
            out.extend(f"    {why.code}: {m}" for m in why.matched)
        out.extend(f"    ignored: {i}" for i in self.ignored)
        out.extend(f"    allowed: {a}" for a in self.allowed)
        out.append(f"    decision: {self.decision}")
        return out

    def to_json_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "findings": [w.to_json_dict() for w in self.findings],
            "decision": self.decision,
            "ignored": list(self.ignored),
            "allowed": list(self.allowed),
        }


@dataclass
class Explainer:
    """Explains verdicts of one policy (built from ``policy_path`` when there is a file)."""

    policy: Policy
    policy_path: str | None = None
    cli_select: Sequence[str] = ()
    cli_ignore: Sequence[str] = ()
    _sources: list[Any] = field(default_factory=list, init=False, repr=False)
    _vetters: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.policy_path:
            self._sources = policy_sources(self.policy_path)

    # -- where things are set -----------------------------------------------------------------

    def where(self, *key: str) -> str | None:
        """``file:line`` of the file that sets ``key`` (the child wins), or None."""
        for src in self._sources:
            line = src.lines.get(tuple(key))
            if line is not None:
                return f"{src.path}:{line}"
        return None

    def where_item(self, key: tuple[str, ...], match: Callable[[Any], bool]) -> str | None:
        """``file:line`` of the first item of list ``key`` that ``match`` accepts, or None."""
        for src in self._sources:
            items: Any = src.data
            for part in key:
                items = items.get(part) if isinstance(items, dict) else None
            if not isinstance(items, list):
                continue
            for i, item in enumerate(items):
                try:
                    hit = match(item)
                except (ValueError, TypeError, AttributeError, KeyError, UrlvetError):
                    hit = False  # an item written otherwise than this key expects
                if hit:
                    line = src.lines.get((*key, str(i)), src.lines.get(key, 1))
                    return f"{src.path}:{line}"
        return None

    def _setting(self, label: str, *key: str) -> str:
        where = self.where(*key)
        return f"{label} ({where})" if where else f"{label} (built-in default)"

    # -- the explanation ----------------------------------------------------------------------

    def explain(
        self, verdict: Verdict, server: Server | None = None, message: str | None = None
    ) -> Explanation:
        """Why ``verdict`` (vetted under this policy) is what it is."""
        whys = tuple(self._finding(f, verdict) for f in verdict.findings)
        return Explanation(
            findings=whys,
            decision=self._decision(verdict),
            ignored=self._ignored(verdict, server, message),
            allowed=self._allowed(verdict, server, message),
        )

    def _finding(self, finding: Finding, verdict: Verdict) -> FindingWhy:
        return FindingWhy(
            finding.code, self._severity(finding), tuple(self._matched(finding, verdict))
        )

    def _severity(self, finding: Finding) -> str:
        policy = self.policy
        rule = registry.get(finding.code)
        sev = finding.severity.value
        keys = [k for k in policy.severity if finding.code in registry.expand(k)]
        if keys:
            return "severity " + self._setting(
                f"{sev}, set by severity.{keys[-1]}", "severity", keys[-1]
            )
        if finding.code in _DNS_FAILURE_CODES and policy.dns.failure_severity is not None:
            return "severity " + self._setting(
                f"{sev}, set by dns.failure_severity", "dns", "failure_severity"
            )
        if rule is not None and finding.severity is not rule.severity:
            return (
                f"severity {sev}, this finding's own (the rule's default is {rule.severity.value})"
            )
        return f"severity {sev}, the rule's default"

    def _matched(self, finding: Finding, verdict: Verdict) -> list[str]:
        evidence = finding.evidence
        out = []
        listed = [evidence, *[e for e in evidence.get("flagged", []) if isinstance(e, dict)]]
        for ev in listed:
            if "list" in ev and "line" in ev:
                out.append(self._feed_line(ev))
        if out:
            return out
        code = finding.code
        if code == "UV208" and "domain" in evidence:
            domain = str(evidence["domain"])
            where = self.where_item(
                ("domains", "blocked"), lambda item: normalize_domain(str(item)) == domain
            )
            out.append(f"domains.blocked lists {domain} ({where or 'set in code'})")
        elif code in ("UV207", "UV220"):
            networks = {str(evidence["network"])} if "network" in evidence else set()
            networks |= {
                str(e["network"])
                for e in evidence.get("flagged", [])
                if isinstance(e, dict) and e.get("category") == "blocked-by-policy"
            }
            for net in sorted(networks):
                wanted = ipaddress.ip_network(net, strict=False)
                where = self.where_item(("networks", "blocked"), _same_network(wanted))
                if where:
                    out.append(f"networks.blocked lists {net} ({where})")
        elif code == "UV211" and verdict.href:
            key = url_key(verdict.href)
            where = self.where_item(
                ("urls", "blocked"), lambda item: url_key(parse(str(item).strip()).href) == key
            )
            out.append(f"urls.blocked lists this URL ({where or 'set in code'})")
        elif code == "UV405" and verdict.server:
            for name in self.policy.servers:
                where = self.where("servers", name)
                if where:
                    out.append(f"servers.{name}.domains ({where})")
        return out

    def _feed_line(self, evidence: dict[str, Any]) -> str:
        name = str(evidence["list"])
        declared = None
        for section, key in FEED_KEYS:
            where = self.where_item(
                (section, key),
                lambda item: (
                    (item if isinstance(item, str) else item.get("name") or item["path"]) == name
                ),
            )
            if where:
                declared = f"{section}.{key} ({where})"
                break
        text = f"listed on line {evidence['line']} of {evidence.get('file', name)}"
        return text + (f", a feed named by {declared}" if declared else "")

    def _decision(self, verdict: Verdict) -> str:
        thresholds = self.policy.thresholds
        block = self._setting(f"thresholds.block = {thresholds.block.value}", "thresholds", "block")
        warn = self._setting(f"thresholds.warn = {thresholds.warn.value}", "thresholds", "warn")
        if not verdict.findings:
            return "allow: no findings"
        top: Severity = max((f.severity for f in verdict.findings), key=lambda s: s.rank)
        if verdict.decision is Decision.BLOCK:
            return f"block: the most serious finding is {top.value}, at or above {block}"
        if verdict.decision is Decision.WARN:
            return (
                f"warn: the most serious finding is {top.value}, at or above {warn}, below {block}"
            )
        return f"allow: the most serious finding is {top.value}, below {warn}"

    # -- what the policy turned off -------------------------------------------------------------

    def _variant(self, name: str, changes: dict[str, Any]) -> Any:
        from urlvet.engine import Vetter

        if name not in self._vetters:
            self._vetters[name] = Vetter(self.policy.with_changes(**changes))
        return self._vetters[name]

    def _extra(
        self,
        name: str,
        changes: dict[str, Any],
        verdict: Verdict,
        server: Server | None,
        message: str | None,
    ) -> list[Finding]:
        other = self._variant(name, changes).vet_offline(verdict.url, server, message=message)
        present = set(verdict.codes)
        return [f for f in other.findings if f.code not in present]

    def _ignored(
        self, verdict: Verdict, server: Server | None, message: str | None
    ) -> tuple[str, ...]:
        policy = self.policy
        if policy.ignore == [] and set(policy.select) == {"UV"}:
            return ()
        out = []
        for f in self._extra(
            "all-rules", {"select": ["UV"], "ignore": []}, verdict, server, message
        ):
            selected = any(f.code in registry.expand(s) for s in policy.select)
            if not selected:
                if list(self.cli_select):
                    why = f"--select {','.join(self.cli_select)} on the command line"
                else:
                    why = self._setting(f"select: {', '.join(policy.select)}", "select")
            else:
                keys = [k for k in policy.ignore if f.code in registry.expand(k)]
                key = keys[0] if keys else "?"
                where = self.where_item(("ignore",), _same_text(key))
                if where:
                    why = f"ignore: {key} ({where})"
                elif key in self.cli_ignore:
                    why = f"--ignore {key} on the command line"
                else:
                    why = f"ignore: {key}"
            out.append(f"{f.code} {f.name} [{f.severity.value}] would fire; turned off by {why}")
        return tuple(out)

    def _allowed(
        self, verdict: Verdict, server: Server | None, message: str | None
    ) -> tuple[str, ...]:
        policy = self.policy
        if not (policy.domains.allowed or policy.domains.allowed_files or policy.networks.allowed):
            return ()
        domains = policy.domains.model_dump(mode="json") | {"allowed": [], "allowed_files": []}
        networks = policy.networks.model_dump(mode="json") | {"allowed": []}
        extra = self._extra(
            "no-allowed", {"domains": domains, "networks": networks}, verdict, server, message
        )
        if not extra:
            return ()
        reason = self._allowed_entry(verdict)
        return tuple(
            f"{f.code} {f.name} [{f.severity.value}] would fire; lifted by {reason}" for f in extra
        )

    def _allowed_entry(self, verdict: Verdict) -> str:
        settings = self.policy.compiled.settings
        host = verdict.host or ""
        if verdict.host_kind == "domain" and host:
            inline = host_matches(host, settings.allowed_domains)
            listed = settings.allowed_domain_feeds.match_domain(host)
            if listed is not None and (inline is None or len(listed.entry) > len(inline)):
                return f"{listed.entry}, {self._feed_line({'list': listed.list_name, 'line': listed.line, 'file': listed.path})}"
            if inline is not None:
                where = self.where_item(
                    ("domains", "allowed"), lambda item: normalize_domain(str(item)) == inline
                )
                return f"domains.allowed {inline} ({where or 'set in code'})"
            found = allowed_domain(host, settings)
            if found:
                return f"the allowed domain {found}"
        if verdict.host_kind in ("ipv4", "ipv6") and host:
            net = in_any(ipaddress.ip_address(host), settings.allowed_networks)
            if net is not None:
                where = self.where_item(
                    ("networks", "allowed"),
                    lambda item: ipaddress.ip_network(str(item), strict=False) == net,
                )
                return f"networks.allowed {net} ({where or 'set in code'})"
        return "the policy's allowed domains and networks"


def _same_network(wanted: ipaddress.IPv4Network | ipaddress.IPv6Network) -> Callable[[Any], bool]:
    return lambda item: ipaddress.ip_network(str(item), strict=False) == wanted


def _same_text(wanted: str) -> Callable[[Any], bool]:
    return lambda item: str(item) == wanted
