"""SARIF 2.1.0 for code scanning: one result per finding per URL occurrence, streamed.

What GitHub code scanning (and other SARIF consumers) need, and how this file gives it:

- ``tool.driver``: name, version, semanticVersion, and every rule the policy runs with a
  short description (the rule's summary), a full description ("What it does"), help in text
  and Markdown (the rule's documentation), a default level, CWE tags and a
  ``security-severity`` score;
- results with ``level`` error (a finding that blocks), warning (warns) or note, a message
  naming the rule's finding and the URL with its secrets redacted (``run.redactionTokens``
  says so), 1-based lines and columns in Unicode code points (``run.columnKind``), and a
  snippet;
- artifact URIs relative to ``%SRCROOT%`` for files below the working directory;
- ``partialFingerprints["urlvet/v1"]`` from the rule code and the normalised URL, so an alert
  follows its URL when lines move;
- input problems as ``invocations[0].toolExecutionNotifications``.

The rules are known before the first result and the invocation only after the last, so the
document is written in order, results streamed in between: memory does not grow with them.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from urlvet.audit.output.base import RunInfo, artifact_uri
from urlvet.audit.output.record import FindingRow, Record, partial_fingerprint
from urlvet.audit.output.redact import REDACTED
from urlvet.checks.base import Rule
from urlvet.findings import Severity

if TYPE_CHECKING:
    from urlvet.audit.report import Summary
    from urlvet.audit.sources import Diagnostic, Occurrence

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "urlvet/v1"
MAX_NOTIFICATIONS = 1000

_LEVELS = {"block": "error", "warn": "warning", "allow": "note"}
# GitHub maps security-severity to critical (>= 9.0), high (7.0-8.9), medium (4.0-6.9), low.
_SECURITY_SEVERITY = {
    Severity.CRITICAL: "9.5",
    Severity.HIGH: "8.0",
    Severity.MEDIUM: "5.5",
    Severity.LOW: "3.0",
    Severity.INFO: "0.0",
}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def rule_descriptor(rule: Rule, info: RunInfo) -> dict[str, Any]:
    """The reportingDescriptor of one rule."""
    title = _unwrap(rule.doc.split("\n\n", 1)[0]) if rule.doc else rule.name
    what = _unwrap(rule.section("What it does")) or rule.summary
    tags = ["security", f"urlvet/{rule.family}"]
    if rule.cwe:
        tags.append(f"external/cwe/cwe-{rule.cwe}")
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": title[:1000]},
        "fullDescription": {"text": what},
        "help": {
            "text": rule.doc,
            "markdown": f"# {rule.code} {rule.name}\n\n{rule.doc}",
        },
        "defaultConfiguration": {"level": _LEVELS[info.level(rule.severity.rank)]},
        "properties": {
            "tags": tags,
            "precision": "high",
            "security-severity": _SECURITY_SEVERITY[rule.severity],
            "default-severity": rule.severity.value,
        },
    }


def _unwrap(text: str) -> str:
    """Paragraphs with their hard line breaks joined (viewers wrap text themselves)."""
    return "\n\n".join(" ".join(p.split()) for p in text.strip().split("\n\n"))


class SarifWriter:
    """Streams one SARIF log with a single run."""

    def __init__(self, stream: TextIO, info: RunInfo) -> None:
        self.stream = stream
        self.info = info
        self._index = {r.code: i for i, r in enumerate(info.rules)}
        self._first = True
        self._notifications: list[dict[str, Any]] = []
        self._dropped_notifications = 0
        self._parts: dict[Record, tuple[str, tuple[tuple[str, str], ...]]] = {}
        self._locations = lru_cache(maxsize=256)(self._artifact)

    def start(self) -> None:
        """Write everything up to the results array."""
        driver: dict[str, Any] = {
            "name": "urlvet",
            "version": self.info.version,
            "semanticVersion": self.info.version,
            "rules": [rule_descriptor(r, self.info) for r in self.info.rules],
        }
        uri = _information_uri()
        if uri:
            driver["informationUri"] = uri
        head = {
            "$schema": SCHEMA_URI,
            "version": "2.1.0",
        }
        run_head = {
            "tool": {"driver": driver},
            "originalUriBaseIds": {SRCROOT: {"uri": Path.cwd().resolve().as_uri() + "/"}},
            "columnKind": "unicodeCodePoints",
        }
        if self.info.redacted:
            run_head["redactionTokens"] = [REDACTED]
        text = _dumps(head)[:-1] + ',"runs":[' + _dumps(run_head)[:-1] + ',"results":['
        self.stream.write(text)

    def _artifact(self, path: str) -> str:
        uri, relative = artifact_uri(path)
        location: dict[str, Any] = {"uri": uri}
        if relative:
            location["uriBaseId"] = SRCROOT
        return _dumps(location)

    def _results(self, record: Record) -> tuple[str, tuple[tuple[str, str], ...]]:
        # Once per record: the snippet's JSON, and per finding (code, the JSON members before
        # "locations"). Keyed by the record itself (immutable, compared by value): what is
        # written depends on nothing else, and an equal record gets the same parts.
        cached = self._parts.get(record)
        if cached is not None:
            return cached
        url = record.normalised_url
        parts = (
            _dumps(record.url),
            tuple((f.code, self._result_head(record, f, url)) for f in record.findings),
        )
        if len(self._parts) >= 8192:
            self._parts.clear()
        self._parts[record] = parts
        return parts

    def _result_head(self, record: Record, f: FindingRow, url: str) -> str:
        members: dict[str, Any] = {
            "ruleId": f.code,
            "level": _LEVELS[self.info.level(f.severity.rank)],
            "message": {"text": f"{f.message} URL: {record.url}"},
            "partialFingerprints": {FINGERPRINT_KEY: partial_fingerprint(f.code, url)},
            "properties": {
                "decision": record.decision.value,
                "severity": f.severity.value,
                "url": record.url,
                **({"href": record.href} if record.href is not None else {}),
                **({"server": record.server} if record.server else {}),
            },
        }
        index = self._index.get(f.code)
        if index is not None:
            members["ruleIndex"] = index
        return _dumps(members)[1:-1]

    def occurrence(self, occ: Occurrence, record: Record, accepted: frozenset[str]) -> None:
        """One result per finding of this occurrence."""
        if not record.findings:
            return
        snippet, results = self._results(record)
        end = f',"endColumn":{occ.column + occ.span}' if occ.span else ""
        location = (
            f'"locations":[{{"physicalLocation":{{"artifactLocation":{self._locations(occ.path)},'
            f'"region":{{"startLine":{occ.line},"startColumn":{occ.column}{end},'
            f'"snippet":{{"text":{snippet}}}}}}}}}]}}'
        )
        baseline = self.info.baseline
        out = []
        for code, head in results:
            if baseline:
                state = "unchanged" if code in accepted else "new"
                out.append(f'{{{head},"baselineState":"{state}",{location}')
            else:
                out.append(f"{{{head},{location}")
        text = ",".join(out)
        self.stream.write(text if self._first else "," + text)
        self._first = False

    def diagnostic(self, diag: Diagnostic) -> None:
        """Keep an input problem for the invocation's notifications."""
        if len(self._notifications) >= MAX_NOTIFICATIONS:
            self._dropped_notifications += 1
            return
        note: dict[str, Any] = {
            "level": diag.level,
            "message": {"text": diag.message},
            "descriptor": {"id": diag.code},
        }
        physical: dict[str, Any] = {"artifactLocation": json.loads(self._locations(diag.path))}
        if diag.line is not None:
            region: dict[str, Any] = {"startLine": diag.line}
            if diag.column is not None:
                region["startColumn"] = diag.column
            physical["region"] = region
        note["locations"] = [{"physicalLocation": physical}]
        self._notifications.append(note)

    def finish(self, summary: Summary) -> None:
        """Close the results and write the invocation."""
        notes = list(self._notifications)
        if self._dropped_notifications:
            notes.append(
                {
                    "level": "warning",
                    "message": {
                        "text": f"{self._dropped_notifications:,} more input problems not listed"
                    },
                }
            )
        invocation: dict[str, Any] = {
            "executionSuccessful": summary.input_errors == 0,
            "toolExecutionNotifications": notes,
            "properties": {
                "urls": summary.urls,
                "decisions": summary.by_decision,
                "failing": summary.failing,
                "acceptedByBaseline": summary.accepted,
            },
        }
        self.stream.write('],"invocations":[' + _dumps(invocation) + "]}]}\n")


def _information_uri() -> str | None:
    try:
        from importlib.metadata import metadata

        meta = metadata("urlvet")
    except Exception:  # metadata is optional; the SARIF is valid without it
        return None
    for entry in meta.get_all("Project-URL") or ():
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("homepage", "documentation", "source", "repository"):
            return str(url).strip()
    home = meta.get_all("Home-page") or ()
    return str(home[0]).strip() if home else None
