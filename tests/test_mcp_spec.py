"""The protocol texts as the source of truth: every example parses, every reply validates.

Each example message is extracted verbatim from the spec (tests/data/mcp: the draft's
user_interaction.mdx, 2025-11-25/elicitation.mdx, 2026-07-28/elicitation.mdx and examples/) and
parsed with the expected shape, URLs and messages. Every message urlvet writes for them (hook
responses, declines, rewritten requests with a warning, retried requests with inputResponses,
JSON-RPC errors) is validated against the JSON Schema of its revision with jsonschema; the
draft's additions come from a schema written from its text (tests/support/mcp_specs.py).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator

from support.mcp_specs import DRAFT_TEXT, code_blocks, draft_validator, example_files, validator
from urlvet.engine import Vetter
from urlvet.findings import Decision, Verdict
from urlvet.mcp import (
    URL_BLOCKED,
    answer,
    blocked_error,
    decline_reply,
    declined_retry,
    might_carry_url,
    parse_message,
    proxy_action,
    warning_line,
    with_warnings,
)
from urlvet.mcp.wire import ParsedMessage, url_requests
from urlvet.policy import Policy

VETTER = Vetter(Policy(dns={"enabled": False}))
DRAFT_SERVER = "https://example.com/mcp"
SERVER = "https://mcp.example.com/mcp"
WARNED = "https://billing-example.net/pay"
BLOCKED = "http://169.254.169.254/latest/meta-data/"

V2025 = "2025-11-25/elicitation.mdx"
V2026 = "2026-07-28/elicitation.mdx"

DRAFT_AUTH = (
    "https://oauth.example.com/authorize?client_id=abc123&...",
    "Authorization is required to access your Example Co files.",
)
DRAFT_SIGNIN = ("https://example.com/mcp?state=1234567890&...", "Please sign in to your account.")
API_KEY = ("https://mcp.example.com/ui/set_api_key", "Please provide your API key to continue.")
CONNECT = (
    "https://mcp.example.com/connect?elicitationId=550e8400-e29b-41d4-a716-446655440000",
    "Authorization is required to access your Example Co files.",
)

# (page, block index) -> (shape, [(url, message)]) for every JSON-RPC message on the pages.
MESSAGES: dict[tuple[str, int], tuple[str, list[tuple[str, str]]]] = {
    (DRAFT_TEXT, 1): ("interaction/create", [DRAFT_AUTH]),
    (DRAFT_TEXT, 2): ("interaction_required", [DRAFT_AUTH]),
    (DRAFT_TEXT, 4): ("interaction/create", [DRAFT_SIGNIN]),
    (DRAFT_TEXT, 5): ("other", []),  # the client's consent response
    (DRAFT_TEXT, 6): ("other", []),  # the -32099 decline
    (DRAFT_TEXT, 7): ("other", []),  # interaction/track
    (DRAFT_TEXT, 8): ("other", []),  # notifications/progress
    (V2025, 9): ("other", []),  # form mode
    (V2025, 10): ("other", []),
    (V2025, 11): ("other", []),
    (V2025, 12): ("other", []),
    (V2025, 13): ("elicitation/create", [API_KEY]),
    (V2025, 14): ("other", []),
    (V2025, 15): ("other", []),  # notifications/elicitation/complete
    (V2025, 16): ("url_elicitation_required", [CONNECT]),
    (V2025, 17): ("other", []),
}

# 2026-07-28 input requests (no JSON-RPC envelope): (page, index) -> [(url, message)].
INPUT_REQUESTS: dict[tuple[str, int], list[tuple[str, str]]] = {
    (V2026, 9): [],  # form mode
    (V2026, 11): [],
    (V2026, 13): [API_KEY],
}


def _is_message(block: Any) -> bool:
    return isinstance(block, dict) and ("jsonrpc" in block or "method" in block)


def _as_result(result: dict[str, Any], msg_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def _input_required(requests: dict[str, Any], state: str | None = "st-1") -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "input_required", "inputRequests": requests}
    if state is not None:
        result["requestState"] = state
    return _as_result(result)


def _expect(parsed: ParsedMessage, shape: str, urls: list[tuple[str, str]]) -> None:
    assert parsed.shape == shape, parsed.error
    assert [(r.url, r.message) for r in parsed.requests] == urls


# -- the examples parse ---------------------------------------------------------------------


@pytest.mark.parametrize("page", [DRAFT_TEXT, V2025, V2026])
def test_every_message_on_a_page_is_in_the_table(page: str) -> None:
    found = {(page, i) for i, b in enumerate(code_blocks(page)) if _is_message(b)}
    listed = {k for k in (*MESSAGES, *INPUT_REQUESTS) if k[0] == page}
    assert found == listed


@pytest.mark.parametrize(("where", "expected"), MESSAGES.items(), ids=lambda x: str(x))
def test_spec_message_parses_as_its_shape(
    where: tuple[str, int], expected: tuple[str, list[tuple[str, str]]]
) -> None:
    message = code_blocks(where[0])[where[1]]
    _expect(parse_message(message), *expected)
    # The lenient mode (urlvet audit) finds the same URLs, with no problem reported.
    found = url_requests(message)
    assert (found.problems, [(r.url, r.message) for r in found.requests]) == ([], expected[1])


@pytest.mark.parametrize(("where", "urls"), INPUT_REQUESTS.items(), ids=lambda x: str(x))
def test_spec_input_request_parses_inside_input_required(
    where: tuple[str, int], urls: list[tuple[str, str]]
) -> None:
    request = code_blocks(where[0])[where[1]]
    parsed = parse_message(_input_required({"k": request}))
    _expect(parsed, "input_required", urls)
    assert parsed.passthrough == (() if urls else ("k",))


def test_draft_examples_are_allowed_by_the_hook_not_malformed() -> None:
    # The defect of issue 12: the draft's TextContent message made its own examples malformed.
    for index in (1, 2, 4):
        a = answer(code_blocks(DRAFT_TEXT)[index], VETTER, DRAFT_SERVER)
        assert (a.ok, a.decision, a.error) == (True, Decision.ALLOW, None)
    a = answer(code_blocks(DRAFT_TEXT)[4], VETTER, DRAFT_SERVER)
    assert a.requests[0].message == "Please sign in to your account."
    assert a.response is None
    assert a.pending == ("c8ec9a71-c475-4a88-a774-e9cd154bc7f8",)


def test_plain_string_message_is_still_accepted_in_the_draft() -> None:
    message = copy.deepcopy(code_blocks(DRAFT_TEXT)[1])
    message["params"]["interaction"]["message"] = "Sign in"
    assert [r.message for r in parse_message(message).requests] == ["Sign in"]


@pytest.mark.parametrize(
    "bad", [{"type": "image", "data": "x"}, {"type": "text"}, {"type": "text", "text": 5}, 7]
)
def test_a_message_neither_string_nor_text_content_is_malformed(bad: Any) -> None:
    message = copy.deepcopy(code_blocks(DRAFT_TEXT)[1])
    message["params"]["interaction"]["message"] = bad
    parsed = parse_message(message)
    assert parsed.shape == "malformed"
    assert parsed.error is not None
    assert parsed.error.code == "invalid-message"
    assert decline_reply(parsed) is not None  # still declined to the server


@pytest.mark.parametrize("name", sorted(example_files()))
def test_every_2026_example_file_is_read(name: str) -> None:
    data = example_files()[name]
    kind = name.split("__")[0]
    if kind == "InputRequiredResult":
        parsed = parse_message(_as_result(data))
        assert parsed.shape == "input_required"
        assert parsed.requests == ()
        assert parsed.request_state == data["requestState"]
        assert set(parsed.passthrough) == set(data.get("inputRequests", {}))
        # An input_required result with nothing to vet still gets a decision.
        assert answer(_as_result(data), VETTER, SERVER).decision is Decision.ALLOW
    elif kind == "InputRequests":
        parsed = parse_message(_input_required(data))
        assert (parsed.shape, parsed.requests, set(parsed.passthrough)) == (
            "input_required",
            (),
            set(data),
        )
    elif kind == "ElicitRequest":
        _expect(parse_message(_input_required({"k": data})), "input_required", [])
    elif kind == "ElicitRequestURLParams":
        request = {"method": "elicitation/create", "params": data}
        _expect(parse_message(_input_required({"k": request})), "input_required", [API_KEY])
    elif kind == "ElicitRequestFormParams":
        request = {"method": "elicitation/create", "params": data}
        assert parse_message(_input_required({"k": request})).passthrough == ("k",)
    elif kind == "MissingRequiredClientCapabilityError":
        assert parse_message(data).shape == "other"
    elif kind in ("ElicitResult", "InputResponses", "ClientCapabilities"):
        # Client-side data: urlvet writes these; they validate as the schema says.
        validator("2026-07-28", kind).validate(data)
    else:
        pytest.fail(f"no expectation for the example {name}")


def test_empty_input_requests_get_a_decision_and_an_answer() -> None:
    a = answer(_input_required({}), VETTER, SERVER)
    assert (a.ok, a.decision, a.response) == (
        True,
        Decision.ALLOW,
        {"inputResponses": {}, "requestState": "st-1"},
    )


# -- the validators are not vacuous ---------------------------------------------------------


def test_the_schemas_accept_the_spec_examples_and_reject_a_broken_one() -> None:
    draft = code_blocks(DRAFT_TEXT)
    draft_validator("CreateUserInteractionRequest").validate(draft[1])
    draft_validator("InteractionRequiredError").validate(draft[2])
    draft_validator("CreateUserInteractionResponse").validate(draft[5])
    draft_validator("InteractionDeclined").validate(draft[6])
    validator("2025-11-25", "ElicitRequest").validate(code_blocks(V2025)[13])
    validator("2025-11-25", "URLElicitationRequiredError").validate(code_blocks(V2025)[16])
    broken = copy.deepcopy(draft[1])
    broken["params"]["interaction"]["message"] = "a string, not TextContent"
    assert not draft_validator("CreateUserInteractionRequest").is_valid(broken)
    assert not draft_validator("InteractionDeclined").is_valid(draft[5])
    assert not validator("2025-11-25", "ElicitResult").is_valid({"action": "maybe"})


# -- what urlvet writes validates -----------------------------------------------------------


def _verdicts(parsed: ParsedMessage, urls: dict[str, str]) -> list[Verdict]:
    """Vet ``parsed``'s URLs, each replaced through ``urls`` first (to force a decision)."""
    return [VETTER.vet(urls.get(r.url, r.url), SERVER, message=r.message) for r in parsed.requests]


def _with_url(message: dict[str, Any], path: list[Any], url: str) -> dict[str, Any]:
    out = copy.deepcopy(message)
    node: Any = out
    for part in path:
        node = node[part]
    node["url"] = url
    return out


def _check(v: Draft7Validator | Draft202012Validator, message: Any) -> None:
    errors = [e.message for e in v.iter_errors(message)]
    assert errors == [], json.dumps(message)[:400]


def _texts(message: dict[str, Any], path: list[Any]) -> Any:
    node: Any = message
    for part in path:
        node = node[part]
    return node


# (page, index, path to the url holder, validator of the message, protocol)
URL_EXAMPLES = [
    (DRAFT_TEXT, 1, ["params", "interaction"], draft_validator("CreateUserInteractionRequest")),
    (DRAFT_TEXT, 2, ["error", "data"], draft_validator("InteractionRequiredError")),
    (V2025, 13, ["params"], validator("2025-11-25", "ElicitRequest")),
    (
        V2025,
        16,
        ["error", "data", "elicitations", 0],
        validator("2025-11-25", "URLElicitationRequiredError"),
    ),
]


@pytest.mark.parametrize(("page", "index", "path", "schema"), URL_EXAMPLES)
def test_warned_rewrite_keeps_the_shape_and_begins_with_the_urlvet_line(
    page: str, index: int, path: list[Any], schema: Any
) -> None:
    original = _with_url(code_blocks(page)[index], path, WARNED)
    before = copy.deepcopy(original)
    parsed = parse_message(original)
    verdicts = _verdicts(parsed, {})
    assert [v.decision for v in verdicts] == [Decision.WARN]
    action = proxy_action(original, parsed, verdicts)
    assert action.did == "forwarded-with-warning"
    assert action.to_server is None
    rewritten = action.to_client
    assert rewritten is not None
    _check(schema, rewritten)
    assert original == before  # the input is never changed
    holder = _texts(rewritten, path)
    text = holder["message"]["text"] if page == DRAFT_TEXT else holder["message"]
    first, rest = text.split("\n", 1)
    assert first == warning_line(verdicts[0])
    assert first.startswith("urlvet: ")
    assert "UV" in first  # names the rule
    assert rest == parsed.requests[0].message
    # Nothing else changed: put the original text back and the messages are equal.
    if page == DRAFT_TEXT:
        holder["message"]["text"] = rest
    else:
        holder["message"] = rest
    assert rewritten == before


@pytest.mark.parametrize(("page", "index", "path", "schema"), URL_EXAMPLES)
def test_allowed_spec_message_is_forwarded_unchanged(
    page: str, index: int, path: list[Any], schema: Any
) -> None:
    message = code_blocks(page)[index]
    parsed = parse_message(message)
    action = proxy_action(message, parsed, _verdicts(parsed, {}))
    assert (action.did, action.to_client, action.to_server) == ("forwarded", None, None)


def test_blocked_draft_request_is_declined_with_the_drafts_error() -> None:
    message = _with_url(code_blocks(DRAFT_TEXT)[1], ["params", "interaction"], BLOCKED)
    parsed = parse_message(message)
    action = proxy_action(message, parsed, _verdicts(parsed, {}))
    assert action.did == "declined"
    assert action.to_client is None
    _check(draft_validator("InteractionDeclined"), action.to_server)
    assert action.to_server == code_blocks(DRAFT_TEXT)[6]  # exactly the draft's example
    hook = answer(message, VETTER, SERVER)
    assert hook.response == code_blocks(DRAFT_TEXT)[6]
    _check(draft_validator("CreateUserInteractionResponse"), hook.requests[0].on_open)


def test_blocked_2025_request_is_declined_with_action_decline() -> None:
    message = _with_url(code_blocks(V2025)[13], ["params"], BLOCKED)
    parsed = parse_message(message)
    action = proxy_action(message, parsed, _verdicts(parsed, {}))
    assert action.to_server == {"jsonrpc": "2.0", "id": 3, "result": {"action": "decline"}}
    for reply in (action.to_server, answer(message, VETTER, SERVER).requests[0].on_open):
        _check(validator("2025-11-25", "JSONRPCResultResponse"), reply)
        _check(validator("2025-11-25", "ElicitResult"), reply["result"])


@pytest.mark.parametrize(
    ("page", "index", "path", "schema"),
    [
        (DRAFT_TEXT, 2, ["error", "data"], draft_validator("JSONRPCError")),
        (
            V2025,
            16,
            ["error", "data", "elicitations", 0],
            validator("2025-11-25", "JSONRPCErrorResponse"),
        ),
    ],
)
def test_blocked_error_shape_becomes_a_urlvet_error_to_the_client(
    page: str, index: int, path: list[Any], schema: Any
) -> None:
    message = _with_url(code_blocks(page)[index], path, BLOCKED)
    parsed = parse_message(message)
    action = proxy_action(message, parsed, _verdicts(parsed, {}))
    assert action.did == "declined"
    assert action.to_server is None
    error = action.to_client
    assert error is not None
    _check(schema, error)
    assert error["id"] == message["id"]
    assert error["error"]["code"] == URL_BLOCKED
    text = error["error"]["message"]
    assert text.startswith("urlvet blocked the URL http://169.254.169.254/")
    assert "UV201" in text
    assert "\n" not in text
    assert error["error"]["data"]["urlvet"]["blocked"][0]["codes"][0] == "UV201"


def test_minus_32042_with_one_blocked_among_several_is_refused_whole() -> None:
    message = copy.deepcopy(code_blocks(V2025)[16])
    items = message["error"]["data"]["elicitations"]
    items.append({**items[0], "elicitationId": "e2", "url": BLOCKED})
    items.append({**items[0], "elicitationId": "e3", "url": WARNED})
    parsed = parse_message(message)
    verdicts = _verdicts(parsed, {})
    assert [v.decision for v in verdicts] == [Decision.ALLOW, Decision.BLOCK, Decision.WARN]
    error = blocked_error(parsed, verdicts)
    _check(validator("2025-11-25", "JSONRPCErrorResponse"), error)
    assert BLOCKED in json.dumps(error)
    assert CONNECT[0] not in json.dumps(error)


def _tools_call(msg_id: int = 1) -> dict[str, Any]:
    """A 2026-07-28 tools/call as a client sends it (``_meta`` is required there)."""
    call = {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "tools/call",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}},
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            },
            "name": "connect",
            "arguments": {"service": "crm"},
        },
    }
    _check(validator("2026-07-28", "CallToolRequest"), call)
    return call


def _input_required_example(urls: list[str]) -> dict[str, Any]:
    request = {
        "method": "elicitation/create",
        "params": example_files()["ElicitRequestURLParams__elicit-sensitive-data.json"],
    }
    spec_result = example_files()[
        "InputRequiredResult__input-required-result-with-elicitation-and-sampling-and-request-state.json"
    ]
    requests = dict(spec_result["inputRequests"])
    for n, url in enumerate(urls):
        requests[f"url_{n}"] = {**request, "params": {**request["params"], "url": url}}
    result = {**spec_result, "inputRequests": requests}
    return _as_result(result, msg_id=1)


def test_input_required_warned_entry_is_rewritten_and_validates() -> None:
    message = _input_required_example([WARNED, API_KEY[0]])
    parsed = parse_message(message)
    verdicts = _verdicts(parsed, {})
    action = proxy_action(message, parsed, verdicts)
    assert action.did == "forwarded-with-warning"
    out = action.to_client
    assert out is not None
    _check(validator("2026-07-28", "JSONRPCResultResponse"), out)
    _check(validator("2026-07-28", "InputRequiredResult"), out["result"])
    entries = out["result"]["inputRequests"]
    assert entries["url_0"]["params"]["message"].startswith("urlvet: ")
    assert entries["url_0"]["params"]["message"].endswith("\n" + API_KEY[1])
    assert entries["url_1"] is message["result"]["inputRequests"]["url_1"]  # allowed: untouched
    assert entries["github_login"] is message["result"]["inputRequests"]["github_login"]
    assert out["result"]["requestState"] == message["result"]["requestState"]


def test_input_required_blocked_entry_is_retried_with_a_decline_and_the_state() -> None:
    message = _input_required_example([BLOCKED, API_KEY[0]])
    parsed = parse_message(message)
    verdicts = _verdicts(parsed, {})
    original = _tools_call()
    action = proxy_action(message, parsed, verdicts, original_request=original, retry_id="r-1")
    assert action.did == "declined"
    assert action.to_client is None
    retry = action.to_server
    assert retry is not None
    _check(validator("2026-07-28", "CallToolRequest"), retry)
    assert retry["id"] == "r-1"
    assert retry["params"]["inputResponses"] == {"url_0": {"action": "decline"}}
    assert retry["params"]["requestState"] == "eyJsb2NhdGlvbiI6Ik5ldyBZb3JrIn0"
    kept = {k: v for k, v in retry["params"].items() if k not in ("inputResponses", "requestState")}
    assert kept == original["params"]
    for response in retry["params"]["inputResponses"].values():
        _check(validator("2026-07-28", "ElicitResult"), response)
    # The hook's answer holds the same declines, as params for the client's retry.
    hook = answer(message, VETTER, SERVER)
    merged = {**original, "id": 2, "params": {**original["params"], **(hook.response or {})}}
    _check(validator("2026-07-28", "CallToolRequest"), merged)
    assert merged["params"]["inputResponses"] == retry["params"]["inputResponses"]


def test_input_required_blocked_without_the_original_request_errors_to_the_client() -> None:
    message = _input_required_example([BLOCKED])
    parsed = parse_message(message)
    action = proxy_action(message, parsed, _verdicts(parsed, {}))
    assert action.to_client is not None
    assert action.to_server is None
    _check(validator("2026-07-28", "JSONRPCErrorResponse"), action.to_client)


def test_malformed_input_required_declines_what_it_can_on_retry() -> None:
    message = _input_required_example([API_KEY[0]])
    message["result"]["inputRequests"]["url_0"]["params"]["url"] = 42
    parsed = parse_message(message)
    assert parsed.shape == "malformed"
    assert parsed.declinable_keys == ("url_0",)
    retry = declined_retry(_tools_call(), parsed, [], "r-2")
    _check(validator("2026-07-28", "CallToolRequest"), retry)
    assert retry["params"]["inputResponses"] == {"url_0": {"action": "decline"}}
    action = proxy_action(message, parsed, [])
    _check(validator("2026-07-28", "JSONRPCErrorResponse"), action.to_client)


def test_malformed_2025_request_is_declined_to_the_server_and_validates() -> None:
    message = copy.deepcopy(code_blocks(V2025)[13])
    del message["params"]["url"]
    parsed = parse_message(message)
    action = proxy_action(message, parsed, [])
    assert action.did == "declined"
    assert action.to_client is None
    _check(validator("2025-11-25", "JSONRPCResultResponse"), action.to_server)
    assert action.to_server is not None
    _check(validator("2025-11-25", "ElicitResult"), action.to_server["result"])


def test_warned_draft_request_without_a_message_gets_a_text_content_one() -> None:
    message = _with_url(code_blocks(DRAFT_TEXT)[1], ["params", "interaction"], WARNED)
    del message["params"]["interaction"]["message"]
    parsed = parse_message(message)
    out = with_warnings(message, parsed, _verdicts(parsed, {}))
    _check(draft_validator("CreateUserInteractionRequest"), out)
    assert out["params"]["interaction"]["message"]["text"].startswith("urlvet: ")


# -- the relay's pre-filter never lets a URL request through ---------------------------------

SPEC_URL_MESSAGES = [code_blocks(page)[i] for (page, i), (shape, _) in MESSAGES.items()] + [
    _input_required_example([API_KEY[0]])
]


def _escape_some(text: str, picks: list[bool]) -> str:
    """``text`` with some ASCII letters inside JSON strings written as ``\\u00XX``."""
    out, in_string, n = [], False, 0
    i = 0
    while i < len(text):
        ch = text[i]
        if in_string and ch == "\\":
            out.append(text[i : i + 2])
            i += 2
            continue
        if ch == '"':
            in_string = not in_string
        elif in_string and ch.isascii() and ch.isalpha():
            n += 1
            if picks[n % len(picks)]:
                ch = f"\\u{ord(ch):04x}"
        out.append(ch)
        i += 1
    return "".join(out)


@settings(max_examples=200, deadline=None)
@given(
    index=st.integers(min_value=0, max_value=len(SPEC_URL_MESSAGES) - 1),
    picks=st.lists(st.booleans(), min_size=1, max_size=16),
)
def test_might_carry_url_is_true_for_every_escaped_url_request(
    index: int, picks: list[bool]
) -> None:
    text = _escape_some(json.dumps(SPEC_URL_MESSAGES[index]), picks)
    message = json.loads(text)
    assert message == SPEC_URL_MESSAGES[index]
    if parse_message(message).carries_urls:
        assert might_carry_url(text)
        assert might_carry_url(text.encode())


def test_might_carry_url_lets_plain_traffic_through() -> None:
    plain = {"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "été"}]}}
    assert not might_carry_url(json.dumps(plain))  # \u00e9: not an ASCII escape
    assert not might_carry_url(json.dumps(plain, ensure_ascii=False).encode())


def test_an_error_code_written_as_a_float_is_still_read() -> None:
    message = copy.deepcopy(code_blocks(V2025)[16])
    message["error"]["code"] = -32042.0  # a JavaScript client reads it as -32042
    assert parse_message(message).shape == "url_elicitation_required"
    assert might_carry_url(json.dumps(message))


def test_the_public_surface_of_urlvet_mcp_is_pinned() -> None:
    # The proxy and the hook build on these names; a change here is a change of contract.
    import urlvet.mcp
    import urlvet.mcp.answers
    import urlvet.mcp.forms
    import urlvet.mcp.wire

    assert set(urlvet.mcp.__all__) <= {
        *urlvet.mcp.wire.__all__,
        *urlvet.mcp.answers.__all__,
        *urlvet.mcp.forms.__all__,
        "ConsentUI",
        "VettedElicitation",
        "guard_elicitation",
        "guard_elicitation_error",
        "vet_elicitation_error",
    }
    assert {"parse_message", "url_requests", "might_carry_url", "proxy_action", "vet_form"} <= set(
        urlvet.mcp.__all__
    )
    for name in urlvet.mcp.__all__:
        assert getattr(urlvet.mcp, name) is not None


def test_urlvet_hook_answers_the_drafts_own_examples_as_a_new_user_tries_them() -> None:
    # Issue 12's report, through the command: the examples copied verbatim from the draft.
    import subprocess
    import sys

    stdin = "".join(json.dumps(code_blocks(DRAFT_TEXT)[i]) + "\n" for i in (1, 2, 4))
    proc = subprocess.run(
        [sys.executable, "-m", "urlvet.cli", "hook", "--server", DRAFT_SERVER, "--no-dns"],
        input=stdin.encode(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(x) for x in proc.stdout.decode().splitlines()]
    assert [(o["ok"], o["shape"], o["decision"]) for o in out] == [
        (True, "interaction/create", "allow"),
        (True, "interaction_required", "allow"),
        (True, "interaction/create", "allow"),
    ]
    assert out[0]["requests"][0]["message"] == DRAFT_AUTH[1]


# -- the proxy's builders hold for any text and any decision --------------------------------

URLS_BY_DECISION = {Decision.ALLOW: CONNECT[0], Decision.WARN: WARNED, Decision.BLOCK: BLOCKED}
SHAPED = [
    (code_blocks(DRAFT_TEXT)[1], ["params", "interaction"], "text-content"),
    (code_blocks(DRAFT_TEXT)[2], ["error", "data"], "text-content"),
    (code_blocks(V2025)[13], ["params"], "string"),
    (code_blocks(V2025)[16], ["error", "data", "elicitations", 0], "string"),
    (
        _input_required_example([API_KEY[0]]),
        ["result", "inputRequests", "url_0", "params"],
        "string",
    ),
]


@settings(max_examples=150, deadline=None)
@given(
    which=st.integers(min_value=0, max_value=len(SHAPED) - 1),
    decision=st.sampled_from(list(URLS_BY_DECISION)),
    text=st.text(max_size=120),
)
def test_proxy_action_on_any_text_keeps_the_shape_and_the_url(
    which: int, decision: Decision, text: str
) -> None:
    base, path, form = SHAPED[which]
    message = _with_url(base, path, URLS_BY_DECISION[decision])
    holder = _texts(message, path)
    holder["message"] = {"type": "text", "text": text} if form == "text-content" else text
    parsed = parse_message(message)
    verdicts = _verdicts(parsed, {})
    # The message can raise the decision (hidden characters in it are a finding), never lower it.
    assert verdicts[0].decision.rank >= decision.rank
    decision = verdicts[0].decision
    action = proxy_action(message, parsed, verdicts, original_request=_tools_call(), retry_id=9)
    if decision is Decision.ALLOW:
        assert (action.did, action.to_client, action.to_server) == ("forwarded", None, None)
    elif decision is Decision.WARN:
        assert action.to_client is not None
        again = parse_message(action.to_client)
        assert (again.shape, [r.url for r in again.requests]) == (
            parsed.shape,
            [r.url for r in parsed.requests],
        )
        shown = again.requests[0].message or ""
        first, _, rest = shown.partition("\n")
        assert first.startswith("urlvet: ")
        assert rest == text
        assert json.loads(json.dumps(action.to_client)) == action.to_client
    else:
        assert action.did == "declined"
        sent = action.to_client or action.to_server
        assert sent is not None
        # A blocked URL never reaches the client.
        assert action.to_client is None or parse_message(action.to_client).requests == ()


@pytest.mark.parametrize(
    "broken",
    [
        {k: v for k, v in code_blocks(V2025)[13].items() if k != "jsonrpc"},
        {**code_blocks(V2025)[13], "jsonrpc": "1.0"},
        {**code_blocks(DRAFT_TEXT)[2], "jsonrpc": 2},
    ],
)
def test_a_url_request_with_a_broken_envelope_is_declined_not_passed_on(broken: Any) -> None:
    parsed = parse_message(broken)
    assert parsed.shape == "malformed"
    assert parsed.claimed is not None
    action = proxy_action(broken, parsed, [])
    assert action.did == "declined"


@pytest.mark.parametrize(
    "other",
    [
        {"id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "error": "boom"},
        {"jsonrpc": "1.0", "id": 1, "result": {"content": []}},
    ],
)
def test_a_broken_message_that_is_no_url_request_is_forwarded(other: Any) -> None:
    parsed = parse_message(other)
    assert parsed.shape == "malformed"
    assert proxy_action(other, parsed, []).did == "forwarded"
