"""The results urlvet produces: severities, decisions, findings and verdicts.

Everything here is a frozen value. A verdict is data; the CLI output, SARIF and the consent
screen are only renderings of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any, NoReturn, SupportsIndex

from pydantic import BaseModel, ConfigDict, Field, field_validator


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


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(
        f"a finding's evidence is immutable ({type(self).__name__}): verdicts are shared "
        "between callers; copy it (dict(evidence)) to change it"
    )


class FrozenEvidence(dict[str, Any]):
    """A finding's evidence: a dict that cannot be changed, its lists and dicts frozen too.

    A dict rather than a ``types.MappingProxyType``: the JSON encoders, pydantic's
    serialisation and callers that test ``isinstance(evidence, dict)`` take it as it is, and
    it equals the plain dict of the same items. Every method that would change it raises
    TypeError: a verdict, its findings and their evidence are shared by the engine's caches
    and handed to every caller that asks about the same URL."""

    __slots__ = ("json_as_written", "json_redacted")
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse
    __ior__ = _refuse

    json_as_written: str
    """Its JSON, once a writer made it (the evidence never changes, so neither does it)."""
    json_redacted: str
    """Its JSON with credentials redacted (what secrets its own strings show), once made."""

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its items (pool and Spark workers send findings back): the default for
        # a dict subclass would fill it through __setitem__.
        return (FrozenEvidence, (dict(self),))


class FrozenList(list[Any]):
    """A list inside a finding's evidence that cannot be changed (see :class:`FrozenEvidence`);
    it equals the plain list of the same items."""

    __slots__ = ()
    __setitem__ = __delitem__ = append = extend = insert = remove = _refuse
    clear = sort = reverse = __iadd__ = __imul__ = _refuse

    def pop(self, index: SupportsIndex = -1) -> NoReturn:
        """Refused: the list is immutable."""
        _refuse(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))


def frozen_evidence(evidence: Mapping[str, Any]) -> FrozenEvidence:
    """``evidence`` as a :class:`FrozenEvidence`, every dict and list inside it frozen too."""
    if type(evidence) is FrozenEvidence:
        return evidence
    return FrozenEvidence({key: _frozen(value) for key, value in evidence.items()})


def _frozen(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, Mapping):
        return frozen_evidence(value)
    if isinstance(value, list | tuple):
        items: Iterable[Any] = (_frozen(v) for v in value)
        return tuple(items) if isinstance(value, tuple) else FrozenList(items)
    return value


class Finding(BaseModel):
    """One rule that fired on one URL."""

    model_config = ConfigDict(frozen=True)

    code: str = Field(description="Stable rule code, such as UV201.")
    name: str = Field(description="Stable rule name, such as non-public-address-literal.")
    severity: Severity = Field(description="Severity after the policy's overrides.")
    message: str = Field(description="Plain-language explanation for a person.")
    evidence: FrozenEvidence = Field(
        default_factory=FrozenEvidence,
        description="Machine-readable facts the rule relied on (immutable: shared verdicts "
        "hand out the same evidence).",
        json_schema_extra={"type": "object", "additionalProperties": True},
    )
    cwe: int | None = Field(default=None, description="The CWE the rule maps to, where one fits.")

    @field_validator("evidence", mode="plain")
    @classmethod
    def _freeze_evidence(cls, value: Any) -> FrozenEvidence:
        if not isinstance(value, Mapping):
            raise ValueError("evidence must be a mapping of names to values")
        return frozen_evidence(value)


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
