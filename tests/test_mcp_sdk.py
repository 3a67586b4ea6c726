"""guard_elicitation end to end: a real MCP server (tests/support/mcp_server.py) and a real SDK client.

The server runs over stdio (a subprocess the client launches) and over streamable HTTP on
127.0.0.1 (uvicorn in a subprocess on a free port). The client connects in both eras mcp 2.3
offers: ``mode="legacy"`` negotiates 2025-11-25 with the ``initialize`` handshake, where URL
elicitations are standalone ``elicitation/create`` requests and ``-32042`` errors;
``mode="auto"`` probes ``server/discover`` and adopts 2026-07-28, where they arrive embedded in
``input_required`` results and are answered on the retried request.

The consent UI is the client's own code; here it records what it was shown and opens nothing.
No URL is ever contacted, and all traffic stays on loopback.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult, ErrorData

from support import mcp_server
from urlvet.consent import ConsentSummary
from urlvet.engine import Vetter
from urlvet.errors import InputError
from urlvet.findings import Decision
from urlvet.mcp import guard_elicitation, guard_elicitation_error, vet_elicitation_error
from urlvet.policy import Policy
from urlvet.server import Server

pytestmark = pytest.mark.anyio

SERVER_SCRIPT = Path(__file__).parent / "support" / "mcp_server.py"
SERVER_NAME = "urlvet-test"
# The policy says this server only sends people to google.com: the sync URL gets a warning.
VETTER = Vetter(Policy(dns={"enabled": False}, servers={SERVER_NAME: {"domains": ["google.com"]}}))
MODES = {"legacy": "2025-11-25", "auto": "2026-07-28"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """The test server over streamable HTTP on 127.0.0.1, started for this module."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"test MCP server exited: {proc.stderr.read()!r}")  # type: ignore[union-attr]
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("test MCP server did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass
class Connection:
    """How the client reaches the server, and who the client's configuration says it is."""

    target: Any
    server: Server
    mode: str


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=list(MODES))
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def connection(transport: str, mode: str, request: pytest.FixtureRequest) -> Connection:
    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=[str(SERVER_SCRIPT), "stdio"])
        return Connection(params, Server(name=SERVER_NAME), mode)
    url = request.getfixturevalue("http_url")
    return Connection(url, Server(name=SERVER_NAME, url=url), mode)


@dataclass
class RecordingUI:
    """A consent UI that records what it is shown and answers with a fixed action."""

    action: str = "accept"
    shown: list[tuple[ConsentSummary, ElicitRequestURLParams]] = field(default_factory=list)
    wait_for: int = 0
    """Hold every answer until this many requests are on screen at once (0: do not wait)."""
    _all_here: anyio.Event = field(default_factory=anyio.Event)

    async def __call__(self, summary: ConsentSummary, params: ElicitRequestURLParams) -> str:
        self.shown.append((summary, params))
        if self.wait_for:
            if len(self.shown) >= self.wait_for:
                self._all_here.set()
            with anyio.fail_after(20):
                await self._all_here.wait()
        return self.action

    @property
    def urls(self) -> list[str]:
        return [p.url for _, p in self.shown]


async def _call(conn: Connection, tool: str, ui: RecordingUI, **guard: Any) -> str:
    callback = guard_elicitation(ui, VETTER, server=conn.server, **guard)
    async with Client(conn.target, mode=conn.mode, elicitation_callback=callback) as client:
        assert client.protocol_version == MODES[conn.mode]
        result = await client.call_tool(tool, {})
    assert not result.is_error, result
    text = result.content[0].text  # type: ignore[union-attr]
    assert isinstance(text, str)
    return text


async def test_phishing_url_is_declined_and_never_reaches_the_consent_ui(
    connection: Connection,
) -> None:
    ui = RecordingUI()
    blocked: list[ConsentSummary] = []

    async def on_block(summary: ConsentSummary) -> None:
        blocked.append(summary)

    assert await _call(connection, "restore_session", ui, on_block=on_block) == "phish:decline"
    assert ui.shown == []
    assert [s.url for s in blocked] == [mcp_server.PHISHING_URL]
    assert blocked[0].decision is Decision.BLOCK
    assert "UV104" in blocked[0].codes  # google.com written before '@'


async def test_good_url_reaches_the_consent_ui_with_its_summary(connection: Connection) -> None:
    ui = RecordingUI()
    assert await _call(connection, "connect_calendar", ui) == "google:accept"
    assert ui.urls == [mcp_server.GOOD_URL]
    summary, params = ui.shown[0]
    assert summary.decision is Decision.ALLOW
    assert summary.actions == ("open", "decline")
    assert summary.href == mcp_server.GOOD_URL
    assert summary.site == "google.com"
    assert summary.relation == "trusted-third-party"
    assert summary.message == mcp_server.GOOD_MESSAGE
    assert summary.server_name == SERVER_NAME  # from the configuration, not serverInfo
    # 2025-11-25 elicitations carry an id; 2026-07-28 ones do not.
    assert params.elicitation_id == ("google-1" if connection.mode == "legacy" else None)


async def test_declining_in_the_ui_reaches_the_server(connection: Connection) -> None:
    ui = RecordingUI(action="decline")
    assert await _call(connection, "connect_calendar", ui) == "google:decline"
    assert len(ui.shown) == 1


async def test_concurrent_elicitations_are_shown_together(connection: Connection) -> None:
    # The UI holds both answers until both requests are on screen: this only completes
    # when the SDK runs the two elicitations at once and the guard lets them overlap.
    ui = RecordingUI(wait_for=2)
    assert await _call(connection, "connect_both", ui) == "google:accept,sync:accept"
    decisions = {p.url: s.decision for s, p in ui.shown}
    assert decisions == {
        mcp_server.GOOD_URL: Decision.ALLOW,
        mcp_server.SECOND_GOOD_URL: Decision.WARN,
    }
    warned = next(s for s, p in ui.shown if p.url == mcp_server.SECOND_GOOD_URL)
    assert [w.code for w in warned.warnings] == ["UV405"]
    assert warned.relation == "unrelated"


async def test_form_elicitation_passes_through_untouched(connection: Connection) -> None:
    ui = RecordingUI()
    seen: list[Any] = []

    async def inner(context: Any, params: Any) -> ElicitResult | ErrorData:
        seen.append(params)
        return ElicitResult(action="accept", content={"name": "Ada"})

    assert await _call(connection, "greet", ui, inner=inner) == "hello Ada"
    assert ui.shown == []
    assert len(seen) == 1
    assert isinstance(seen[0], ElicitRequestFormParams)
    assert seen[0].message == "What should I call you?"


async def test_url_elicitations_required_before_a_tool_call(connection: Connection) -> None:
    """-32042 on 2025-11-25; the same need as input_required on 2026-07-28, never -32042."""
    ui = RecordingUI()
    callback = guard_elicitation(ui, VETTER, server=connection.server)
    async with Client(
        connection.target, mode=connection.mode, elicitation_callback=callback
    ) as client:
        if connection.mode == "auto":
            result = await client.call_tool("authorize_all", {})
            assert result.content[0].text == "google:accept,pay:decline"  # type: ignore[union-attr]
            assert ui.urls == [mcp_server.GOOD_URL]
            return
        with pytest.raises(MCPError) as caught:
            await client.call_tool("authorize_all", {})
    assert caught.value.code == -32042
    answered = await guard_elicitation_error(caught.value, ui, VETTER, server=connection.server)
    assert [(a.params.url, a.blocked) for a in answered] == [
        (mcp_server.GOOD_URL, False),
        (mcp_server.HOMOGLYPH_URL, True),
    ]
    assert [a.result.action for a in answered if a.result] == ["accept", "decline"]
    assert ui.urls == [mcp_server.GOOD_URL]  # the homoglyph never reached the UI
    assert answered[1].summary.host_shown_as == "punycode"


@pytest.mark.dns
@pytest.mark.parametrize("mode", list(MODES))
async def test_dns_answers_decide_before_the_consent_ui(mode: str, nsd: tuple[str, int]) -> None:
    """With DNS on (NSD on loopback), a name that resolves into a private network is declined."""
    host, port = nsd
    vetter = Vetter(Policy(dns={"enabled": True, "nameservers": [f"{host}:{port}"]}))
    ui = RecordingUI()
    callback = guard_elicitation(ui, vetter, server="stdio", server_name=SERVER_NAME)
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER_SCRIPT), "stdio"])
    async with Client(params, mode=mode, elicitation_callback=callback) as client:
        private = await client.call_tool("open_url", {"url": "https://private-10.urlvet.test/"})
        public = await client.call_tool("open_url", {"url": "https://public.urlvet.test/login"})
    assert private.content[0].text == "open:decline"  # type: ignore[union-attr]
    assert public.content[0].text == "open:accept"  # type: ignore[union-attr]
    assert ui.urls == ["https://public.urlvet.test/login"]


# -- the guard on its own: what needs no server --------------------------------------------


@dataclass
class _Ctx:
    """The context argument; the guard never reads it."""


async def test_a_failing_consent_ui_fails_closed() -> None:
    async def broken(summary: ConsentSummary, params: ElicitRequestURLParams) -> str:
        raise RuntimeError("the UI crashed")

    callback = guard_elicitation(broken, VETTER, server="stdio", server_name=SERVER_NAME)
    params = ElicitRequestURLParams(message="m", url=mcp_server.GOOD_URL, elicitation_id="x")
    result = await callback(_Ctx(), params)  # type: ignore[arg-type]
    assert result == ElicitResult(action="decline")


@pytest.mark.parametrize(
    ("answer", "action"),
    [
        (True, "accept"),
        (False, "decline"),
        ("accept", "accept"),
        ("cancel", "cancel"),
        ("yes please", "decline"),
        (ElicitResult(action="accept", content={"password": "hunter2"}), "accept"),
    ],
)
async def test_consent_ui_answers_are_normalised(answer: Any, action: str) -> None:
    async def ui(summary: ConsentSummary, params: ElicitRequestURLParams) -> Any:
        return answer

    callback = guard_elicitation(ui, VETTER, server="stdio")
    params = ElicitRequestURLParams(message="m", url=mcp_server.GOOD_URL, elicitation_id="x")
    result = await callback(_Ctx(), params)  # type: ignore[arg-type]
    assert result == ElicitResult(action=action)  # type: ignore[arg-type]
    assert isinstance(result, ElicitResult)
    assert result.content is None  # URL mode carries no content back


async def test_form_elicitation_without_inner_is_unsupported() -> None:
    callback = guard_elicitation(RecordingUI(), VETTER, server="stdio")
    params = ElicitRequestFormParams(message="name?", requested_schema={"type": "object"})
    result = await callback(_Ctx(), params)  # type: ignore[arg-type]
    assert isinstance(result, ErrorData)


async def test_vet_elicitation_error_refuses_other_errors() -> None:
    with pytest.raises(InputError, match="not -32042"):
        await vet_elicitation_error(MCPError(-32602, "bad params"), VETTER, server="stdio")
    broken = ErrorData(code=-32042, message="x", data={"elicitations": [{"mode": "url"}]})
    with pytest.raises(InputError, match="malformed"):
        await vet_elicitation_error(broken, VETTER, server="stdio")
    empty = ErrorData(code=-32042, message="x", data={"elicitations": []})
    assert await vet_elicitation_error(empty, VETTER, server="stdio") == ()


def test_guard_needs_a_valid_configured_server() -> None:
    with pytest.raises(InputError):
        guard_elicitation(RecordingUI(), VETTER, server="ftp://nope")
