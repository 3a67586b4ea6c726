"""Offline vetting speed and the cold start of `urlvet check`.

Prints:
- the median microseconds per URL for in-process offline vetting over a 20,000-URL mix built
  from the labelled cases in corpus/ (each case repeated with a distinct query so that no
  cache can help), over several rounds;
- the same on the scale mix of bench/mix.py (distinct URLs on 20,000 hosts: only the host
  repeats), measured after a warm-up of 100,000 URLs of the mix, as in a long audit;
  `Vetter.vet_many` on it too;
- the wall time of a cold `urlvet check URL` (a new process each time), median of 15 runs.

Times are CPU time of this process (time.process_time for rounds): on a shared machine wall
time mostly measures the other work. Single-call medians use perf_counter (too short for the
CPU clock's resolution) and are the figure most exposed to load.

Run: python bench/engine_bench.py [--n 20000] [--rounds 7] [--mix-n 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def corpus_mix(n: int) -> list[tuple[str, str | None]]:
    """N (url, server) pairs cycled from corpus/*.jsonl, each made distinct by a query tag."""
    cases: list[tuple[str, str | None]] = []
    for path in sorted((ROOT / "corpus").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.strip():
                case = json.loads(line)
                cases.append((case["url"], case.get("server")))
    if not cases:
        sys.exit("bench: corpus/ has no cases")
    out = []
    for i in range(n):
        url, server = cases[i % len(cases)]
        if i >= len(cases) and url.startswith(("http://", "https://")) and "#" not in url:
            url = f"{url}{'&' if '?' in url else '?'}bench={i}"
        out.append((url, server))
    return out


def in_process(n: int, rounds: int) -> tuple[float, list[float], int]:
    from urlvet import Policy, Vetter

    vetter = Vetter(Policy(dns={"enabled": False}))
    mix = corpus_mix(n)
    for url, server in mix[:2000]:  # warm-up: imports, lazy tables, index builds
        vetter.vet(url, server)
    per_round = []
    for _ in range(rounds):
        start = time.perf_counter()
        for url, server in mix:
            vetter.vet(url, server)
        per_round.append((time.perf_counter() - start) / len(mix) * 1e6)
    # The per-URL median over single timings, too (robust against a noisy round).
    singles = []
    clock = time.perf_counter
    for url, server in mix:
        t0 = clock()
        vetter.vet(url, server)
        singles.append(clock() - t0)
    return statistics.median(singles) * 1e6, per_round, len(mix)


def scale_mix(n: int, rounds: int) -> tuple[float, list[float], float]:
    """(single-call median us, per-round CPU us per URL, vet_many CPU us per URL) on n URLs of
    the scale mix, after a warm-up on 100,000 others."""
    sys.path.insert(0, str(ROOT / "bench"))
    import mix

    from urlvet import Policy, Vetter

    vetter = Vetter(Policy(dns={"enabled": False}))
    urls = mix.urls(100_000 + n)
    warm, urls = urls[:100_000], urls[100_000:]
    for url in warm:
        vetter.vet(url)
    per_round = []
    for _ in range(rounds):
        start = time.process_time()
        for url in urls:
            vetter.vet(url)
        per_round.append((time.process_time() - start) / len(urls) * 1e6)
    start = time.process_time()
    for _ in vetter.vet_many(urls):
        pass
    many = (time.process_time() - start) / len(urls) * 1e6
    singles = []
    clock = time.perf_counter
    for url in urls:
        t0 = clock()
        vetter.vet(url)
        singles.append(clock() - t0)
    return statistics.median(singles) * 1e6, per_round, many


def cold_start(runs: int) -> list[float]:
    exe = Path(sys.executable).parent / "urlvet"
    cmd = [str(exe)] if exe.exists() else [shutil.which("urlvet") or "urlvet"]
    cmd += ["check", "--no-dns", "https://accounts.google.com/o/oauth2/v2/auth?client_id=x"]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--cold-runs", type=int, default=15)
    parser.add_argument("--mix-n", type=int, default=100_000)
    args = parser.parse_args()
    print(f"load average now: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    median_single, rounds, n = in_process(args.n, args.rounds)
    print(
        f"offline vetting, {n:,} URLs from corpus/: median {median_single:.1f} us/URL "
        f"(single-call median); per-round means {', '.join(f'{r:.1f}' for r in rounds)} us"
    )
    median_mix, mix_rounds, many = scale_mix(args.mix_n, max(1, args.rounds // 2))
    print(
        f"offline vetting, {args.mix_n:,} distinct URLs on 20,000 hosts (bench/mix.py): median "
        f"{median_mix:.1f} us/URL (single-call median); per-round CPU "
        f"{', '.join(f'{r:.1f}' for r in mix_rounds)} us; vet_many {many:.1f} us CPU/URL"
    )
    cold = cold_start(args.cold_runs)
    print(
        f"cold `urlvet check URL`: median {statistics.median(cold):.3f} s, "
        f"min {min(cold):.3f} s, max {max(cold):.3f} s over {len(cold)} runs"
    )


if __name__ == "__main__":
    main()
