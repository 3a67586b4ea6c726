"""urlvet reads each server message as the most lenient client does, at the Relay (fast).

- every row of the client table (tests/support/attacks.py, docs/proxy-clients.md) is read as
  the table says and never forwarded;
- generated spellings of URL requests (escapes, number spellings, key order, duplicated keys,
  whitespace, ids) never get a blocked URL past the relay (hypothesis);
- what urlvet cannot read is never forwarded; what it read is forwarded byte for byte only when
  those bytes are what it read; a lone surrogate is judged and answered, never a crash.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import OFFLINE
from support.attacks import ATTACKS, BLOCKED, Attack
from urlvet.mcp.answers import URL_BLOCKED
from urlvet.mcp.proxy.core import ProxyLog, Relay, Step
from urlvet.mcp.proxy.judge import Judge
from urlvet.mcp.wire import parse_message, read_json
from urlvet.server import as_server

WARNED = "https://bit.ly/abc"  # UV212: a link shortener warns
ALLOWED = "https://docs.example.com/connect"


def _relay(log: ProxyLog | None = None) -> tuple[Relay, list[str]]:
    told: list[str] = []
    server = as_server("stdio", "hostile")
    assert server is not None
    return Relay(Judge(OFFLINE, server), log, diagnostic=told.append), told


def _step(raw: bytes, relay: Relay | None = None) -> Step:
    relay = relay or _relay()[0]
    return asyncio.run(relay.from_server(raw))


def _messages(out: bytes) -> list[Any]:
    value = read_json(out).value
    return value if isinstance(value, list) else [value]


def _url_requests_in(step: Step) -> list[str]:
    """Every URL the client is asked to open by what the relay sends it (any reading)."""
    urls = []
    for out in (*step.notices, *step.to_client):
        for message in _messages(out):
            parsed = parse_message(message)
            assert parsed.shape != "malformed" or parsed.claimed is None, parsed
            urls.extend(r.url for r in parsed.requests)
    return urls


def _raw(attack: Attack) -> bytes:
    return attack.raw.replace(b"{ID}", b"7")


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_urlvet_reads_each_row_as_the_table_says(attack: Attack) -> None:
    parsed = parse_message(read_json(_raw(attack)).value)
    if attack.reads_as == "malformed":
        assert (parsed.shape, parsed.claimed is not None) == ("malformed", True)
    else:
        assert parsed.shape == attack.reads_as
        assert BLOCKED in [r.url for r in parsed.requests]


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_the_relay_forwards_no_row_and_answers_the_side_that_waits(attack: Attack) -> None:
    step = _step(_raw(attack))
    assert BLOCKED not in _url_requests_in(step)
    assert len(step.notices) == 1  # the client is told
    if attack.kind == "request":
        # The server is declined (the draft's -32099, or {"action": "decline"}).
        assert len(step.to_server) == 1
        decline = json.loads(step.to_server[0])
        assert decline.get("error", {}).get("code") == -32099 or decline["result"] == {
            "action": "decline"
        }
    else:
        # The client's request gets urlvet's error under its own id.
        (error,) = [m for out in step.to_client for m in _messages(out)]
        assert (error["id"], error["error"]["code"]) == (7, URL_BLOCKED)
    if attack.reads_as == "malformed":
        # Ambiguous (a request and a response at once): the server is refused as well.
        (refusal,) = [json.loads(out) for out in step.to_server]
        assert (refusal["id"], refusal["error"]["code"]) == (7, -32600)


def _with(url: str, message: str = "Sign in.") -> bytes:
    params = {"mode": "url", "url": url, "message": message, "elicitationId": "e"}
    body = {"jsonrpc": "2.0", "id": 3, "method": "elicitation/create", "params": params}
    return json.dumps(body).encode()


def test_an_allowed_message_is_forwarded_byte_for_byte() -> None:
    raw = _with(ALLOWED).replace(b", ", b" ,  ")
    assert _step(raw).to_client == (raw,)


def test_a_message_read_with_a_byte_replaced_is_forwarded_as_what_was_judged() -> None:
    raw = _with(ALLOWED, "Sign in \x00").replace(b"\\u0000", b"\xff")
    (out,) = _step(raw).to_client
    assert out != raw
    assert json.loads(out)["params"]["message"] == "Sign in \ufffd"


def test_text_no_client_can_read_is_never_forwarded_and_the_operator_is_told() -> None:
    relay, told = _relay()
    step = _step(b'{"jsonrpc":"2.0","error":{"code":-32042,', relay)
    assert step == Step()
    assert len(told) == 1
    assert "cannot read" in told[0]


def test_a_batch_keeps_the_bytes_of_the_items_it_forwards() -> None:
    allowed = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"n":1.0E+2}}'
    blocked = _with(BLOCKED)
    step = _step(b"[" + allowed + b" , " + blocked + b"]")
    assert step.to_client == (b"[" + allowed + b"]",)
    assert len(step.to_server) == 1


@pytest.mark.parametrize(
    ("url", "decision"),
    [(WARNED, "forwarded-with-warning"), (BLOCKED, "declined")],
)
def test_a_lone_surrogate_is_judged_answered_and_logged_never_a_crash(
    url: str, decision: str, tmp_path: Path
) -> None:
    log = ProxyLog(tmp_path / "proxy.log")
    relay, _ = _relay(log)
    raw = _with(url, "Sign in \udfff")  # json.dumps writes the escape \udfff
    assert b"\\udfff" in raw
    step = _step(raw, relay)
    log.close()
    (entry,) = [json.loads(x) for x in (tmp_path / "proxy.log").read_text().splitlines()]
    assert entry["action"] == decision
    assert entry["message"] == "Sign in \udfff"
    for out in step.to_client:
        message = json.loads(out)  # what the client gets is valid JSON with the same text
        assert message["params"]["message"].endswith("Sign in \udfff")


def test_a_blocked_url_holding_a_lone_surrogate_is_answered() -> None:
    raw = _minus_32042_for(BLOCKED + "\udfff")
    step = _step(raw)
    (error,) = [json.loads(out) for out in step.to_client]
    assert error["error"]["code"] == URL_BLOCKED


def _minus_32042_for(url: str) -> bytes:
    item = {"mode": "url", "url": url, "message": "m", "elicitationId": "e"}
    error = {"code": -32042, "message": "m", "data": {"elicitations": [item]}}
    return json.dumps({"jsonrpc": "2.0", "id": 7, "error": error}).encode()


# -- generated spellings ---------------------------------------------------------------------


def _shapes() -> list[Any]:
    params = {"mode": "url", "message": "Sign in.", "url": BLOCKED, "elicitationId": "e-1"}
    item = {"method": "elicitation/create", "params": params}
    return [
        {"jsonrpc": "2.0", "id": 5, "method": "elicitation/create", "params": params},
        {
            "jsonrpc": "2.0",
            "id": 5,
            "error": {"code": -32042, "message": "m", "data": {"elicitations": [params]}},
        },
        {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {"resultType": "input_required", "inputRequests": {"k": item}},
        },
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "interaction/create",
            "params": {"id": "x", "type": "ua", "interaction": {"url": BLOCKED}},
        },
        {
            "jsonrpc": "2.0",
            "id": 5,
            "error": {"code": -32003, "message": "m", "data": {"type": "ua", "url": BLOCKED}},
        },
    ]


_CODE_SPELLINGS = {
    -32042: [
        "-32042",
        "-32042.0",
        "-3.2042e4",
        "-3.2042E+4",
        "-320420e-1",
        '"-32042"',
        '" -32042 "',
        '"-32042.0"',
    ],
    -32003: ["-32003", "-32003.00", "-3.2003e4", '"-32003"'],
}
_IDS = ["5", "5.0", "5e0", '"5"']
_WS = st.sampled_from(["", " ", "\t", "  ", "\r\n "[1:]])


def _escape(text: str, draw: Callable[..., Any]) -> str:
    """``text`` as a JSON string body, each character escaped or not, as ``draw`` decides."""
    out = []
    for char in text:
        how = draw(
            st.sampled_from(["plain", "plain", "u", "U"] + (["slash"] if char == "/" else []))
        )
        if how == "slash":
            out.append("\\/")
        elif how in ("u", "U") or char in '"\\':
            code = f"{ord(char):04x}"
            out.append("\\u" + (code.upper() if how == "U" else code))
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _emit(value: Any, draw: Callable[..., Any], key: str | None = None) -> str:
    ws = lambda: draw(_WS)  # noqa: E731
    if key == "code" and value in _CODE_SPELLINGS:
        return draw(st.sampled_from(_CODE_SPELLINGS[value]))
    if key == "id" and value == 5:
        return draw(st.sampled_from(_IDS))
    if isinstance(value, dict):
        items = list(value.items())
        order = draw(st.permutations(items))
        parts = []
        for k, v in order:
            if draw(st.integers(0, 5)) == 0:
                # A decoy first: JSON.parse, json and pydantic all keep the last duplicate.
                parts.append(f'{ws()}{_escape(k, draw)}{ws()}:{ws()}"decoy"{ws()}')
            parts.append(f"{ws()}{_escape(k, draw)}{ws()}:{ws()}{_emit(v, draw, k)}{ws()}")
        return "{" + ",".join(parts) + "}"
    if isinstance(value, list):
        return "[" + ",".join(f"{ws()}{_emit(v, draw)}{ws()}" for v in value) + "]"
    if isinstance(value, str):
        return _escape(value, draw)
    return json.dumps(value)


@st.composite
def spellings(draw: Callable[..., Any]) -> bytes:
    """A URL request for BLOCKED in one of the five shapes, spelt at random."""
    shape = draw(st.sampled_from(_shapes()))
    text = _emit(shape, draw)
    if draw(st.booleans()):
        text = f"[{text}]"  # as a batch
    return text.encode("utf-8")


_RELAY = _relay()[0]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spellings())
def test_no_spelling_of_a_url_request_gets_a_blocked_url_past_the_relay(raw: bytes) -> None:
    assert _RELAY.quick(raw) is None  # never waved through unread
    step = asyncio.run(_RELAY.from_server(raw))
    assert BLOCKED not in _url_requests_in(step)
    assert raw not in step.to_client
    # Every spelling is read (nothing a client takes is dropped unread): someone is answered.
    assert step.to_client or step.to_server or step.retry is not None


def test_a_client_that_asked_for_errors_only_gets_no_warning_notice() -> None:
    relay, told = _relay()
    relay.from_client(
        b'{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"error"}}'
    )
    step = _step(_with(BLOCKED), relay)
    assert step.notices == ()
    assert len(step.to_server) == 1  # still declined
    assert len(told) == 1  # and the operator still told
    assert told[0].startswith("blocked a URL request from hostile: evil.example: ")


@pytest.mark.parametrize(
    ("raw", "side"),
    [
        (b'{"jsonrpc":"2.0","id":9,"error":{"code":-32042,]}}', "client"),
        (b'{"jsonrpc":"2.0","id":"r-1","method":"elicitation/create","params":{,}}', "server"),
        (b'{"jsonrpc":"2.0","method":"elicitation/create","id":9.0,"params":[}', "server"),
    ],
)
def test_an_unreadable_message_is_answered_to_the_side_that_waits_for_it(
    raw: bytes, side: str
) -> None:
    relay, told = _relay()
    step = _step(raw, relay)
    assert raw not in step.to_client
    (answer,) = step.to_client if side == "client" else step.to_server
    error = json.loads(answer)
    assert error["id"] in (9, "r-1")
    assert "cannot be read" in error["error"]["message"]
    assert len(told) == 1


def test_a_batch_item_with_a_long_number_keeps_its_bytes() -> None:
    allowed = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"n":' + b"9" * 5000
    allowed += b"}}"
    step = _step(b"[" + allowed + b"," + _with(BLOCKED) + b"]")
    assert step.to_client == (b"[" + allowed + b"]",)


def test_a_message_read_with_a_byte_replaced_keeps_its_numbers_and_order() -> None:
    raw = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"b":1.0E+2,"a":'
    raw += b"9" * 5000 + b',"error":"\xff"}}'
    (out,) = _step(raw).to_client
    assert out == raw.replace(b"\xff", "\ufffd".encode())
