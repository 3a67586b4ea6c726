"""How much latency urlvet's guard adds to an MCP URL elicitation, over stdio.

A real MCP server (tests/support/mcp_server.py, launched by the SDK over stdio) asks for a URL with
``elicitation/create`` on every ``tools/call``; a real ``mcp.Client`` answers. Round trips
alternate between a plain callback that accepts at once and ``guard_elicitation`` around a
consent UI that accepts at once, so both see the same process, pipes and warm-up. Two figures:

- **guard time**: the median time spent inside the guarded callback (vetting and building the
  consent summary; the UI itself returns immediately) - the latency the guard adds;
- **round trip**: the median ``call_tool`` wall time with and without the guard, and the
  difference (noisier: it includes the server, the pipes and the event loop).

Configurations: DNS off; DNS on against NSD on loopback with a new name each round trip (every
lookup goes to the server); DNS on with one name (answered from the resolver's cache). NSD is
started from tests/support/dnsserver.py when it is installed; otherwise the DNS rows are skipped.

    python bench/guard_bench.py [--rounds 100] [--mode legacy|auto] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import ElicitResult

from urlvet.engine import Vetter
from urlvet.mcp import guard_elicitation
from urlvet.policy import Policy

ROOT = Path(__file__).resolve().parent.parent
SERVER_SCRIPT = ROOT / "tests" / "mcp_server.py"
sys.path.insert(0, str(ROOT / "tests"))

BENCH_ZONE = "guard-bench.test"


def bench_zone(directory: Path, names: int) -> Path:
    """A zone with ``names`` hosts, all on one public address: each lookup is a new name."""
    lines = [
        f"$ORIGIN {BENCH_ZONE}.",
        "$TTL 300",
        f"@ SOA ns.{BENCH_ZONE}. hostmaster.{BENCH_ZONE}. 1 3600 600 86400 30",
        "@ NS ns",
        "ns A 127.0.0.1",
        "same A 93.184.215.14",
    ]
    lines += [f"n{i} A 93.184.215.14" for i in range(names)]
    path = directory / f"{BENCH_ZONE}.zone"
    path.write_text("\n".join(lines) + "\n")
    return path


async def measure(
    vetter: Vetter, url_for: Callable[[int], str], rounds: int, warmup: int, mode: str
) -> dict[str, Any]:
    guard_times: list[float] = []

    async def ui(summary: Any, params: Any) -> str:
        return "accept"

    guarded = guard_elicitation(ui, vetter, server="stdio", server_name="bench")

    async def timed_guard(context: Any, params: Any) -> Any:
        start = time.perf_counter()
        result = await guarded(context, params)
        guard_times.append(time.perf_counter() - start)
        return result

    async def plain(context: Any, params: Any) -> Any:
        return ElicitResult(action="accept")

    use_guard = False

    async def callback(context: Any, params: Any) -> Any:
        return await (timed_guard if use_guard else plain)(context, params)

    server = StdioServerParameters(command=sys.executable, args=[str(SERVER_SCRIPT), "stdio"])
    with_guard: list[float] = []
    without: list[float] = []
    async with Client(server, mode=mode, elicitation_callback=callback) as client:
        for i in range(warmup + 2 * rounds):
            use_guard = i % 2 == 1
            url = url_for(i)
            start = time.perf_counter()
            result = await client.call_tool("open_url", {"url": url})
            elapsed = time.perf_counter() - start
            if result.content[0].text != "open:accept":  # type: ignore[union-attr]
                raise RuntimeError(f"unexpected answer for {url}: {result.content}")
            if i >= warmup:
                (with_guard if use_guard else without).append(elapsed)
        protocol = client.protocol_version
    guard_times = guard_times[-rounds:]
    ms = 1000.0
    return {
        "protocol": protocol,
        "rounds": rounds,
        "guard_median_ms": statistics.median(guard_times) * ms,
        "guard_p90_ms": statistics.quantiles(guard_times, n=10)[-1] * ms,
        "round_trip_guarded_median_ms": statistics.median(with_guard) * ms,
        "round_trip_plain_median_ms": statistics.median(without) * ms,
        "round_trip_added_median_ms": (statistics.median(with_guard) - statistics.median(without))
        * ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--mode", choices=["legacy", "auto"], default="legacy")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()

    results: dict[str, Any] = {}
    offline = Vetter(Policy(dns={"enabled": False}))
    results["dns off"] = anyio.run(
        measure,
        offline,
        lambda i: f"https://n{i}.{BENCH_ZONE}/login?state={i}",
        args.rounds,
        args.warmup,
        args.mode,
    )

    from support.dnsserver import NsdServer, find_nsd, zone_files

    if find_nsd() is None:
        print("NSD not installed: DNS-on rows skipped (apt-get install nsd)", file=sys.stderr)
    else:
        with tempfile.TemporaryDirectory(prefix="urlvet-bench-") as tmp:
            zones = {
                **zone_files(),
                BENCH_ZONE: bench_zone(Path(tmp), 2 * (args.rounds + args.warmup) + 10),
            }
            with NsdServer(zones=zones) as nsd:
                host, port = nsd.address
                policy = Policy(dns={"enabled": True, "nameservers": [f"{host}:{port}"]})
                results["dns on, new name each time (NSD)"] = anyio.run(
                    measure,
                    Vetter(policy),
                    lambda i: f"https://n{i}.{BENCH_ZONE}/login?state={i}",
                    args.rounds,
                    args.warmup,
                    args.mode,
                )
                results["dns on, cached name (NSD)"] = anyio.run(
                    measure,
                    Vetter(policy),
                    lambda i: f"https://same.{BENCH_ZONE}/login?state={i}",
                    args.rounds,
                    args.warmup,
                    args.mode,
                )

    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"guard latency over {args.rounds} elicitation round trips over stdio (mode={args.mode})")
    print(
        f"{'configuration':<36} {'guard':>9} {'p90':>8} {'RT plain':>9} {'RT guarded':>11} {'RT added':>9}"
    )
    for name, r in results.items():
        print(
            f"{name:<36} {r['guard_median_ms']:>7.3f}ms {r['guard_p90_ms']:>6.3f}ms "
            f"{r['round_trip_plain_median_ms']:>7.3f}ms {r['round_trip_guarded_median_ms']:>9.3f}ms "
            f"{r['round_trip_added_median_ms']:>7.3f}ms"
        )
    print(f"protocol: {next(iter(results.values()))['protocol']}")


if __name__ == "__main__":
    main()
