"""The three wire shapes, parsed from JSON-RPC text and answered, and the ``urlvet hook`` loop.

Each case is the JSON text a client receives. The answers are checked against what the client
must send back: a decline for every blocked URL (the draft's error response, or
``{"action": "decline"}``), nothing sent for error shapes, and never an error code on a
2026-07-28 exchange. Malformed messages get a clear error and a decline, and never crash.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import OFFLINE
from urlvet.findings import Decision
from urlvet.mcp import (
    INTERACTION_DECLINED,
    HookAnswer,
    aanswer,
    answer,
    answer_line,
    hook_lines,
    parse_message,
)
from urlvet.mcp.wire import (
    DEEP_READ_LIMIT,
    UnreadableJson,
    _deep_decode,
    dumps,
    error_code,
    might_carry_url,
    read_json,
)

VETTER = OFFLINE
SERVER = "https://mcp.example.com/mcp"
GOOD = "https://accounts.google.com/o/oauth2/v2/auth?client_id=crm"
GOOD2 = "https://docs.example.com/connect"
PHISH = "https://google.com@accounts-google.signin-verify.net/"
PHISH2 = "http://169.254.169.254/latest/meta-data/"


def line(obj: Any) -> str:
    return json.dumps(obj)


def run(obj: Any) -> HookAnswer:
    return answer_line(line(obj), VETTER, SERVER)


def elicitation_create(url: str, msg_id: int | str = 7, **extra: Any) -> dict[str, Any]:
    params = {"mode": "url", "message": "Sign in", "url": url, "elicitationId": "el-1", **extra}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "elicitation/create", "params": params}


def interaction_create(url: str, msg_id: int | str = 8) -> dict[str, Any]:
    """The draft's shape: {id, type: "ua", interaction: {url, message}}."""
    params = {
        "type": "ua",
        "id": "ix-1",
        "interaction": {"url": url, "message": "Authorize the app"},
    }
    return {"jsonrpc": "2.0", "id": msg_id, "method": "interaction/create", "params": params}


def test_early_draft_flat_interaction_create_is_read_too() -> None:
    params = {"type": "ua", "id": "ix-2", "url": PHISH, "message": "Authorize"}
    a = run({"jsonrpc": "2.0", "id": 9, "method": "interaction/create", "params": params})
    assert (a.shape, a.decision) == ("interaction/create", Decision.BLOCK)


def test_interaction_that_is_not_an_object_is_malformed_and_declined() -> None:
    params = {"type": "ua", "id": "ix-3", "interaction": "https://example.com/"}
    a = run({"jsonrpc": "2.0", "id": 10, "method": "interaction/create", "params": params})
    assert a.shape == "malformed"
    assert a.response is not None
    assert "error" in a.response


def url_elicitation_required(*urls: str) -> dict[str, Any]:
    items = [
        {"mode": "url", "message": f"step {n}", "url": u, "elicitationId": f"e{n}"}
        for n, u in enumerate(urls)
    ]
    error = {"code": -32042, "message": "URL elicitation required", "data": {"elicitations": items}}
    return {"jsonrpc": "2.0", "id": 3, "error": error}


def interaction_required(*urls: str) -> dict[str, Any]:
    items = [{"type": "ua", "id": f"i{n}", "url": u} for n, u in enumerate(urls)]
    error = {"code": -32003, "message": "interaction_required", "data": {"interactions": items}}
    return {"jsonrpc": "2.0", "id": 4, "error": error}


def input_required(urls: dict[str, str], state: str | None = "opaque-1") -> dict[str, Any]:
    requests: dict[str, Any] = {
        key: {"method": "elicitation/create", "params": {"mode": "url", "message": key, "url": u}}
        for key, u in urls.items()
    }
    result: dict[str, Any] = {"resultType": "input_required", "inputRequests": requests}
    if state is not None:
        result["requestState"] = state
    return {"jsonrpc": "2.0", "id": 5, "result": result}


# -- 2025-11-25 -------------------------------------------------------------------------------


def test_elicitation_create_allowed_waits_for_the_person() -> None:
    a = run(elicitation_create(GOOD))
    assert (a.ok, a.shape, a.protocol, a.id, a.decision) == (
        True,
        "elicitation/create",
        "2025-11-25",
        7,
        Decision.ALLOW,
    )
    assert a.response is None
    assert a.pending == ("el-1",)
    (req,) = a.requests
    assert req.answer == "ask-user"
    assert req.on_open == {"jsonrpc": "2.0", "id": 7, "result": {"action": "accept"}}
    assert req.on_decline == {"jsonrpc": "2.0", "id": 7, "result": {"action": "decline"}}
    assert a.verdict == req.verdict
    assert a.summary is not None
    assert a.summary.actions == ("open", "decline")


def test_elicitation_create_blocked_is_declined_at_once() -> None:
    a = run(elicitation_create(PHISH, msg_id="req-9"))
    assert a.decision is Decision.BLOCK
    assert a.response == {"jsonrpc": "2.0", "id": "req-9", "result": {"action": "decline"}}
    assert a.pending == ()
    assert a.summary is not None
    assert a.summary.actions == ("decline",)


def test_form_elicitation_is_not_ours() -> None:
    msg = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "elicitation/create",
        "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}},
    }
    a = run(msg)
    assert (a.ok, a.shape, a.requests, a.response) == (True, "other", (), None)


def test_url_elicitation_required_lists_several() -> None:
    a = run(url_elicitation_required(GOOD, PHISH, GOOD2))
    assert (a.shape, a.protocol, a.decision) == (
        "url_elicitation_required",
        "2025-11-25",
        Decision.BLOCK,
    )
    assert [r.answer for r in a.requests] == ["ask-user", "decline", "ask-user"]
    assert [r.key for r in a.requests] == ["e0", "e1", "e2"]
    assert a.response is None  # an error is not answered; the blocked URL is just not opened
    assert a.retry is False
    assert all(r.on_open is None and r.on_decline is None for r in a.requests)
    assert a.pending == ("e0", "e2")
    assert a.verdict is None  # several URLs: see requests


def test_url_elicitation_required_all_fine_may_be_retried() -> None:
    a = run(url_elicitation_required(GOOD, GOOD2))
    assert a.retry is True
    assert a.decision is Decision.ALLOW


# -- the draft --------------------------------------------------------------------------------


def test_interaction_create_blocked_gets_the_draft_error() -> None:
    a = run(interaction_create(PHISH2))
    assert (a.shape, a.protocol, a.decision) == ("interaction/create", "draft", Decision.BLOCK)
    assert a.response == {
        "jsonrpc": "2.0",
        "id": 8,
        "error": {
            "code": INTERACTION_DECLINED,
            "message": "User did not consent to the interaction.",
        },
    }
    assert a.requests[0].key == "ix-1"


def test_interaction_create_allowed_is_answered_on_consent() -> None:
    a = run(interaction_create(GOOD))
    assert a.response is None
    assert a.requests[0].on_open == {"jsonrpc": "2.0", "id": 8, "result": {}}
    assert a.requests[0].on_decline is not None
    assert a.requests[0].on_decline["error"]["code"] == INTERACTION_DECLINED


def test_interaction_of_another_type_is_not_ours() -> None:
    msg = interaction_create(GOOD)
    msg["params"] = {"type": "form", "id": "ix-1", "interaction": {"message": "Fill it in"}}
    assert run(msg).shape == "other"


def test_interaction_of_another_type_with_a_url_is_still_vetted() -> None:
    # A client that opens whatever url it is given ignores the type: so must urlvet not.
    msg = interaction_create(PHISH)
    msg["params"]["type"] = "form"
    answered = run(msg)
    assert answered.shape == "interaction/create"
    assert answered.decision is Decision.BLOCK


@pytest.mark.parametrize(
    "data",
    [
        {"interactions": [{"type": "ua", "url": PHISH}]},
        {"interaction": {"type": "ua", "url": PHISH}},
        {"type": "ua", "url": PHISH},
    ],
)
def test_interaction_required_error_in_each_spelling(data: dict[str, Any]) -> None:
    msg = {"jsonrpc": "2.0", "id": 4, "error": {"code": -32003, "message": "x", "data": data}}
    a = run(msg)
    assert (a.shape, a.protocol, a.decision, a.retry) == (
        "interaction_required",
        "draft",
        Decision.BLOCK,
        False,
    )
    assert a.response is None


def test_interaction_required_with_several() -> None:
    a = run(interaction_required(GOOD, PHISH2))
    assert [r.answer for r in a.requests] == ["ask-user", "decline"]
    assert [r.key for r in a.requests] == ["i0", "i1"]


# -- 2026-07-28 -------------------------------------------------------------------------------


def test_input_required_answers_with_input_responses_and_the_state() -> None:
    a = run(input_required({"login": GOOD, "pay": PHISH, "meta": PHISH2}))
    assert (a.shape, a.protocol, a.decision) == ("input_required", "2026-07-28", Decision.BLOCK)
    assert a.response == {
        "inputResponses": {"pay": {"action": "decline"}, "meta": {"action": "decline"}},
        "requestState": "opaque-1",
    }
    assert a.pending == ("login",)
    login = next(r for r in a.requests if r.key == "login")
    assert login.on_open == {"action": "accept"}
    assert login.on_decline == {"action": "decline"}


def test_input_required_all_blocked_is_complete() -> None:
    a = run(input_required({"pay": PHISH}, state=None))
    assert a.response == {"inputResponses": {"pay": {"action": "decline"}}}
    assert a.pending == ()


def test_input_required_leaves_form_sampling_and_roots_to_the_client() -> None:
    msg = input_required({"login": GOOD})
    requests = msg["result"]["inputRequests"]
    requests["name"] = {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": "Name?", "requestedSchema": {"type": "object"}},
    }
    requests["llm"] = {
        "method": "sampling/createMessage",
        "params": {"messages": [], "maxTokens": 5},
    }
    requests["roots"] = {"method": "roots/list"}
    a = run(msg)
    assert [r.key for r in a.requests] == ["login"]
    assert set(a.pending) == {"login", "name", "llm", "roots"}


_MODERN_CASES = [
    input_required({"a": GOOD, "b": PHISH}),
    input_required({"a": PHISH}),
    {"jsonrpc": "2.0", "id": 5, "result": {"resultType": "input_required", "inputRequests": 7}},
    {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {
            "resultType": "input_required",
            "requestState": "s",
            "inputRequests": {"k": {"method": "elicitation/create", "params": {"mode": "url"}}},
        },
    },
]


@pytest.mark.parametrize("msg", _MODERN_CASES)
def test_no_error_code_is_ever_emitted_on_a_2026_07_28_exchange(msg: dict[str, Any]) -> None:
    a = run(msg)
    assert a.protocol == "2026-07-28"
    text = json.dumps(a.response)
    assert "-32042" not in text
    assert "-32003" not in text
    assert str(INTERACTION_DECLINED) not in text
    assert '"error"' not in text
    for r in a.requests:
        assert '"error"' not in json.dumps([r.on_open, r.on_decline])


def test_malformed_input_required_still_declines_what_it_can() -> None:
    a = run(_MODERN_CASES[3])
    assert (a.ok, a.shape, a.decision) == (False, "malformed", Decision.BLOCK)
    assert a.error is not None
    assert a.error.code == "missing-url"
    assert a.response == {"inputResponses": {"k": {"action": "decline"}}, "requestState": "s"}


# -- malformed messages ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code", "response"),
    [
        ("not json", "invalid-json", None),
        ("", "invalid-json", None),
        ('{"jsonrpc": "2.0", "id": 1', "invalid-json", None),
        ("[" * 200_000, "invalid-json", None),
        ("[1, 2]", "not-json-rpc", None),
        ('"elicitation/create"', "not-json-rpc", None),
        ("null", "not-json-rpc", None),
        (
            # No "jsonrpc", but a client could still take it for a URL elicitation: declined.
            '{"id": 1, "method": "elicitation/create", "params": {}}',
            "not-json-rpc",
            {"jsonrpc": "2.0", "id": 1, "result": {"action": "decline"}},
        ),
        ('{"jsonrpc": "2.0", "id": 1}', "not-json-rpc", None),
        ('{"jsonrpc": "2.0", "id": 1, "method": 5}', "not-json-rpc", None),
        (
            '{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": []}',
            "invalid-params",
            {"jsonrpc": "2.0", "id": 1, "result": {"action": "decline"}},
        ),
        (
            '{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {"mode": "url"}}',
            "missing-url",
            {"jsonrpc": "2.0", "id": 1, "result": {"action": "decline"}},
        ),
        (
            '{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",'
            ' "params": {"mode": "url", "url": ["https://a.example/"]}}',
            "missing-url",
            {"jsonrpc": "2.0", "id": 1, "result": {"action": "decline"}},
        ),
        (
            '{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",'
            ' "params": {"mode": "url", "url": "https://a.example/", "message": 5}}',
            "invalid-message",
            {"jsonrpc": "2.0", "id": 1, "result": {"action": "decline"}},
        ),
        (
            '{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",'
            ' "params": {"mode": "telepathy", "url": "https://a.example/"}}',
            "invalid-params",
            {"jsonrpc": "2.0", "id": 1, "result": {"action": "decline"}},
        ),
        (
            '{"jsonrpc": "2.0", "method": "elicitation/create", "params": {"mode": "url", "url": "x"}}',
            "missing-id",
            None,
        ),
        (
            '{"jsonrpc": "2.0", "id": true, "method": "elicitation/create", "params": {}}',
            "missing-id",
            None,
        ),
        (
            '{"jsonrpc": "2.0", "id": 2, "method": "interaction/create", "params": {"type": "ua"}}',
            "missing-url",
            {
                "jsonrpc": "2.0",
                "id": 2,
                "error": {"code": -32099, "message": "User did not consent to the interaction."},
            },
        ),
        ('{"jsonrpc": "2.0", "id": 3, "error": {"code": -32042}}', "missing-url", None),
        (
            '{"jsonrpc": "2.0", "id": 3, "error": {"code": -32042, "data": {"elicitations": [1]}}}',
            "invalid-params",
            None,
        ),
        (
            '{"jsonrpc": "2.0", "id": 3, "error": {"code": -32042,'
            ' "data": {"elicitations": [{"mode": "form", "url": "https://a.example/"}]}}}',
            "invalid-params",
            None,
        ),
        ('{"jsonrpc": "2.0", "id": 4, "error": {"code": -32003, "data": 5}}', "missing-url", None),
        ('{"jsonrpc": "2.0", "id": 4, "error": "boom"}', "not-json-rpc", None),
    ],
)
def test_malformed_messages_get_a_clear_error_and_a_decline(
    text: str, code: str, response: dict[str, Any] | None
) -> None:
    a = answer_line(text, VETTER, SERVER)
    assert (a.ok, a.shape, a.decision) == (False, "malformed", Decision.BLOCK)
    assert a.error is not None
    assert a.error.code == code
    assert a.error.message
    assert a.response == response
    assert a.requests == ()


def test_over_long_lines_are_refused_unread() -> None:
    a = answer_line(line(elicitation_create(GOOD)) + " " * (1 << 20), VETTER, SERVER)
    assert a.error is not None
    assert a.error.code == "too-long"


def test_non_utf8_bytes_are_malformed() -> None:
    a = answer_line(b"\xff\xfe{}", VETTER, SERVER)
    assert a.error is not None
    assert a.error.code == "invalid-json"


def test_other_messages_pass_by() -> None:
    for msg in (
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "nope"}},
        {"jsonrpc": "2.0", "id": 3, "method": "sampling/createMessage", "params": {}},
    ):
        a = run(msg)
        assert (a.ok, a.shape, a.decision, a.response) == (True, "other", None, None)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=400),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=40),
            lambda inner: (
                st.lists(inner, max_size=4)
                | st.dictionaries(
                    st.sampled_from(
                        [
                            "jsonrpc",
                            "id",
                            "method",
                            "params",
                            "mode",
                            "url",
                            "error",
                            "code",
                            "data",
                            "result",
                            "resultType",
                            "inputRequests",
                            "elicitations",
                            "type",
                            "message",
                        ]
                    ),
                    inner,
                    max_size=6,
                )
            ),
            max_leaves=20,
        ).map(json.dumps),
    )
)
def test_any_line_gets_an_answer_and_never_raises(text: str) -> None:
    a = answer_line(text, VETTER, SERVER)
    json.dumps(a.to_json_dict())
    if not a.ok:
        assert a.decision is Decision.BLOCK
        assert a.error is not None
    for r in a.requests:
        if r.verdict.decision is Decision.BLOCK:
            assert r.answer == "decline"


def test_parse_message_reads_each_shape() -> None:
    shapes = [
        (elicitation_create(GOOD), "elicitation/create", "2025-11-25"),
        (url_elicitation_required(GOOD), "url_elicitation_required", "2025-11-25"),
        (interaction_create(GOOD), "interaction/create", "draft"),
        (interaction_required(GOOD), "interaction_required", "draft"),
        (input_required({"a": GOOD}), "input_required", "2026-07-28"),
    ]
    for msg, shape, protocol in shapes:
        parsed = parse_message(msg)
        assert (parsed.shape, parsed.protocol) == (shape, protocol)
        assert [r.url for r in parsed.requests] == [GOOD]


@pytest.mark.anyio
async def test_async_answer_agrees_with_sync() -> None:
    msg = url_elicitation_required(GOOD, PHISH)
    assert await aanswer(msg, VETTER, SERVER) == answer(msg, VETTER, SERVER)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# -- urlvet hook ------------------------------------------------------------------------------


def test_hook_lines_skips_blank_lines_and_answers_each_message() -> None:
    out = list(hook_lines(["", line(elicitation_create(PHISH)), "  ", "oops"], VETTER, SERVER))
    assert len(out) == 2
    assert json.loads(out[0])["response"]["result"] == {"action": "decline"}
    assert json.loads(out[1])["ok"] is False


def test_hook_command_is_a_co_process() -> None:
    messages = [
        elicitation_create(GOOD),
        elicitation_create(PHISH, msg_id=8),
        interaction_create(PHISH2),
        url_elicitation_required(GOOD, PHISH),
        input_required({"a": GOOD, "b": PHISH}),
        "this is not json",
        {"jsonrpc": "2.0", "id": 1, "result": {}},
    ]
    stdin = "\n".join(m if isinstance(m, str) else line(m) for m in messages) + "\n"
    stdin += line(elicitation_create("https://docs.example.com/\u202egnp.exe")) + "\n"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "urlvet.cli",
            "hook",
            "--server",
            SERVER,
            "--server-name",
            "crm",
            "--no-dns",
        ],
        input=stdin.encode(),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(x) for x in proc.stdout.decode().splitlines()]
    assert len(out) == len(messages) + 1
    assert [o["shape"] for o in out] == [
        "elicitation/create",
        "elicitation/create",
        "interaction/create",
        "url_elicitation_required",
        "input_required",
        "malformed",
        "other",
        "elicitation/create",
    ]
    assert out[0]["response"] is None
    assert out[0]["summary"]["server_name"] == "crm"
    assert out[1]["response"] == {"jsonrpc": "2.0", "id": 8, "result": {"action": "decline"}}
    assert out[2]["response"]["error"]["code"] == INTERACTION_DECLINED
    assert out[3]["retry"] is False
    assert out[4]["response"] == {
        "inputResponses": {"b": {"action": "decline"}},
        "requestState": "opaque-1",
    }
    assert out[5]["error"]["code"] == "invalid-json"
    # Bidi controls are escaped in the JSON text a person might read in a terminal.
    raw_last = proc.stdout.decode().splitlines()[-1]
    assert "\u202e" not in raw_last
    assert "\\u202e" in raw_last
    assert out[7]["requests"][0]["url"] == "https://docs.example.com/\u202egnp.exe"


# -- the one reader of wire text, and the lax readings ---------------------------------------


@pytest.mark.parametrize(
    ("raw", "value", "exact"),
    [
        (b'{"a":"\xff"}', {"a": "\ufffd"}, False),  # Node's Buffer.toString("utf8")
        (b'\xef\xbb\xbf{"a":1}', {"a": 1}, False),  # a byte-order mark is dropped
        (b'{"a":' + b"9" * 5000 + b"}", {"a": float("inf")}, True),  # JSON.parse: Infinity
        (b'{"a":-3.2042e4}', {"a": -32042.0}, True),
        (b'{"a":1,"a":2}', {"a": 2}, True),  # the last duplicate, as every client
        (b'{"a":"\\udfff"}', {"a": "\udfff"}, True),
    ],
)
def test_read_json_reads_what_the_most_lenient_client_reads(
    raw: bytes, value: Any, exact: bool
) -> None:
    read = read_json(raw)
    assert (read.value, read.exact) == (value, exact)


def test_read_json_reads_any_depth_as_json_parse_does() -> None:
    depth = DEEP_READ_LIMIT // 2 - 10
    value = read_json(b'{"k":' + b"[" * depth + b'"x"' + b"]" * depth + b"}").value["k"]
    found = 0
    while isinstance(value, list):
        value, found = value[0], found + 1
    assert (found, value) == (depth, "x")


@pytest.mark.parametrize("raw", [b"", b"{", b'{"a":1,}', b"[1 2]", b"[" * 3000 + b"1,]"])
def test_read_json_refuses_what_no_client_reads(raw: bytes) -> None:
    with pytest.raises(UnreadableJson):
        read_json(raw)


@pytest.mark.parametrize(
    ("code", "read"),
    [
        (-32042, -32042),
        (-32042.0, -32042),
        ("-32042", -32042),
        (" -32042 ", -32042),
        ("-32042.0", -32042),
        ("-3.2042e4", None),  # neither pydantic nor a JavaScript client reads this string
        (-32042.5, None),
        (None, None),
        ([], None),
    ],
)
def test_error_code_is_read_as_pydantic_lax_int_reads_it(code: Any, read: int | None) -> None:
    assert error_code(code) == read


def test_dumps_writes_a_lone_surrogate_as_its_escape() -> None:
    out = dumps({"m": "a\udfffb"})
    assert out == b'{"m":"a\\udfffb"}'
    assert json.loads(out) == {"m": "a\udfffb"}


@pytest.mark.parametrize(
    "raw",
    [
        b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}',
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"url":"x"}}',
        '{"m":"caf\u00e9 \u2028"}'.encode(),
        b'{"m":"a\\nb\\"c\\\\"}',
    ],
)
def test_the_fast_path_passes_messages_no_reading_makes_a_url_request(raw: bytes) -> None:
    assert might_carry_url(raw) is False
    assert not parse_message(read_json(raw).value).carries_urls


@pytest.mark.parametrize(
    "raw",
    [
        b'{"m\\u0065thod":"elicitation/create"}',
        b'{"method":"elicitation\\/create"}',
        b'{"result":{"inputRequests":{}}}',
        b'{"error":{"code":"-32042"}}',
    ],
)
def test_the_fast_path_reads_every_possible_url_request(raw: bytes) -> None:
    assert might_carry_url(raw) is True


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(_JSON_VALUES, st.sampled_from([None, 0, 2]))
def test_the_deep_reader_reads_as_the_recursive_one(value: Any, indent: int | None) -> None:
    # The stack-based reader only runs past Python's recursion limit: it must agree with the
    # recursive reader everywhere, escapes, whitespace and numbers included.
    text = json.dumps(value, indent=indent, ensure_ascii=bool(indent))
    assert _deep_decode(text) == json.loads(text)


def test_a_deep_text_past_the_limit_is_not_read() -> None:
    deep = b"[" * (DEEP_READ_LIMIT // 2 + 1) + b"]" * (DEEP_READ_LIMIT // 2 + 1)
    with pytest.raises(UnreadableJson, match="not read"):
        read_json(deep)
