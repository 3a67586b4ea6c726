"""Benchmark one lookup of urlvet.resolve: latency against NSD, CPU against a hostile server.

    python bench/resolve_bench.py [--queries 200] [--rounds 3]

1. Latency: NSD on loopback serves a generated zone; each query is a name not asked before
   (a cache miss: an A and an AAAA query on the wire). Median and 90th percentile of the wall
   time of one lookup, ``Resolver.resolve`` and ``Resolver.aresolve``, one after another.
2. Hostile packets: a nameserver in a process of its own answers with a 65 KB packet of
   chained compression pointers, or with 40 such packets under the wrong id before the right
   answer. This process's CPU time for one lookup is what the packets cost the resolver.

Only loopback servers started here are queried.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

# Like the tests: if anything here forgot its nameservers, it must not reach a real resolver.
os.environ["URLVET_NAMESERVERS"] = "127.0.0.1:1"

import dns.message

from support.dnsserver import NsdServer, zone_files
from support.hostile import HostileServer, pointer_chain, query_id, query_type, response
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


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[int(len(ordered) * 0.9) - 1]
    return f"median {statistics.median(ordered) * 1e6:,.0f} us, p90 {p90 * 1e6:,.0f} us"


def latency(server: tuple[str, int], queries: int, rounds: int) -> None:
    sync: list[float] = []
    cpu: list[float] = []
    for r in range(rounds):
        resolver = Resolver([server], timeout=2.0)
        resolver.resolve(f"n0.{ZONE}")  # the resolver's own event loop starts here, once
        for i in range(1, queries + 1):
            t0, c0 = time.perf_counter(), time.process_time()
            res = resolver.resolve(f"n{r * queries + i}.{ZONE}")
            sync.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            assert res.status == "ok", res
            assert len(res.addresses) == 2, res

    async def sequential(resolver: Resolver, first: int) -> list[float]:
        took = []
        for i in range(first, first + queries):
            t0, c0 = time.perf_counter(), time.process_time()
            res = await resolver.aresolve(f"n{i}.{ZONE}")
            took.append(time.perf_counter() - t0)
            async_cpu.append(time.process_time() - c0)
            assert res.status == "ok", res
            assert len(res.addresses) == 2, res
        return took

    asynchronous: list[float] = []
    async_cpu: list[float] = []
    for r in range(rounds):
        first = (rounds + r) * queries + 1
        asynchronous += asyncio.run(sequential(Resolver([server], timeout=2.0), first))
    print(f"latency: one lookup of a name not cached (A + AAAA), {queries} x {rounds} each")
    print(f"  resolve : {percentiles(sync)}; CPU median {statistics.median(cpu) * 1e6:,.0f} us")
    print(
        f"  aresolve: {percentiles(asynchronous)}; "
        f"CPU median {statistics.median(async_cpu) * 1e6:,.0f} us"
    )


def _chain(query: bytes) -> list[tuple[float, bytes]]:
    if query_type(query) == "AAAA":
        return [(0.0, response(query))]
    return [(0.0, pointer_chain(query))]


def _wrong_id_chains(query: bytes) -> list[tuple[float, bytes]]:
    if query_type(query) == "AAAA":
        return [(0.0, response(query))]
    wrong = ((query_id(query) + 1) % 65536).to_bytes(2, "big")
    forged = pointer_chain(wrong + query[2:])
    name = dns.message.from_wire(query).question[0].name
    return [(0.002, forged)] * 40 + [(0.0, response(query, f"{name} 300 IN A 93.184.215.14"))]


SCRIPTS: dict[str, Callable[[bytes], list[tuple[float, bytes]]]] = {
    "one 65 KB pointer-chain answer": _chain,
    "40 pointer-chain packets, wrong id, then the answer": _wrong_id_chains,
}


def _serve(script: str, ready: multiprocessing.Queue[tuple[str, int]], stop: object) -> None:
    with HostileServer(SCRIPTS[script]) as server:
        ready.put(server.address)
        stop.wait()  # type: ignore[attr-defined]


def hostile(tries: int) -> None:
    ctx = multiprocessing.get_context("fork")
    print(
        f"hostile packets: this process's CPU for one lookup (server in another process), {tries} tries"
    )
    for script in SCRIPTS:
        ready: multiprocessing.Queue[tuple[str, int]] = ctx.Queue()
        stop = ctx.Event()
        proc = ctx.Process(target=_serve, args=(script, ready, stop), daemon=True)
        proc.start()
        address = ready.get(timeout=10)
        cpu: list[float] = []
        wall: list[float] = []
        results: set[str] = set()
        try:
            for i in range(tries):
                resolver = Resolver([address], timeout=5.0)
                t0, c0 = time.perf_counter(), time.process_time()
                res: Resolution = resolver.resolve(f"x{i}.test")
                cpu.append(time.process_time() - c0)
                wall.append(time.perf_counter() - t0)
                results.add(res.status)
        finally:
            stop.set()
            proc.join(5)
        print(
            f"  {script}: CPU median {statistics.median(cpu) * 1e3:,.1f} ms, "
            f"wall median {statistics.median(wall) * 1e3:,.1f} ms; status {sorted(results)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tries", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="urlvet-bench-") as tmp:
        zones = zone_files()
        zones[ZONE] = write_zone(Path(tmp), 2 * args.queries * args.rounds + 1)
        with NsdServer(zones) as server:
            print(f"NSD on {server.host}:{server.port}; CPUs: {os.cpu_count()}")
            latency(server.address, args.queries, args.rounds)
    hostile(args.tries)


if __name__ == "__main__":
    main()
