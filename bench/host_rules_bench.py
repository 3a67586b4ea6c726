"""What each rule costs on a host's first URL: CPU µs per rule, the rules of the host first.

For a mix (bench/mix.py, or bench/log_mix.py with log or plain tails), the first URL of each
host is parsed once; then each rule the engine shares out (host, link, query, text) runs on
all of them in turn (``Rule.run`` on the URL's facts, as the engine runs it, a family's
analysis computed by its first member), and its CPU time per URL is printed, with each
group's sum. Rule by rule, a rule's tables stay warm: the figures rank the rules and show a
change to one; the cost of a first URL in a log is bench/mix_bench.py's.

    python3 bench/host_rules_bench.py [--mix scale|log|plain] [--n 200000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import log_mix
import mix

MIXES = {
    "scale": lambda n: mix.urls(n),
    "log": lambda n: log_mix.urls(n),
    "plain": lambda n: log_mix.urls(n, tails="plain"),
}


def first_urls(urls: list[str]) -> list[str]:
    """The first URL of each host (as bench/mix_bench.py tells hosts apart), in order."""
    seen: set[str] = set()
    firsts = []
    for url in urls:
        host = url.split("/", 3)[2]
        if host not in seen:
            seen.add(host)
            firsts.append(url)
    return firsts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mix", choices=sorted(MIXES), default="scale")
    parser.add_argument("--n", type=int, default=200_000, help="URLs drawn from the mix")
    opts = parser.parse_args()

    from urlvet import Policy, Vetter
    from urlvet.engine.facts import facts_of

    vetter = Vetter(Policy(dns={"enabled": False}))
    vetter.vet("https://warm.example/")  # imports and lazy tables, once
    settings = vetter.compiled.settings
    ctx = vetter._context
    facts = [facts_of(url, 0, settings) for url in first_urls(MIXES[opts.mix](opts.n))]
    analyses: list[dict[str, Any]] = [{} for _ in facts]
    total = 0.0
    for group in ("host", "link", "query", "text"):
        spent = 0.0
        for rule in getattr(vetter._plan, group):
            start = time.process_time_ns()
            for one, shared in zip(facts, analyses, strict=True):
                for _hit in rule.run(one, ctx, shared):
                    pass
            cost = (time.process_time_ns() - start) / len(facts) / 1e3
            spent += cost
            print(f"{group:<5} {rule.code}  {cost:6.2f} µs")
        print(f"{group:<5} all    {spent:6.2f} µs", flush=True)
        total += spent
    print(f"every rule   {total:6.2f} µs CPU per first URL ({len(facts):,} hosts, {opts.mix})")


if __name__ == "__main__":
    main()
