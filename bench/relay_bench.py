"""What the proxy's relay costs per message, in process: passthrough, vetting, and each attack.

Times ``Relay.from_server`` (the fast path, the wire reader, the judgement and the reply) for

- **plain**: a tools/call result (the fast path forwards it unread);
- **vetted**: a URL-mode ``elicitation/create`` for an allowed URL (read, vetted, forwarded);
- every row of the client table (tests/support/attacks.py): each blocked URL request as a
  hostile server writes it (invalid UTF-8, 5,000-digit numbers, 1,200 nested arrays, ...);
- **deep 64 KiB**: an error whose data is 64 KiB of nested arrays (the stack-based reader at
  its limit).

The offline vetter (DNS off) vets, so the figures are the relay's, not a resolver's.

    python bench/relay_bench.py [--rounds 2000]

Figures depend on the machine and its load: run it on a quiet one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support import OFFLINE  # noqa: E402
from support.attacks import ATTACKS  # noqa: E402
from urlvet.mcp.proxy.core import Relay  # noqa: E402
from urlvet.mcp.proxy.judge import Judge  # noqa: E402
from urlvet.mcp.wire import DEEP_READ_LIMIT  # noqa: E402
from urlvet.server import as_server  # noqa: E402

PLAIN = json.dumps(
    {"jsonrpc": "2.0", "id": 12, "result": {"content": [{"type": "text", "text": "x" * 400}]}}
).encode()
VETTED = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "elicitationId": "e",
            "url": "https://example.com/signin",
            "message": "Sign in to continue.",
        },
    }
).encode()
_ERROR = b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":'
HALF = (DEEP_READ_LIMIT - len(_ERROR) - 2) // 2
DEEP = _ERROR + b"[" * HALF + b"]" * HALF + b"}}"  # an error: never on the fast path


async def timed(relay: Relay, line: bytes, rounds: int) -> tuple[float, float]:
    """p50 and p99 of ``rounds`` judgements of ``line``, in microseconds."""
    for _ in range(min(rounds // 10, 100)):
        await relay.from_server(line)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        await relay.from_server(line)
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2] * 1e6, times[int(len(times) * 0.99)] * 1e6


async def run(rounds: int) -> None:
    server = as_server("stdio", "bench")
    assert server is not None
    relay = Relay(Judge(OFFLINE, server), None, diagnostic=lambda _: None)
    cases = [("plain", PLAIN), ("vetted", VETTED)]
    cases += [(a.name, a.raw.replace(b"{ID}", b"7")) for a in ATTACKS]
    for name, line in cases:
        p50, p99 = await timed(relay, line, rounds)
        print(f"{name:40} {len(line):>7} B  p50 {p50:9.1f} us  p99 {p99:9.1f} us", flush=True)
    p50, p99 = await timed(relay, DEEP, 5)
    print(f"{'deep 64 KiB':40} {len(DEEP):>7} B  p50 {p50:9.1f} us  p99 {p99:9.1f} us")


def main() -> None:
    """Print one line per message kind."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    asyncio.run(run(parser.parse_args().rounds))


if __name__ == "__main__":
    main()
