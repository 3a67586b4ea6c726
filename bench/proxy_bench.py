"""How much latency ``urlvet proxy`` adds per round trip, over stdio and Streamable HTTP.

Two kinds of round trip, each timed from the client's send to the last byte of the answer:

- **plain**: a ``tools/call`` that asks for nothing (passthrough: no URL to vet);
- **vetted**: a call whose answer is preceded by a URL-mode ``elicitation/create`` the proxy
  must vet before the client sees it (and, with DNS on, resolve the URL's host against NSD on
  loopback, a new name every call, so that no answer comes from the resolver's cache).

Servers: tests/support/jsonrpc_server.py over stdio (the proxy starts it) and tests/support/http_upstream.py
(Starlette on uvicorn) over HTTP. The client writes JSON lines itself (stdio) or posts with an
httpx keep-alive client (HTTP), so that the figures are the proxy's, not a client SDK's. Direct
and proxied round trips alternate one by one, so machine load falls on both alike. "Added" is
the proxied percentile minus the direct one.

    python bench/proxy_bench.py [--calls 1000] [--warmup 50] [--json]

Figures depend on the machine and its load: run it on a quiet one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.proxy_harness import (  # noqa: E402
    JSONRPC_SERVER,
    env,
    free_port,
    proxy_command,
    wait_for_port,
)

HTTP_UPSTREAM = ROOT / "tests" / "support" / "http_upstream.py"
BENCH_ZONE = "proxy-bench.test"
ALLOWED = "https://example.com/signin"


def bench_zone(directory: Path, names: int) -> Path:
    """A zone with ``names`` hosts on one public address: every call asks a new name."""
    lines = [
        f"$ORIGIN {BENCH_ZONE}.",
        "$TTL 300",
        f"@ SOA ns.{BENCH_ZONE}. hostmaster.{BENCH_ZONE}. 1 3600 600 86400 30",
        "@ NS ns",
        "ns A 127.0.0.1",
    ]
    lines += [f"n{i} A 93.184.215.14" for i in range(names)]
    path = directory / f"{BENCH_ZONE}.zone"
    path.write_text("\n".join(lines) + "\n")
    return path


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _elicit(msg_id: int, url: str) -> str:
    params = {"mode": "url", "elicitationId": f"e{msg_id}", "url": url, "message": "Sign in."}
    message = {"jsonrpc": "2.0", "id": msg_id, "method": "elicitation/create", "params": params}
    return json.dumps(message)


# -- stdio ------------------------------------------------------------------------------------


class StdioPeer:
    """A client on a process's stdin/stdout: one JSON line out, lines in until the answer."""

    def __init__(self, cmd: list[str]) -> None:
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env(), bufsize=0
        )
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout
        self.next_id = 0

    def round_trip(self, method: str, params: dict[str, Any]) -> float:
        self.next_id += 1
        line = json.dumps(
            {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        )
        want = f'"id":{self.next_id},'.encode()
        start = time.perf_counter()
        self.stdin.write(line.encode() + b"\n")
        while want not in self.stdout.readline():
            pass
        return time.perf_counter() - start

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait(timeout=30)


def stdio_calls(kind: str, url_for: Callable[[int], str]) -> Callable[[StdioPeer, int], float]:
    def plain(peer: StdioPeer, n: int) -> float:
        return peer.round_trip("tools/call", {"name": "add", "arguments": {"n": n}})

    def vetted(peer: StdioPeer, n: int) -> float:
        return peer.round_trip("test/send", {"lines": [_elicit(10_000_000 + n, url_for(n))]})

    return plain if kind == "plain" else vetted


# -- HTTP -------------------------------------------------------------------------------------


@contextmanager
def serving(cmd: list[str], port: int) -> Iterator[None]:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env())
    try:
        wait_for_port(port, proc)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)


class HttpPeer:
    """An httpx keep-alive client posting JSON-RPC to one endpoint."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.client = httpx.Client(
            headers={
                "accept": "application/json, text/event-stream",
                "content-type": "application/json",
                "mcp-protocol-version": "2025-11-25",
            },
            timeout=60,
        )
        self.next_id = 0

    def round_trip(self, arguments: dict[str, Any]) -> float:
        self.next_id += 1
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": self.next_id,
                "method": "tools/call",
                "params": {"name": "t", "arguments": arguments},
            }
        )
        start = time.perf_counter()
        resp = self.client.post(self.url, content=body)
        resp.read()
        took = time.perf_counter() - start
        assert resp.status_code == 200, resp.status_code
        return took

    def close(self) -> None:
        self.client.close()


def http_calls(kind: str, url_for: Callable[[int], str]) -> Callable[[HttpPeer, int], float]:
    def plain(peer: HttpPeer, n: int) -> float:
        return peer.round_trip({"plain": n})

    def vetted(peer: HttpPeer, n: int) -> float:
        return peer.round_trip({"events": [_elicit(10_000_000 + n, url_for(n))]})

    return plain if kind == "plain" else vetted


# -- the runs ---------------------------------------------------------------------------------


def alternate(
    direct: Any, proxied: Any, call: Callable[[Any, int], float], calls: int, warmup: int, base: int
) -> tuple[list[float], list[float]]:
    a: list[float] = []
    b: list[float] = []
    for n in range(warmup + calls):
        da = call(direct, base + n)
        db = call(proxied, base + n)
        if n >= warmup:
            a.append(da)
            b.append(db)
    return a, b


def row(transport: str, dns: str, kind: str, a: list[float], b: list[float]) -> dict[str, Any]:
    ms = 1000.0
    out = {
        "transport": transport,
        "dns": dns,
        "kind": kind,
        "calls": len(a),
        "direct_p50_ms": percentile(a, 0.5) * ms,
        "direct_p99_ms": percentile(a, 0.99) * ms,
        "proxied_p50_ms": percentile(b, 0.5) * ms,
        "proxied_p99_ms": percentile(b, 0.99) * ms,
    }
    out["added_p50_ms"] = out["proxied_p50_ms"] - out["direct_p50_ms"]
    out["added_p99_ms"] = out["proxied_p99_ms"] - out["direct_p99_ms"]
    return out


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        policies = {"off": Path(tmp) / "off.yaml"}
        policies["off"].write_text("dns: {enabled: false}\n")
        from support.dnsserver import NsdServer, find_nsd, zone_files

        if find_nsd() is None:
            print("NSD not installed: DNS-on rows skipped (apt-get install nsd)", file=sys.stderr)
        else:
            names = 8 * (args.calls + args.warmup) + 10
            zones = {**zone_files(), BENCH_ZONE: bench_zone(Path(tmp), names)}
            nsd = stack.enter_context(NsdServer(zones=zones))
            host, port = nsd.address
            policies["on"] = Path(tmp) / "on.yaml"
            policies["on"].write_text(f'dns: {{enabled: true, nameservers: ["{host}:{port}"]}}\n')
        base = 0

        def url_for(dns: str) -> Callable[[int], str]:
            if dns == "off":
                return lambda n: ALLOWED
            return lambda n: f"https://n{n}.{BENCH_ZONE}/signin"

        for dns, policy in policies.items():
            server = [sys.executable, str(JSONRPC_SERVER)]
            direct = StdioPeer(server)
            proxied = StdioPeer(proxy_command("--policy", str(policy), command=server))
            try:
                for kind in ("plain", "vetted"):
                    call = stdio_calls(kind, url_for(dns))
                    a, b = alternate(direct, proxied, call, args.calls, args.warmup, base)
                    base += args.calls + args.warmup
                    rows.append(row("stdio", dns, kind, a, b))
                    report(rows[-1], args.json)
            finally:
                direct.close()
                proxied.close()
            up_port, px_port = free_port(), free_port()
            upstream = f"http://127.0.0.1:{up_port}/mcp"
            with (
                serving([sys.executable, str(HTTP_UPSTREAM), str(up_port)], up_port),
                serving(
                    proxy_command(
                        "--policy",
                        str(policy),
                        "--upstream",
                        upstream,
                        "--listen",
                        f"127.0.0.1:{px_port}",
                    ),
                    px_port,
                ),
            ):
                hd, hp = HttpPeer(upstream), HttpPeer(f"http://127.0.0.1:{px_port}/mcp")
                try:
                    for kind in ("plain", "vetted"):
                        call = http_calls(kind, url_for(dns))
                        a, b = alternate(hd, hp, call, args.calls, args.warmup, base)
                        base += args.calls + args.warmup
                        rows.append(row("http", dns, kind, a, b))
                        report(rows[-1], args.json)
                finally:
                    hd.close()
                    hp.close()
    return rows


def report(r: dict[str, Any], as_json: bool) -> None:
    if as_json:
        return
    print(
        f"{r['transport']:5} dns {r['dns']:3} {r['kind']:6} "
        f"direct p50 {r['direct_p50_ms']:7.3f} ms p99 {r['direct_p99_ms']:7.3f} ms | "
        f"proxied p50 {r['proxied_p50_ms']:7.3f} ms p99 {r['proxied_p99_ms']:7.3f} ms | "
        f"added p50 {r['added_p50_ms']:+7.3f} ms p99 {r['added_p99_ms']:+7.3f} ms",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = run(args)
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
