"""How the engine builds findings and verdicts: from values it made itself, without
pydantic's validation round-trip (a test compares them with validated ones)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from urlvet.checks.base import Hit, Rule
from urlvet.findings import Decision, Finding, Severity, Verdict, frozen_evidence

if TYPE_CHECKING:
    from urlvet.tls import Probe
    from urlvet.url import ParsedURL

# One set of field names for every verdict the engine builds, as for findings (below): the
# model is frozen, so pydantic never adds to it (a copy gets a set of its own).
_VERDICT_FIELDS: set[str] = set(Verdict.model_fields)
# The model's slots, set through their own descriptors: object.__setattr__ looks each up.
_SET_DICT = object.__setattr__
_SET_FIELDS_SET = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_SET_EXTRA = BaseModel.__dict__["__pydantic_extra__"].__set__
_SET_PRIVATE = BaseModel.__dict__["__pydantic_private__"].__set__


def built_verdict(values: dict[str, Any]) -> Verdict:
    """A Verdict of ``values``, every field given with a value of its declared type (the
    engine built them: text, a Decision, a tuple of Findings, None for the TLS facts), set as
    pydantic's validation would set them but without the validation round-trip, a good part of
    the cost of a verdict (a test compares the two)."""
    verdict: Verdict = object.__new__(Verdict)
    _SET_DICT(verdict, "__dict__", values)
    _SET_FIELDS_SET(verdict, _VERDICT_FIELDS)
    _SET_EXTRA(verdict, None)
    _SET_PRIVATE(verdict, None)
    return verdict


# The model's own validator, called directly (the validation Verdict(...) runs, without
# BaseModel.__init__'s keyword handling around it): for the one verdict with TLS facts.
validate_verdict = Verdict.__pydantic_validator__.validate_python


# One set of field names for every finding the engine builds: each of its own would cost
# about 250 bytes, and findings are kept by the thousand (in the memos). The
# model is frozen, so pydantic never adds to the set (a copy gets a set of its own); the set
# is compared by value, so these findings equal validated ones.
_FINDING_FIELDS: set[str] = set(Finding.model_fields)


def finding_of(rule: Rule, hit: Hit, override: Severity | None) -> Finding:
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
    _SET_FIELDS_SET(finding, _FINDING_FIELDS)
    _SET_EXTRA(finding, None)
    _SET_PRIVATE(finding, None)
    return finding


def tls_facts(probe: Probe) -> dict[str, Any]:
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


def order(f: Finding) -> tuple[int, str]:
    return (-f.severity.rank, f.code)


def as_text(url: Any) -> tuple[str, str | None]:
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


def verdict_of(
    raw: str,
    url: ParsedURL | None,
    decision: Decision,
    findings: tuple[Finding, ...],
    server: str | None,
    probe: Probe | None,
) -> Verdict:
    """The verdict on ``raw`` (parsed as ``url``), from values the engine made."""
    # The TLS facts are the one value given as a dict (the model makes TlsFacts of it):
    # without them every value is already of its field's type.
    build = validate_verdict if probe is not None else built_verdict
    verdict: Verdict = build(
        {
            "url": raw,
            "href": url.href if url is not None else None,
            "decision": decision,
            "findings": findings,
            "host": url.host if url is not None and url.host else None,
            "host_unicode": url.host_unicode if url is not None and url.host else None,
            "host_kind": url.host_kind.value if url is not None else None,
            "registrable_domain": url.registrable_domain if url is not None else None,
            "server": server,
            "tls": tls_facts(probe) if probe is not None else None,
        }
    )
    return verdict
