"""Benchmark threat feeds: loading a 1,000,000-line domain feed, cold and cached, its memory,
and the cost of a lookup with 1,000 entries against 1,000,000. Prints figures; not a test.

    python bench/feeds_bench.py [--entries 1000000] [--small 1000] [--urls 5000]

Every load runs in a fresh process (``python -c``), so that the figures are what a new
``urlvet`` process pays: the cold load parses and validates every line and writes the compiled
cache; the cached load reads it back (the cache directory is a temporary one, so the user's
is never touched). Peak memory is the child's maximum resident set size, next to that of a
process that only imports urlvet, so the feed's own share can be read off.

Lookups: the raw table lookup (FeedSet.match_domain) of hosts not listed (a four-label name:
it and its parents are looked up) and of hosts under a listed domain, with the small feed and
with the large one; then offline vets of URLs not listed under no feed, the small and the large
one. The figures to watch should not grow with the feed.

Targets (the issue): 1,000,000 domains load in at most 2 s and 150 MB. Wall time depends on
what else the machine runs; the CPU time of the load is printed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_TLDS = ("com", "net", "org", "info", "xyz", "top", "ru", "de", "io", "co.uk")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"

# Peak RSS from /proc (VmHWM): getrusage's ru_maxrss survives exec, so a child started by
# this process, which holds the million domains, would report this process's peak.
_CHILD = """
import json, sys, time
def hwm():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
t0 = time.perf_counter()
import urlvet.policy
from urlvet.feeds import FeedSpec, load_feed
rss_import = hwm()
t1 = time.perf_counter()
c1 = time.process_time()
table = load_feed(FeedSpec(sys.argv[1], "feed.txt", "domains"))
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "cpu_s": time.process_time() - c1,
                  "entries": len(table),
                  "from_cache": table.from_cache, "rss_import_kb": rss_import,
                  "rss_peak_kb": hwm()}))
"""


def _domain(rng: random.Random, i: int) -> str:
    label = "".join(rng.choices(_ALPHABET, k=rng.randint(5, 14)))
    return f"{label}-{i}.{rng.choice(_TLDS)}"


def write_feed(path: Path, n: int, seed: int = 15) -> list[str]:
    """A feed of ``n`` domains as threat feeds publish them: a comment header, one a line."""
    rng = random.Random(seed)
    domains = [_domain(rng, i) for i in range(n)]
    with open(path, "w", encoding="utf-8") as f:
        f.write("# synthetic domain blocklist for bench/feeds_bench.py\n# one domain a line\n")
        f.write("\n".join(domains))
        f.write("\n")
    return domains


def child_load(feed: Path, cache: Path) -> dict[str, float]:
    env = dict(os.environ, URLVET_CACHE_DIR=str(cache))
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(feed)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    result: dict[str, float] = json.loads(out.stdout)
    return result


def vet_medians(policy_file: Path, urls: list[str], rounds: int = 3) -> float:
    """Median microseconds per offline vet (best round), per-host caching defeated by distinct
    hosts."""
    from urlvet import Vetter, load_policy

    vetter = Vetter(load_policy(policy_file))
    best = float("inf")
    for _ in range(rounds):
        times = []
        for url in urls:
            t = time.perf_counter()
            vetter.vet_offline(url)
            times.append(time.perf_counter() - t)
        best = min(best, statistics.median(times))
    return best * 1e6


def match_median(policy_file: Path, hosts: list[str]) -> float:
    from urlvet import load_policy

    feeds = load_policy(policy_file).compiled.settings.blocked_domain_feeds
    times = []
    for host in hosts:
        t = time.perf_counter()
        feeds.match_domain(host)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--urls", type=int, default=5_000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="urlvet-feeds-bench-") as tmp:
        root = Path(tmp)
        os.environ["URLVET_CACHE_DIR"] = str(root / "cache")
        big = root / "big.txt"
        small = root / "small.txt"
        t = time.perf_counter()
        big_domains = write_feed(big, args.entries)
        small_domains = write_feed(small, args.small, seed=16)
        print(
            f"feed: {args.entries:,} domains, {big.stat().st_size / 1e6:.1f} MB "
            f"(written in {time.perf_counter() - t:.1f} s)"
        )

        cold = child_load(big, root / "cache")
        cached = child_load(big, root / "cache")
        empty = child_load(small, root / "cache-small")
        print(
            f"cold load (parse, validate, write cache): {cold['load_s']:.2f} s "
            f"({cold['cpu_s']:.2f} s CPU), peak RSS {cold['rss_peak_kb'] / 1024:.0f} MB "
            f"(a process that only imports urlvet: {cold['rss_import_kb'] / 1024:.0f} MB)"
        )
        print(
            f"cached load (second start):               {cached['load_s']:.2f} s "
            f"({cached['cpu_s']:.2f} s CPU), peak RSS {cached['rss_peak_kb'] / 1024:.0f} MB"
        )
        print(f"a {args.small:,}-entry feed, cold:             {empty['load_s'] * 1000:.1f} ms")

        rng = random.Random(7)
        unlisted = [f"a{i}.b.unlisted-{i}.example" for i in range(args.urls)]
        big_hits = [f"www.{d}" for d in rng.sample(big_domains, args.urls)]
        small_hits = [f"www.{d}" for d in rng.choices(small_domains, k=args.urls)]
        small_policy = root / "small.yaml"
        big_policy = root / "big.yaml"
        small_policy.write_text("domains: {blocked_files: [small.txt]}\n", encoding="utf-8")
        big_policy.write_text("domains: {blocked_files: [big.txt]}\n", encoding="utf-8")
        none_policy = root / "none.yaml"
        none_policy.write_text("{}\n", encoding="utf-8")
        miss_small = match_median(small_policy, unlisted)
        miss_big = match_median(big_policy, unlisted)
        hit_small = match_median(small_policy, small_hits)
        hit_big = match_median(big_policy, big_hits)
        print(
            f"table lookup of a host not listed (it and its parents): {miss_small:.1f} µs median "
            f"with {args.small:,} entries, {miss_big:.1f} µs with {args.entries:,} "
            f"({miss_big / miss_small:.2f}x)"
        )
        print(
            f"table lookup of a host under a listed domain: {hit_small:.1f} µs median with "
            f"{args.small:,} entries, {hit_big:.1f} µs with {args.entries:,} "
            f"({hit_big / hit_small:.2f}x)"
        )
        urls = [f"https://{h}/login" for h in unlisted[: args.urls // 2]]
        v_none = vet_medians(none_policy, urls)
        v_small = vet_medians(small_policy, urls)
        v_big = vet_medians(big_policy, urls)
        print(
            f"offline vet of a URL not listed: {v_none:.1f} µs median without a feed, "
            f"{v_small:.1f} µs with {args.small:,} entries, {v_big:.1f} µs with "
            f"{args.entries:,} ({v_big / v_small:.2f}x)"
        )
        t = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "urlvet.cli",
                "check",
                "--no-dns",
                "--policy",
                str(big_policy),
                f"https://{big_hits[0]}/",
            ],
            capture_output=True,
            check=False,
            env=dict(os.environ),
        )
        print(
            f"`urlvet check --no-dns` with the {args.entries:,}-entry feed cached: "
            f"{time.perf_counter() - t:.2f} s"
        )


if __name__ == "__main__":
    main()
