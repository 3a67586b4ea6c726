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

from pydantic import BaseModel, ConfigDict, Field

from urlvet.checks.interaction import FormRequest, FormText, form_hits, read_form
from urlvet.findings import Decision, Finding, Verdict
from urlvet.server import Server, as_server

if TYPE_CHECKING:
    from urlvet.engine import Vetter
    from urlvet.mcp.answers import HookAnswer
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


def forms_for_audit(message: Any) -> list[tuple[FormText, str | None]]:
    """Each form in a logged message, as an audit keeps it: its text and its message."""
    return [
        (FormText(form_text(f.requested_schema)), f.message if isinstance(f.message, str) else None)
        for f in form_elicitations(message)
        if f.requested_schema is not None  # a form with no schema asks for nothing
    ]


def vet_form_text(vetter: Vetter, text: str, message: str | None, server: Server | None) -> Verdict:
    """The verdict on a form kept as :class:`FormText` (its JSON read back)."""
    try:
        schema: Any = json.loads(text)
    except (ValueError, RecursionError):
        schema = text  # not an object: the form rules report it as unreadable
    form = read_form(schema, message)
    return form_verdict(form, vetter.compiled, server, str(text))


class VettedForm(BaseModel):
    """One form-mode elicitation a server sent, with its verdict and what a block sends."""

    model_config = ConfigDict(frozen=True)

    protocol: FormEra = Field(description="The protocol revision the form came in.")
    key: str | None = Field(
        description="The inputRequests key (2026-07-28); None for an elicitation/create request."
    )
    message: str | None = Field(description="The server's message shown with the form.")
    verdict: Verdict = Field(
        description="urlvet's verdict on what the form asks for; its url is the form's "
        "requestedSchema as compact JSON."
    )
    answer: Literal["decline", "pass-through"] = Field(
        description="decline when blocked; else the client's own form handler answers it."
    )
    on_decline: dict[str, Any] = Field(
        description="The ElicitResult that declines it ({action: decline})."
    )


def with_forms(
    answer: HookAnswer, message: Any, vetter: Vetter, server: Server | None
) -> HookAnswer:
    """``answer`` (the hook's answer on the URLs of ``message``) with the verdicts on its forms
    added: a blocked form is declined in ``response`` (2025-11-25: the whole response;
    2026-07-28: its ``inputResponses`` key, and it leaves ``pending``), and ``decision`` is the
    worst over URLs and forms."""
    from urlvet.mcp.answers import elicit_result, rpc_result

    vetted = []
    for found, verdict in vet_forms(vetter, message, server):
        blocked = verdict.decision is Decision.BLOCK
        vetted.append(
            VettedForm(
                protocol=found.protocol,
                key=found.key,
                message=found.message if isinstance(found.message, str) else None,
                verdict=verdict,
                answer="decline" if blocked else "pass-through",
                on_decline=elicit_result("decline"),
            )
        )
    if not vetted:
        return answer
    update: dict[str, Any] = {"forms": tuple(vetted)}
    decisions = [f.verdict.decision for f in vetted]
    update["decision"] = worst([*decisions, *([answer.decision] if answer.decision else [])])
    declined = [f for f in vetted if f.answer == "decline"]
    if declined and answer.shape == "other" and answer.id is not None:
        update["response"] = rpc_result(answer.id, elicit_result("decline"))
    elif declined and answer.shape == "input_required":
        response = dict(answer.response or {})
        responses = dict(response.get("inputResponses", {}))
        responses.update({f.key: f.on_decline for f in declined if f.key is not None})
        response["inputResponses"] = responses
        update["response"] = response
        update["pending"] = tuple(k for k in answer.pending if k not in responses)
    return answer.model_copy(update=update)


def worst(decisions: list[Decision]) -> Decision | None:
    """The most serious of ``decisions`` (None when there are none)."""
    return max(decisions, key=lambda d: d.rank, default=None)


__all__ = [
    "FORM_SHAPE",
    "FormEra",
    "FormText",
    "FoundForm",
    "VettedForm",
    "form_elicitations",
    "form_text",
    "form_verdict",
    "forms_for_audit",
    "vet_form",
    "vet_form_text",
    "vet_forms",
    "with_forms",
    "worst",
]
