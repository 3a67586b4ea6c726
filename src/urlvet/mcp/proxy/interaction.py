"""The proxy's lint of the interaction around the URLs: forms that ask for secrets (UV701-UV706)
and URL requests the client did not declare (UV710).

The :class:`~urlvet.mcp.proxy.judge.Judge` asks :class:`InteractionLint` twice per server
message, after it has vetted the message's URLs:

- :meth:`InteractionLint.capabilities`: each URL verdict gains a UV710 finding when the client
  did not declare that kind of URL request, so that the ordinary decline follows;
- :meth:`InteractionLint.forms`: the form elicitations of the message are vetted, and when one
  is blocked the proxy declines it as the protocol expects: ``{"action": "decline"}`` to a
  2025-11-25 ``elicitation/create``, the client's request retried with the form's key declined
  for a 2026-07-28 ``input_required`` result (urlvet's ``-32010`` error to the client when that
  request is unknown). A warned form reaches the client with a ``urlvet:`` line before its
  message, as a warned URL does.

The client's declarations come from its requests (:meth:`InteractionLint.observe`), kept per
channel (the HTTP session) for the most recent :data:`CHANNELS_KEPT` channels.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from urlvet.checks import registry
from urlvet.checks.interaction import UNDECLARED_URL_REQUEST
from urlvet.findings import Decision, Finding, Verdict
from urlvet.mcp.answers import (
    URL_BLOCKED,
    WARNING_LINE_LIMIT,
    ProxyAction,
    elicit_result,
    main_finding,
    proxy_action,
    retried_request,
    rpc_error,
    rpc_result,
)
from urlvet.mcp.capabilities import Declarations, undeclared_reason
from urlvet.mcp.forms import FORM_SHAPE, FoundForm, form_elicitations, vet_form
from urlvet.text import one_line

if TYPE_CHECKING:
    from urlvet.engine import Vetter
    from urlvet.mcp.proxy.judge import LogEntry
    from urlvet.mcp.wire import JsonId, ParsedMessage
    from urlvet.server import Server

CHANNELS_KEPT = 4096
"""How many channels' (HTTP sessions') declarations the proxy keeps."""
REASON_LIMIT = 300
"""Characters of a reason written on stderr or in an error."""


@dataclass(frozen=True, slots=True)
class FormReview:
    """What the proxy does about the forms of one message."""

    action: ProxyAction
    """What to send instead of the ordinary action."""
    entries: tuple[LogEntry, ...]
    """One log entry per form (and per URL of the message)."""
    notes: tuple[str, ...]
    """Lines for the operator's stderr (one per declined form)."""


def _what(verdict: Verdict) -> str:
    f = main_finding(verdict)
    return f"{f.message} ({f.code})" if f is not None else "it is unsafe"


class InteractionLint:
    """The interaction rules for one relay (one server; one or more clients by channel)."""

    def __init__(self, vetter: Vetter, server: Server) -> None:
        self.vetter = vetter
        self.server = server
        self._declared: OrderedDict[str, Declarations] = OrderedDict()
        rule = registry.rules()[UNDECLARED_URL_REQUEST]
        compiled = vetter.compiled
        self._undeclared_severity = (
            (compiled.severities.get(rule.code) or rule.severity)
            if rule in compiled.rules
            else None
        )

    # -- what the client declared ---------------------------------------------------------

    def observe(self, request: Any, channel: str = "") -> None:
        """Take note of one client request (an ``initialize`` declares capabilities)."""
        if not isinstance(request, dict) or request.get("method") != "initialize":
            return
        declared = self._declared.pop(channel, None) or Declarations()
        declared.observe(request)
        self._declared[channel] = declared
        while len(self._declared) > CHANNELS_KEPT:
            self._declared.popitem(last=False)

    def capabilities(
        self,
        parsed: ParsedMessage,
        verdicts: Sequence[Verdict],
        original_request: Mapping[str, Any] | None,
        channel: str = "",
    ) -> tuple[list[Verdict], tuple[str, ...]]:
        """``verdicts`` with UV710 added where the client did not declare the URL request,
        and the lines for stderr."""
        if self._undeclared_severity is None or not verdicts:
            return list(verdicts), ()
        declarations = self._declared.get(channel) or Declarations()
        declared = declarations.for_message(parsed, original_request)
        reason = undeclared_reason(parsed, declared) if declared is not None else None
        if reason is None:
            return list(verdicts), ()
        finding = Finding(
            code=UNDECLARED_URL_REQUEST,
            name=registry.rules()[UNDECLARED_URL_REQUEST].name,
            severity=self._undeclared_severity,
            message=f"The server sent a URL request the client never declared it supports: "
            f"{reason}.",
            evidence={"shape": parsed.shape, "protocol": parsed.protocol},
            cwe=registry.rules()[UNDECLARED_URL_REQUEST].cwe,
        )
        decide = self.vetter.compiled.decide([self._undeclared_severity])
        out = []
        for v in verdicts:
            findings = sorted((*v.findings, finding), key=lambda f: (-f.severity.rank, f.code))
            decision = max(v.decision, decide, key=lambda d: d.rank)
            out.append(v.model_copy(update={"findings": tuple(findings), "decision": decision}))
        note: tuple[str, ...] = ()
        if decide is Decision.BLOCK:
            note = (one_line(f"declined on the client's behalf: {reason}", REASON_LIMIT),)
        return out, note

    # -- forms ----------------------------------------------------------------------------

    def forms(
        self,
        data: Mapping[str, Any],
        parsed: ParsedMessage,
        verdicts: Sequence[Verdict],
        original_request: Mapping[str, Any] | None,
        retry_id: JsonId | None,
    ) -> FormReview | None:
        """What to do about the forms in ``data`` (its URLs' ``verdicts`` given), or None when
        it holds none that the policy warns about or blocks."""
        if parsed.shape == "malformed":
            return None  # declined as it is, forms and all
        vetted = [
            (f, vet_form(self.vetter, f.requested_schema, f.message, self.server))
            for f in form_elicitations(data)
        ]
        flagged = [(f, v) for f, v in vetted if v.decision is not Decision.ALLOW]
        if not flagged:
            return None
        if any(v.decision is Decision.BLOCK for _, v in flagged):
            action = self._declined(data, parsed, verdicts, flagged, original_request, retry_id)
            notes = tuple(
                one_line(f"declined a form from the server: {_what(v)}", REASON_LIMIT)
                for _, v in flagged
                if v.decision is Decision.BLOCK
            )
        elif any(v.decision is Decision.BLOCK for v in verdicts):
            return None  # the URLs' decline already withholds the whole message
        else:
            action = self._warned(data, parsed, verdicts, flagged)
            notes = ()
        return FormReview(action, self._entries(vetted, action), notes)

    def _declined(
        self,
        data: Mapping[str, Any],
        parsed: ParsedMessage,
        verdicts: Sequence[Verdict],
        flagged: list[tuple[FoundForm, Verdict]],
        original_request: Mapping[str, Any] | None,
        retry_id: JsonId | None,
    ) -> ProxyAction:
        blocked = [(f, v) for f, v in flagged if v.decision is Decision.BLOCK]
        msg_id = data.get("id")
        if "method" in data and isinstance(msg_id, str | int) and not isinstance(msg_id, bool):
            decline = rpc_result(msg_id, elicit_result("decline"))
            return ProxyAction("declined", Decision.BLOCK, to_server=decline)
        if original_request is not None and retry_id is not None:
            keys = [f.key for f, _ in blocked if f.key is not None]
            keys += [
                r.key
                for r, v in zip(parsed.requests, verdicts, strict=True)
                if v.decision is Decision.BLOCK and r.key is not None
            ]
            responses = {k: elicit_result("decline") for k in keys}
            retry = retried_request(original_request, parsed, responses, retry_id)
            return ProxyAction("declined", Decision.BLOCK, to_server=retry)
        reason = one_line(f"urlvet blocked a form: {_what(blocked[0][1])}", REASON_LIMIT)
        detail = {
            "urlvet": {
                "decision": Decision.BLOCK.value,
                "shape": FORM_SHAPE,
                "blocked": [{"form": f.key, "codes": list(v.codes)} for f, v in blocked],
            }
        }
        error = rpc_error(parsed.id, URL_BLOCKED, reason, detail)
        return ProxyAction("declined", Decision.BLOCK, to_client=error)

    def _warned(
        self,
        data: Mapping[str, Any],
        parsed: ParsedMessage,
        verdicts: Sequence[Verdict],
        flagged: list[tuple[FoundForm, Verdict]],
    ) -> ProxyAction:
        base = proxy_action(data, parsed, verdicts)
        out: dict[str, Any] = dict(base.to_client if base.to_client is not None else data)
        for found, verdict in flagged:
            out = with_form_warning(out, found, form_warning_line(verdict))
        return ProxyAction("forwarded-with-warning", Decision.WARN, to_client=out)

    def _entries(
        self, vetted: list[tuple[FoundForm, Verdict]], action: ProxyAction
    ) -> tuple[LogEntry, ...]:
        from urlvet.mcp.proxy.judge import LogEntry

        out = []
        for found, verdict in vetted:
            if action.did == "declined":
                did = "declined"
            elif verdict.decision is Decision.WARN:
                did = "forwarded-with-warning"
            else:
                did = "forwarded"
            text = found.message if isinstance(found.message, str) else None
            out.append(
                LogEntry(FORM_SHAPE, verdict.url, text, verdict.decision.value, verdict.codes, did)
            )
        return tuple(out)


def form_warning_line(verdict: Verdict) -> str:
    """One line starting ``urlvet:`` that says what is wrong with a form."""
    return one_line(
        f"urlvet: check this form before you answer it: {_what(verdict)}", WARNING_LINE_LIMIT
    )


def with_form_warning(message: Mapping[str, Any], found: FoundForm, line: str) -> dict[str, Any]:
    """``message`` with ``line`` before the text of the form ``found`` (its ``message``)."""
    if found.key is None:
        params = dict(message["params"])
        params["message"] = _prefixed(line, params.get("message"))
        return {**message, "params": params}
    result = dict(message["result"])
    requests = dict(result["inputRequests"])
    item = dict(requests[found.key])
    params = dict(item["params"])
    params["message"] = _prefixed(line, params.get("message"))
    item["params"] = params
    requests[found.key] = item
    result["inputRequests"] = requests
    return {**message, "result": result}


def _prefixed(line: str, text: Any) -> str:
    return f"{line}\n{text}" if isinstance(text, str) and text else line


__all__ = [
    "CHANNELS_KEPT",
    "FormReview",
    "InteractionLint",
    "form_warning_line",
    "with_form_warning",
]
