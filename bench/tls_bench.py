"""Benchmark the TLS handshake probe on loopback. Prints figures; not a test.

    python bench/tls_bench.py [--probes 300] [--urls 10000] [--hosts 500]

1. Latency: one real TLS server on 127.0.0.2 (a trustme certificate, TLS 1.3); the time of
   one probe (TCP connect, handshake, chain verification, close) with the cache out of the
   way, sync and async: p50 and p99.
2. Deadline: a server that accepts the TCP connection and never answers; the time a probe
   takes against ``tls.timeout``, sync and async.
3. Audit: ``urlvet audit --tls`` over N URLs on H hosts (NSD on loopback serves the names,
   all on 127.0.0.2), against the same audit without ``--tls``; the server counts the
   handshakes (one per host is expected: results are cached per address, port and host).

Only loopback servers started here are contacted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

# Like the tests: if anything here forgot its nameservers, it must not reach a real resolver.
os.environ["URLVET_NAMESERVERS"] = "127.0.0.1:1"

import trustme  # noqa: E402

from support.dnsserver import NsdServer, zone_files  # noqa: E402
from support.tlsserver import TlsServer  # noqa: E402
from urlvet.tls import Prober  # noqa: E402

ADDRESS = "127.0.0.2"
ZONE = "bench-tls.test"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def latency(server: TlsServer, ca_file: str, n: int) -> None:
    # cache_ttl=-1: every probe is a real handshake.
    prober = Prober(timeout=3.0, ca_file=ca_file, cache_ttl=-1)
    sync: list[float] = []
    for _ in range(n):
        t0 = time.perf_counter()
        result = prober.probe(ADDRESS, server.port, f"h0.{ZONE}")
        sync.append(time.perf_counter() - t0)
        if result.status != "ok":
            raise SystemExit(f"probe failed: {result}")

    async def run() -> list[float]:
        out: list[float] = []
        for _ in range(n):
            t0 = time.perf_counter()
            result = await prober.aprobe(ADDRESS, server.port, f"h0.{ZONE}")
            out.append(time.perf_counter() - t0)
            if result.status != "ok":
                raise SystemExit(f"probe failed: {result}")
        return out

    async_ = asyncio.run(run())
    print(f"latency: {n} probes one after another, loopback, TLS 1.3, ECDSA P-256 chain")
    for name, values in (("sync ", sync), ("async", async_)):
        print(
            f"  {name}: p50 {percentile(values, 50) * 1000:.2f} ms, "
            f"p99 {percentile(values, 99) * 1000:.2f} ms, "
            f"max {max(values) * 1000:.2f} ms"
        )


def deadline(ca_file: str) -> None:
    print("deadline: a server that accepts TCP and never answers")
    with TlsServer(ADDRESS, "silent") as hole:
        for timeout in (0.5, 1.0, 3.0):
            prober = Prober(timeout=timeout, ca_file=ca_file, cache_ttl=-1)
            sync = []
            for _ in range(3):
                t0 = time.perf_counter()
                result = prober.probe(ADDRESS, hole.port, "silent.test")
                sync.append(time.perf_counter() - t0)
                assert result.status == "timeout", result
            t0 = time.perf_counter()
            result = asyncio.run(prober.aprobe(ADDRESS, hole.port, "silent.test"))
            took = time.perf_counter() - t0
            assert result.status == "timeout", result
            print(
                f"  tls.timeout {timeout:.1f} s: sync max {max(sync):.3f} s "
                f"(over by {(max(sync) - timeout) * 1000:.1f} ms), async {took:.3f} s "
                f"(over by {(took - timeout) * 1000:.1f} ms)"
            )


def audit(ca_file: str, server: TlsServer, ns: tuple[str, int], urls: int, hosts: int) -> None:
    with tempfile.TemporaryDirectory(prefix="urlvet-tls-bench-") as tmp:
        directory = Path(tmp)
        listing = directory / "urls.txt"
        listing.write_text(
            "".join(f"https://h{i % hosts}.{ZONE}:{server.port}/page/{i}\n" for i in range(urls))
        )
        policy = directory / "policy.json"
        policy.write_text(
            json.dumps(
                {
                    "networks": {"allowed": [f"{ADDRESS}/32"]},
                    "ignore": ["UV107"],
                    "tls": {"probe_networks": [f"{ADDRESS}/32"]},
                }
            )
        )
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        base = [
            sys.executable,
            "-m",
            "urlvet.cli",
            "audit",
            "--policy",
            str(policy),
            "--nameserver",
            f"{ns[0]}:{ns[1]}",
            "--format",
            "jsonl",
            "--no-progress",
            "-o",
            str(directory / "out.jsonl"),
            str(listing),
        ]
        print(f"audit: {urls:,} URLs over {hosts} hosts (NSD and one TLS server on loopback)")
        for label, extra in (
            ("DNS only     ", []),
            ("DNS and --tls", ["--tls", "--ca-file", ca_file]),
        ):
            before = len(server.connections)
            t0 = time.perf_counter()
            proc = subprocess.run(
                [*base, *extra], env=env, capture_output=True, text=True, check=False
            )
            took = time.perf_counter() - t0
            if proc.returncode not in (0, 1):
                raise SystemExit(proc.stderr)
            records = [
                json.loads(line)
                for line in (directory / "out.jsonl").read_text().splitlines()
                if line
            ]
            probed = sum(1 for r in records if r.get("tls") and r["tls"]["status"] == "ok")
            print(
                f"  {label}: {took:.2f} s = {urls / took:,.0f} URLs/s; "
                f"{probed:,} records with a verified certificate; "
                f"{len(server.connections) - before} handshakes"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--probes", type=int, default=300)
    parser.add_argument("--urls", type=int, default=10_000)
    parser.add_argument("--hosts", type=int, default=500)
    args = parser.parse_args()

    ca = trustme.CA(organization_name="Urlvet Bench CA")
    leaf = ca.issue_cert(f"*.{ZONE}")
    chain = b"".join(p.bytes() for p in leaf.cert_chain_pems)
    with tempfile.TemporaryDirectory(prefix="urlvet-tls-bench-") as tmp:
        ca_file = str(Path(tmp) / "ca.pem")
        ca.cert_pem.write_to_path(ca_file)
        zone = Path(tmp) / f"{ZONE}.zone"
        zone.write_text(
            "\n".join(
                [
                    f"$ORIGIN {ZONE}.",
                    "$TTL 300",
                    "@ SOA ns.urlvet.test. hostmaster.urlvet.test. 1 3600 600 86400 30",
                    "@ NS ns.urlvet.test.",
                    *(f"h{i} A {ADDRESS}" for i in range(args.hosts)),
                ]
            )
            + "\n"
        )
        print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; figures vary with load")
        with TlsServer(ADDRESS, "tls", chain, leaf.private_key_pem.bytes()) as server:
            latency(server, ca_file, args.probes)
            deadline(ca_file)
            with NsdServer({**zone_files(), ZONE: zone}) as nsd:
                audit(ca_file, server, nsd.address, args.urls, args.hosts)


if __name__ == "__main__":
    main()
