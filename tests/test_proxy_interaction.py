"""The interaction rules through the real ``urlvet proxy``, between the Python SDK's own client and
the SDK server of tests/support/mcp_server.py, over stdio and Streamable HTTP, in both eras
(``legacy``: 2025-11-25 ``initialize`` and ``elicitation/create``; ``auto``: 2026-07-28
``input_required`` results and capabilities in each request's ``_meta``).

- a form that asks for a password (UV701) is declined under a policy that blocks it, and the
  client's elicitation callback never sees it;
- a URL elicitation sent to a client that declared form mode only (UV710) is declined on the
  client's behalf, while the same client reached directly is shown the URL: the client itself
  does not enforce its own declaration.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientSession
from mcp.types import (
    ClientCapabilities,
    ElicitationCapability,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    FormElicitationCapability,
)

from support import mcp_server
from support.proxy_harness import (
    SDK_SERVER,
    SERVER_NAME,
    env,
    http_proxy,
    proxy_command,
    sdk_http_server,
)

pytestmark = pytest.mark.anyio
MODES = {"legacy": "2025-11-25", "auto": "2026-07-28"}
# The default thresholds (block at high): UV701 blocks. google.com is the server's domain.
POLICY = "dns: {enabled: false}\nservers:\n  urlvet-test: {domains: [google.com]}\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lint") / "policy.yaml"
    path.write_text(POLICY, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with sdk_http_server() as url:
        yield url


@pytest.fixture(scope="module")
def proxied_http(upstream: str, policy_file: Path) -> Iterator[tuple[str, Path]]:
    log = policy_file.parent / "http.log"
    options = ("--policy", str(policy_file), "--server-name", SERVER_NAME, "--log", str(log))
    with http_proxy(upstream, *options) as url:
        yield url, log


@dataclass
class Target:
    target: Any
    log: Path
    stderr: Path | None = None
    """The proxy's stderr (stdio: the proxy is run with its stderr sent to this file)."""


@pytest.fixture(params=["stdio", "http"])
def via_proxy(request: pytest.FixtureRequest, policy_file: Path, tmp_path: Path) -> Target:
    if request.param == "http":
        url, log = request.getfixturevalue("proxied_http")
        return Target(url, log)
    log = tmp_path / "stdio.log"
    cmd = proxy_command(
        "--policy",
        str(policy_file),
        "--server-name",
        SERVER_NAME,
        "--log",
        str(log),
        command=[sys.executable, str(SDK_SERVER), "stdio"],
    )
    stderr = tmp_path / "stderr.txt"
    wrapped = ["sh", "-c", f'exec "$@" 2>>"{stderr}"', "sh", *cmd]
    return Target(StdioServerParameters(command="sh", args=wrapped[1:], env=env()), log, stderr)


@pytest.fixture(params=list(MODES))
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@dataclass
class Recorder:
    """The client's elicitation callback: records what it is shown, accepts, fills in forms."""

    shown: list[Any] = field(default_factory=list)

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        self.shown.append(params)
        if isinstance(params, ElicitRequestFormParams):
            fields = params.requested_schema.get("properties", {})
            return ElicitResult(action="accept", content=dict.fromkeys(fields, "Ada"))
        return ElicitResult(action="accept")


class FormOnlyClient(Client):
    """The SDK's client with its capability advertisement cut to form-mode elicitation.

    The SDK declares both modes whenever an elicitation callback is set; a client that
    renders forms but never opens links declares ``{"elicitation": {"form": {}}}``. Only the
    advertisement changes: the session, its callback and its transports are the SDK's own.
    """

    async def _build_session(self, exit_stack: AsyncExitStack) -> ClientSession:
        session = await super()._build_session(exit_stack)
        full = session._build_capabilities

        def form_only(version: str) -> ClientCapabilities:
            only_forms = ElicitationCapability(form=FormElicitationCapability())
            return full(version).model_copy(update={"elicitation": only_forms})

        session._build_capabilities = form_only  # type: ignore[method-assign]
        return session


async def _call(client: Client, mode: str, tool: str) -> str:
    async with client:
        assert client.protocol_version == MODES[mode]
        result = await client.call_tool(tool, {})
    assert not result.is_error, result
    text = result.content[0].text  # type: ignore[union-attr]
    assert isinstance(text, str)
    return text


def _log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_form_asking_for_a_password_is_declined_and_never_shown(
    via_proxy: Target, mode: str
) -> None:
    ui = Recorder()
    client = Client(via_proxy.target, mode=mode, elicitation_callback=ui)
    assert await _call(client, mode, "sign_in") == "sign_in:decline"
    assert ui.shown == []
    forms = [e for e in _log(via_proxy.log) if e["shape"] == "elicitation/create:form"]
    assert forms, _log(via_proxy.log)
    last = forms[-1]
    assert (last["decision"], last["action"]) == ("block", "declined")
    assert "UV701" in last["codes"]
    assert '"password"' in last["url"]  # the form's requestedSchema, as vetted
    assert last["message"] == mcp_server.LOGIN_MESSAGE
    if via_proxy.stderr is not None:
        err = via_proxy.stderr.read_text(encoding="utf-8")
        assert "urlvet proxy: declined a form from the server: The form asks for a password" in err


async def test_the_sign_in_form_reaches_the_client_without_the_proxy(mode: str) -> None:
    # The attack is real: the SDK client shows the password form when nothing stands between.
    ui = Recorder()
    direct = StdioServerParameters(
        command=sys.executable, args=[str(SDK_SERVER), "stdio"], env=env()
    )
    client = Client(direct, mode=mode, elicitation_callback=ui)
    assert await _call(client, mode, "sign_in") == "signed in as Ada"
    assert [type(p) for p in ui.shown] == [ElicitRequestFormParams]
    assert "password" in ui.shown[0].requested_schema["properties"]


async def test_an_innocent_form_still_passes(via_proxy: Target, mode: str) -> None:
    ui = Recorder()
    client = Client(via_proxy.target, mode=mode, elicitation_callback=ui)
    assert await _call(client, mode, "greet") == "hello Ada"
    assert [type(p) for p in ui.shown] == [ElicitRequestFormParams]


async def test_url_elicitation_to_a_form_only_client_is_declined_on_its_behalf(
    via_proxy: Target, mode: str
) -> None:
    ui = Recorder()
    client = FormOnlyClient(via_proxy.target, mode=mode, elicitation_callback=ui)
    assert await _call(client, mode, "connect_calendar") == "google:decline"
    assert ui.shown == []
    entries = [e for e in _log(via_proxy.log) if e["url"] == mcp_server.GOOD_URL]
    assert entries
    last = entries[-1]
    assert (last["decision"], last["action"]) == ("block", "declined")
    # The URL itself is one the policy allows (a trusted sign-in page, UV403 information).
    assert last["codes"] == ["UV710", "UV403"]
    if via_proxy.stderr is not None:
        err = via_proxy.stderr.read_text(encoding="utf-8")
        assert "urlvet proxy: blocked a URL request from" in err
        assert "the client declared form mode only" in err
        assert "(UV710)" in err


async def test_the_form_only_client_would_be_shown_the_url_without_the_proxy(mode: str) -> None:
    ui = Recorder()
    direct = StdioServerParameters(
        command=sys.executable, args=[str(SDK_SERVER), "stdio"], env=env()
    )
    client = FormOnlyClient(direct, mode=mode, elicitation_callback=ui)
    assert await _call(client, mode, "connect_calendar") == "google:accept"
    assert [p.url for p in ui.shown if isinstance(p, ElicitRequestURLParams)] == [
        mcp_server.GOOD_URL
    ]


async def test_a_client_that_declared_url_mode_still_gets_the_url(
    via_proxy: Target, mode: str
) -> None:
    ui = Recorder()
    client = Client(via_proxy.target, mode=mode, elicitation_callback=ui)
    assert await _call(client, mode, "connect_calendar") == "google:accept"
    assert [p.url for p in ui.shown] == [mcp_server.GOOD_URL]
