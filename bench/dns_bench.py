"""Benchmark urlvet.resolve against NSD on loopback. Prints figures; not a test.

    python bench/dns_bench.py [--names 10000] [--concurrency 64] [--rounds 3]

1. Throughput: NSD serves a generated zone of N distinct names (each with an A and an AAAA
   record); one process resolves all of them concurrently with ``Resolver.aresolve`` on a
   fresh resolver (cold cache), and again on the same resolver (warm cache).
2. Deadline: a nameserver that never answers (a silent loopback socket); the time a lookup
   takes against the configured deadline, sync and async.

Only loopback servers started here are queried.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

# Like the tests: if anything here forgot its nameservers, it must not reach a real resolver.
os.environ["URLVET_NAMESERVERS"] = "127.0.0.1:1"

from support.dnsserver import Blackhole, NsdServer, zone_files
from urlvet.resolve import Resolution, Resolver

ZONE = "bench.test"


def write_zone(directory: Path, n: int) -> Path:
    """A zone with ``n`` names, each with one A and one AAAA record."""
    lines = [
        f"$ORIGIN {ZONE}.",
        "$TTL 300",
        "@ SOA ns.urlvet.test. hostmaster.urlvet.test. 1 3600 600 86400 30",
        "@ NS ns.urlvet.test.",
    ]
    for i in range(n):
        lines.append(f"n{i} A 93.184.{i // 256 % 256}.{i % 256}")
        lines.append(f"n{i} AAAA 2001:db8::{i:x}")
    path = directory / f"{ZONE}.zone"
    path.write_text("\n".join(lines) + "\n")
    return path


async def resolve_all(
    resolver: Resolver, names: list[str]
) -> tuple[float, float, list[Resolution]]:
    """Wall seconds, this process's CPU seconds, and the results."""
    t0, c0 = time.perf_counter(), time.process_time()
    results = await asyncio.gather(*(resolver.aresolve(n) for n in names))
    return time.perf_counter() - t0, time.process_time() - c0, results


def throughput(server: tuple[str, int], n: int, concurrency: int, rounds: int) -> None:
    names = [f"n{i}.{ZONE}" for i in range(n)]
    cold: list[float] = []
    cpu: list[float] = []
    warm: list[float] = []
    for _ in range(rounds):
        resolver = Resolver([server], timeout=2.0, cache_size=n, max_concurrency=concurrency)
        took, used, results = asyncio.run(resolve_all(resolver, names))
        bad = [r for r in results if r.status != "ok" or len(r.addresses) != 2]
        if bad:
            raise SystemExit(f"{len(bad)} lookups failed, e.g. {bad[0]}")
        cold.append(took)
        cpu.append(used)
        took, _, _ = asyncio.run(resolve_all(resolver, names))
        warm.append(took)
    best, median = min(cold), statistics.median(cold)
    print(f"throughput: {n} distinct names, A+AAAA each, max_concurrency={concurrency}")
    print(
        f"  cold cache: best {best:.3f} s = {n / best:,.0f} names/s; "
        f"median {median:.3f} s = {n / median:,.0f} names/s ({rounds} rounds)"
    )
    # CPU time of this process alone: what the resolver costs, whatever else the box runs.
    print(
        f"  cold cache CPU: {min(cpu) / n * 1e6:.0f} us a name "
        f"= {n / min(cpu):,.0f} names per CPU-second"
    )
    print(f"  warm cache: best {min(warm):.3f} s = {n / min(warm):,.0f} names/s")


def deadline(deadline_s: float, tries: int) -> None:
    hole = Blackhole()
    try:
        sync: list[float] = []
        for i in range(tries):
            resolver = Resolver([hole.address], timeout=deadline_s)
            t0 = time.perf_counter()
            res = resolver.resolve(f"x{i}.{ZONE}")
            sync.append(time.perf_counter() - t0)
            assert res.status == "timeout", res

        async def many() -> list[float]:
            resolver = Resolver([hole.address], timeout=deadline_s)

            async def one(i: int) -> float:
                t0 = time.perf_counter()
                res = await resolver.aresolve(f"y{i}.{ZONE}")
                assert res.status == "timeout", res
                return time.perf_counter() - t0

            return list(await asyncio.gather(*(one(i) for i in range(tries))))

        t0 = time.perf_counter()
        concurrent = asyncio.run(many())
        wall = time.perf_counter() - t0
    finally:
        hole.close()
    print(f"black hole: deadline {deadline_s} s (limit {deadline_s * 1.1:.3f} s = +10%)")
    print(
        f"  sync, {tries} lookups one after another: max {max(sync):.4f} s, "
        f"mean {statistics.mean(sync):.4f} s"
    )
    print(
        f"  async, {tries} lookups at once: max {max(concurrent):.4f} s per lookup, "
        f"wall {wall:.4f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--deadline", type=float, default=0.5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="urlvet-bench-") as tmp:
        zones = zone_files()
        zones[ZONE] = write_zone(Path(tmp), args.names)
        with NsdServer(zones) as server:
            print(f"NSD on {server.host}:{server.port}; CPUs: {os.cpu_count()}")
            throughput(server.address, args.names, args.concurrency, args.rounds)
    deadline(args.deadline, tries=20)


if __name__ == "__main__":
    main()
