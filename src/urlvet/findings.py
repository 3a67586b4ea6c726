"""The results urlvet produces: severities, decisions, findings and verdicts.

Everything here is a frozen value. A verdict is data; the CLI output, SARIF and the consent
screen are only renderings of it.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Severity(str, Enum):
    """How serious a finding is. The policy turns severities into a decision."""

    INFO = "info"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        """0 for info up to 4 for critical, for comparisons."""
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {s: i for i, s in enumerate(Severity)}


class Decision(str, Enum):
    """What a client should do with the URL."""

    ALLOW = "allow"
    WARN = "warn"
    BLOCK = "block"

    @property
    def rank(self) -> int:
        """0 allow, 1 warn, 2 block."""
        return _DECISION_RANK[self]


_DECISION_RANK = {d: i for i, d in enumerate(Decision)}


class Finding(BaseModel):
    """One rule that fired on one URL."""

    model_config = ConfigDict(frozen=True)

    code: str = Field(description="Stable rule code, such as UV201.")
    name: str = Field(description="Stable rule name, such as non-public-address-literal.")
    severity: Severity = Field(description="Severity after the policy's overrides.")
    message: str = Field(description="Plain-language explanation for a person.")
    evidence: dict[str, Any] = Field(
        default_factory=dict, description="Machine-readable facts the rule relied on."
    )
    cwe: int | None = Field(default=None, description="The CWE the rule maps to, where one fits.")


class TlsFacts(BaseModel):
    """What the TLS handshake probe found at the host: the certificate a browser would see."""

    model_config = ConfigDict(frozen=True)

    address: str = Field(description="The IP address the probe connected to.")
    port: int = Field(description="The TCP port.")
    host: str = Field(description="The host the certificate must cover (sent as SNI).")
    status: str = Field(
        description="ok (handshake done, chain verified), untrusted, failed or timeout."
    )
    version: str | None = Field(
        default=None, description="The negotiated protocol version, such as TLSv1.3."
    )
    issuer: str | None = Field(
        default=None, description="The issuer's organisation (or common name)."
    )
    subject: str | None = Field(default=None, description="The subject's common name.")
    names: tuple[str, ...] = Field(
        default=(), description="The names and addresses the certificate covers."
    )
    valid_from: str | None = Field(default=None, description="Valid from, ISO 8601 UTC.")
    valid_to: str | None = Field(default=None, description="Valid to, ISO 8601 UTC.")
    detail: str | None = Field(default=None, description="Why the probe failed, when it did.")


class Verdict(BaseModel):
    """The decision on one URL asked for by one server, with the findings behind it."""

    model_config = ConfigDict(frozen=True)

    url: str = Field(description="The URL exactly as it was given.")
    href: str | None = Field(
        description="The URL as a browser will open it (WHATWG); None when it cannot be parsed."
    )
    decision: Decision = Field(description="allow, warn or block.")
    findings: tuple[Finding, ...] = Field(
        default=(), description="Findings, most serious first, then by code."
    )
    host: str | None = Field(default=None, description="The host in A-label (punycode) form.")
    host_unicode: str | None = Field(default=None, description="The host in U-label form.")
    host_kind: str | None = Field(default=None, description="domain, ipv4, ipv6, opaque or empty.")
    registrable_domain: str | None = Field(
        default=None, description="The site (eTLD+1, PSL private section included), A-label."
    )
    server: str | None = Field(default=None, description="The server that asked, as configured.")
    tls: TlsFacts | None = Field(
        default=None,
        description="What the TLS handshake probe found, when one ran (off by default).",
    )

    @property
    def codes(self) -> tuple[str, ...]:
        """The rule codes of the findings, in order."""
        return tuple(f.code for f in self.findings)

    def to_json_dict(self) -> dict[str, Any]:
        """A plain JSON-ready dict (enums as strings)."""
        return self.model_dump(mode="json")
