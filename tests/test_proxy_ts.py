"""``urlvet proxy`` in front of a real server, with a real TypeScript SDK client.

The client is tests/ts/client.mjs on ``@modelcontextprotocol/sdk`` from npm (locked in
tests/ts/package-lock.json; tests/run installs it with ``npm ci``). It speaks 2025-11-25 and
knows nothing of urlvet: it accepts every elicitation it is shown and reports them. The server
is tests/support/mcp_server.py over stdio, started by the proxy.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support import mcp_server
from support.proxy_harness import SDK_SERVER, SERVER_NAME, env, proxy_command, write_policy
from urlvet.mcp.answers import URL_BLOCKED

TS_DIR = Path(__file__).parent / "ts"
CLIENT = TS_DIR / "client.mjs"


def _run_client(*command: str) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None or not (TS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail(
            "the TypeScript client needs Node.js and `npm ci` in tests/ts (tests/run does both)",
            pytrace=False,
        )
    proc = subprocess.run(
        [node, str(CLIENT), *command],
        capture_output=True,
        text=True,
        env=env(),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


@pytest.fixture(scope="module")
def through_proxy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    policy = write_policy(tmp_path_factory.mktemp("ts"))
    cmd = proxy_command(
        "--policy",
        str(policy),
        "--server-name",
        SERVER_NAME,
        command=[sys.executable, str(SDK_SERVER), "stdio"],
    )
    return _run_client(*cmd)


def test_blocked_url_never_reaches_the_typescript_client(through_proxy: dict[str, Any]) -> None:
    assert through_proxy["calls"]["restore_session"] == "phish:decline"
    assert mcp_server.PHISHING_URL not in [s.get("url") for s in through_proxy["shown"]]


def test_allowed_and_warned_urls_reach_the_typescript_client(
    through_proxy: dict[str, Any],
) -> None:
    assert through_proxy["calls"]["connect_calendar"] == "google:accept"
    assert through_proxy["calls"]["connect_both"] == "google:accept,sync:accept"
    by_url = {s["url"]: s["message"] for s in through_proxy["shown"] if s["mode"] == "url"}
    assert by_url[mcp_server.GOOD_URL] == mcp_server.GOOD_MESSAGE
    first, rest = by_url[mcp_server.SECOND_GOOD_URL].split("\n", 1)
    assert first.startswith("urlvet: ")
    assert "UV405" in first
    assert rest == mcp_server.SECOND_GOOD_MESSAGE


def test_minus_32042_with_a_blocked_url_is_urlvets_error_to_the_typescript_client(
    through_proxy: dict[str, Any],
) -> None:
    error = through_proxy["errors"]["authorize_all"]
    assert error["code"] == URL_BLOCKED
    assert "urlvet blocked the URL https://xn--pypal-4ve.com/signin" in error["message"]
    assert mcp_server.HOMOGLYPH_URL not in [s.get("url") for s in through_proxy["shown"]]


def test_typescript_client_sees_the_same_tools_and_results_without_urlvet_in_the_way(
    through_proxy: dict[str, Any],
) -> None:
    direct = _run_client(sys.executable, str(SDK_SERVER), "stdio")
    assert through_proxy["tools"] == direct["tools"]
    assert through_proxy["calls"]["add"] == direct["calls"]["add"] == "42"
    assert through_proxy["calls"]["greet"] == direct["calls"]["greet"] == "hello Ada"
    # Without urlvet the phishing page reaches the client: that is what the proxy prevents.
    assert direct["calls"]["restore_session"] == "phish:accept"
    assert direct["calls"]["sign_in"] == "signed in as Ada"  # without urlvet: the form is shown


def test_a_password_form_never_reaches_the_typescript_client(
    through_proxy: dict[str, Any],
) -> None:
    # UV701: the form asks for a password, the default policy blocks it, the proxy declines it.
    assert through_proxy["calls"]["sign_in"] == "sign_in:decline"
    shown = [s.get("requestedSchema", {}).get("properties", {}) for s in through_proxy["shown"]]
    assert all("password" not in fields for fields in shown)
    assert {"name"} in [set(fields) for fields in shown]  # the innocent greet form was shown
