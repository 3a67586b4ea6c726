"""Form-mode elicitations: where they sit in a message, and the verdict on what they ask for.

The protocol forbids a server to ask for secrets in a form (2025-11-25 elicitation.mdx: "Servers
MUST NOT use form mode elicitation to request sensitive information such as passwords, API keys,
access tokens, or payment credentials"). The form rules (UV701-UV706,
:mod:`urlvet.checks.interaction`) read the form; this module finds the forms in a JSON-RPC
message and turns the rules' hits into a :class:`~urlvet.findings.Verdict` under a policy, as
the engine does for a URL:

- a 2025-11-25 ``elicitation/create`` request whose ``mode`` is ``form`` or absent (a client
  must read a missing mode as form mode);
- each ``elicitation/create`` of that mode inside a 2026-07-28 ``input_required`` result's
  ``inputRequests``.

A form verdict's ``url`` is the form's ``requestedSchema`` as compact JSON text: what was
vetted, and what a baseline recognises the form by.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from urlvet.checks.interaction import FormRequest, form_hits, read_form
from urlvet.findings import Decision, Finding, Verdict
from urlvet.server import Server, as_server

if TYPE_CHECKING:
    from urlvet.engine import Vetter
    from urlvet.policy import CompiledPolicy

FORM_SHAPE = "elicitation/create:form"
"""The shape a form found in a message is reported under (``mcp:`` prefixed in an audit)."""

FormEra = Literal["2025-11-25", "2026-07-28"]
"""The protocol revision a form came in."""


@dataclass(frozen=True, slots=True)
class FoundForm:
    """A form-mode elicitation found in a message, before vetting."""

    protocol: FormEra
    key: str | None
    """The 2026-07-28 ``inputRequests`` key (None for a 2025-11-25 request)."""
    requested_schema: Any
    """The ``requestedSchema`` as sent (anything: the rules say when it cannot be read)."""
    message: Any
    """The ``message`` as sent."""


def _form_params(params: Any) -> dict[str, Any] | None:
    """``params`` when they are a form elicitation's (mode ``form`` or none), else None."""
    if isinstance(params, dict) and params.get("mode", "form") == "form":
        return params
    return None


def form_elicitations(message: Any) -> list[FoundForm]:
    """The form-mode elicitations in one decoded JSON-RPC message (or batch). Never raises.

    Messages are read as leniently as a client reads them: a missing ``jsonrpc`` member or
    ``id`` does not hide a form.
    """
    if isinstance(message, list):
        return [f for item in message for f in form_elicitations(item)]
    if not isinstance(message, dict):
        return []
    if message.get("method") == "elicitation/create":
        params = _form_params(message.get("params"))
        if params is not None:
            schema, text = params.get("requestedSchema"), params.get("message")
            return [FoundForm("2025-11-25", None, schema, text)]
        return []
    result = message.get("result")
    if not isinstance(result, dict) or result.get("resultType") != "input_required":
        return []
    requests = result.get("inputRequests")
    if not isinstance(requests, dict):
        return []
    found = []
    for key, item in requests.items():
        if isinstance(item, dict) and item.get("method") == "elicitation/create":
            params = _form_params(item.get("params"))
            if params is not None:
                found.append(
                    FoundForm(
                        "2026-07-28", key, params.get("requestedSchema"), params.get("message")
                    )
                )
    return found


def form_text(requested_schema: Any) -> str:
    """The form as compact JSON text: a form verdict's ``url``."""
    try:
        text = json.dumps(requested_schema, ensure_ascii=False, separators=(",", ":"))
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: kept visible as an escape
        text = json.dumps(requested_schema, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        text = repr(requested_schema)
    return text


def form_verdict(
    form: FormRequest, compiled: CompiledPolicy, server: Server | None, text: str
) -> Verdict:
    """The verdict of the policy's selected form rules on ``form`` (``text`` is its url)."""
    selected = {r.code: r for r in compiled.rules if r.kind == "interaction"}
    findings = []
    for code, hit in form_hits(form):
        found = selected.get(code)
        if found is None:
            continue
        findings.append(
            Finding(
                code=code,
                name=found.name,
                severity=compiled.severities.get(code) or hit.severity or found.severity,
                message=hit.message,
                evidence=dict(hit.evidence),
                cwe=found.cwe,
            )
        )
    findings.sort(key=lambda f: (-f.severity.rank, f.code))
    return Verdict(
        url=text,
        href=None,
        decision=compiled.decide([f.severity for f in findings]),
        findings=tuple(findings),
        server=server.label() if server is not None else None,
    )


def vet_form(
    vetter: Vetter,
    requested_schema: Any,
    message: Any = None,
    server: Server | str | None = None,
) -> Verdict:
    """The verdict on a form-mode elicitation under ``vetter``'s policy. Never does I/O.

    ``requested_schema`` and ``message`` are the elicitation's params as sent. Block means the
    form asks for a secret the policy will not let through (a client declines it); warn means a
    person should look before answering. Only an invalid ``server`` raises
    (:class:`~urlvet.errors.InputError`).
    """
    form = read_form(requested_schema, message)
    return form_verdict(form, vetter.compiled, as_server(server), form_text(requested_schema))


def vet_forms(
    vetter: Vetter, message: Any, server: Server | str | None = None
) -> Iterator[tuple[FoundForm, Verdict]]:
    """Each form in ``message`` with its verdict."""
    srv = as_server(server)
    for found in form_elicitations(message):
        yield found, vet_form(vetter, found.requested_schema, found.message, srv)


def worst(verdicts: Iterator[Verdict] | list[Verdict]) -> Decision | None:
    """The most serious decision of ``verdicts`` (None when there are none)."""
    return max((v.decision for v in verdicts), key=lambda d: d.rank, default=None)


__all__ = [
    "FORM_SHAPE",
    "FormEra",
    "FoundForm",
    "form_elicitations",
    "form_text",
    "form_verdict",
    "vet_form",
    "vet_forms",
    "worst",
]
