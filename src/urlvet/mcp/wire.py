"""The one parser of every MCP wire shape that carries a URL for a person to open.

Five shapes, in three protocol revisions (``tests/data/mcp/`` holds their examples):

- draft user-interaction proposal (spec PR #475): the server-to-client ``interaction/create``
  request, ``params: {id, type: "ua", interaction: {url, message?}}``, and the
  ``-32003 interaction_required`` error whose ``data`` is ``{id, type: "ua", url, message?}``.
  Its ``message`` is a **TextContent** object, ``{"type": "text", "text": ...}``;
- 2025-11-25: the ``elicitation/create`` request in URL mode, ``params: {mode: "url",
  elicitationId, url, message}``, and the ``-32042`` error whose ``data.elicitations`` lists
  several such params;
- 2026-07-28: a result with ``resultType: "input_required"`` whose ``inputRequests`` map keys to
  embedded requests; the ``elicitation/create`` ones in URL mode carry ``{mode, url, message}``.

Two modes read them:

- **strict** (:func:`parse_message`), for the hook and the proxy: a message that claims a shape
  but breaks it is ``malformed``, with an error and no URL, so that it is declined;
- **lenient** (:func:`url_requests`), for ``urlvet audit`` reading logs: a missing ``jsonrpc``
  member is assumed, batches are read, and a message that breaks its shape is reported as a
  problem while every URL in it is still found, so an auditor never misses one.

Earlier variants of the draft are read too: ``url``/``message`` beside ``type`` instead of in
``interaction``, ``interactionId``, and ``data.interaction``/``data.interactions`` in -32003.
A plain string ``message`` is accepted wherever the draft expects TextContent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from urlvet.text import one_line

INTERACTION_REQUIRED = -32003
"""The draft user-interaction proposal's error: an interaction is needed first."""
INTERACTION_DECLINED = -32099
"""The draft's error answer to ``interaction/create`` when the person does not consent."""
URL_ELICITATION_REQUIRED = -32042
"""2025-11-25: URL elicitations are needed before the request can be processed."""
PARSE_ERROR = -32700
"""JSON-RPC: the text is not JSON."""
INVALID_REQUEST = -32600
"""JSON-RPC: the message is not a valid request."""

MAX_LINE = 1 << 20
"""The longest JSON-RPC message the hook reads (1 MiB); longer ones are refused and declined."""

KEY_DISPLAY_LIMIT = 40
"""Characters of a server-chosen key or mode quoted in an error message."""

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

MessageForm = Literal["text-content", "string", "absent"]
"""How the server wrote its message: a draft TextContent object, a plain string, or not at all."""

JsonId: TypeAlias = str | int
"""A JSON-RPC id (never a boolean)."""


class HookError(BaseModel):
    """Why a message could not be read as the wire shape it claims to be."""

    model_config = ConfigDict(frozen=True)

    code: str = Field(description="A stable name: invalid-json, not-json-rpc, missing-url, ...")
    message: str = Field(description="What is wrong, for the person who reads the log.")


@dataclass(frozen=True, slots=True)
class UrlRequest:
    """A URL found in a message, before vetting."""

    key: str | None
    """The interaction id (draft), the elicitationId (2025-11-25) or the inputRequests key
    (2026-07-28)."""
    url: str
    """The URL as the server sent it."""
    message: str | None
    """The text the server asks the client to show with it (a TextContent's ``text``)."""
    index: int = 0
    """Its position among the message's URL requests, in wire order (for -32042's list)."""
    message_form: MessageForm = "string"
    """How the message was written, so that a rewrite keeps the same form."""


@dataclass(frozen=True, slots=True)
class ParsedMessage:
    """A JSON-RPC message read as one of the wire shapes."""

    shape: WireShape
    """The shape recognised, ``other`` when no URL is ours to vet, ``malformed`` when broken."""
    protocol: ProtocolEra | None = None
    """The protocol revision of that shape (kept for a malformed message that claims one)."""
    id: JsonId | None = None
    """The JSON-RPC id: the server's request id, or for results and errors the client's."""
    requests: tuple[UrlRequest, ...] = ()
    """The URL requests, in wire order (lenient mode fills this for malformed messages too)."""
    passthrough: tuple[str, ...] = ()
    """2026-07-28 input requests that are not URL elicitations (form, sampling, roots)."""
    request_state: str | None = None
    """2026-07-28: the ``requestState`` to echo on the retried request."""
    error: HookError | None = None
    """Why the message is malformed."""
    declinable_keys: tuple[str, ...] = ()
    """For a malformed input_required result: the keys that can still be declined."""
    is_request: bool = False
    """True when the message is a request (it has a method), so it expects a response."""
    claimed: WireShape | None = None
    """For a malformed message: the URL shape it claims to be (None when none)."""

    @property
    def carries_urls(self) -> bool:
        """True for the five URL shapes and for a malformed message claiming one of them."""
        return self.shape not in ("other", "malformed") or self.claimed is not None


class MalformedMessage(Exception):
    """Raised inside the parser (and the hook's line reader) when a message breaks its shape."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.error = HookError(code=code, message=message)


def parse_message(data: Any, *, lenient: bool = False) -> ParsedMessage:
    """Read one decoded JSON-RPC message as a wire shape. Never raises.

    Strict (the default, for the hook and the proxy): a message that claims a wire shape but
    breaks it gives shape ``malformed`` with an error, keeping its id, protocol and the shape
    it claims (``claimed``) so that it can still be declined, and no URL requests.

    ``lenient`` (for logs): a missing ``jsonrpc`` member is assumed, and a malformed message
    still lists every ``url`` it holds in ``requests`` (a non-string URL as its JSON text).
    """
    if not isinstance(data, dict):
        return ParsedMessage(
            "malformed",
            error=HookError(
                code="not-json-rpc",
                message=f"a JSON-RPC message is a JSON object, not {_json_type(data)}",
            ),
        )
    if lenient and "jsonrpc" not in data:
        data = {**data, "jsonrpc": "2.0"}
    msg_id = data.get("id")
    good_id: JsonId | None = (
        msg_id if isinstance(msg_id, str | int) and not isinstance(msg_id, bool) else None
    )
    method = data.get("method")
    # The claim is read before anything is checked, so that a broken message that a client
    # could still take for a URL request is declined, never passed on as "not ours".
    protocol, claimed = _claim(data)
    try:
        if data.get("jsonrpc") != "2.0":
            raise MalformedMessage("not-json-rpc", 'the message lacks "jsonrpc": "2.0"')
        if "method" in data:
            if not isinstance(method, str):
                raise MalformedMessage("not-json-rpc", "the method is not a string")
            if method == "interaction/create":
                return _parse_interaction_create(data, good_id)
            if method == "elicitation/create":
                return _parse_elicitation_create(data, good_id)
            return ParsedMessage("other", id=good_id, is_request=True)
        if "error" in data:
            error = data["error"]
            code = error.get("code") if isinstance(error, dict) else None
            if not isinstance(code, int | float) or isinstance(code, bool):
                raise MalformedMessage("not-json-rpc", "the error is not an object with a code")
            # A JavaScript client reads -32042.0 as -32042: so does this parser (== compares).
            if code == INTERACTION_REQUIRED:
                return _parse_interaction_required(error, good_id)
            if code == URL_ELICITATION_REQUIRED:
                return _parse_url_elicitation_required(error, good_id)
            return ParsedMessage("other", id=good_id)
        if "result" in data:
            result = data["result"]
            if isinstance(result, dict) and result.get("resultType") == "input_required":
                return _parse_input_required(result, good_id)
            return ParsedMessage("other", id=good_id)
        raise MalformedMessage("not-json-rpc", "the message has no method, result or error")
    except MalformedMessage as exc:
        declinable: tuple[str, ...] = ()
        result = data.get("result")
        if protocol == "2026-07-28" and isinstance(result, dict):
            requests = result.get("inputRequests")
            if isinstance(requests, dict):
                declinable = tuple(k for k, v in requests.items() if _is_url_like(v))
        found: tuple[UrlRequest, ...] = ()
        if lenient and claimed is not None:
            found = tuple(
                UrlRequest(None, url, message, n)
                for n, (url, message) in enumerate(_every_url(data))
            )
        return ParsedMessage(
            "malformed",
            protocol=protocol,
            id=good_id,
            requests=found,
            error=exc.error,
            request_state=_state_of(data),
            declinable_keys=declinable,
            is_request=isinstance(method, str),
            claimed=claimed,
        )


_CLAIMS: dict[object, tuple[ProtocolEra, WireShape]] = {
    "interaction/create": ("draft", "interaction/create"),
    "elicitation/create": ("2025-11-25", "elicitation/create"),
    INTERACTION_REQUIRED: ("draft", "interaction_required"),
    URL_ELICITATION_REQUIRED: ("2025-11-25", "url_elicitation_required"),
    "input_required": ("2026-07-28", "input_required"),
}


def _claim(data: dict[str, Any]) -> tuple[ProtocolEra | None, WireShape | None]:
    """The URL shape a message claims by its method, error code or resultType, if any."""
    key: object = None
    if "method" in data:
        key = data["method"] if isinstance(data["method"], str) else None
    elif "error" in data:
        error = data["error"]
        code = error.get("code") if isinstance(error, dict) else None
        if isinstance(code, int | float) and not isinstance(code, bool):
            key = code  # -32042.0 == -32042: a JavaScript client reads them alike
    elif isinstance(data.get("result"), dict):
        key = data["result"].get("resultType")
        key = key if isinstance(key, str) else None
    try:
        protocol, shape = _CLAIMS[key]
    except (KeyError, TypeError):
        return None, None
    return protocol, shape


# -- a fast pre-filter for relays ------------------------------------------------------------

_MARKERS = (b"interaction/create", b"elicitation/create", b"input_required", b'"error"')
_ESCAPED_ASCII = re.compile(rb"\\(?:u00[0-7]|/)")


def might_carry_url(raw: bytes | str) -> bool:
    """False only when the JSON text ``raw`` cannot be a URL request in any wire shape.

    For a relay's fast path: a line for which this is False is forwarded without being
    decoded. It is True when the text names a URL method (``interaction/create``,
    ``elicitation/create``), ``input_required``, or has an ``"error"`` member (the -32003 and
    -32042 codes can be written many ways: ``-32042.0``, ``-3.2042e4``), and whenever it holds
    a JSON escape that could spell an ASCII character (``\\u0065``, ``\\/``), since a
    parser decodes those into the same names.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    return any(m in data for m in _MARKERS) or _ESCAPED_ASCII.search(data) is not None


# -- lenient reading for logs -----------------------------------------------------------------


class FoundUrl(NamedTuple):
    """A URL-mode request found in a logged JSON-RPC message."""

    url: str
    """The URL the server asks the client to open."""
    message: str | None
    """The message the server shows with it (a TextContent's text)."""
    shape: str
    """Which wire shape carried it: ``mcp:`` and a :data:`WireShape`."""


class Extracted(NamedTuple):
    """What one JSON-RPC message (or batch) holds for an audit."""

    requests: list[FoundUrl]
    """The URL-mode requests, in message order."""
    problems: list[str]
    """Why a message that claims a URL shape breaks it (its URLs are still listed)."""


def url_requests(message: Any) -> Extracted:
    """The URL-mode requests in one decoded JSON-RPC message or batch: the lenient mode.

    Well-formed messages are read exactly as the hook reads them. A log may drop the
    ``jsonrpc`` member; it is assumed. A message that claims a shape but breaks it is a
    problem to report, and its URLs are still found and listed. Never raises.
    """
    out = Extracted([], [])
    if isinstance(message, list):
        for item in message:
            if isinstance(item, dict):
                sub = url_requests(item)
                out.requests.extend(sub.requests)
                out.problems.extend(sub.problems)
        return out
    if not isinstance(message, dict):
        return out
    parsed = parse_message(message, lenient=True)
    if parsed.shape == "malformed":
        if parsed.claimed is not None:
            reason = parsed.error.message if parsed.error is not None else "malformed"
            out.problems.append(f"malformed MCP message ({parsed.protocol}): {reason}")
            shape = f"mcp:{parsed.claimed}"
            out.requests.extend(FoundUrl(r.url, r.message, shape) for r in parsed.requests)
        return out
    shape = f"mcp:{parsed.shape}"
    out.requests.extend(FoundUrl(r.url, r.message, shape) for r in parsed.requests)
    return out


def _every_url(message: dict[str, Any]) -> Iterator[tuple[str, str | None]]:
    # Every "url" of a message that claims a URL shape, whatever else is wrong with it.
    params = message.get("params")
    if isinstance(params, dict):
        yield from _loose(params)
        inner = params.get("interaction")
        if isinstance(inner, dict):
            yield from _loose(inner)
    error = message.get("error")
    if isinstance(error, dict) and isinstance(error.get("data"), dict):
        data = error["data"]
        yield from _loose(data)
        inner = data.get("interaction")
        if isinstance(inner, dict):
            yield from _loose(inner)
        for key in ("interactions", "elicitations"):
            items = data.get(key)
            if isinstance(items, list):
                for item in items:
                    if isinstance(item, dict):
                        yield from _loose(item)
    result = message.get("result")
    if isinstance(result, dict) and isinstance(result.get("inputRequests"), dict):
        for item in result["inputRequests"].values():
            if isinstance(item, dict) and isinstance(item.get("params"), dict):
                yield from _loose(item["params"])


def _loose(holder: Mapping[str, Any]) -> Iterator[tuple[str, str | None]]:
    url = holder.get("url")
    if url is None:
        return
    if not isinstance(url, str):
        # Reported as its JSON text, which no browser opens: a finding, not a silent skip.
        url = json.dumps(url, ensure_ascii=False)
    yield url, _loose_text(holder.get("message"))


def _loose_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return str(value["text"])
    return None


# -- strict parsing of each shape ------------------------------------------------------------


def _is_url_like(value: Any) -> bool:
    if not isinstance(value, dict) or value.get("method") != "elicitation/create":
        return False
    params = value.get("params")
    # Without a mode an elicitation is a form (2026-07-28 elicitation.mdx, "Elicitation
    # Requests"); broken params could be anything, so they count as a URL request.
    return not isinstance(params, dict) or params.get("mode", "form") != "form"


def _state_of(data: dict[str, Any]) -> str | None:
    result = data.get("result")
    state = result.get("requestState") if isinstance(result, dict) else None
    return state if isinstance(state, str) else None


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _require_id(msg_id: JsonId | None, method: str) -> JsonId:
    if msg_id is None:
        raise MalformedMessage("missing-id", f"a {method} request needs a string or integer id")
    return msg_id


def _params(data: dict[str, Any], method: str) -> dict[str, Any]:
    params = data.get("params")
    if not isinstance(params, dict):
        raise MalformedMessage("invalid-params", f"the params of {method} are not an object")
    return params


def _url_of(params: Mapping[str, Any], where: str) -> str:
    url = params.get("url")
    if not isinstance(url, str):
        raise MalformedMessage("missing-url", f"{where} has no url string")
    return url


def _message_of(params: Mapping[str, Any], *keys: str) -> tuple[str | None, MessageForm]:
    """The message text and its form: a plain string, or the draft's TextContent object."""
    for key in keys:
        value = params.get(key)
        if value is None:
            continue
        if isinstance(value, str):
            return value, "string"
        if isinstance(value, dict) and value.get("type") == "text":
            text = value.get("text")
            if isinstance(text, str):
                return text, "text-content"
        raise MalformedMessage(
            "invalid-message",
            f'the {key} is neither a string nor a TextContent object {{"type": "text", '
            f'"text": "..."}}',
        )
    return None, "absent"


def _optional_str(params: Mapping[str, Any], key: str) -> str | None:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise MalformedMessage("invalid-params", f"the {key} is not a string")
    return str(value)


def _clip(value: object) -> str:
    return one_line(str(value), KEY_DISPLAY_LIMIT)


def _parse_interaction_create(data: dict[str, Any], msg_id: JsonId | None) -> ParsedMessage:
    # The draft's request: params {id, type: "ua", interaction: {url, message}}. Early drafts
    # put url and message beside type; those are read too, the nested object winning.
    msg_id = _require_id(msg_id, "interaction/create")
    params = _params(data, "interaction/create")
    if params.get("type") != "ua":
        # Other interaction types open no URL in a user agent: not ours to vet.
        return ParsedMessage("other", protocol="draft", id=msg_id, is_request=True)
    body: Mapping[str, Any] = params
    if "interaction" in params:
        nested = params["interaction"]
        if not isinstance(nested, dict):
            raise MalformedMessage("invalid-params", "the interaction is not an object")
        body = nested
    text, form = _message_of(body, "message", "description", "reason")
    request = UrlRequest(
        key=_optional_str(params, "id") or _optional_str(params, "interactionId"),
        url=_url_of(body, "the interaction"),
        message=text,
        message_form=form,
    )
    return ParsedMessage("interaction/create", "draft", msg_id, (request,), is_request=True)


def _parse_elicitation_create(data: dict[str, Any], msg_id: JsonId | None) -> ParsedMessage:
    msg_id = _require_id(msg_id, "elicitation/create")
    params = _params(data, "elicitation/create")
    mode = params.get("mode", "form")
    if mode == "form":
        return ParsedMessage("other", protocol="2025-11-25", id=msg_id, is_request=True)
    if mode != "url":
        raise MalformedMessage("invalid-params", f"unknown elicitation mode {_clip(mode)!r}")
    text, form = _message_of(params, "message")
    request = UrlRequest(
        key=_optional_str(params, "elicitationId"),
        url=_url_of(params, "the URL elicitation"),
        message=text,
        message_form=form,
    )
    return ParsedMessage("elicitation/create", "2025-11-25", msg_id, (request,), is_request=True)


def interaction_items(data: Any) -> list[Any] | None:
    """Where a -32003 error's ``data`` holds its interaction(s), or None when it names none.

    The draft's ``data`` is itself the interaction (``{id, type, url, message}``); earlier
    variants wrap one in ``interaction`` or several in ``interactions``.
    """
    if isinstance(data, dict) and isinstance(data.get("interactions"), list):
        return list(data["interactions"])
    if isinstance(data, dict) and isinstance(data.get("interaction"), dict):
        return [data["interaction"]]
    if isinstance(data, dict) and "url" in data:
        return [data]
    return None


def _parse_interaction_required(error: dict[str, Any], msg_id: JsonId | None) -> ParsedMessage:
    items = interaction_items(error.get("data"))
    if items is None:
        raise MalformedMessage("missing-url", "the -32003 error's data names no interaction")
    requests = []
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            raise MalformedMessage("invalid-params", f"interaction {n} is not an object")
        if item.get("type", "ua") != "ua":
            continue
        text, form = _message_of(item, "message", "description", "reason")
        requests.append(
            UrlRequest(
                key=_optional_str(item, "id") or _optional_str(item, "interactionId"),
                url=_url_of(item, f"interaction {n}"),
                message=text,
                index=n,
                message_form=form,
            )
        )
    return ParsedMessage("interaction_required", "draft", msg_id, tuple(requests))


def _parse_url_elicitation_required(error: dict[str, Any], msg_id: JsonId | None) -> ParsedMessage:
    data = error.get("data")
    items = data.get("elicitations") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise MalformedMessage("missing-url", "the -32042 error has no data.elicitations list")
    requests = []
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            raise MalformedMessage("invalid-params", f"elicitation {n} is not an object")
        if item.get("mode", "url") != "url":
            raise MalformedMessage("invalid-params", f"elicitation {n} is not in URL mode")
        text, form = _message_of(item, "message")
        requests.append(
            UrlRequest(
                key=_optional_str(item, "elicitationId"),
                url=_url_of(item, f"elicitation {n}"),
                message=text,
                index=n,
                message_form=form,
            )
        )
    return ParsedMessage("url_elicitation_required", "2025-11-25", msg_id, tuple(requests))


def _parse_input_required(result: dict[str, Any], msg_id: JsonId | None) -> ParsedMessage:
    state = result.get("requestState")
    if state is not None and not isinstance(state, str):
        raise MalformedMessage("invalid-params", "the requestState is not a string")
    requests_obj = result.get("inputRequests")
    if requests_obj is None:
        requests_obj = {}
    if not isinstance(requests_obj, dict):
        raise MalformedMessage("invalid-params", "the inputRequests are not an object")
    requests: list[UrlRequest] = []
    passthrough: list[str] = []
    for key, item in requests_obj.items():
        if not isinstance(item, dict) or not isinstance(item.get("method"), str):
            raise MalformedMessage("invalid-params", f"input request {_clip(key)!r} has no method")
        if item["method"] != "elicitation/create":
            passthrough.append(key)
            continue
        params = item.get("params")
        if not isinstance(params, dict):
            raise MalformedMessage("invalid-params", f"input request {_clip(key)!r} has no params")
        mode = params.get("mode", "form")
        if mode == "form":
            passthrough.append(key)
            continue
        if mode != "url":
            raise MalformedMessage("invalid-params", f"input request {_clip(key)!r}: unknown mode")
        text, form = _message_of(params, "message")
        requests.append(
            UrlRequest(
                key=key,
                url=_url_of(params, f"input request {_clip(key)!r}"),
                message=text,
                index=len(requests),
                message_form=form,
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


__all__ = [
    "INTERACTION_DECLINED",
    "INTERACTION_REQUIRED",
    "INVALID_REQUEST",
    "MAX_LINE",
    "PARSE_ERROR",
    "URL_ELICITATION_REQUIRED",
    "Extracted",
    "FoundUrl",
    "HookError",
    "JsonId",
    "MalformedMessage",
    "MessageForm",
    "ParsedMessage",
    "ProtocolEra",
    "UrlRequest",
    "WireShape",
    "interaction_items",
    "might_carry_url",
    "parse_message",
    "url_requests",
]
