"""The MCP hook: vet every URL an MCP server asks the client to open, before a person sees it.

Three wire shapes carry such a URL, in three protocol revisions; :mod:`urlvet.mcp.wire` is the
one parser of all of them (strict for the hook and the proxy, lenient for ``urlvet audit``):

- the draft user-interaction proposal: a server-to-client ``interaction/create`` request with
  ``params.type == "ua"`` (answered with an empty result when the person consents, and with the
  draft's error ``-32099`` "User did not consent to the interaction." when not), and the
  ``-32003 interaction_required`` error, whose ``data`` is the interaction. The draft's
  ``message`` is a TextContent object; a plain string is accepted too;
- 2025-11-25: the ``elicitation/create`` request in URL mode (answered with ``{"action": ...}``),
  and the ``-32042`` URL-elicitation-required error, whose ``data.elicitations`` lists several;
- 2026-07-28: a result with ``resultType: "input_required"`` whose ``inputRequests`` embed
  URL-mode elicitations (no ``elicitationId``); they are answered with ``inputResponses`` on the
  retried request, next to the echoed ``requestState``. No error code is ever used there.

A blocked URL is always declined and never offered to the person. :mod:`urlvet.mcp.answers`
builds every reply (the hook's answers and the proxy's rewrites, declines and errors);
:mod:`urlvet.mcp.sdk` adapts it to the Python SDK (urlvet's ``mcp`` extra), which is
imported only there.

Form-mode elicitations are linted too (:mod:`urlvet.mcp.forms`, rules UV701-UV706): a form
that asks for a password, a token, payment details or an identity number is declined when the
policy blocks it; :func:`vet_form` gives the verdict on one ``requestedSchema``.
"""

from __future__ import annotations

from urlvet.mcp.answers import (
    URL_BLOCKED,
    Answer,
    HookAnswer,
    ProxyAction,
    VettedRequest,
    aanswer,
    answer,
    answer_line,
    blocked_error,
    decline_reply,
    declined_retry,
    hook_lines,
    proxy_action,
    retried_request,
    warning_line,
    with_id,
    with_warnings,
)
from urlvet.mcp.forms import VettedForm, form_elicitations, vet_form
from urlvet.mcp.sdk import (
    ConsentUI,
    VettedElicitation,
    guard_elicitation,
    guard_elicitation_error,
    vet_elicitation_error,
)
from urlvet.mcp.wire import (
    INTERACTION_DECLINED,
    INTERACTION_REQUIRED,
    MAX_LINE,
    URL_ELICITATION_REQUIRED,
    HookError,
    JsonId,
    ParsedMessage,
    ProtocolEra,
    UrlRequest,
    WireShape,
    might_carry_url,
    parse_message,
    url_requests,
)

__all__ = [
    "INTERACTION_DECLINED",
    "INTERACTION_REQUIRED",
    "MAX_LINE",
    "URL_BLOCKED",
    "URL_ELICITATION_REQUIRED",
    "Answer",
    "ConsentUI",
    "HookAnswer",
    "HookError",
    "JsonId",
    "ParsedMessage",
    "ProtocolEra",
    "ProxyAction",
    "UrlRequest",
    "VettedElicitation",
    "VettedForm",
    "VettedRequest",
    "WireShape",
    "aanswer",
    "answer",
    "answer_line",
    "blocked_error",
    "decline_reply",
    "declined_retry",
    "form_elicitations",
    "guard_elicitation",
    "guard_elicitation_error",
    "hook_lines",
    "might_carry_url",
    "parse_message",
    "proxy_action",
    "retried_request",
    "url_requests",
    "vet_elicitation_error",
    "vet_form",
    "warning_line",
    "with_id",
    "with_warnings",
]
