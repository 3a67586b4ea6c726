"""The MCP hook: vet every URL an MCP server asks the client to open, before a person sees it.

Three wire shapes carry such a URL, and each is parsed from JSON-RPC and answered here:

- the draft user-interaction proposal: a server-to-client ``interaction/create`` request with
  ``params.type == "ua"`` (answered with an empty result when the person consents, and with the
  draft's error ``-32099`` "User did not consent to the interaction." when not), and the
  ``-32003 interaction_required`` error, whose ``data`` names the interaction(s);
- 2025-11-25: the ``elicitation/create`` request in URL mode (answered with ``{"action": ...}``),
  and the ``-32042`` URL-elicitation-required error, whose ``data.elicitations`` lists several;
- 2026-07-28: a result with ``resultType: "input_required"`` whose ``inputRequests`` embed
  URL-mode elicitations (no ``elicitationId``); they are answered with ``inputResponses`` on the
  retried request, next to the echoed ``requestState``. No error code is ever used there.

A blocked URL is always declined and never offered to the person. An error shape has nothing to
send back: blocked URLs are simply not opened, and the request is not retried.

:func:`guard_elicitation` wraps this for the Python SDK (``pip install 'urlvet[mcp]'``): it
returns an ``elicitation_callback`` for ``mcp.Client``/``mcp.ClientSession`` that declines
blocked URLs itself and shows the others to the client's consent UI with their summary.
:func:`vet_elicitation_error` and :func:`guard_elicitation_error` do the same for a ``-32042``
``MCPError``. The ``mcp`` package is imported only by those SDK helpers.

The server is always the one the client's configuration names (``server=``), never the
``serverInfo`` the server reports about itself.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from urlvet.consent import ConsentSummary, json_dumps
from urlvet.engine import Vetter, default_vetter
from urlvet.errors import InputError
from urlvet.findings import Decision, Verdict
from urlvet.server import Server, as_server

if TYPE_CHECKING:
    from mcp import MCPError
    from mcp.client.session import ClientRequestContext, ElicitationFnT
    from mcp.types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult, ErrorData

logger = logging.getLogger("urlvet.mcp")

INTERACTION_REQUIRED = -32003
"""The draft user-interaction proposal's error: an interaction is needed first."""
INTERACTION_DECLINED = -32099
"""The draft's error answer to ``interaction/create`` when the person does not consent."""
URL_ELICITATION_REQUIRED = -32042
"""2025-11-25: URL elicitations are needed before the request can be processed."""
PARSE_ERROR = -32700
INVALID_REQUEST = -32600

MAX_LINE = 1 << 20
"""The longest JSON-RPC message the hook reads (1 MiB); longer ones are refused and declined."""

WireShape = Literal[
    "interaction/create",
    "interaction_required",
    "elicitation/create",
    "url_elicitation_required",
    "input_required",
    "other",
    "malformed",
]
"""Which wire shape a message is: the five that carry URLs, anything else, or a broken one."""

ProtocolEra = Literal["draft", "2025-11-25", "2026-07-28"]
"""The protocol revision a wire shape belongs to."""

Answer = Literal["decline", "ask-user", "pass-through"]
"""What happens to one request: declined by urlvet, shown to the person, or not ours to vet."""

JsonId: TypeAlias = str | int


class HookError(BaseModel):
    """Why a message could not be read as the wire shape it claims to be."""

    model_config = ConfigDict(frozen=True)

    code: str = Field(description="A stable name: invalid-json, not-json-rpc, missing-url, ...")
    message: str = Field(description="What is wrong, for the person who reads the log.")


class VettedRequest(BaseModel):
    """One URL a server asked to open, with its verdict, summary and prepared answers."""

    model_config = ConfigDict(frozen=True)

    key: str | None = Field(
        description="The elicitationId (2025-11-25), the interaction id (draft) or the "
        "inputRequests key (2026-07-28)."
    )
    url: str = Field(description="The URL as the server sent it.")
    message: str | None = Field(description="The server's message, as sent.")
    verdict: Verdict = Field(description="urlvet's verdict on the URL.")
    summary: ConsentSummary = Field(description="What the consent screen shows.")
    answer: Answer = Field(description="decline when blocked, else ask-user.")
    on_open: dict[str, Any] | None = Field(
        description="What to send if the person opens the link (None for error shapes)."
    )
    on_decline: dict[str, Any] | None = Field(
        description="What to send if the person declines, and what a block sends."
    )


class HookAnswer(BaseModel):
    """urlvet's answer to one JSON-RPC message: one line of ``urlvet hook`` output."""

    model_config = ConfigDict(frozen=True)

    ok: bool = Field(description="False when the message was malformed (see error).")
    shape: WireShape = Field(description="The wire shape recognised.")
    protocol: ProtocolEra | None = Field(description="The protocol revision of that shape.")
    id: JsonId | None = Field(description="The JSON-RPC id of the message, when it has one.")
    decision: Decision | None = Field(
        description="The most serious decision over the message's URLs (block when malformed)."
    )
    requests: tuple[VettedRequest, ...] = Field(
        default=(), description="Every URL the message carries, vetted."
    )
    response: dict[str, Any] | None = Field(
        description="What to send back now: a JSON-RPC response (requests), or for "
        "input_required the params to add to the retried request ({inputResponses, "
        "requestState}), holding the declines decided so far. None when nothing is to be sent "
        "or the person must decide first."
    )
    pending: tuple[str, ...] = Field(
        default=(),
        description="Keys still to be answered by the person (ask-user) or by the client's "
        "own handlers (pass-through: form elicitations, sampling, roots).",
    )
    retry: bool | None = Field(
        default=None,
        description="For error shapes: whether retrying the failed request can help (False "
        "once any URL is declined).",
    )
    error: HookError | None = Field(default=None, description="Why the message is malformed.")
    verdict: Verdict | None = Field(
        default=None, description="The verdict, when the message carries exactly one URL."
    )
    summary: ConsentSummary | None = Field(
        default=None, description="The summary, when the message carries exactly one URL."
    )

    def to_json_dict(self) -> dict[str, Any]:
        """A plain JSON-ready dict (enums as strings)."""
        return self.model_dump(mode="json")


# -- parsing the wire shapes (pure) ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UrlRequest:
    """A URL found in a message, before vetting."""

    key: str | None
    url: str
    message: str | None


@dataclass(frozen=True, slots=True)
class ParsedMessage:
    """A JSON-RPC message read as one of the wire shapes."""

    shape: WireShape
    protocol: ProtocolEra | None = None
    id: JsonId | None = None
    requests: tuple[UrlRequest, ...] = ()
    passthrough: tuple[str, ...] = ()
    """2026-07-28 input requests that are not URL elicitations (form, sampling, roots)."""
    request_state: str | None = None
    error: HookError | None = None
    declinable_keys: tuple[str, ...] = ()
    """For a malformed input_required result: the keys that can still be declined."""
    is_request: bool = False
    """True when the message is a request (it has a method), so it expects a response."""


class _Malformed(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.error = HookError(code=code, message=message)


def parse_message(data: Any) -> ParsedMessage:
    """Read one decoded JSON-RPC message as a wire shape. Never raises.

    A message that claims a wire shape but breaks it gives shape ``malformed`` with an error,
    keeping its id and protocol so that it can still be declined.
    """
    if not isinstance(data, dict):
        return ParsedMessage(
            "malformed",
            error=HookError(
                code="not-json-rpc",
                message=f"a JSON-RPC message is a JSON object, not {_json_type(data)}",
            ),
        )
    msg_id = data.get("id")
    good_id: JsonId | None = (
        msg_id if isinstance(msg_id, str | int) and not isinstance(msg_id, bool) else None
    )
    method = data.get("method")
    protocol: ProtocolEra | None = None
    try:
        if data.get("jsonrpc") != "2.0":
            raise _Malformed("not-json-rpc", 'the message lacks "jsonrpc": "2.0"')
        if "method" in data:
            if not isinstance(method, str):
                raise _Malformed("not-json-rpc", "the method is not a string")
            if method == "interaction/create":
                protocol = "draft"
                return _parse_interaction_create(data, good_id)
            if method == "elicitation/create":
                protocol = "2025-11-25"
                return _parse_elicitation_create(data, good_id)
            return ParsedMessage("other", id=good_id)
        if "error" in data:
            error = data["error"]
            if not isinstance(error, dict) or not isinstance(error.get("code"), int):
                raise _Malformed("not-json-rpc", "the error is not an object with a code")
            if error["code"] == INTERACTION_REQUIRED:
                protocol = "draft"
                return _parse_interaction_required(error, good_id)
            if error["code"] == URL_ELICITATION_REQUIRED:
                protocol = "2025-11-25"
                return _parse_url_elicitation_required(error, good_id)
            return ParsedMessage("other", id=good_id)
        if "result" in data:
            result = data["result"]
            if isinstance(result, dict) and result.get("resultType") == "input_required":
                protocol = "2026-07-28"
                return _parse_input_required(result, good_id)
            return ParsedMessage("other", id=good_id)
        raise _Malformed("not-json-rpc", "the message has no method, result or error")
    except _Malformed as exc:
        declinable: tuple[str, ...] = ()
        result = data.get("result")
        if protocol == "2026-07-28" and isinstance(result, dict):
            requests = result.get("inputRequests")
            if isinstance(requests, dict):
                declinable = tuple(k for k, v in requests.items() if _is_url_like(v))
        return ParsedMessage(
            "malformed",
            protocol=protocol,
            id=good_id,
            error=exc.error,
            request_state=_state_of(data),
            declinable_keys=declinable,
            is_request=isinstance(method, str),
        )


def _is_url_like(value: Any) -> bool:
    if not isinstance(value, dict) or value.get("method") != "elicitation/create":
        return False
    params = value.get("params")
    return not isinstance(params, dict) or params.get("mode", "url") != "form"


def _state_of(data: dict[str, Any]) -> str | None:
    result = data.get("result")
    state = result.get("requestState") if isinstance(result, dict) else None
    return state if isinstance(state, str) else None


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _require_id(msg_id: JsonId | None, method: str) -> JsonId:
    if msg_id is None:
        raise _Malformed("missing-id", f"a {method} request needs a string or integer id")
    return msg_id


def _params(data: dict[str, Any], method: str) -> dict[str, Any]:
    params = data.get("params")
    if not isinstance(params, dict):
        raise _Malformed("invalid-params", f"the params of {method} are not an object")
    return params


def _url_of(params: Mapping[str, Any], where: str) -> str:
    url = params.get("url")
    if not isinstance(url, str):
        raise _Malformed("missing-url", f"{where} has no url string")
    return url


def _message_of(params: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = params.get(key)
        if value is not None:
            if not isinstance(value, str):
                raise _Malformed("invalid-message", f"the {key} is not a string")
            return value
    return None


def _optional_str(params: Mapping[str, Any], key: str) -> str | None:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _Malformed("invalid-params", f"the {key} is not a string")
    return str(value)


def _parse_interaction_create(data: dict[str, Any], msg_id: JsonId | None) -> ParsedMessage:
    # The draft's request: params {id, type: "ua", interaction: {url, message}}. Early drafts
    # put url and message beside type; those are read too, the nested object winning.
    msg_id = _require_id(msg_id, "interaction/create")
    params = _params(data, "interaction/create")
    if params.get("type") != "ua":
        # Other interaction types open no URL in a user agent: not ours to vet.
        return ParsedMessage("other", protocol="draft", id=msg_id)
    body: Mapping[str, Any] = params
    if "interaction" in params:
        nested = params["interaction"]
        if not isinstance(nested, dict):
            raise _Malformed("invalid-params", "the interaction is not an object")
        body = nested
    request = UrlRequest(
        key=_optional_str(params, "id") or _optional_str(params, "interactionId"),
        url=_url_of(body, "the interaction"),
        message=_message_of(body, "message", "description", "reason"),
    )
    return ParsedMessage("interaction/create", "draft", msg_id, (request,))


def _parse_elicitation_create(data: dict[str, Any], msg_id: JsonId | None) -> ParsedMessage:
    msg_id = _require_id(msg_id, "elicitation/create")
    params = _params(data, "elicitation/create")
    mode = params.get("mode", "form")
    if mode == "form":
        return ParsedMessage("other", protocol="2025-11-25", id=msg_id)
    if mode != "url":
        raise _Malformed("invalid-params", f"unknown elicitation mode {str(mode)[:40]!r}")
    request = UrlRequest(
        key=_optional_str(params, "elicitationId"),
        url=_url_of(params, "the URL elicitation"),
        message=_message_of(params, "message"),
    )
    return ParsedMessage("elicitation/create", "2025-11-25", msg_id, (request,))


def _parse_interaction_required(error: dict[str, Any], msg_id: JsonId | None) -> ParsedMessage:
    data = error.get("data")
    if isinstance(data, dict) and isinstance(data.get("interactions"), list):
        items: list[Any] = data["interactions"]
    elif isinstance(data, dict) and isinstance(data.get("interaction"), dict):
        items = [data["interaction"]]
    elif isinstance(data, dict) and "url" in data:
        items = [data]
    else:
        raise _Malformed("missing-url", "the -32003 error's data names no interaction")
    requests = []
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            raise _Malformed("invalid-params", f"interaction {n} is not an object")
        if item.get("type", "ua") != "ua":
            continue
        requests.append(
            UrlRequest(
                key=_optional_str(item, "id") or _optional_str(item, "interactionId"),
                url=_url_of(item, f"interaction {n}"),
                message=_message_of(item, "message", "description", "reason"),
            )
        )
    return ParsedMessage("interaction_required", "draft", msg_id, tuple(requests))


def _parse_url_elicitation_required(error: dict[str, Any], msg_id: JsonId | None) -> ParsedMessage:
    data = error.get("data")
    items = data.get("elicitations") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise _Malformed("missing-url", "the -32042 error has no data.elicitations list")
    requests = []
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            raise _Malformed("invalid-params", f"elicitation {n} is not an object")
        if item.get("mode", "url") != "url":
            raise _Malformed("invalid-params", f"elicitation {n} is not in URL mode")
        requests.append(
            UrlRequest(
                key=_optional_str(item, "elicitationId"),
                url=_url_of(item, f"elicitation {n}"),
                message=_message_of(item, "message"),
            )
        )
    return ParsedMessage("url_elicitation_required", "2025-11-25", msg_id, tuple(requests))


def _parse_input_required(result: dict[str, Any], msg_id: JsonId | None) -> ParsedMessage:
    state = result.get("requestState")
    if state is not None and not isinstance(state, str):
        raise _Malformed("invalid-params", "the requestState is not a string")
    requests_obj = result.get("inputRequests")
    if requests_obj is None:
        requests_obj = {}
    if not isinstance(requests_obj, dict):
        raise _Malformed("invalid-params", "the inputRequests are not an object")
    requests: list[UrlRequest] = []
    passthrough: list[str] = []
    for key, item in requests_obj.items():
        if not isinstance(item, dict) or not isinstance(item.get("method"), str):
            raise _Malformed("invalid-params", f"input request {key[:40]!r} has no method")
        if item["method"] != "elicitation/create":
            passthrough.append(key)
            continue
        params = item.get("params")
        if not isinstance(params, dict):
            raise _Malformed("invalid-params", f"input request {key[:40]!r} has no params")
        mode = params.get("mode", "form")
        if mode == "form":
            passthrough.append(key)
            continue
        if mode != "url":
            raise _Malformed("invalid-params", f"input request {key[:40]!r}: unknown mode")
        requests.append(
            UrlRequest(
                key=key,
                url=_url_of(params, f"input request {key[:40]!r}"),
                message=_message_of(params, "message"),
            )
        )
    return ParsedMessage(
        "input_required",
        "2026-07-28",
        msg_id,
        tuple(requests),
        tuple(passthrough),
        request_state=state,
    )


# -- answering -------------------------------------------------------------------------------

_ELICIT_ACCEPT = {"action": "accept"}
_ELICIT_DECLINE = {"action": "decline"}


def _rpc_result(msg_id: JsonId, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def _draft_decline(msg_id: JsonId) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "error": {
            "code": INTERACTION_DECLINED,
            "message": "User did not consent to the interaction.",
        },
    }


def _prepared(parsed: ParsedMessage) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(on_open, on_decline) for one request of ``parsed``."""
    if parsed.shape == "elicitation/create":
        assert parsed.id is not None
        return _rpc_result(parsed.id, dict(_ELICIT_ACCEPT)), _rpc_result(
            parsed.id, dict(_ELICIT_DECLINE)
        )
    if parsed.shape == "interaction/create":
        assert parsed.id is not None
        return _rpc_result(parsed.id, {}), _draft_decline(parsed.id)
    if parsed.shape == "input_required":
        return dict(_ELICIT_ACCEPT), dict(_ELICIT_DECLINE)
    return None, None


def _assemble(parsed: ParsedMessage, server: Server | None, verdicts: list[Verdict]) -> HookAnswer:
    vetted = []
    for req, verdict in zip(parsed.requests, verdicts, strict=True):
        on_open, on_decline = _prepared(parsed)
        blocked = verdict.decision is Decision.BLOCK
        vetted.append(
            VettedRequest(
                key=req.key,
                url=req.url,
                message=req.message,
                verdict=verdict,
                summary=ConsentSummary.from_verdict(verdict, server, req.message),
                answer="decline" if blocked else "ask-user",
                on_open=on_open,
                on_decline=on_decline,
            )
        )
    decision = max((v.verdict.decision for v in vetted), key=lambda d: d.rank, default=None)
    asking = [v for v in vetted if v.answer == "ask-user"]
    response: dict[str, Any] | None = None
    pending: list[str] = [v.key or "" for v in asking]
    retry: bool | None = None
    if parsed.shape in ("elicitation/create", "interaction/create"):
        if not asking:
            response = vetted[0].on_decline
    elif parsed.shape == "input_required":
        responses = {v.key: dict(_ELICIT_DECLINE) for v in vetted if v.answer == "decline"}
        response = {"inputResponses": responses}
        if parsed.request_state is not None:
            response["requestState"] = parsed.request_state
        pending += list(parsed.passthrough)
    elif parsed.shape in ("interaction_required", "url_elicitation_required"):
        retry = not any(v.answer == "decline" for v in vetted)
    single = vetted[0] if len(vetted) == 1 else None
    return HookAnswer(
        ok=True,
        shape=parsed.shape,
        protocol=parsed.protocol,
        id=parsed.id,
        decision=decision,
        requests=tuple(vetted),
        response=response,
        pending=tuple(pending),
        retry=retry,
        verdict=single.verdict if single else None,
        summary=single.summary if single else None,
    )


def _malformed_answer(parsed: ParsedMessage) -> HookAnswer:
    """A clear error, and a decline wherever one can be addressed."""
    response: dict[str, Any] | None = None
    if parsed.protocol == "2026-07-28":
        # Never an error code on a 2026-07-28 exchange: decline what can be addressed.
        response = {"inputResponses": {k: dict(_ELICIT_DECLINE) for k in parsed.declinable_keys}}
        if parsed.request_state is not None:
            response["requestState"] = parsed.request_state
    elif parsed.is_request and parsed.id is not None:
        if parsed.protocol == "draft":
            response = _draft_decline(parsed.id)
        elif parsed.protocol == "2025-11-25":
            response = _rpc_result(parsed.id, dict(_ELICIT_DECLINE))
    return HookAnswer(
        ok=False,
        shape="malformed",
        protocol=parsed.protocol,
        id=parsed.id,
        decision=Decision.BLOCK,
        response=response,
        retry=False if parsed.protocol is not None and not parsed.is_request else None,
        error=parsed.error,
    )


def _resolve(vetter: Vetter | None) -> Vetter:
    return vetter if vetter is not None else default_vetter()


def answer(
    message: Any, vetter: Vetter | None = None, server: Server | str | None = None
) -> HookAnswer:
    """Vet the URLs of one decoded JSON-RPC message and prepare what to send back.

    ``server`` is the server as the client's configuration knows it (a Server, its URL, or
    ``"stdio"``). Any message gets an answer, a malformed one ``ok=False`` and a decline; only
    an invalid ``server`` raises (:class:`~urlvet.errors.InputError`).
    """
    parsed = parse_message(message)
    srv = as_server(server)
    if parsed.shape == "malformed":
        return _malformed_answer(parsed)
    v = _resolve(vetter)
    verdicts = [v.vet(r.url, srv, message=r.message) for r in parsed.requests]
    return _assemble(parsed, srv, verdicts)


async def aanswer(
    message: Any, vetter: Vetter | None = None, server: Server | str | None = None
) -> HookAnswer:
    """The asyncio twin of :func:`answer`: DNS lookups do not block the event loop."""
    parsed = parse_message(message)
    srv = as_server(server)
    if parsed.shape == "malformed":
        return _malformed_answer(parsed)
    v = _resolve(vetter)
    verdicts = [await v.avet(r.url, srv, message=r.message) for r in parsed.requests]
    return _assemble(parsed, srv, verdicts)


def answer_line(
    line: str | bytes, vetter: Vetter | None = None, server: Server | str | None = None
) -> HookAnswer:
    """:func:`answer` for one line of JSON text, as ``urlvet hook`` reads it. Never raises."""
    try:
        if len(line) > MAX_LINE:
            raise _Malformed(
                "too-long", f"the message is longer than {MAX_LINE:,} bytes; it was not read"
            )
        try:
            data = json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise _Malformed("invalid-json", f"the line is not valid JSON: {reason}") from None
        return answer(data, vetter, server)
    except _Malformed as exc:
        return _malformed_answer(ParsedMessage("malformed", error=exc.error))
    except Exception as exc:  # the co-process boundary: a line must never end the hook
        logger.exception("answering a message failed")
        return _malformed_answer(
            ParsedMessage(
                "malformed",
                error=HookError(code="internal-error", message=f"{type(exc).__name__}: {exc}"),
            )
        )


def hook_lines(
    lines: Iterable[str | bytes], vetter: Vetter | None = None, server: Server | str | None = None
) -> Iterable[str]:
    """One JSON line of answer per non-blank input line: the ``urlvet hook`` co-process loop."""
    for line in lines:
        if not line.strip():
            continue
        yield json_dumps(answer_line(line, vetter, server).to_json_dict())


# -- the Python SDK (mcp >= 2.3) ----------------------------------------------------------

ConsentUI: TypeAlias = Callable[
    [ConsentSummary, "ElicitRequestURLParams"], Awaitable["ElicitResult | str | bool"]
]
"""``async (summary, params) -> ElicitResult | "accept" | "decline" | "cancel" | bool``.

Called only for URLs urlvet allows or warns about; it must show ``summary`` (the warnings too)
and, when the person chooses to open the link, open ``summary.href``.
"""


def _require_mcp() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("urlvet's MCP hook needs the MCP SDK: pip install 'urlvet[mcp]'") from exc


def _server_of(server: Server | str, server_name: str | None) -> Server:
    srv = as_server(server, name=server_name)
    if srv is None:  # pragma: no cover - as_server only returns None for None
        raise InputError("a server is required")
    if server_name is not None and srv.name is None:
        srv = Server(name=server_name, url=srv.url, parsed=srv.parsed)
    return srv


def _as_elicit_result(value: object) -> ElicitResult:
    from mcp.types import ElicitResult

    if isinstance(value, ElicitResult):
        # URL mode carries no content: whatever the UI put there stays on this side.
        return ElicitResult(action=value.action)
    if value is True or value == "accept":
        return ElicitResult(action="accept")
    if value == "cancel":
        return ElicitResult(action="cancel")
    if value is not False and value != "decline":
        logger.warning("the consent UI returned a %s; declining", type(value).__name__)
    return ElicitResult(action="decline")


def guard_elicitation(
    consent_ui: ConsentUI,
    vetter: Vetter | None = None,
    *,
    server: Server | str,
    server_name: str | None = None,
    inner: ElicitationFnT | None = None,
    on_block: Callable[[ConsentSummary], Awaitable[None]] | None = None,
) -> ElicitationFnT:
    """An ``elicitation_callback`` for ``mcp.Client``/``mcp.ClientSession`` that vets URLs.

    - A URL-mode elicitation whose URL urlvet blocks is declined at once; ``consent_ui`` never
      sees it (``on_block``, if given, is told, for a log or a notice).
    - An allowed or warned URL goes to ``consent_ui(summary, params)`` with its
      :class:`ConsentSummary`; its answer is returned (URL mode carries no content).
    - A form-mode elicitation passes through untouched to ``inner`` (declined as unsupported
      when there is none, as the SDK does without a callback).

    ``server`` is the server as *your* configuration knows it: its URL or ``"stdio"`` (with
    ``server_name``), or a :class:`~urlvet.server.Server`. Never pass what the server reports
    about itself (``client.server_info``). The callback keeps no state, so the SDK may run
    several elicitations at once. It fails closed: if vetting or the UI raises, it declines.
    """
    _require_mcp()
    from mcp.types import INVALID_REQUEST, ElicitRequestURLParams, ElicitResult, ErrorData

    srv = _server_of(server, server_name)
    v = _resolve(vetter)

    async def elicitation_callback(
        context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        if not isinstance(params, ElicitRequestURLParams):
            if inner is not None:
                return await inner(context, params)
            return ErrorData(code=INVALID_REQUEST, message="Elicitation not supported")
        try:
            verdict = await v.avet(params.url, srv, message=params.message)
            summary = ConsentSummary.from_verdict(verdict, srv, params.message)
        except Exception:
            logger.exception("vetting a URL elicitation failed; declining")
            return ElicitResult(action="decline")
        if verdict.decision is Decision.BLOCK:
            logger.info("declined a blocked URL from %s: %s", srv.label(), verdict.codes)
            if on_block is not None:
                try:
                    await on_block(summary)
                except Exception:
                    logger.exception("on_block raised; the URL stays declined")
            return ElicitResult(action="decline")
        try:
            chosen = await consent_ui(summary, params)
        except Exception:
            logger.exception("the consent UI raised; declining")
            return ElicitResult(action="decline")
        return _as_elicit_result(chosen)

    return elicitation_callback


@dataclass(frozen=True)
class VettedElicitation:
    """One URL elicitation from a ``-32042`` error, vetted."""

    params: ElicitRequestURLParams
    """The elicitation as the server sent it."""
    verdict: Verdict
    """urlvet's verdict on its URL."""
    summary: ConsentSummary
    """What the consent screen shows."""
    result: ElicitResult | None = field(default=None)
    """The answer, once given (always a decline when blocked)."""

    @property
    def blocked(self) -> bool:
        """True when urlvet blocks the URL: it must not be offered or opened."""
        return self.verdict.decision is Decision.BLOCK


def _elicitations_of(error: MCPError | ErrorData) -> list[ElicitRequestURLParams]:
    _require_mcp()
    from mcp import UrlElicitationRequiredError
    from mcp.types import ErrorData

    data = error if isinstance(error, ErrorData) else getattr(error, "error", None)
    if not isinstance(data, ErrorData):
        raise InputError(f"not an MCP error: {type(error).__name__}")
    if data.code != URL_ELICITATION_REQUIRED:
        raise InputError(f"MCP error {data.code} is not -32042 (URL elicitation required)")
    try:
        return list(UrlElicitationRequiredError.from_error(data).elicitations)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise InputError(f"the server's -32042 error is malformed: {exc}") from None


async def vet_elicitation_error(
    error: MCPError | ErrorData,
    vetter: Vetter | None = None,
    *,
    server: Server | str,
    server_name: str | None = None,
) -> tuple[VettedElicitation, ...]:
    """Vet every URL elicitation of a ``-32042`` error (``mcp.MCPError`` or its ``ErrorData``).

    Raises :class:`~urlvet.errors.InputError` when the error is not -32042 or is malformed; the
    caller then opens nothing and does not retry.
    """
    srv = _server_of(server, server_name)
    v = _resolve(vetter)
    out = []
    for params in _elicitations_of(error):
        verdict = await v.avet(params.url, srv, message=params.message)
        out.append(
            VettedElicitation(
                params, verdict, ConsentSummary.from_verdict(verdict, srv, params.message)
            )
        )
    return tuple(out)


async def guard_elicitation_error(
    error: MCPError | ErrorData,
    consent_ui: ConsentUI,
    vetter: Vetter | None = None,
    *,
    server: Server | str,
    server_name: str | None = None,
) -> tuple[VettedElicitation, ...]:
    """Vet a ``-32042`` error's elicitations and ask the person about those not blocked.

    Blocked ones are declined without reaching ``consent_ui``; the others are shown one after
    the other. Retry the failed request only when every result is ``accept``.
    """
    from mcp.types import ElicitResult

    out = []
    for item in await vet_elicitation_error(error, vetter, server=server, server_name=server_name):
        if item.blocked:
            result = ElicitResult(action="decline")
        else:
            try:
                result = _as_elicit_result(await consent_ui(item.summary, item.params))
            except Exception:
                logger.exception("the consent UI raised; declining")
                result = ElicitResult(action="decline")
        out.append(VettedElicitation(item.params, item.verdict, item.summary, result))
    return tuple(out)


__all__ = [
    "INTERACTION_DECLINED",
    "INTERACTION_REQUIRED",
    "URL_ELICITATION_REQUIRED",
    "ConsentUI",
    "HookAnswer",
    "HookError",
    "ParsedMessage",
    "UrlRequest",
    "VettedElicitation",
    "VettedRequest",
    "aanswer",
    "answer",
    "answer_line",
    "guard_elicitation",
    "guard_elicitation_error",
    "hook_lines",
    "parse_message",
    "vet_elicitation_error",
]
