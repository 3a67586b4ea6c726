"""A hostile server, the real SDK clients, and ``urlvet proxy`` between them.

tests/support/hostile_server.py writes the raw bytes of each attack below: a URL request for
``BLOCKED`` (urlvet blocks it: UV104) spelt as a client would still read it. Each attack runs

- directly, to prove what each real client does with it (the Python SDK's ``mcp.Client`` and
  the TypeScript SDK's ``Client`` in tests/ts/hostile_client.mjs): ``accepted_by`` names the
  clients that hand the blocked URL to the application (the elicitation callback, the -32042
  error's data, the 2026-07-28 input_required driver, which calls the callback); a client not
  named there must not (the variant is then no attack on it, and the test says so);
- through ``urlvet proxy``, where the blocked URL must reach no client, and the operator is
  told on stderr.

docs/proxy-clients.md is the same table in prose.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import ElicitRequestURLParams, ElicitResult

from support.attacks import ATTACKS, BLOCKED, Attack, ClientName, Era
from support.proxy_harness import HERE, env, proxy_command, write_policy
from urlvet.mcp.wire import read_json

pytestmark = pytest.mark.anyio

HOSTILE = HERE / "hostile_server.py"
TS_DIR = HERE.parent / "ts"
TS_CLIENT = TS_DIR / "hostile_client.mjs"
RUN_TIMEOUT = 20


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_policy(tmp_path_factory.mktemp("hostile"))


@dataclass
class Seen:
    """What the application behind a client was handed."""

    shown: list[Any]
    """What the elicitation callback got (the input_required driver calls it too)."""
    error: dict[str, Any] | None
    result: str | None
    notices: list[Any]

    def reached(self) -> bool:
        """True when BLOCKED reached the callback or the -32042 handling."""
        if _holds(self.shown, BLOCKED):
            return True
        error = self.error or {}
        return error.get("code") == -32042 and _holds(error, BLOCKED)


def _holds(value: Any, text: str) -> bool:
    """Whether any string in ``value`` contains ``text`` (iteratively: it may nest deeply)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str) and text in item:
            return True
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


@dataclass
class Server:
    """The hostile server's command for one attack, and what it read."""

    command: list[str]
    log: Path

    def received(self) -> bytes:
        return self.log.read_bytes() if self.log.exists() else b""


def _server(attack: Attack, directory: Path) -> Server:
    script = directory / "script.json"
    log = directory / "server.log"
    encoded = base64.b64encode(attack.raw).decode()
    script.write_text(json.dumps({"kind": attack.kind, "attack": encoded, "log": str(log)}))
    return Server([sys.executable, str(HOSTILE), str(script)], log)


def _through_proxy(server: Server, policy: Path, stderr: Path) -> list[str]:
    log = stderr.with_name("proxy.log")  # --log on: a lone surrogate must not end the proxy
    options = ("--policy", str(policy), "--server-name", "hostile", "--log", str(log))
    proxy = proxy_command(*options, command=server.command)
    # The proxy's stderr goes to a file, so that the test reads what the operator is told.
    return ["/bin/sh", "-c", f'exec "$@" 2>>"{stderr}"', "sh", *proxy]


def _errors(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _errors(inner)
    else:
        yield exc


async def _python(command: list[str], era: Era) -> Seen:
    seen = Seen([], None, None, [])

    async def callback(context: Any, params: Any) -> ElicitResult:
        seen.shown.append(params.model_dump(mode="json", by_alias=True))
        if isinstance(params, ElicitRequestURLParams):
            return ElicitResult(action="accept")
        return ElicitResult(action="accept", content={})

    async def logged(params: Any) -> None:
        seen.notices.append(params.model_dump(mode="json"))

    target = StdioServerParameters(command=command[0], args=command[1:], env=env())
    try:
        with anyio.fail_after(RUN_TIMEOUT):
            async with Client(
                target, mode=era, elicitation_callback=callback, logging_callback=logged
            ) as client:
                result = await client.call_tool("go", {})
                seen.result = json.dumps(result.model_dump(mode="json"))
    except BaseException as exc:  # the client's own failures are data here
        for inner in _errors(exc):
            if isinstance(inner, MCPError):
                seen.error = {"code": inner.code, "message": inner.message, "data": inner.data}
                break
        else:
            seen.error = {"code": None, "message": repr(exc), "data": None}
    return seen


def _ts(command: list[str]) -> Seen:
    node = shutil.which("node")
    if node is None or not (TS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail("the TypeScript client needs Node.js and `npm ci` in tests/ts", pytrace=False)
    proc = subprocess.run(
        [node, str(TS_CLIENT), *command],
        capture_output=True,
        text=True,
        env=env(),
        timeout=RUN_TIMEOUT * 2,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = read_json(proc.stdout).value  # its output may nest deeper than json.loads reads
    return Seen(out["shown"], out["error"], out["result"], out["notices"])


async def _run(client: ClientName, command: list[str], era: Era) -> Seen:
    if client == "python":
        return await _python(command, era)
    return await anyio.to_thread.run_sync(_ts, command)


def _cases() -> list[Any]:
    out = []
    for attack in ATTACKS:
        if not attack.for_sdks:
            continue
        for client in ("python", "ts"):
            if client == "ts" and attack.era != "legacy":
                continue
            out.append(pytest.param(attack, client, id=f"{attack.name}-{client}"))
    return out


@pytest.mark.parametrize(("attack", "client"), _cases())
async def test_without_urlvet_the_client_takes_the_url_exactly_where_the_table_says(
    attack: Attack, client: ClientName, tmp_path: Path
) -> None:
    seen = await _run(client, _server(attack, tmp_path).command, attack.era)
    if client in attack.accepted_by:
        assert seen.reached(), f"{client} did not take {attack.name}: {seen}"
    else:
        # Not an attack on this client: it refuses the message (or drops the URL) by itself.
        assert not seen.reached(), f"{client} takes {attack.name}: add it to accepted_by"


@pytest.mark.parametrize(("attack", "client"), _cases())
async def test_through_urlvet_the_blocked_url_reaches_no_client(
    attack: Attack, client: ClientName, tmp_path: Path, policy: Path
) -> None:
    stderr = tmp_path / "proxy.stderr"
    server = _server(attack, tmp_path)
    seen = await _run(client, _through_proxy(server, policy, stderr), attack.era)
    assert not seen.reached(), f"{BLOCKED} reached the {client} client: {seen}"
    told = stderr.read_text(encoding="utf-8", errors="replace")
    # The operator is told, naming the server and the site (or why the message was unreadable).
    assert "urlvet proxy: blocked a URL request from hostile: evil.example" in told, told
    if attack.kind == "request":
        # The server is answered on the client's behalf: a decline, never an accept.
        answers = server.received().decode("utf-8", "replace")
        assert '"action":"decline"' in answers.replace(" ", ""), answers
        assert '"accept"' not in answers


async def test_the_client_is_told_of_a_block_with_a_warning_naming_server_site_and_reason(
    tmp_path: Path, policy: Path
) -> None:
    attack = ATTACKS[0]
    server = _server(attack, tmp_path)
    command = _through_proxy(server, policy, tmp_path / "proxy.stderr")
    for client in ("python", "ts"):
        seen = await _run(client, command, "legacy")  # type: ignore[arg-type]
        assert len(seen.notices) == 1, (client, seen)
        notice = seen.notices[0]
        assert notice["level"] == "warning"
        assert notice["logger"] == "urlvet"
        text = notice["data"]["message"]
        assert "hostile" in text
        assert "evil.example" in text
        assert "UV104" in text
        assert BLOCKED not in json.dumps(notice)  # the site, never a link to the page


def test_every_attack_is_named_once() -> None:
    names = [a.name for a in ATTACKS]
    assert len(names) == len(set(names))
    assert os.path.exists(HOSTILE)
