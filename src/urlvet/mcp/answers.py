"""What urlvet sends back for a URL request: hook answers, declines, and the proxy's messages.

Two consumers:

- ``urlvet hook`` (a co-process the client asks): :func:`answer`, :func:`aanswer`,
  :func:`answer_line` and :func:`hook_lines` vet a message and return a :class:`HookAnswer`
  holding the responses the client can send; a line that cannot be decoded is declined by
  what can be read of its start (:func:`unreadable_answer`, :func:`lenient_claim`), and
  :func:`hook_json` writes an answer with the id as the server wrote it;
- ``urlvet proxy`` (between client and server): pure builders that turn a parsed
  server-to-client message (:func:`urlvet.mcp.wire.parse_message`, strict) and the verdicts on
  its URLs, in ``parsed.requests`` order, into the bytes to send. :func:`proxy_action` picks the
  right one; each is also public:

  ======================  ====================================================================
  decision                what the proxy does
  ======================  ====================================================================
  allow (or no URL)       forward the original bytes unchanged (``ProxyAction.to_client`` None)
  warn                    :func:`with_warnings`: the text the client shows begins with one
                          ``urlvet:`` line (:func:`warning_line`), then the server's message
  block, server request   :func:`decline_reply` to the server (draft ``-32099`` error, or
                          2025-11-25 ``{"action": "decline"}``); the client sees nothing
  block, input_required   :func:`retried_request`: the client's original request again, with a
                          new id, ``inputResponses`` declining the blocked keys and the
                          ``requestState`` echoed; the client sees only what follows
  block, error shapes     :func:`blocked_error` to the client (``-32003``/``-32042`` cannot be
                          declined to the server: nothing is sent back in those protocols)
  ======================  ====================================================================

Every message built here is checked in the tests against the JSON Schema of its protocol
revision (``tests/data/mcp/``; the draft's additions from its text).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from urlvet.consent import ConsentSummary, json_dumps
from urlvet.engine import Vetter, default_vetter
from urlvet.findings import Decision, Finding, Verdict
from urlvet.mcp.forms import VettedForm, with_forms
from urlvet.mcp.lines import OverlongLine
from urlvet.mcp.spans import Span, id_text, member_text, object_members, scan_object
from urlvet.mcp.wire import (
    INTERACTION_DECLINED,
    INVALID_REQUEST,
    MAX_LINE,
    HookError,
    JsonId,
    ParsedMessage,
    ProtocolEra,
    UrlRequest,
    WireShape,
    parse_message,
)
from urlvet.server import Server, as_server
from urlvet.text import one_line

logger = logging.getLogger("urlvet.mcp")

URL_BLOCKED = -32010
"""urlvet's JSON-RPC error to a client when it blocked a URL it cannot decline for it.

In the band MCP leaves to implementations (-32000 to -32019; from 2026-07-28 the codes -32020 to
-32099 are allocated by the specification, as the Python SDK's ``mcp_types.jsonrpc`` records),
and used by no SDK or revision (-32000, -32001, -32002 and the draft's -32003 are). Its message
says which URL was blocked and why; ``data.urlvet`` lists each with its rule codes."""

WARNING_LINE_LIMIT = 300
"""Characters of the ``urlvet:`` line (the finding's text is clipped to fit)."""

URL_QUOTE_LIMIT = 200
"""Characters of a blocked URL quoted in an error message."""

DRAFT_DECLINE_MESSAGE = "User did not consent to the interaction."
"""The draft's text for the ``-32099`` error (user_interaction.mdx, Client Response)."""

Answer = Literal["decline", "ask-user", "pass-through"]
"""What happens to one request: declined by urlvet, shown to the person, or not ours to vet."""

ProxyDid = Literal["forwarded", "forwarded-with-warning", "declined"]
"""What the proxy did with a message, as its log says."""

_URL_SHAPES: frozenset[WireShape] = frozenset(
    {
        "interaction/create",
        "interaction_required",
        "elicitation/create",
        "url_elicitation_required",
        "input_required",
    }
)


class VettedRequest(BaseModel):
    """One URL a server asked to open, with its verdict, summary and prepared answers."""

    model_config = ConfigDict(frozen=True)

    key: str | None = Field(
        description="The elicitationId (2025-11-25), the interaction id (draft) or the "
        "inputRequests key (2026-07-28)."
    )
    url: str = Field(description="The URL as the server sent it.")
    message: str | None = Field(description="The server's message text, as sent.")
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
    id_text: str | None = Field(
        default=None,
        description="The id exactly as the server wrote it (JSON text), where urlvet read it "
        "from the raw line: set when the id is not a string or integer (1.0) or the message "
        "could not be decoded. The response carries this id, and urlvet hook writes it there "
        "as written.",
    )
    decision: Decision | None = Field(
        description="The most serious decision over the message's URLs (allow when a URL "
        "shape carries none, block when malformed, None for other messages)."
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
    forms: tuple[VettedForm, ...] = Field(
        default=(), description="Every form-mode elicitation the message carries, vetted."
    )

    def to_json_dict(self) -> dict[str, Any]:
        """A plain JSON-ready dict (enums as strings)."""
        return self.model_dump(mode="json")


# -- the replies each protocol expects (pure) -------------------------------------------------


def elicit_result(action: Literal["accept", "decline", "cancel"]) -> dict[str, Any]:
    """An ``ElicitResult`` for URL mode: ``{"action": ...}`` and no content (both revisions)."""
    return {"action": action}


def rpc_result(msg_id: JsonId, result: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC result response."""
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def rpc_error(msg_id: JsonId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response (``id`` omitted when unknown, as the 2026-07-28 schema allows)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    out: dict[str, Any] = {"jsonrpc": "2.0"}
    if msg_id is not None:
        out["id"] = msg_id
    out["error"] = error
    return out


def draft_decline(msg_id: JsonId) -> dict[str, Any]:
    """The draft's answer to an ``interaction/create`` the person does not consent to."""
    return rpc_error(msg_id, INTERACTION_DECLINED, DRAFT_DECLINE_MESSAGE)


def decline_reply(parsed: ParsedMessage) -> dict[str, Any] | None:
    """The decline the server expects for a server-to-client URL request, or None.

    Draft ``interaction/create``: the ``-32099`` error; 2025-11-25 ``elicitation/create``:
    the result ``{"action": "decline"}``. Also for a malformed request of those revisions that
    has an id. None for every other shape (an error or a result cannot be declined this way).
    """
    if parsed.id is None or not parsed.is_request:
        return None
    if parsed.shape == "interaction/create" or (
        parsed.shape == "malformed" and parsed.protocol == "draft"
    ):
        return draft_decline(parsed.id)
    if parsed.shape == "elicitation/create" or (
        parsed.shape == "malformed" and parsed.protocol == "2025-11-25"
    ):
        return rpc_result(parsed.id, elicit_result("decline"))
    return None


def retried_request(
    original: Mapping[str, Any],
    parsed: ParsedMessage,
    responses: Mapping[str, Mapping[str, Any]],
    new_id: JsonId,
) -> dict[str, Any]:
    """2026-07-28: the client's ``original`` request retried with ``inputResponses``.

    ``params`` are the original's, with ``inputResponses`` set to ``responses`` and the
    ``requestState`` of the ``input_required`` result echoed (removed when the result has
    none: a state belongs to one round). ``_meta`` and every other member are kept as the
    client sent them. The id is ``new_id``: a request id is never reused within a session,
    so the proxy maps the final response back to the client's id (:func:`with_id`).
    """
    params = original.get("params")
    base = dict(params) if isinstance(params, Mapping) else {}
    base.pop("inputResponses", None)
    base.pop("requestState", None)
    base["inputResponses"] = {k: dict(v) for k, v in responses.items()}
    if parsed.request_state is not None:
        base["requestState"] = parsed.request_state
    out = {k: v for k, v in original.items() if k not in ("id", "params")}
    out["jsonrpc"] = "2.0"
    out["id"] = new_id
    out["params"] = base
    return out


def declined_retry(
    original: Mapping[str, Any],
    parsed: ParsedMessage,
    verdicts: Sequence[Verdict],
    new_id: JsonId,
) -> dict[str, Any]:
    """:func:`retried_request` declining every blocked URL key of ``parsed`` (and, for a
    malformed result, every key that looks like a URL elicitation). Other keys stay
    unanswered: the server asks again for what it still needs, and that is vetted in turn."""
    keys = list(parsed.declinable_keys) if parsed.shape == "malformed" else []
    keys += [
        r.key
        for r, v in zip(parsed.requests, verdicts, strict=True)
        if v.decision is Decision.BLOCK and r.key is not None
    ]
    return retried_request(original, parsed, {k: elicit_result("decline") for k in keys}, new_id)


def with_id(message: Mapping[str, Any], msg_id: JsonId) -> dict[str, Any]:
    """``message`` with its JSON-RPC id replaced (a retried request's answer, for the client)."""
    return {**message, "id": msg_id}


# -- the text a client shows --------------------------------------------------------------


def main_finding(verdict: Verdict) -> Finding | None:
    """The finding that matters most: the most severe, the first of equals."""
    best: Finding | None = None
    for f in verdict.findings:
        if best is None or f.severity.rank > best.severity.rank:
            best = f
    return best


def warning_line(verdict: Verdict) -> str:
    """One line starting ``urlvet:`` that says in plain words what is wrong with the URL.

    Hidden characters are shown as ``⟨U+XXXX⟩`` and the line is at most
    :data:`WARNING_LINE_LIMIT` characters, so the line can neither be hidden nor run on.
    """
    f = main_finding(verdict)
    if f is None:
        what = "check this link before you open it."
    else:
        what = f"check this link before you open it: {f.message} ({f.code})"
    return one_line(f"urlvet: {what}", WARNING_LINE_LIMIT)


def _prefixed(line: str, text: str | None) -> str:
    return line if not text else f"{line}\n{text}"


def blocked_reason(request: UrlRequest, verdict: Verdict) -> str:
    """One sentence: urlvet blocked this URL, and why."""
    f = main_finding(verdict)
    url = one_line(request.url, URL_QUOTE_LIMIT)
    why = f"{f.message} ({f.code})" if f is not None else "it is unsafe"
    return one_line(f"urlvet blocked the URL {url}: {why}", WARNING_LINE_LIMIT + URL_QUOTE_LIMIT)


def blocked_error(
    parsed: ParsedMessage, verdicts: Sequence[Verdict], msg_id: JsonId | None = None
) -> dict[str, Any]:
    """The JSON-RPC error a client gets instead of a message urlvet blocked.

    For the shapes nothing can be declined in on the client's behalf (``-32003``, ``-32042``,
    an ``input_required`` result when the original request is unknown, a malformed message).
    ``id`` is ``msg_id`` or the message's own; the code is :data:`URL_BLOCKED`; the message
    names the first blocked URL and its main finding; ``data.urlvet`` lists every blocked URL
    with its rule codes. No URL the client could open is kept anywhere else.
    """
    blocked = [
        (r, v)
        for r, v in zip(parsed.requests, verdicts, strict=True)
        if v.decision is Decision.BLOCK
    ]
    if blocked:
        message = blocked_reason(*blocked[0])
        if len(blocked) > 1:
            message += f" (and {len(blocked) - 1} more URL(s))"
    else:
        reason = parsed.error.message if parsed.error is not None else "the message is malformed"
        message = one_line(
            f"urlvet blocked a URL request it could not read: {reason}", WARNING_LINE_LIMIT
        )
    data = {
        "urlvet": {
            "decision": Decision.BLOCK.value,
            "shape": parsed.claimed or parsed.shape,
            "blocked": [
                {"url": r.url, "codes": list(v.codes), "reason": blocked_reason(r, v)}
                for r, v in blocked
            ],
        }
    }
    return rpc_error(msg_id if msg_id is not None else parsed.id, URL_BLOCKED, message, data)


def _body_path(
    parsed: ParsedMessage, request: UrlRequest, message: Mapping[str, Any]
) -> list[str | int]:
    """Where the object holding ``request``'s url and message sits in ``message``."""
    if request.path:
        return list(request.path)
    if parsed.shape == "interaction/create":
        params = message["params"]
        return ["params", "interaction"] if "interaction" in params else ["params"]
    if parsed.shape == "elicitation/create":
        return ["params"]
    if parsed.shape == "url_elicitation_required":
        return ["error", "data", "elicitations", request.index]
    if parsed.shape == "interaction_required":
        data = message["error"]["data"]
        if isinstance(data.get("interactions"), list):
            return ["error", "data", "interactions", request.index]
        if isinstance(data.get("interaction"), dict):
            return ["error", "data", "interaction"]
        return ["error", "data"]
    if parsed.shape == "input_required":
        assert request.key is not None
        return ["result", "inputRequests", request.key, "params"]
    raise ValueError(f"a {parsed.shape} message carries no URL to warn about")


def _replaced(node: Any, path: Sequence[str | int], key: str, value: Any) -> Any:
    """``node`` with ``node[path...][key] = value``, copying only the containers on the path."""
    if not path:
        return {**node, key: value}
    head, rest = path[0], path[1:]
    if isinstance(node, list):
        assert isinstance(head, int)
        out_list = list(node)
        out_list[head] = _replaced(node[head], rest, key, value)
        return out_list
    return {**node, head: _replaced(node[head], rest, key, value)}


def _get(node: Any, path: Sequence[str | int]) -> Any:
    for part in path:
        node = node[part]
    return node


_MESSAGE_KEYS = ("message", "description", "reason")


def with_warnings(
    message: Mapping[str, Any], parsed: ParsedMessage, verdicts: Sequence[Verdict]
) -> dict[str, Any]:
    """``message`` (as parsed into ``parsed``) with every warned URL's text prefixed.

    The text the client shows begins with :func:`warning_line`, a line break, then the
    server's original text. Where the text lives: the draft's ``message`` TextContent's
    ``text`` (``interaction/create``'s ``interaction``, ``-32003``'s ``data``); the
    ``message`` string of a 2025-11-25 ``elicitation/create`` or of each ``-32042``
    elicitation; each 2026-07-28 ``inputRequests`` entry's ``params.message``. A missing
    message is added in the revision's form. URLs, ids, allowed entries and every other
    member stay identical (the very same objects: only the containers on the way are copied).
    """
    out: Any = dict(message)
    for request, verdict in zip(parsed.requests, verdicts, strict=True):
        if verdict.decision is not Decision.WARN:
            continue
        path = _body_path(parsed, request, out)
        body = _get(out, path)
        line = warning_line(verdict)
        key = next((k for k in _MESSAGE_KEYS if body.get(k) is not None), "message")
        old = body.get(key)
        new: Any
        if isinstance(old, dict):  # TextContent: keep its annotations and _meta
            new = {**old, "text": _prefixed(line, request.message)}
        elif old is None and parsed.protocol == "draft":
            new = {"type": "text", "text": line}
        else:
            new = _prefixed(line, request.message)
        out = _replaced(out, path, key, new)
    assert isinstance(out, dict)
    return out


# -- the proxy's one call -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProxyAction:
    """What the proxy does with one server-to-client message."""

    did: ProxyDid
    """``forwarded``, ``forwarded-with-warning`` or ``declined`` (the log's words)."""
    decision: Decision | None
    """The most serious decision over the message's URLs (None when it carries none)."""
    to_client: dict[str, Any] | None = None
    """What the client gets instead of the original; None: forward the original bytes
    (``forwarded``) or send the client nothing (``declined`` with ``to_server`` set)."""
    to_server: dict[str, Any] | None = None
    """What the server gets: a decline reply, or the retried request (2026-07-28)."""


def proxy_action(
    message: Mapping[str, Any],
    parsed: ParsedMessage,
    verdicts: Sequence[Verdict],
    *,
    original_request: Mapping[str, Any] | None = None,
    retry_id: JsonId | None = None,
) -> ProxyAction:
    """Decide what the proxy sends for one server-to-client ``message``. Pure; never raises.

    ``parsed`` is ``parse_message(message)`` (strict), ``verdicts`` the verdicts on
    ``parsed.requests`` in order (none for a malformed message). For an ``input_required``
    result (or a malformed one), ``original_request`` is the client's request it answers and
    ``retry_id`` a fresh id for the retry; without them a block becomes an error to the client.

    - no URL shape (a broken message that claims none included), or every URL allowed:
      ``forwarded``, nothing built;
    - a malformed message that claims a URL shape, or any URL blocked: ``declined`` (see the
      module table); the warned and allowed URLs of that message are not shown either;
    - else some URL warned: ``forwarded-with-warning`` with :func:`with_warnings`.
    """
    if parsed.shape == "other" or (parsed.shape == "malformed" and parsed.claimed is None):
        # Not a URL request, even a broken one: the client reads it as it would without us.
        return ProxyAction("forwarded", None)
    if parsed.shape == "malformed" or any(v.decision is Decision.BLOCK for v in verdicts):
        if parsed.error is not None and parsed.error.code == "ambiguous":
            # A request to one client's reading, a response to another's: answer both sides.
            refusal = None
            if parsed.is_request and parsed.id is not None:
                reason = f"urlvet declined it: {parsed.error.message}"
                refusal = rpc_error(parsed.id, INVALID_REQUEST, reason)
            return ProxyAction(
                "declined",
                Decision.BLOCK,
                to_client=blocked_error(parsed, verdicts),
                to_server=refusal,
            )
        decline = decline_reply(parsed)
        if decline is not None:
            return ProxyAction("declined", Decision.BLOCK, to_server=decline)
        if (
            parsed.protocol == "2026-07-28"
            and original_request is not None
            and retry_id is not None
        ):
            retry = declined_retry(original_request, parsed, verdicts, retry_id)
            return ProxyAction("declined", Decision.BLOCK, to_server=retry)
        if parsed.shape == "malformed" and parsed.is_request and parsed.id is not None:
            # A server request of no known revision: tell the server, show the client nothing.
            reason = parsed.error.message if parsed.error is not None else "malformed"
            error = rpc_error(parsed.id, INVALID_REQUEST, f"urlvet declined it: {reason}")
            return ProxyAction("declined", Decision.BLOCK, to_server=error)
        return ProxyAction("declined", Decision.BLOCK, to_client=blocked_error(parsed, verdicts))
    decision = _worst(verdicts) or Decision.ALLOW
    if decision is Decision.WARN:
        return ProxyAction(
            "forwarded-with-warning", decision, to_client=with_warnings(message, parsed, verdicts)
        )
    return ProxyAction("forwarded", decision)


def _worst(verdicts: Iterable[Verdict]) -> Decision | None:
    return max((v.decision for v in verdicts), key=lambda d: d.rank, default=None)


# -- the hook's answers ---------------------------------------------------------------------


def _prepared(parsed: ParsedMessage) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(on_open, on_decline) for one request of ``parsed``."""
    if parsed.shape == "elicitation/create":
        assert parsed.id is not None
        return rpc_result(parsed.id, elicit_result("accept")), rpc_result(
            parsed.id, elicit_result("decline")
        )
    if parsed.shape == "interaction/create":
        assert parsed.id is not None
        return rpc_result(parsed.id, {}), draft_decline(parsed.id)
    if parsed.shape == "input_required":
        return elicit_result("accept"), elicit_result("decline")
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
    decision = _worst(v.verdict for v in vetted)
    if decision is None and parsed.shape in _URL_SHAPES:
        decision = Decision.ALLOW  # a URL shape with no URL in it: nothing to refuse
    asking = [v for v in vetted if v.answer == "ask-user"]
    response: dict[str, Any] | None = None
    pending: list[str] = [v.key or "" for v in asking]
    retry: bool | None = None
    if parsed.shape in ("elicitation/create", "interaction/create"):
        if not asking:
            response = vetted[0].on_decline
    elif parsed.shape == "input_required":
        responses = {v.key: elicit_result("decline") for v in vetted if v.answer == "decline"}
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
        response = {"inputResponses": {k: elicit_result("decline") for k in parsed.declinable_keys}}
        if parsed.request_state is not None:
            response["requestState"] = parsed.request_state
    else:
        response = decline_reply(parsed)
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
    return with_forms(_assemble(parsed, srv, verdicts), message, v, srv)  # forms: UV701-UV706


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
    return with_forms(_assemble(parsed, srv, verdicts), message, v, srv)  # forms: UV701-UV706


def answer_line(
    line: str | bytes | OverlongLine,
    vetter: Vetter | None = None,
    server: Server | str | None = None,
) -> HookAnswer:
    """:func:`answer` for one line of JSON text, as ``urlvet hook`` reads it. Never raises.

    A line longer than :data:`~urlvet.mcp.wire.MAX_LINE` (or an :class:`OverlongLine`) is not
    read, and a line that is not JSON cannot be: both are declined by what can be read of
    their start (:func:`unreadable_answer`). A request whose id the wire parser cannot
    address (``1.0``) is declined with its id as written (``id_text``).
    """
    try:
        if isinstance(line, OverlongLine) or len(line) > MAX_LINE:
            head, length = (
                (line.head, line.length) if isinstance(line, OverlongLine) else (line, len(line))
            )
            message = f"the message is longer than {MAX_LINE:,} bytes ({length:,}); it was not read"
            return unreadable_answer(
                _raw(head[:MAX_LINE]), HookError(code="too-long", message=message)
            )
        try:
            data = json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            error = HookError(code="invalid-json", message=f"the line is not valid JSON: {reason}")
            return unreadable_answer(_raw(line), error)
        return _with_id_as_written(answer(data, vetter, server), data, line)
    except Exception as exc:  # the co-process boundary: a line must never end the hook
        logger.exception("answering a message failed")
        return _malformed_answer(
            ParsedMessage(
                "malformed",
                error=HookError(code="internal-error", message=f"{type(exc).__name__}: {exc}"),
            )
        )


def _raw(line: str | bytes) -> bytes:
    return line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line


_METHOD_CLAIMS: dict[str, tuple[ProtocolEra, WireShape]] = {
    "interaction/create": ("draft", "interaction/create"),
    "elicitation/create": ("2025-11-25", "elicitation/create"),
}
_CODE_CLAIMS: dict[float, tuple[ProtocolEra, WireShape]] = {
    -32003.0: ("draft", "interaction_required"),
    -32042.0: ("2025-11-25", "url_elicitation_required"),
}


def _json_scalar(text: bytes | None) -> Any:
    """The JSON scalar ``text`` decodes to, or None when it is no complete scalar."""
    if text is None or text[:1] in (b"{", b"["):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _number(value: Any) -> float | None:
    """An error code as a lenient client reads it: a number, or a string holding one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _member(
    text: bytes, scan: tuple[dict[str, Span], tuple[str, int] | None], name: str
) -> bytes | None:
    """The text of member ``name`` of an object scanned as ``scan`` (its start, if cut off)."""
    members, cut = scan
    if name in members:
        start, end = members[name]
        return text[start:end]
    return text[cut[1] :] if cut is not None and cut[0] == name else None


def lenient_claim(text: bytes) -> ParsedMessage:
    """What can be read of the start of a message that cannot be decoded (cut off, or not
    JSON): the URL shape it claims, its id and, for an ``input_required`` result, the keys
    that can be declined. A ``malformed`` :class:`ParsedMessage` with no error, never URLs.

    Read as a lenient client would: an escaped name is the name, the last of repeated names
    counts, an error code may be a string (``"-32042"``) or written as ``-3.2042e4``.
    """
    return _lenient(text)[0]


def _lenient(text: bytes) -> tuple[ParsedMessage, str | None]:
    """:func:`lenient_claim`, and the id as written (:func:`~urlvet.mcp.spans.id_text`)."""
    top = scan_object(text)
    method = _json_scalar(_member(text, top, "method"))
    id_span = top[0].get("id")
    written = id_text(text, id_span) if id_span is not None else None
    msg_id = _json_scalar(written.encode("utf-8")) if written is not None else None
    error, result = _member(text, top, "error"), _member(text, top, "result")
    protocol: ProtocolEra | None = None
    claimed: WireShape | None = None
    keys: tuple[str, ...] = ()
    state: str | None = None
    if isinstance(method, str):
        protocol, claimed = _METHOD_CLAIMS.get(method, (None, None))
    elif error is not None:
        code = _number(_json_scalar(member_text(error, ["code"])))
        if code is not None:
            protocol, claimed = _CODE_CLAIMS.get(code, (None, None))
    elif result is not None:
        inner = scan_object(result)
        if _json_scalar(_member(result, inner, "resultType")) == "input_required":
            protocol, claimed = "2026-07-28", "input_required"
            found, cut = scan_object(_member(result, inner, "inputRequests") or b"")
            # Declining a key that is no URL request does no harm; leaving one open does.
            keys = (*found, *([cut[0]] if cut is not None else []))
            raw_state = _json_scalar(_member(result, inner, "requestState"))
            state = raw_state if isinstance(raw_state, str) else None
    good_id = msg_id if isinstance(msg_id, str | int) and not isinstance(msg_id, bool) else None
    parsed = ParsedMessage(
        "malformed",
        protocol=protocol,
        id=good_id,
        request_state=state,
        declinable_keys=keys,
        is_request=isinstance(method, str),
        claimed=claimed,
    )
    return parsed, written


def unreadable_answer(text: bytes, error: HookError) -> HookAnswer:
    """The answer to a message urlvet cannot decode, by what can be read of ``text``.

    Always ``ok=False`` and ``block``. A URL request whose id can be read is declined by that
    id (as written); an ``input_required`` result by the keys that can be read. Where nothing
    can be declined, the error says so, so that the client drops the message.
    """
    parsed, written = _lenient(text)
    parsed = dataclasses.replace(parsed, error=error)
    msg_id = _json_scalar(written.encode("utf-8")) if written is not None else None
    result = _address(_malformed_answer(parsed), msg_id, written, parsed.is_request)
    why = None
    if parsed.claimed is None:
        why = "what can be read of it claims no URL request"
    elif parsed.is_request and result.response is None:
        why = f"it claims to be {parsed.claimed} but no id could be read from it"
    elif parsed.protocol == "2026-07-28" and not parsed.declinable_keys:
        why = "it claims to be input_required but no key of its inputRequests could be read"
    if why is None:
        return result
    note = f"{error.message}; {why}, so nothing can be declined: drop it"
    return result.model_copy(update={"error": HookError(code=error.code, message=note)})


def _decline(protocol: ProtocolEra | None, msg_id: Any) -> dict[str, Any] | None:
    """The decline of a URL request of ``protocol``, addressed to ``msg_id`` as decoded."""
    if protocol == "draft":
        return {**draft_decline(0), "id": msg_id}
    if protocol == "2025-11-25":
        return {**rpc_result(0, elicit_result("decline")), "id": msg_id}
    return None


def _address(result: HookAnswer, msg_id: Any, written: str | None, is_request: bool) -> HookAnswer:
    """``result`` with the id as written, and a decline addressed to it where the wire parser
    could not address one (an id of ``1.0`` is no string or integer, yet clients answer it)."""
    if written is None:
        return result
    update: dict[str, Any] = {"id_text": written}
    number = isinstance(msg_id, int | float) and not isinstance(msg_id, bool)
    if result.response is None and is_request and (number or isinstance(msg_id, str)):
        decline = _decline(result.protocol, msg_id)
        if decline is not None:
            update["response"] = decline
    return result.model_copy(update=update)


def _with_id_as_written(result: HookAnswer, data: Any, line: str | bytes) -> HookAnswer:
    """``result`` for the decoded ``data``: an id that is a number but no integer (``1.0``)
    is read from ``line`` as written, and a URL request is declined by it."""
    if not isinstance(data, dict) or not isinstance(data.get("id"), float):
        return result
    text = _raw(line)
    span = object_members(text).get("id")
    written = id_text(text, span) if span is not None else None
    return _address(result, data["id"], written, isinstance(data.get("method"), str))


def hook_json(result: HookAnswer) -> str:
    """One line of ``urlvet hook`` output: ``result`` as JSON, its response's id as written.

    A number id is written back exactly as the server wrote it (``1.0`` stays ``1.0``,
    ``1.0E+2`` is not made ``100.0``), so that the server finds the request it answers.
    """
    data = result.to_json_dict()
    response = data.get("response")
    written = result.id_text
    if (
        written is None
        or not isinstance(response, dict)
        or not isinstance(response.get("id"), int | float)
        or written.startswith('"')
    ):
        return json_dumps(data)
    mark = f"urlvet-id-{uuid.uuid4().hex}"
    response["id"] = mark
    return json_dumps(data).replace(json.dumps(mark), written, 1)


def hook_lines(
    lines: Iterable[str | bytes | OverlongLine],
    vetter: Vetter | None = None,
    server: Server | str | None = None,
) -> Iterable[str]:
    """One JSON line of answer per non-blank input line: the ``urlvet hook`` co-process loop.

    Give it :func:`urlvet.mcp.lines.read_lines` of a stream, so that no line is held whole
    beyond :data:`~urlvet.mcp.wire.MAX_LINE`.
    """
    for line in lines:
        if not isinstance(line, OverlongLine) and not line.strip():
            continue
        yield hook_json(answer_line(line, vetter, server))


__all__ = [
    "DRAFT_DECLINE_MESSAGE",
    "URL_BLOCKED",
    "Answer",
    "HookAnswer",
    "ProxyAction",
    "ProxyDid",
    "VettedRequest",
    "aanswer",
    "answer",
    "answer_line",
    "blocked_error",
    "blocked_reason",
    "decline_reply",
    "declined_retry",
    "draft_decline",
    "elicit_result",
    "hook_json",
    "hook_lines",
    "lenient_claim",
    "main_finding",
    "proxy_action",
    "retried_request",
    "rpc_error",
    "rpc_result",
    "unreadable_answer",
    "warning_line",
    "with_id",
    "with_warnings",
]
