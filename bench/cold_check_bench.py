"""Cold start of ``urlvet check --no-dns URL``: wall and CPU time of whole processes. Prints figures.

    python bench/cold_check_bench.py [--runs 7] [--url https://example.com/]

Each run is a new interpreter (``python -m urlvet check --no-dns URL``), so imports, the
policy and the Public Suffix List are paid every time, as on a command line. One run comes
first, unmeasured, to warm the file cache (and urlvet's own caches, as a second use would).
Then the ten imports that cost most, from ``python -X importtime``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time


def command(url: str) -> list[str]:
    return [sys.executable, "-m", "urlvet", "check", "--no-dns", url]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--url", default="https://example.com/")
    args = parser.parse_args()
    env = {**os.environ, "NO_COLOR": "1"}
    subprocess.run(command(args.url), env=env, capture_output=True, check=False)
    walls = []
    cpus = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command(args.url), env=env, capture_output=True, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        walls.append(time.perf_counter() - t0)
        # CPU time of the process alone: steadier than wall time on a shared machine.
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    print(f"urlvet check --no-dns {args.url}: {args.runs} cold runs")
    print(f"  wall: median {statistics.median(walls) * 1e3:.0f} ms, min {min(walls) * 1e3:.0f} ms")
    print(f"  CPU:  median {statistics.median(cpus) * 1e3:.0f} ms, min {min(cpus) * 1e3:.0f} ms")
    out = subprocess.run(
        [sys.executable, "-X", "importtime", *command(args.url)[1:]],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    rows = []
    for line in out.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    print("  imports by cumulative time (us):")
    for cumulative, name in sorted(rows, reverse=True)[:10]:
        print(f"    {cumulative:>9,}  {name}")


if __name__ == "__main__":
    main()
