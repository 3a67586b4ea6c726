"""``urlvet proxy`` between a real SDK client and a real SDK server (tests/support/mcp_server.py).

The client is the Python SDK's own ``mcp.Client`` with a plain elicitation callback that records
what it is shown and accepts: it knows nothing of urlvet. It reaches the server through the
proxy over stdio (the proxy starts the server) and over Streamable HTTP (the proxy in front of
the server's endpoint), in both eras: ``legacy`` (2025-11-25: ``elicitation/create`` requests and
``-32042``) and ``auto`` (2026-07-28: ``input_required`` results).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult

from support import mcp_server
from support.proxy_harness import (
    SDK_SERVER,
    SERVER_NAME,
    env,
    http_proxy,
    proxy_command,
    sdk_http_server,
    write_policy,
)
from urlvet.mcp.answers import URL_BLOCKED

pytestmark = pytest.mark.anyio
MODES = {"legacy": "2025-11-25", "auto": "2026-07-28"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def policy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("proxy")
    write_policy(directory)
    return directory


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with sdk_http_server() as url:
        yield url


@pytest.fixture(scope="module")
def proxied_http(upstream: str, policy_dir: Path) -> Iterator[tuple[str, Path]]:
    log = policy_dir / "http.log"
    options = (
        "--policy",
        str(policy_dir / "proxy-policy.yaml"),
        "--server-name",
        SERVER_NAME,
        "--log",
        str(log),
    )
    with http_proxy(upstream, *options) as url:
        yield url, log


@dataclass
class Target:
    """What the client connects to, and the proxy's log."""

    target: Any
    log: Path
    server: str
    """Who asks, as the proxy's log names it."""


@pytest.fixture(params=["stdio", "http"])
def via_proxy(request: pytest.FixtureRequest, policy_dir: Path, tmp_path: Path) -> Target:
    if request.param == "http":
        url, log = request.getfixturevalue("proxied_http")
        return Target(url, log, request.getfixturevalue("upstream"))
    log = tmp_path / "stdio.log"
    cmd = proxy_command(
        "--policy",
        str(policy_dir / "proxy-policy.yaml"),
        "--server-name",
        SERVER_NAME,
        "--log",
        str(log),
        command=[sys.executable, str(SDK_SERVER), "stdio"],
    )
    return Target(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env()), log, "stdio")


@pytest.fixture(params=list(MODES))
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@dataclass
class Recorder:
    """The client's elicitation callback: records and accepts (fills forms with a name)."""

    shown: list[Any] = field(default_factory=list)

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        self.shown.append(params)
        if isinstance(params, ElicitRequestFormParams):
            return ElicitResult(action="accept", content={"name": "Ada"})
        return ElicitResult(action="accept")

    @property
    def urls(self) -> list[str]:
        return [p.url for p in self.shown if isinstance(p, ElicitRequestURLParams)]


async def _tool(target: Any, mode: str, tool: str, ui: Recorder, **args: Any) -> str:
    async with Client(target, mode=mode, elicitation_callback=ui) as client:
        assert client.protocol_version == MODES[mode]
        result = await client.call_tool(tool, args)
    assert not result.is_error, result
    text = result.content[0].text  # type: ignore[union-attr]
    assert isinstance(text, str)
    return text


def _log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_blocked_url_never_reaches_the_client_and_the_server_gets_a_decline(
    via_proxy: Target, mode: str
) -> None:
    ui = Recorder()
    assert await _tool(via_proxy.target, mode, "restore_session", ui) == "phish:decline"
    assert ui.shown == []
    entries = [e for e in _log(via_proxy.log) if e["url"] == mcp_server.PHISHING_URL]
    assert entries
    last = entries[-1]
    assert (last["decision"], last["action"]) == ("block", "declined")
    assert last["server_name"] == SERVER_NAME
    assert last["server"] == via_proxy.server  # the upstream URL for HTTP
    assert "UV104" in last["codes"]
    assert last["shape"] == ("elicitation/create" if mode == "legacy" else "input_required")


async def test_allowed_url_arrives_unchanged(via_proxy: Target, mode: str) -> None:
    ui = Recorder()
    assert await _tool(via_proxy.target, mode, "connect_calendar", ui) == "google:accept"
    assert ui.urls == [mcp_server.GOOD_URL]
    assert ui.shown[0].message == mcp_server.GOOD_MESSAGE
    assert ui.shown[0].elicitation_id == ("google-1" if mode == "legacy" else None)


async def test_warned_url_arrives_with_a_urlvet_line_first(via_proxy: Target, mode: str) -> None:
    ui = Recorder()
    result = await _tool(via_proxy.target, mode, "connect_both", ui)
    assert result == "google:accept,sync:accept"
    by_url = {p.url: p.message for p in ui.shown}
    assert by_url[mcp_server.GOOD_URL] == mcp_server.GOOD_MESSAGE
    warned = by_url[mcp_server.SECOND_GOOD_URL]
    first, rest = warned.split("\n", 1)
    assert first.startswith("urlvet: ")
    assert rest == mcp_server.SECOND_GOOD_MESSAGE
    actions = {e["url"]: e["action"] for e in _log(via_proxy.log)}
    assert actions[mcp_server.SECOND_GOOD_URL] == "forwarded-with-warning"


async def test_a_blocked_url_among_required_ones(via_proxy: Target, mode: str) -> None:
    """-32042 cannot be declined: the client gets urlvet's error. input_required is retried."""
    ui = Recorder()
    if mode == "auto":
        # The proxy retried with a decline for the homoglyph; the client sees what followed.
        result = await _tool(via_proxy.target, mode, "authorize_all", ui)
        assert result == "pay:decline"
        assert ui.shown == []
        return
    async with Client(via_proxy.target, mode=mode, elicitation_callback=ui) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("authorize_all", {})
    assert caught.value.code == URL_BLOCKED
    assert "urlvet blocked" in caught.value.message
    assert mcp_server.HOMOGLYPH_URL in caught.value.message
    assert ui.shown == []


async def test_form_elicitation_passes_through(via_proxy: Target, mode: str) -> None:
    ui = Recorder()
    assert await _tool(via_proxy.target, mode, "greet", ui) == "hello Ada"
    assert [type(p) for p in ui.shown] == [ElicitRequestFormParams]


async def _listing(target: Any, mode: str) -> tuple[Any, Any]:
    async with Client(target, mode=mode) as client:
        tools = await client.list_tools()
        called = await client.call_tool("add", {"a": 2, "b": 40})
    return tools.model_dump(), called.model_dump()


async def test_tools_list_and_a_tool_call_are_the_same_with_and_without_the_proxy(
    via_proxy: Target, mode: str, upstream: str
) -> None:
    if isinstance(via_proxy.target, str):
        direct: Any = upstream
    else:
        direct = StdioServerParameters(
            command=sys.executable, args=[str(SDK_SERVER), "stdio"], env=env()
        )
    through = await _listing(via_proxy.target, mode)
    without = await _listing(direct, mode)
    assert through[0] == without[0]
    assert through[0]["tools"]
    assert through[1] == without[1]
    assert through[1]["structured_content"] == {"result": 42}
