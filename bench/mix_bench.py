"""The engine and the audit on the scale mix (bench/mix.py) and the log mix (bench/log_mix.py).

For each mix: ``urlvet audit --no-dns --format jsonl --jobs 2`` on 1,000,000 URLs (URLs/s and
the peak RSS of all its processes, from a second run that samples /proc), and in process, with
DNS off: the median wall µs of a URL on a host already seen, and the median CPU µs of a host's
first URL. The load average is printed beside each figure: the machine may be shared.

    python3 bench/mix_bench.py [--lines 1000000] [--n 200000] [--skip-audit]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import audit_bench  # noqa: E402
import log_mix  # noqa: E402
import mix  # noqa: E402

MIXES = {
    "scale (uniform hosts)": lambda n: mix.urls(n),
    "log, plain tails": lambda n: log_mix.urls(n, tails="plain"),
    "log, log tails": lambda n: log_mix.urls(n),
}


def _host(url: str) -> str:
    return url.split("/", 3)[2]


def in_process(urls: list[str]) -> tuple[float, float, int]:
    """(median wall µs of a URL on a host already seen, median CPU µs of a host's first URL,
    hosts met) on a fresh offline Vetter."""
    from urlvet import Policy, Vetter

    vetter = Vetter(Policy(dns={"enabled": False}))
    vetter.vet("https://warm.example/")  # imports and lazy tables, once
    seen: set[str] = set()
    hot: list[float] = []
    first: list[float] = []
    wall = time.perf_counter_ns
    cpu = time.thread_time_ns
    for url in urls:
        host = _host(url)
        if host in seen:
            t0 = wall()
            vetter.vet(url)
            hot.append(wall() - t0)
        else:
            seen.add(host)
            c0 = cpu()
            vetter.vet(url)
            first.append(cpu() - c0)
    return statistics.median(hot) / 1e3, statistics.median(first) / 1e3, len(seen)


def audit(urls: list[str], name: str) -> tuple[float, float, float, float]:
    """(URLs/s, wall s, peak RSS MB and peak PSS MB of all processes) of the audit with two
    jobs (the RSS counts the pages the workers share with the process that forked them once
    in each; the PSS divides them among them)."""
    path = audit_bench.RESULTS / f"mix_{name}.urls"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(urls) + "\n", encoding="utf-8")
    args = ["audit", "--no-dns", "--format", "jsonl", "--jobs", "2", str(path)]
    secs, _, _, code, _ = audit_bench.run(args)
    _, _, _, _, (total, proportional) = audit_bench.run(args, tree=True)
    if code not in (0, 1):
        raise SystemExit(f"urlvet audit exited {code}")
    return len(urls) / secs, secs, total, proportional


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--n", type=int, default=200_000, help="URLs vetted in process")
    parser.add_argument("--skip-audit", action="store_true")
    parser.add_argument("--only", help="run only the mixes whose name contains this")
    opts = parser.parse_args()
    for label, make in MIXES.items():
        if opts.only and opts.only not in label:
            continue
        load = os.getloadavg()[0]
        hot, first, hosts = in_process(make(opts.n))
        print(
            f"{label:<22} in process: {hot:6.1f} µs median on a seen host, "
            f"{first:6.1f} µs CPU median for a host's first URL ({hosts:,} hosts)  "
            f"load {load:.1f}",
            flush=True,
        )
        if opts.skip_audit:
            continue
        load = os.getloadavg()[0]
        name = label.split()[0].rstrip(",") + ("_plain" if "plain" in label else "")
        rate, secs, rss, pss = audit(make(opts.lines), name)
        print(
            f"{label:<22} audit --jobs 2: {rate:9,.0f} URLs/s ({secs:.2f} s), "
            f"peak of all processes {rss:6.1f} MB RSS, {pss:6.1f} MB PSS  load {load:.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
