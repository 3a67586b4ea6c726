"""The interaction lint in the MCP layer: the client's declared capabilities (UV710), the proxy's
relay of forms (UV701-UV706) and undeclared URL requests, ``urlvet hook`` and ``urlvet audit``.

The relay is the proxy's own :class:`~urlvet.mcp.proxy.core.Relay`, fed the bytes a client and a
server send; the end-to-end runs with the SDK's client and server are in
tests/test_proxy_interaction.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from support import OFFLINE
from support.mcp_specs import MCP_DATA
from urlvet.cli import main
from urlvet.findings import Decision
from urlvet.mcp import answer, form_elicitations, vet_form
from urlvet.mcp.answers import URL_BLOCKED
from urlvet.mcp.capabilities import ClientCapabilities, undeclared_reason
from urlvet.mcp.proxy.core import Relay, Step
from urlvet.mcp.wire import parse_message
from urlvet.server import as_server

pytestmark = pytest.mark.anyio
EXAMPLES = MCP_DATA / "2026-07-28" / "examples"
GOOD_URL = "https://accounts.google.com/o/oauth2/v2/auth?client_id=x"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _example(name: str) -> Any:
    return json.loads((EXAMPLES / name).read_text(encoding="utf-8"))


def _b(message: Any) -> bytes:
    return json.dumps(message).encode()


def _initialize(capabilities: Any, msg_id: int = 0) -> bytes:
    params = {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {}}
    return _b({"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params})


def _url_elicitation(msg_id: Any = 5) -> dict[str, Any]:
    params = {"mode": "url", "elicitationId": "e1", "url": GOOD_URL, "message": "Sign in"}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "elicitation/create", "params": params}


def _form(schema: Any, msg_id: Any = 6, message: str = "Sign in") -> dict[str, Any]:
    params = {"mode": "form", "message": message, "requestedSchema": schema}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "elicitation/create", "params": params}


PASSWORD_FORM = {"type": "object", "properties": {"password": {"type": "string"}}}


def _relay() -> tuple[Relay, list[str]]:
    said: list[str] = []
    relay = Relay.build(OFFLINE, as_server("stdio"), diagnostic=said.append)
    return relay, said


# -- what a client declared -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("capabilities", "form", "url", "types"),
    [
        (_example("ClientCapabilities__elicitation-form-only-implicit.json"), True, False, set()),
        (
            _example("ClientCapabilities__elicitation-form-and-url-mode-support.json"),
            True,
            True,
            set(),
        ),
        ({"elicitation": {"url": {}}}, False, True, set()),
        ({"elicitation": {"form": {}}}, True, False, set()),
        ({"userInteraction": {"types": ["ua", 7]}}, False, False, {"ua"}),
        ({"elicitation": {"url": True}}, False, False, set()),  # not an object: not declared
        ({}, False, False, set()),
        ("elicitation", False, False, set()),
    ],
)
def test_declared_capabilities_read_as_the_specification_says(
    capabilities: Any, form: bool, url: bool, types: set[str]
) -> None:
    declared = ClientCapabilities.declared(capabilities)
    assert (declared.elicitation_form, declared.elicitation_url) == (form, url)
    assert declared.interaction_types == types


def test_undeclared_reason_per_shape() -> None:
    form_only = ClientCapabilities.declared({"elicitation": {}})
    both = ClientCapabilities.declared({"elicitation": {"form": {}, "url": {}}})
    ua = ClientCapabilities.declared({"userInteraction": {"types": ["ua"]}})
    url_request = parse_message(_url_elicitation())
    assert "form mode only" in (undeclared_reason(url_request, form_only) or "")
    assert undeclared_reason(url_request, both) is None
    draft = parse_message(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "interaction/create",
            "params": {"id": "i", "type": "ua", "interaction": {"url": GOOD_URL}},
        }
    )
    assert undeclared_reason(draft, ua) is None
    assert "userInteraction" in (undeclared_reason(draft, both) or "")
    assert undeclared_reason(parse_message(_form(PASSWORD_FORM)), form_only) is None


# -- the relay: undeclared URL requests ---------------------------------------------------------


async def test_url_elicitation_to_a_form_only_client_is_declined_on_its_behalf() -> None:
    relay, said = _relay()
    relay.from_client(_initialize({"elicitation": {}}))
    step = await relay.from_server(_b(_url_elicitation()))
    assert step.to_client == ()
    assert [json.loads(m) for m in step.to_server] == [
        {"jsonrpc": "2.0", "id": 5, "result": {"action": "decline"}}
    ]
    assert len(said) == 1  # one line per block
    assert "UV710" in said[0]
    assert "form mode only" in said[0]


async def test_url_elicitation_to_a_client_that_declared_url_mode_passes() -> None:
    relay, said = _relay()
    relay.from_client(_initialize({"elicitation": {"form": {}, "url": {}}}))
    line = _b(_url_elicitation())
    assert await relay.from_server(line) == Step(to_client=(line,))
    assert said == []


async def test_nothing_is_guessed_before_an_initialize_was_seen() -> None:
    relay, _ = _relay()
    line = _b(_url_elicitation())
    assert await relay.from_server(line) == Step(to_client=(line,))


async def test_url_required_error_to_a_form_only_client_becomes_urlvets_error() -> None:
    relay, said = _relay()
    relay.from_client(_initialize({"elicitation": {}}))
    error = {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {
            "code": -32042,
            "message": "needs a URL",
            "data": {"elicitations": [_url_elicitation()["params"]]},
        },
    }
    step = await relay.from_server(_b(error))
    (sent,) = [json.loads(m) for m in step.to_client]
    assert sent["error"]["code"] == URL_BLOCKED
    assert sent["error"]["data"]["urlvet"]["blocked"][0]["codes"][0] == "UV710"
    assert said


async def test_draft_interaction_needs_ua_in_user_interaction_types() -> None:
    relay, _ = _relay()
    relay.from_client(_initialize({"elicitation": {"form": {}, "url": {}}}))
    request = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "interaction/create",
        "params": {"id": "i", "type": "ua", "interaction": {"url": GOOD_URL}},
    }
    step = await relay.from_server(_b(request))
    (sent,) = [json.loads(m) for m in step.to_server]
    assert sent["error"]["code"] == -32099  # the draft's decline


async def test_modern_capabilities_come_from_the_request_answered() -> None:
    relay, said = _relay()
    meta = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    call = {
        "jsonrpc": "2.0",
        "id": 11,
        "method": "tools/call",
        "params": {"name": "connect", "arguments": {}, "_meta": meta},
    }
    relay.from_client(_b(call))
    result = {
        "jsonrpc": "2.0",
        "id": 11,
        "result": {
            "resultType": "input_required",
            "inputRequests": {
                "google": {
                    "method": "elicitation/create",
                    "params": {"mode": "url", "url": GOOD_URL, "message": "Sign in"},
                }
            },
            "requestState": "s1",
        },
    }
    step = await relay.from_server(_b(result))
    assert step.to_client == ()
    assert step.retry is not None
    retry = json.loads(step.retry)
    assert retry["params"]["inputResponses"] == {"google": {"action": "decline"}}
    assert retry["params"]["requestState"] == "s1"
    assert said


async def test_channels_keep_their_own_declarations() -> None:
    relay, _ = _relay()
    relay.from_client(_initialize({"elicitation": {}}), channel="a")
    relay.from_client(_initialize({"elicitation": {"url": {}}}), channel="b")
    assert (await relay.from_server(_b(_url_elicitation()), channel="a")).to_server
    line = _b(_url_elicitation())
    assert (await relay.from_server(line, channel="b")).to_client == (line,)


async def test_the_policy_can_lift_uv710() -> None:
    from support import offline

    relay = Relay.build(offline(ignore=["UV710"]), as_server("stdio"))
    relay.from_client(_initialize({"elicitation": {}}))
    line = _b(_url_elicitation())
    assert (await relay.from_server(line)).to_client == (line,)


# -- the relay: forms ---------------------------------------------------------------------------


async def test_a_blocked_form_is_declined_to_the_server_and_the_client_sees_nothing() -> None:
    relay, said = _relay()
    step = await relay.from_server(_b(_form(PASSWORD_FORM)))
    assert step.to_client == ()
    assert [json.loads(m) for m in step.to_server] == [
        {"jsonrpc": "2.0", "id": 6, "result": {"action": "decline"}}
    ]
    assert said
    assert "declined a form" in said[0]
    assert "UV701" in said[0]


async def test_a_form_without_mode_is_a_form() -> None:
    relay, _ = _relay()
    message = _form(PASSWORD_FORM)
    del message["params"]["mode"]
    assert (await relay.from_server(_b(message))).to_server


async def test_the_specifications_own_forms_pass_unchanged() -> None:
    relay, said = _relay()
    for name in (
        "ElicitRequestFormParams__elicit-single-field.json",
        "ElicitRequestFormParams__elicit-multiple-fields.json",
    ):
        params = _example(name)
        line = _b({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": params})
        assert await relay.from_server(line) == Step(to_client=(line,))
    result = _example(
        "InputRequiredResult__input-required-result-with-elicitation-and-sampling-and-request-state.json"
    )
    line = _b({"jsonrpc": "2.0", "id": 2, "result": result})
    assert await relay.from_server(line) == Step(to_client=(line,))
    assert said == []


def _input_required(schema: Any, msg_id: int = 21) -> dict[str, Any]:
    result = _example(
        "InputRequiredResult__input-required-result-with-elicitation-and-sampling-and-request-state.json"
    )
    result["inputRequests"]["github_login"]["params"]["requestedSchema"] = schema
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


async def test_a_blocked_form_in_input_required_is_declined_by_a_retry() -> None:
    relay, _ = _relay()
    call = {"jsonrpc": "2.0", "id": 21, "method": "tools/call", "params": {"name": "t"}}
    relay.from_client(_b(call))
    step = await relay.from_server(_b(_input_required(PASSWORD_FORM)))
    assert step.to_client == ()
    assert step.retry is not None
    params = json.loads(step.retry)["params"]
    # The form is declined; the sampling request stays for the server to ask again.
    assert params["inputResponses"] == {"github_login": {"action": "decline"}}
    assert params["requestState"] == "eyJsb2NhdGlvbiI6Ik5ldyBZb3JrIn0"


async def test_a_blocked_form_whose_request_is_unknown_becomes_urlvets_error() -> None:
    relay, _ = _relay()
    step = await relay.from_server(_b(_input_required(PASSWORD_FORM, msg_id=99)))
    (sent,) = [json.loads(m) for m in step.to_client]
    assert sent["id"] == 99
    assert sent["error"]["code"] == URL_BLOCKED
    assert "password" not in json.dumps(sent["error"]["data"])  # nothing of the form is kept
    assert "UV701" in sent["error"]["message"]


async def test_a_warned_form_reaches_the_client_with_a_urlvet_line_first() -> None:
    relay, _ = _relay()
    schema = {"type": "object", "properties": {"ssn": {"type": "string"}}}
    step = await relay.from_server(_b(_form(schema, message="Verify your identity")))
    (sent,) = [json.loads(m) for m in step.to_client]
    first, rest = sent["params"]["message"].split("\n", 1)
    assert first.startswith("urlvet: check this form")
    assert "UV704" in first
    assert rest == "Verify your identity"
    assert sent["params"]["requestedSchema"] == schema


async def test_forms_are_logged(tmp_path: Path) -> None:
    from urlvet.mcp.proxy.core import ProxyLog

    log = ProxyLog(tmp_path / "log.jsonl")
    relay = Relay.build(OFFLINE, as_server("stdio"), log, diagnostic=lambda _: None)
    await relay.from_server(_b(_form(PASSWORD_FORM)))
    log.close()
    (entry,) = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert entry["shape"] == "elicitation/create:form"
    assert (entry["decision"], entry["action"], entry["codes"]) == ("block", "declined", ["UV701"])
    assert json.loads(entry["url"]) == PASSWORD_FORM


# -- urlvet hook ------------------------------------------------------------------------------


def test_hook_declines_a_form_that_asks_for_a_password() -> None:
    got = answer(_form(PASSWORD_FORM), OFFLINE, "stdio")
    assert got.decision is Decision.BLOCK
    assert got.response == {"jsonrpc": "2.0", "id": 6, "result": {"action": "decline"}}
    (form,) = got.forms
    assert form.answer == "decline"
    assert form.verdict.codes == ("UV701",)


def test_hook_passes_an_innocent_form_to_the_client() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    got = answer(_form(schema), OFFLINE, "stdio")
    assert got.decision is Decision.ALLOW
    assert got.response is None
    assert got.forms[0].answer == "pass-through"


def test_hook_declines_a_form_key_of_input_required_and_keeps_the_rest_pending() -> None:
    got = answer(_input_required(PASSWORD_FORM), OFFLINE, "stdio")
    assert got.response == {
        "inputResponses": {"github_login": {"action": "decline"}},
        "requestState": "eyJsb2NhdGlvbiI6Ik5ldyBZb3JrIn0",
    }
    assert got.pending == ("capital_of_france",)


def test_urlvet_hook_command_answers_forms() -> None:
    lines = "\n".join(json.dumps(m) for m in (_form(PASSWORD_FORM), _form({"type": "object"})))
    result = CliRunner().invoke(main, ["hook", "--server", "stdio", "--no-dns"], input=lines)
    assert result.exit_code == 0, result.output
    first, second = (json.loads(x) for x in result.output.splitlines())
    assert first["decision"] == "block"
    assert first["response"]["result"] == {"action": "decline"}
    assert first["forms"][0]["verdict"]["findings"][0]["code"] == "UV701"
    assert second["decision"] == "allow"
    assert second["response"] is None


# -- urlvet audit -----------------------------------------------------------------------------


def test_urlvet_audit_reports_forms_in_logged_traffic(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"apiKey": {"type": "string", "title": "API key"}}}
    lines = [
        _form(PASSWORD_FORM),
        _input_required(schema),
        _form({"type": "object", "properties": {"name": {"type": "string"}}}),
        {"ts": 1, "message": json.dumps(_form(PASSWORD_FORM, msg_id=8))},  # a wrapped message
    ]
    path = tmp_path / "traffic.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["audit", "--no-dns", "--format", "jsonl", str(path)])
    assert result.exit_code == 1, result.output
    records = [json.loads(x) for x in result.output.splitlines()]
    forms = [r for r in records if r.get("input") == "mcp:elicitation/create:form"]
    got = [(r["line"], r["decision"], [f["code"] for f in r["findings"]]) for r in forms]
    assert got == [
        (1, "block", ["UV701"]),
        (2, "block", ["UV702"]),
        (3, "allow", []),
        (4, "block", ["UV701"]),
    ]
    text = path.read_text(encoding="utf-8").splitlines()
    assert text[0][forms[0]["column"] - 1 :].startswith('"requestedSchema"')


def test_urlvet_audit_reads_the_forms_of_a_proxy_log(tmp_path: Path) -> None:
    entry = {
        "time": "2026-01-01T00:00:00.000Z",
        "server": "https://mcp.example.com/mcp",
        "server_name": None,
        "shape": "elicitation/create:form",
        "url": json.dumps(PASSWORD_FORM),
        "message": "Sign in",
        "decision": "block",
        "codes": ["UV701"],
        "action": "declined",
    }
    path = tmp_path / "proxy.log"
    path.write_text(json.dumps(entry) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["audit", "--no-dns", "--format", "jsonl", str(path)])
    (record,) = [json.loads(x) for x in result.output.splitlines() if '"url"' in x]
    assert [f["code"] for f in record["findings"]] == ["UV701"]
    assert record["href"] is None


def test_a_form_never_shares_a_verdict_with_a_url_spelt_the_same(tmp_path: Path) -> None:
    from urlvet.checks.interaction import FormText

    text = json.dumps(PASSWORD_FORM)
    assert FormText(text) != text
    assert text != FormText(text)
    assert hash(FormText(text)) != hash(text)
    assert {(FormText(text), None, None): 1}.get((text, None, None)) is None


def test_form_elicitations_finds_both_eras() -> None:
    found = form_elicitations([_form(PASSWORD_FORM), _input_required(PASSWORD_FORM)])
    assert [(f.protocol, f.key) for f in found] == [
        ("2025-11-25", None),
        ("2026-07-28", "github_login"),
    ]
    assert vet_form(OFFLINE, found[1].requested_schema).codes == ("UV701",)


# -- the Python SDK adapter -------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_guard_elicitation_declines_a_password_form_and_passes_an_innocent_one(
    mode: str,
) -> None:
    from mcp import Client

    from support import mcp_server
    from urlvet.mcp import guard_elicitation

    seen: list[Any] = []

    async def inner(context: Any, params: Any) -> Any:
        from mcp.types import ElicitResult

        seen.append(params)
        fields = params.requested_schema.get("properties", {})
        return ElicitResult(action="accept", content=dict.fromkeys(fields, "Ada"))

    async def consent_ui(summary: Any, params: Any) -> str:
        return "accept"

    guard = guard_elicitation(consent_ui, OFFLINE, server="stdio", inner=inner)
    async with Client(mcp_server.server, mode=mode, elicitation_callback=guard) as client:
        declined = await client.call_tool("sign_in", {})
        greeted = await client.call_tool("greet", {})
    assert declined.content[0].text == "sign_in:decline"  # type: ignore[union-attr]
    assert greeted.content[0].text == "hello Ada"  # type: ignore[union-attr]
    assert [sorted(p.requested_schema["properties"]) for p in seen] == [["name"]]
