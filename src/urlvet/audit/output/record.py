"""A verdict reduced to what reports need, computed once per distinct URL and cached.

Bulk audits see the same URL many times. Turning a :class:`~urlvet.findings.Verdict` into
JSON, redacting its secrets and hashing its fingerprints costs more than looking the result
up, so a :class:`Record` holds all of that ready-made, and writers only add the location of
each occurrence. Records are plain slotted values: cheap to keep in an LRU cache and to send
back from worker processes.
"""

from __future__ import annotations

import hashlib
import json
from enum import Enum
from functools import lru_cache
from json.encoder import encode_basestring_ascii
from typing import Any, NamedTuple

from urlvet.audit.output.redact import redact, redact_data, secrets_in
from urlvet.findings import Decision, Finding, FrozenEvidence, Severity, Verdict
from urlvet.memo import memo_size


class FindingRow(NamedTuple):
    """One finding, as reports show it (message already redacted)."""

    code: str
    """The rule code, such as UV201."""
    name: str
    """The rule name, such as non-public-address-literal."""
    severity: Severity
    """The severity after the policy's overrides."""
    message: str
    """The plain-language message, secrets redacted."""
    cwe: int | None
    """The CWE the rule maps to, if any."""


class Record(NamedTuple):
    """The verdict on one distinct (URL, server, message), ready for every output format.

    A named tuple: immutable, cheap to build and to pickle. Writers that group by record
    key on the record itself, compared by value, never on an object's identity.
    """

    decision: Decision
    """allow, warn or block."""
    findings: tuple[FindingRow, ...]
    """The findings, most serious first."""
    url: str
    """The URL as given, secrets redacted."""
    href: str | None
    """The URL as a browser opens it (WHATWG), secrets redacted; None when unparseable."""
    server: str | None
    """The server that asked, as a label."""
    json: str
    """The verdict's JSON members (redacted), without the surrounding braces; '' when the
    record was made without JSON."""
    top_rank: int
    """The highest severity rank among the findings; -1 when there are none."""
    codes: tuple[str, ...]
    """The rule codes of the findings, in order."""
    normalised_url: str
    """What fingerprints hash: the href (or the URL as given when it does not parse) with
    its secrets redacted, whether or not the report shows them: a rotated token does not
    make a finding new, and a baseline does not depend on --show-secrets."""


def record_from_verdict(
    verdict: Verdict, *, redact_secrets: bool = True, with_json: bool = True
) -> Record:
    """The record of a verdict; with ``redact_secrets`` (the default) secrets are masked.

    ``with_json=False`` leaves :attr:`Record.json` empty: text, SARIF and annotations do not
    need it. ``with_json=True`` (for the JSON writers) keeps the messages in the JSON only,
    so :attr:`FindingRow.message` is empty there.
    """
    facts = verdict.__dict__  # the fields, read without a descriptor each
    url: str = facts["url"]
    href: str | None = facts["href"]
    findings: tuple[Finding, ...] = facts["findings"]
    # Only text with '=' or '@' can carry a query secret or userinfo; the secrets found in
    # the URL are also masked where a message quotes them.
    secrets: set[str] = _NONE
    if redact_secrets:
        if "=" in url or "@" in url:
            secrets = secrets_in(url)
        if href is not None and href != url and ("=" in href or "@" in href):
            secrets = secrets | secrets_in(href)
        if secrets:
            url = redact(url, secrets)
            href = redact(href, secrets) if href is not None else None
    normalised = href if href is not None else url
    if not redact_secrets and ("=" in normalised or "@" in normalised):
        normalised = redact(normalised, secrets_in(normalised))
    if not findings:  # most records: nothing to redact in messages, no rows
        body = _verdict_json(facts, url, href, [], None) if with_json else ""
        return Record(facts["decision"], (), url, href, facts["server"], body, -1, (), normalised)
    messages = [
        redact(f.message, secrets)
        if redact_secrets and (secrets or _may_hold_secrets(f.message))
        else f.message
        for f in findings
    ]
    body = ""
    if with_json:
        body = _verdict_json(facts, url, href, messages, secrets if redact_secrets else None)
        # The messages now live in the JSON; the JSON writer needs them nowhere else, and a
        # cached record is smaller without a second copy.
        rows = tuple([_row_without_message(f.code, f.name, f.severity, f.cwe) for f in findings])
    else:
        rows = tuple(
            [
                FindingRow(f.code, f.name, f.severity, message, f.cwe)
                for f, message in zip(findings, messages, strict=True)
            ]
        )
    return Record(
        facts["decision"],
        rows,
        url,
        href,
        facts["server"],
        body,
        max([f.severity.rank for f in findings]),
        tuple([f.code for f in findings]),
        normalised,
    )


_NONE: set[str] = set()
"""No secrets (never added to: every union makes a new set)."""


@lru_cache(maxsize=memo_size(1024))
def _row_without_message(code: str, name: str, severity: Severity, cwe: int | None) -> FindingRow:
    """The row of a finding whose message lives in the JSON: the same few for every record."""
    return FindingRow(code, name, severity, "", cwe)


def _verdict_json(
    facts: dict[str, Any],
    url: str,
    href: str | None,
    messages: list[str],
    secrets: set[str] | None,
) -> str:
    """The members of ``verdict.to_json_dict()``, as JSON without the braces.

    Built from the fields directly, as ``json.dumps`` writes them: pydantic's dump costs more
    than the rest of the record, and so does ``json.dumps`` of the whole. A test keeps the
    two equal.
    """
    tls = facts["tls"]
    members = _host_json(
        facts["host"],
        facts["host_unicode"],
        facts["host_kind"],
        facts["registrable_domain"],
        facts["server"],
    )
    findings = facts["findings"]
    url_json = encode_basestring_ascii(url)
    # The href is the URL as given for most URLs (a browser changes nothing): written once.
    href_json = url_json if href == url else _json_text(href)
    return (
        f'"url":{url_json},"href":{href_json}'
        f',"decision":"{facts["decision"]._value_}"'
        f',"findings":{_findings_json(findings, messages, secrets) if findings else "[]"}'
        f'{members},"tls":{"null" if tls is None else _json_value(tls.model_dump(mode="json"))}'
    )


HOST_JSON_KEPT = 16_384
"""Hosts (with their server) whose JSON members :func:`_host_json` keeps: a log's URLs come
back to the same hosts again and again, and these members are written for every one."""


@lru_cache(maxsize=memo_size(HOST_JSON_KEPT))
def _host_json(
    host: str | None,
    host_unicode: str | None,
    host_kind: str | None,
    registrable_domain: str | None,
    server: str | None,
) -> str:
    """The JSON members of a verdict that are facts of its host and its server, kept: a
    pure function of its arguments."""
    return (
        f',"host":{_json_text(host)},"host_unicode":{_json_text(host_unicode)}'
        f',"host_kind":{_json_text(host_kind)}'
        f',"registrable_domain":{_json_text(registrable_domain)}'
        f',"server":{_json_text(server)}'
    )


def _findings_json(
    findings: tuple[Finding, ...],
    messages: list[str],
    secrets: set[str] | frozenset[str] | None,
) -> str:
    """The JSON array of ``findings`` with these ``messages``; the evidence redacted with
    ``secrets`` (None: not redacted)."""
    if not findings:
        return "[]"
    enc = encode_basestring_ascii
    items = []
    for f, message in zip(findings, messages, strict=True):
        items.append(
            f"{_finding_head(f.code, f.name, f.severity)}{enc(message)}"
            f',"evidence":{_evidence_json(f.evidence, secrets)}{_finding_tail(f.cwe)}'
        )
    return "[" + ",".join(items) + "]"


@lru_cache(maxsize=memo_size(1024))
def _finding_head(code: str, name: str, severity: Severity) -> str:
    """A finding's JSON up to its message: the same few for every record."""
    enc = encode_basestring_ascii
    return f'{{"code":{enc(code)},"name":{enc(name)},"severity":"{severity._value_}","message":'


def _finding_tail(cwe: int | None) -> str:
    return ',"cwe":null}' if cwe is None else f',"cwe":{int(cwe)}}}'


def _evidence_json(evidence: Any, secrets: set[str] | frozenset[str] | None) -> str:
    """The JSON of a finding's evidence, redacted with ``secrets`` (None: as written). The
    JSON of frozen evidence as written, and redacted of its own secrets only, is kept with
    it: shared findings are written again and again."""
    if not evidence:
        return "{}"
    if type(evidence) is not FrozenEvidence or secrets:
        return _json_value(evidence if secrets is None else redact_data(evidence, secrets))
    kept: FrozenEvidence = evidence
    made: str
    if secrets is None:
        try:
            made = kept.json_as_written
        except AttributeError:
            kept.json_as_written = made = _json_value(kept)
        return made
    try:
        made = kept.json_redacted
    except AttributeError:
        kept.json_redacted = made = _json_value(redact_data(kept, secrets))
    return made


def _json_text(text: str | None) -> str:
    return "null" if text is None else encode_basestring_ascii(text)


def _json_value(value: Any) -> str:
    return _ENCODER.encode(value)


def _json_default(value: Any) -> Any:
    # What pydantic's JSON mode does for the few non-JSON types evidence may hold.
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)


_ENCODER = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), default=_json_default)
"""What ``json.dumps`` with these options uses, made once."""


def _may_hold_secrets(text: str | None) -> bool:
    return text is not None and ("=" in text or "@" in text)


def partial_fingerprint(code: str, normalised_url: str) -> str:
    """The fingerprint of a finding on a URL, wherever and on whatever line it stands."""
    return hashlib.sha256(f"{code}\0{normalised_url}".encode()).hexdigest()[:32]
