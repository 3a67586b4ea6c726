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

Both modes read a message as the most lenient real client reads it (``docs/proxy-clients.md``:
the Python SDK's lax pydantic, the TypeScript SDK's ``JSON.parse``, the draft's variants), and
:func:`read_json` is the one reader of wire text: what it cannot read, no relay passes on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

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
    path: tuple[str | int, ...] = ()
    """Where the object holding ``url`` and ``message`` sits in the message (empty when not
    recorded), so that a warning is written beside the very URL it is about."""


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

    A message is read as the most lenient real client reads it (``docs/proxy-clients.md``):
    an error code as pydantic's lax ``int`` reads it (``"-32042"``, ``-32042.0``), an integral
    float id as an integer (a JavaScript client's), every ``url`` member where some client
    revision looks for one. A message that holds more than one of ``method``, ``result`` and
    ``error`` is read every way; when any reading is a URL request it is ``malformed``
    (ambiguous), so it is declined rather than read one way and shown another.

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
    good_id = _json_id(data.get("id"))
    method = data.get("method")
    # The claim is read before anything is checked, so that a broken message that a client
    # could still take for a URL request is declined, never passed on as "not ours".
    _, claimed = _claim(data)
    try:
        if data.get("jsonrpc") != "2.0":
            raise MalformedMessage("not-json-rpc", 'the message lacks "jsonrpc": "2.0"')
        if sum(member in data for member in ("method", "result", "error")) > 1:
            if claimed is None:
                return ParsedMessage("other", id=good_id, is_request=isinstance(method, str))
            raise MalformedMessage(
                "ambiguous",
                "the message holds more than one of method, result and error, and one "
                "reading of it is a URL request",
            )
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
            code = error_code(error.get("code")) if isinstance(error, dict) else None
            if code is None:
                raise MalformedMessage("not-json-rpc", "the error is not an object with a code")
            if code == INTERACTION_REQUIRED:
                return _parse_interaction_required(error, good_id)
            if code == URL_ELICITATION_REQUIRED:
                return _parse_url_elicitation_required(error, good_id)
            return ParsedMessage("other", id=good_id)
        if "result" in data:
            result = data["result"]
            if _claims_input_required(result):
                return _parse_input_required(result, good_id)
            return ParsedMessage("other", id=good_id)
        raise MalformedMessage("not-json-rpc", "the message has no method, result or error")
    except MalformedMessage as exc:
        return _malformed(data, exc.error, good_id, lenient=lenient)


def _malformed(
    data: dict[str, Any], error: HookError, msg_id: JsonId | None, *, lenient: bool
) -> ParsedMessage:
    """A broken message, keeping what it claims, so that it can still be declined."""
    protocol, claimed = _claim(data)
    declinable: tuple[str, ...] = ()
    result = data.get("result")
    if protocol == "2026-07-28" and isinstance(result, dict):
        requests = result.get("inputRequests")
        if isinstance(requests, dict):
            declinable = tuple(k for k, v in requests.items() if _is_url_like(v))
    found: tuple[UrlRequest, ...] = ()
    if lenient and claimed is not None:
        found = tuple(
            UrlRequest(None, url, message, n) for n, (url, message) in enumerate(_every_url(data))
        )
    return ParsedMessage(
        "malformed",
        protocol=protocol,
        id=msg_id,
        requests=found,
        error=error,
        request_state=_state_of(data),
        declinable_keys=declinable,
        is_request=isinstance(data.get("method"), str),
        claimed=claimed,
    )


_LAX_INT: TypeAdapter[int] = TypeAdapter(int)


def error_code(value: Any) -> int | None:
    """An error ``code`` as the most lenient client reads it, or None when none reads one.

    The Python SDK validates ``code: int`` with pydantic in lax mode, which takes ``"-32042"``,
    ``" -32042 "``, ``"-32042.0"`` and ``-32042.0``; a JavaScript client takes any number
    that is an integer, ``-3.2042e4`` included (the JSON reader has made it ``-32042.0``).
    The same pydantic validator is used here, so the two readings cannot drift apart.
    """
    try:
        return _LAX_INT.validate_python(value)
    except (ValidationError, ValueError, TypeError, OverflowError):
        return None


def _json_id(value: Any) -> JsonId | None:
    """The JSON-RPC id as a client matches it: a string, or an integer (``1.0`` is 1 in
    JavaScript, where every number is a float)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str | int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _claims_input_required(result: Any) -> bool:
    # The Python SDK's InputRequiredResult has resultType default to "input_required": a result
    # that carries inputRequests without it may still be read as one.
    return isinstance(result, dict) and (
        result.get("resultType") == "input_required" or "inputRequests" in result
    )


_CLAIMS: dict[object, tuple[ProtocolEra, WireShape]] = {
    "interaction/create": ("draft", "interaction/create"),
    "elicitation/create": ("2025-11-25", "elicitation/create"),
    INTERACTION_REQUIRED: ("draft", "interaction_required"),
    URL_ELICITATION_REQUIRED: ("2025-11-25", "url_elicitation_required"),
    "input_required": ("2026-07-28", "input_required"),
}


def _claim(data: dict[str, Any]) -> tuple[ProtocolEra | None, WireShape | None]:
    """The URL shape a message claims by its method, error code or result, under any reading
    (a message that holds several of them claims the first URL shape found)."""
    keys: list[object] = []
    if isinstance(data.get("method"), str):
        keys.append(data["method"])
    error = data.get("error")
    if isinstance(error, dict):
        keys.append(error_code(error.get("code")))
    if _claims_input_required(data.get("result")):
        keys.append("input_required")
    for key in keys:
        if key in _CLAIMS:
            return _CLAIMS[key]
    return None, None


# -- the one reader of JSON text from the wire -------------------------------------------------

BIG_NUMBER_DIGITS = 4000
"""Longer integers are read as floats, as JavaScript reads every number (Python refuses to make
an int of more than 4,300 digits; ``JSON.parse`` gives ``Infinity``)."""


DEEP_READ_LIMIT = 64 << 10
"""The longest text the stack-based reader reads (64 KiB). Past Python's recursion limit
(about 1,000 levels, where no real message goes) text is read in Python, at about 3 us a
character (bench/relay_bench.py), so this bounds the time one message can hold the relay;
a longer text that deep is not read, and so never relayed."""


class UnreadableJson(ValueError):
    """The text is not JSON even under the most lenient reading a client applies."""


@dataclass(frozen=True, slots=True)
class JsonText:
    """One JSON text read off the wire."""

    value: Any
    """What it holds."""
    text: str
    """The text that was parsed (invalid UTF-8 replaced, a leading byte-order mark dropped)."""
    exact: bool
    """True when ``text`` is exactly the bytes received, so that forwarding those bytes
    forwards what was judged; False when a byte was replaced or dropped to read it."""


def _number(digits: str) -> int | float:
    return int(digits) if len(digits) <= BIG_NUMBER_DIGITS else float(digits)


_DECODER = json.JSONDecoder(parse_int=_number, strict=False)


def read_json(raw: bytes | str) -> JsonText:
    """Read one JSON text as leniently as any MCP client does. Raises :class:`UnreadableJson`.

    Node reads a line with ``Buffer.toString("utf8")``, which turns each invalid UTF-8 sequence
    into U+FFFD, and ``JSON.parse`` nests without a depth limit and takes numbers of any length;
    pydantic takes ``NaN`` and control characters never reach it unescaped from a conforming
    client but are read here anyway. So: invalid UTF-8 becomes U+FFFD, a leading byte-order
    mark is dropped, any integer is read (a very long one as a float, as JavaScript does) and
    any depth is read (iteratively once Python's recursive reader gives up). Duplicated keys
    keep the last value, as ``JSON.parse``, Python's ``json`` and pydantic's jiter all do.
    """
    exact = True
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text, exact = raw.decode("utf-8", "replace"), False
    else:
        text = raw
    if text.startswith("\ufeff"):
        text, exact = text[1:], False
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        if len(text) > DEEP_READ_LIMIT:
            raise UnreadableJson(
                f"nested deeper than the fast reader goes and longer than {DEEP_READ_LIMIT:,} "
                "characters: not read"
            ) from None
        try:
            value = _deep_decode(text)
        except ValueError as exc:  # scanstring's errors, and our own
            raise UnreadableJson(
                str(exc) if isinstance(exc, UnreadableJson) else f"invalid JSON: {exc}"
            ) from None
    except ValueError as exc:
        raise UnreadableJson(f"invalid JSON: {exc}") from None
    return JsonText(value, text, exact)


_WS = re.compile(r"[ \t\n\r]*")
_LITERALS: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "NaN": float("nan"),
    "Infinity": float("inf"),
    "-Infinity": float("-inf"),
}
_LITERAL = re.compile(r"-Infinity|Infinity|NaN|true|false|null")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def _deep_decode(text: str) -> Any:
    """The same reading as :data:`_DECODER`, with an explicit stack instead of recursion."""
    stack: list[tuple[list[Any] | dict[str, Any], str | None]] = []
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    value: Any = None
    while True:
        char = text[pos : pos + 1]
        if char in ("[", "{"):
            container: list[Any] | dict[str, Any] = [] if char == "[" else {}
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
            closer = "]" if char == "[" else "}"
            if text[pos : pos + 1] == closer:
                value, pos = container, pos + 1
            else:
                key = None
                if isinstance(container, dict):
                    key, pos = _object_key(text, pos)
                stack.append((container, key))
                continue
        elif char == '"':
            value, pos = _string(text, pos)
        elif (found := _NUMBER.match(text, pos)) is not None and found.end() > pos:
            number = found.group()
            value = float(number) if found.group(1) or found.group(2) else _number(number)
            pos = found.end()
        elif (literal := _LITERAL.match(text, pos)) is not None:
            value, pos = _LITERALS[literal.group()], literal.end()
        else:
            raise UnreadableJson(f"invalid JSON: unexpected text at character {pos}")
        while True:  # place the value, then close every container that ends here
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if not stack:
                if pos != len(text):
                    raise UnreadableJson(f"invalid JSON: extra data at character {pos}")
                return value
            container, key = stack[-1]
            if isinstance(container, list):
                container.append(value)
            else:
                assert key is not None
                container[key] = value
            closer = "]" if isinstance(container, list) else "}"
            sep = text[pos : pos + 1]
            if sep == ",":
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                if isinstance(container, dict):
                    key, pos = _object_key(text, pos)
                    stack[-1] = (container, key)
                break
            if sep != closer:
                raise UnreadableJson(f"invalid JSON: expected ',' or {closer!r} at {pos}")
            stack.pop()
            value, pos = container, pos + 1


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _string(text: str, pos: int) -> tuple[str, int]:
    found = _STRING.match(text, pos)
    if found is None:
        raise UnreadableJson(f"invalid JSON: unterminated string at character {pos}")
    value = _DECODER.decode(found.group())
    assert isinstance(value, str)
    return value, found.end()


def _object_key(text: str, pos: int) -> tuple[str, int]:
    if text[pos : pos + 1] != '"':
        raise UnreadableJson(f"invalid JSON: expected a key at character {pos}")
    key, pos = _string(text, pos)
    pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
    if text[pos : pos + 1] != ":":
        raise UnreadableJson(f"invalid JSON: expected ':' at character {pos}")
    return key, _WS.match(text, pos + 1).end()  # type: ignore[union-attr]


def dumps(value: Any) -> bytes:
    """``value`` as compact JSON text in UTF-8: what urlvet writes when it re-serialises.

    A lone surrogate (JSON allows ``"\\udfff"``) cannot be encoded as UTF-8; it is written as
    the same ``\\uXXXX`` escape, which every reader turns back into the same string.
    Raises :class:`UnreadableJson` for a value too deep to write.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except RecursionError:
        raise UnreadableJson("nested too deeply to write back") from None
    return text.encode("utf-8", "backslashreplace")


# -- a fast pre-filter for relays ------------------------------------------------------------

_MARKERS = (
    b"interaction/create",
    b"elicitation/create",
    b"input_required",
    b"inputRequests",
    b'"error"',
)
_ESCAPED_ASCII = re.compile(rb"\\(?:u00[0-7]|/)")


def might_carry_url(raw: bytes | str) -> bool:
    """False only when the JSON text ``raw`` cannot be a URL request under any client's reading.

    For a relay's fast path: a line for which this is False is forwarded without being
    decoded. Every reading in :func:`parse_message` that finds a URL request needs one of these
    in the decoded text: the method ``interaction/create`` or ``elicitation/create``,
    ``input_required`` or ``inputRequests`` (a result), or an ``"error"`` member (the -32003
    and -32042 codes can be written many ways: ``"-32042"``, ``-3.2042e4``). Decoding only
    changes text through escapes, and only an escape of an ASCII character (``\\u0065``,
    ``\\/``) can spell one of them; invalid UTF-8 decodes to U+FFFD, never to ASCII. So a text
    with none of the markers and no such escape is not a URL request, whatever reads it.
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
    return not isinstance(params, dict) or "url" in params or params.get("mode", "form") != "form"


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
    # put url and message beside type. A client of either reads its own place, so a url in
    # both places is two URL requests: a decoy in one cannot hide the other.
    msg_id = _require_id(msg_id, "interaction/create")
    params = _params(data, "interaction/create")
    bodies: list[tuple[Mapping[str, Any], tuple[str | int, ...]]] = []
    if "interaction" in params:
        nested = params["interaction"]
        if not isinstance(nested, dict):
            raise MalformedMessage("invalid-params", "the interaction is not an object")
        bodies.append((nested, ("params", "interaction")))
    if "url" in params:
        bodies.append((params, ("params",)))
    if not any("url" in body for body, _ in bodies):
        if params.get("type") != "ua":
            # Other interaction types open no URL in a user agent: not ours to vet.
            return ParsedMessage("other", protocol="draft", id=msg_id, is_request=True)
        raise MalformedMessage("missing-url", "the interaction has no url string")
    key = _optional_str(params, "id") or _optional_str(params, "interactionId")
    requests: list[UrlRequest] = []
    for body, path in bodies:
        if "url" not in body:
            continue
        text, form = _message_of(body, "message", "description", "reason")
        requests.append(
            UrlRequest(key, _url_of(body, "the interaction"), text, len(requests), form, path)
        )
    return ParsedMessage("interaction/create", "draft", msg_id, tuple(requests), is_request=True)


def _elicitation(
    params: Mapping[str, Any], where: str, key: str | None, index: int, path: tuple[str | int, ...]
) -> UrlRequest | None:
    """The URL request of one elicitation's params, or None for a form without a url.

    A ``url`` makes it a URL request whatever its ``mode`` says: the Python SDK reads params
    without a mode as URL mode (its URL params come first in the union and default the mode),
    and the TypeScript SDK hands a form request's raw params, url included, to its handler.
    """
    mode = params.get("mode", "form")
    if mode not in ("form", "url"):
        raise MalformedMessage(
            "invalid-params", f"{where}: unknown elicitation mode {_clip(mode)!r}"
        )
    if "url" not in params:
        if mode == "form":
            return None
        raise MalformedMessage("missing-url", f"{where} has no url string")
    text, form = _message_of(params, "message")
    return UrlRequest(key, _url_of(params, where), text, index, form, path)


def _parse_elicitation_create(data: dict[str, Any], msg_id: JsonId | None) -> ParsedMessage:
    msg_id = _require_id(msg_id, "elicitation/create")
    params = _params(data, "elicitation/create")
    request = _elicitation(
        params,
        "the URL elicitation",
        _optional_str(params, "elicitationId"),
        0,
        ("params",),
    )
    if request is None:
        return ParsedMessage("other", protocol="2025-11-25", id=msg_id, is_request=True)
    return ParsedMessage("elicitation/create", "2025-11-25", msg_id, (request,), is_request=True)


def interaction_items(data: Any) -> list[tuple[Any, tuple[str | int, ...]]] | None:
    """Every interaction a -32003 error's ``data`` holds, with its path under ``data``, or
    None when it names none.

    The draft's ``data`` is itself the interaction (``{id, type, url, message}``); earlier
    variants wrap one in ``interaction`` or several in ``interactions``. A client reads one of
    these places, so all are read: a decoy ``interactions`` list cannot hide ``data.url``.
    """
    if not isinstance(data, dict):
        return None
    items: list[tuple[Any, tuple[str | int, ...]]] = []
    if "url" in data:
        items.append((data, ()))
    if "interaction" in data:
        items.append((data["interaction"], ("interaction",)))
    listed = data.get("interactions")
    if isinstance(listed, list):
        items.extend((item, ("interactions", n)) for n, item in enumerate(listed))
    elif "interactions" in data:
        items.append((listed, ("interactions",)))
    return items or None


def _parse_interaction_required(error: dict[str, Any], msg_id: JsonId | None) -> ParsedMessage:
    items = interaction_items(error.get("data"))
    if items is None:
        raise MalformedMessage("missing-url", "the -32003 error's data names no interaction")
    requests: list[UrlRequest] = []
    for n, (item, path) in enumerate(items):
        if not isinstance(item, dict):
            raise MalformedMessage("invalid-params", f"interaction {n} is not an object")
        if "url" not in item and item.get("type", "ua") != "ua":
            continue
        text, form = _message_of(item, "message", "description", "reason")
        requests.append(
            UrlRequest(
                key=_optional_str(item, "id") or _optional_str(item, "interactionId"),
                url=_url_of(item, f"interaction {n}"),
                message=text,
                index=len(requests),
                message_form=form,
                path=("error", "data", *path),
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
        request = _elicitation(
            {"mode": "url", **item},
            f"elicitation {n}",
            _optional_str(item, "elicitationId"),
            n,
            ("error", "data", "elicitations", n),
        )
        if request is None:
            raise MalformedMessage("invalid-params", f"elicitation {n} is not in URL mode")
        requests.append(request)
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
        where = f"input request {_clip(key)!r}"
        if not isinstance(item, dict) or not isinstance(item.get("method"), str):
            raise MalformedMessage("invalid-params", f"{where} has no method")
        if item["method"] != "elicitation/create":
            passthrough.append(key)
            continue
        params = item.get("params")
        if not isinstance(params, dict):
            raise MalformedMessage("invalid-params", f"{where} has no params")
        path = ("result", "inputRequests", key, "params")
        request = _elicitation(params, where, key, len(requests), path)
        if request is None:
            passthrough.append(key)
        else:
            requests.append(request)
    return ParsedMessage(
        "input_required",
        "2026-07-28",
        msg_id,
        tuple(requests),
        tuple(passthrough),
        request_state=state,
    )


__all__ = [
    "BIG_NUMBER_DIGITS",
    "DEEP_READ_LIMIT",
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
    "JsonText",
    "MalformedMessage",
    "MessageForm",
    "ParsedMessage",
    "ProtocolEra",
    "UnreadableJson",
    "UrlRequest",
    "WireShape",
    "dumps",
    "error_code",
    "interaction_items",
    "might_carry_url",
    "parse_message",
    "read_json",
    "url_requests",
]
