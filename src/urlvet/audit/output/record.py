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
from json.encoder import encode_basestring_ascii
from typing import TYPE_CHECKING, Any, NamedTuple

from urlvet.audit.output.redact import redact, redact_data, secrets_in, tail_may_hold_secrets
from urlvet.findings import Decision, Finding, Severity, Verdict

if TYPE_CHECKING:
    from urlvet.engine import PlainShape


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
    key on ``id(record)`` while they hold it, not on its (long) value.
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
    url, href = verdict.url, verdict.href
    # Only text with '=' or '@' can carry a query secret or userinfo; the secrets found in
    # the URL are also masked where a message quotes them.
    secrets: set[str] = set()
    if redact_secrets:
        if _may_hold_secrets(url):
            secrets = secrets_in(url)
        if _may_hold_secrets(href) and href != url:
            secrets |= secrets_in(href)  # type: ignore[arg-type]
    redacting = bool(secrets)
    if redacting:
        url = redact(url, secrets)
        href = redact(href, secrets) if href is not None else None
    rows = tuple(
        FindingRow(f.code, f.name, f.severity, redact(f.message, secrets), f.cwe)
        if redact_secrets and (redacting or _may_hold_secrets(f.message))
        else FindingRow(f.code, f.name, f.severity, f.message, f.cwe)
        for f in verdict.findings
    )
    normalised = href if href is not None else url
    if not redact_secrets and _may_hold_secrets(normalised):
        normalised = redact(normalised, secrets_in(normalised))
    body = ""
    if with_json:
        body = _verdict_json(verdict, url, href, rows, secrets if redact_secrets else None)
        # The messages now live in the JSON; the JSON writer needs them nowhere else, and a
        # cached record is smaller without a second copy.
        rows = tuple(r._replace(message="") for r in rows)
    return Record(
        decision=verdict.decision,
        findings=rows,
        url=url,
        href=href,
        server=verdict.server,
        json=body,
        top_rank=max([r.severity.rank for r in rows]) if rows else -1,
        codes=tuple([r.code for r in rows]),
        normalised_url=normalised,
    )


def _verdict_json(
    verdict: Verdict,
    url: str,
    href: str | None,
    rows: tuple[FindingRow, ...],
    secrets: set[str] | None,
) -> str:
    """The members of ``verdict.to_json_dict()``, as JSON without the braces.

    Built from the fields directly, as ``json.dumps`` writes them: pydantic's dump costs more
    than the rest of the record, and so does ``json.dumps`` of the whole. A test keeps the
    two equal.
    """
    tls = verdict.tls
    return (
        f'"url":{encode_basestring_ascii(url)},"href":{_json_text(href)}'
        f',"decision":"{verdict.decision.value}"'
        f',"findings":{_findings_json(verdict.findings, rows, secrets)}'
        f',"host":{_json_text(verdict.host)},"host_unicode":{_json_text(verdict.host_unicode)}'
        f',"host_kind":{_json_text(verdict.host_kind)}'
        f',"registrable_domain":{_json_text(verdict.registrable_domain)}'
        f',"server":{_json_text(verdict.server)}'
        f',"tls":{"null" if tls is None else _json_value(tls.model_dump(mode="json"))}'
    )


def _findings_json(
    findings: tuple[Finding, ...],
    rows: tuple[FindingRow, ...],
    secrets: set[str] | frozenset[str] | None,
) -> str:
    """The JSON array of ``findings``, their messages those of ``rows``; the evidence redacted
    with ``secrets`` (None: not redacted)."""
    if not findings:
        return "[]"
    enc = encode_basestring_ascii
    items = []
    for f, row in zip(findings, rows, strict=True):
        evidence: Any = f.evidence
        if secrets is not None and evidence:
            evidence = redact_data(evidence, secrets)
        cwe = f.cwe
        items.append(
            f'{{"code":{enc(f.code)},"name":{enc(f.name)},"severity":"{f.severity.value}"'
            f',"message":{enc(row.message)}'
            f',"evidence":{_json_value(evidence) if evidence else "{}"}'
            f',"cwe":{"null" if cwe is None else int(cwe)}}}'
        )
    return "[" + ",".join(items) + "]"


def _json_text(text: str | None) -> str:
    return "null" if text is None else encode_basestring_ascii(text)


def _json_value(value: Any) -> str:
    return _ENCODER.encode(value)


class RecordTemplate(NamedTuple):
    """The record of a plain URL's shape (:class:`urlvet.engine.PlainShape`), into which the
    records of every plain URL of that shape are cut: the same decision, findings, codes and
    JSON members but for the URL and href. Only for a shape with no secret in its head; a
    URL with a secret of its own gets a record of its own (:func:`record_from_verdict`).

    An audit keeps one for each of tens of thousands of shapes: its parts are the shape's
    own strings or strings that many templates share."""

    shape: PlainShape
    """The shape."""
    base: Record
    """The record of every URL of the shape but for its URL, href and JSON (shared)."""
    head_json: str
    """The shape's head as JSON writes it between quotes (the head itself when JSON writes
    it as it is, as it writes most); '' when the records are made without JSON."""
    href_head_json: str
    """The shape's href head, likewise."""
    verdict_json: str
    """The closing quote of the href, then the decision and the findings (shared)."""
    host_json: str
    """The JSON members after the findings: the host's, the server and TLS (shared)."""

    def record(self, url: str, tail: str) -> Record:
        """The record of ``url``, a plain URL of this shape that carries no secret, whose
        tail is ``tail``: a plain tail, which JSON writes as it is (it holds no character
        that JSON escapes)."""
        shape, base, head_json, href_head_json, verdict_json, host_json = self
        href = shape.href_head + tail
        body = (
            f'"url":"{head_json}{tail}","href":"{href_head_json}{tail}{verdict_json}{host_json}'
            if verdict_json
            else ""
        )
        decision, findings, _, _, server, _, top_rank, codes, _ = base
        # The tuple built directly: a named tuple's own __new__ is a Python function.
        return _new_tuple(
            Record, (decision, findings, url, href, server, body, top_rank, codes, href)
        )


_new_tuple = tuple.__new__


TEMPLATES = 65_536
"""Plain URL shapes whose record template is kept (as many as the engine keeps shapes), by
head, representative tail and server (:meth:`RecordTemplates.by_head`)."""
SHAPES_KEPT = 4096
"""Shapes whose template (or that they have none) is also kept by the shape itself, for the
URLs that meet a shape before it is kept by head."""
SHARED_PARTS = 16_384
"""Distinct parts that templates share (a base record with the JSON of its findings; the JSON
of a host), at most, of each kind; beyond that a template has parts of its own."""


class RecordTemplates:
    """The record templates of the plain URL shapes that one vetter meets, each made once.

    Made from the shape's values directly, not through :func:`record_from_verdict`: the rows
    and JSON of a tuple of findings are made once for all the shapes that share the tuple
    (the engine gives equal findings one tuple: those on the scheme and the port recur on
    thousands of hosts), the JSON of a host once for its shapes, the rest is a few strings.
    A test compares both ways.
    """

    __slots__ = (
        "_by_head",
        "_by_head_count",
        "_hosts",
        "_templates",
        "_verdicts",
        "redact_secrets",
        "with_json",
    )

    def __init__(self, *, redact_secrets: bool = True, with_json: bool = True) -> None:
        self.redact_secrets = redact_secrets
        self.with_json = with_json
        # Keyed by the shape's identity; the template holds its shape, so that the id stays
        # the shape's. A shape whose URL has a secret is its own entry: no template.
        self._templates: dict[int, RecordTemplate | PlainShape] = {}
        self._verdicts: dict[tuple[Any, ...], tuple[tuple[Finding, ...], Record, str]] = {}
        self._hosts: dict[tuple[str | None, ...], str] = {}
        # (head, representative tail, server as written) -> the template of the shape those
        # give (see by_head): a plain URL's record without asking the engine for its shape.
        # Two levels, so that no key is built for a look-up and a head's key is the head's
        # own string: the representative tail and the server, then the head.
        self._by_head: dict[tuple[str, str | None], dict[str, RecordTemplate]] = {}
        self._by_head_count = 0

    def record(self, url: str, shape: PlainShape, tail: str, server: str | None) -> Record | None:
        """The record of ``url``, a URL of ``shape`` asked for by ``server`` (as written) whose
        tail ``tail`` JSON writes as it is, cut from the shape's template, which is then kept
        for :meth:`by_head`; None when the URL carries a secret (it is then recorded on its
        own, from its verdict)."""
        template = self._templates.get(id(shape))
        if template.__class__ is not RecordTemplate or template.shape is not shape:
            template = self.get(shape)
            if template is None:
                return None
        self._keep_by_head(template, server)
        # The template's head carries no secret, and a plain tail holds no user info: only a
        # parameter of the tail can.
        if tail_may_hold_secrets(tail) and has_secrets(url):
            return None
        return template.record(url, tail)

    def by_head(
        self, url: str, head: str, rep: str, server: str | None, tail: str
    ) -> Record | None:
        """The record of ``url``, a URL of the shape of ``head`` and ``rep`` (the shape's head
        and representative tail) asked for by ``server`` (as written), whose tail ``tail``
        JSON writes as it is (a plain URL's, or one of
        :meth:`urlvet.engine.Vetter.query_shape` on which the query rules find nothing),
        from the template :meth:`record` kept for that head, representative tail and
        server; None when none is kept or the URL carries a secret. The engine gives every
        URL of a head, representative tail and server one shape (its cache keeps the shape
        by those), so this is the record :meth:`record` would cut from it."""
        heads = self._by_head.get((rep, server))
        template = None if heads is None else heads.get(head)
        if template is None or (tail_may_hold_secrets(tail) and has_secrets(url)):
            return None
        return template.record(url, tail)

    def _keep_by_head(self, template: RecordTemplate, server: str | None) -> None:
        """Keep ``template`` (its shape asked for by ``server``, as written) for
        :meth:`by_head`."""
        shape = template.shape
        heads = self._by_head.get((shape.shape, server))
        if heads is not None and heads.get(shape.head) is template:
            return
        if self._by_head_count >= TEMPLATES:  # emptied when full: most audits never are
            self._by_head.clear()
            self._by_head_count = 0
            heads = None
        if heads is None:
            heads = self._by_head[shape.shape, server] = {}
        if shape.head not in heads:
            self._by_head_count += 1
        heads[shape.head] = template

    def get(self, shape: PlainShape) -> RecordTemplate | None:
        """The template of ``shape``; None when its URL carries a secret (a password in the
        head, say: then every URL of the shape is recorded on its own)."""
        found = self._templates.get(id(shape))
        if found is not None:
            if found.__class__ is RecordTemplate:
                if found.shape is shape:
                    return found
            elif found is shape:
                return None
        template = self._make(shape)
        templates = self._templates
        if len(templates) >= SHAPES_KEPT:  # first in, first out
            del templates[next(iter(templates))]
        templates[id(shape)] = shape if template is None else template
        return template

    def _make(self, shape: PlainShape) -> RecordTemplate | None:
        # A URL without a secret is what redaction leaves as it is, so the record of a plain
        # URL with none is the shape's with the URL and href replaced: the findings and
        # evidence are the shape's, and the tail, the only part that differs, can hold no
        # secret of the head (the patterns of urlvet.audit.output.redact never span the
        # head and the tail, which starts with '/').
        head, href_head, rep = shape.head, shape.href_head, shape.shape
        if has_secrets(head + rep) or (href_head is not head and has_secrets(href_head + rep)):
            return None
        base, verdict_json = self._verdict(shape)
        if not self.with_json:
            return RecordTemplate(shape, base, "", "", "", "")
        server = shape.server
        host = shape.host, shape.host_unicode, shape.host_kind, shape.registrable_domain, server
        host_json = self._hosts.get(host)
        if host_json is None:  # as _verdict_json writes them
            host_json = (
                f',"host":{_json_text(shape.host)}'
                f',"host_unicode":{_json_text(shape.host_unicode)}'
                f',"host_kind":{_json_text(shape.host_kind)}'
                f',"registrable_domain":{_json_text(shape.registrable_domain)}'
                f',"server":{_json_text(server)},"tls":null'
            )
            if len(self._hosts) < TEMPLATES:  # most hosts have a few shapes
                self._hosts[host] = host_json
        return RecordTemplate(
            shape, base, _between_quotes(head), _between_quotes(href_head), verdict_json, host_json
        )

    def _verdict(self, shape: PlainShape) -> tuple[Record, str]:
        """The base record and the verdict's JSON of a shape (see :class:`RecordTemplate`),
        shared by the shapes with the same findings (no secret in the URL: only what redaction
        masks in any text is masked), as :func:`record_from_verdict` makes them."""
        findings, decision, server = shape.findings, shape.decision, shape.server
        key = (id(findings), decision, server)
        kept = self._verdicts.get(key)
        if kept is not None and kept[0] is findings:
            return kept[1], kept[2]
        redacting = self.redact_secrets
        rows = tuple(
            FindingRow(
                f.code,
                f.name,
                f.severity,
                redact(f.message) if redacting and _may_hold_secrets(f.message) else f.message,
                f.cwe,
            )
            for f in findings
        )
        verdict_json = ""
        if self.with_json:
            text = _findings_json(findings, rows, frozenset() if redacting else None)
            verdict_json = f'","decision":"{decision.value}","findings":{text}'
            rows = tuple(r._replace(message="") for r in rows)
        top_rank = max([r.severity.rank for r in rows]) if rows else -1
        codes = tuple([r.code for r in rows])
        # Without its URL, href, JSON and normalised URL, which each URL has its own.
        base = Record(decision, rows, "", "", server, "", top_rank, codes, "")
        _share(self._verdicts, key, (findings, base, verdict_json))
        return base, verdict_json


def _share(table: dict[Any, Any], key: Any, value: Any) -> None:
    if len(table) < SHARED_PARTS:
        table[key] = value


def _between_quotes(text: str) -> str:
    """``text`` as JSON writes it between its quotes: ``text`` itself when it writes it as it
    is (no copy to keep)."""
    written = encode_basestring_ascii(text)
    return text if len(written) == len(text) + 2 else written[1:-1]


def has_secrets(text: str) -> bool:
    """True when ``text`` (a URL) carries a secret that reports redact."""
    return _may_hold_secrets(text) and bool(secrets_in(text))


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
