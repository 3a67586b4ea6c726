"""Start ``urlvet proxy`` and the servers behind it for the proxy tests and the benchmark.

Everything runs as real subprocesses on loopback: the proxy is the real command line
(``python -c 'from urlvet.cli import main; main()' proxy ...``), so the tests see what a client
configured with ``"command": "urlvet", "args": ["proxy", "--", ...]`` sees.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).parent
SDK_SERVER = HERE / "mcp_server.py"
JSONRPC_SERVER = HERE / "jsonrpc_server.py"
SERVER_NAME = "urlvet-test"
# The SDK server's tools: google.com is this server's domain, so the calendar-sync URL warns.
POLICY_YAML = "dns: {enabled: false}\nservers:\n  urlvet-test: {domains: [google.com]}\n"
PROXY = [sys.executable, "-c", "from urlvet.cli import main; main()", "proxy"]


def env() -> dict[str, str]:
    """The environment for subprocesses: this one, with urlvet's sources first on the path."""
    out = dict(os.environ)
    src = str(HERE.parents[1] / "src")
    out["PYTHONPATH"] = os.pathsep.join(p for p in (src, out.get("PYTHONPATH")) if p)
    out.setdefault("URLVET_NAMESERVERS", "127.0.0.1:1")
    return out


def write_policy(directory: Path) -> Path:
    path = directory / "proxy-policy.yaml"
    path.write_text(POLICY_YAML, encoding="utf-8")
    return path


def proxy_command(*options: str, command: Sequence[str] = ()) -> list[str]:
    """The ``urlvet proxy`` command line with ``options`` (and ``-- command`` when given)."""
    return [*PROXY, *options, *(["--", *command] if command else [])]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else b""
            raise RuntimeError(f"process exited with {proc.returncode}: {err!r}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nothing listens on port {port}") from None
            time.sleep(0.05)


@contextmanager
def running(cmd: Sequence[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``cmd`` until the block ends; wait until it listens on ``port``."""
    proc = subprocess.Popen(list(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env())
    try:
        wait_for_port(port, proc)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def sdk_http_server() -> Iterator[str]:
    """tests/support/mcp_server.py over Streamable HTTP on 127.0.0.1: its endpoint URL."""
    port = free_port()
    with running([sys.executable, str(SDK_SERVER), "http", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


@contextmanager
def http_proxy(upstream: str, *options: str) -> Iterator[str]:
    """``urlvet proxy --upstream`` in front of ``upstream``: its endpoint URL."""
    port = free_port()
    cmd = proxy_command("--upstream", upstream, "--listen", f"127.0.0.1:{port}", *options)
    with running(cmd, port):
        yield f"http://127.0.0.1:{port}/mcp"
