"""Benchmark the lookalike analysis of new hosts, with and without the screen of plain hosts.
Prints figures; not a test.

    python bench/lookalike_screen_bench.py [--hosts 20000] [--rounds 5]

The hosts are the scale mix's (bench/mix.py: ordinary sites and subdomains, shared platforms,
internal names, IDN names, brand lookalikes...), each analysed as new: the index's memo of
analyses and the skeleton memo are emptied before every round. "full" runs every technique on
every host that is not protected (the analysis as it was before the screen); "screened" is
the analysis as the rules run it. The figures are the best round's microseconds per host,
for all the hosts and apart for those the screen answers and those it leaves to the
techniques; every answer is checked equal to the full analysis.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import mix

from urlvet import confusables
from urlvet.lookalike import LookalikeIndex, LookalikeReport, default_index
from urlvet.url import HostKind, parse

Args = tuple[str, str, str | None, str | None, bool, None]


def _args(hosts: list[str]) -> list[Args]:
    out: list[Args] = []
    for host in hosts:
        url = parse(f"https://{host}/")
        if url.host_kind is HostKind.DOMAIN and url.host:
            out.append(
                (
                    url.host.rstrip(".").lower(),
                    url.host_unicode.rstrip(".").lower(),
                    url.registrable_domain,
                    url.public_suffix,
                    url.suffix_is_private,
                    None,
                )
            )
    return out


def _full(index: LookalikeIndex, a: Args) -> LookalikeReport:
    protected = index.protected_parent(a[0])
    if protected is not None:
        return LookalikeReport(host=a[0], protected=protected)
    return index._matches(index._compiled(), *a)


def _best(run: Callable[[Args], LookalikeReport], args: list[Args], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        default_index().cache_clear()
        confusables.skeletons.cache_clear()
        start = time.perf_counter()
        for a in args:
            run(a)
        best = min(best, time.perf_counter() - start)
    return best / max(len(args), 1) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()
    index = default_index()
    index._compiled()
    screen = index._screen
    assert screen is not None
    args = _args(mix.hosts(opts.hosts))
    for a in args:
        assert index._analyze(*a) == _full(index, a), a[0]
    screened = [a for a in args if screen.screened_out(*a[:4])]
    left = [a for a in args if not screen.screened_out(*a[:4])]
    print(
        f"{len(args)} domain hosts of the scale mix: {len(screened)} screened out, "
        f"{len(left)} left to the techniques (all answers equal to the full analysis)"
    )
    print(f"{'hosts':>22} {'full us':>9} {'screened us':>12}")
    for name, group in (("all", args), ("screened out", screened), ("left", left)):
        full = _best(lambda a: _full(index, a), group, opts.rounds)
        fast = _best(lambda a: index._analyze(*a), group, opts.rounds)
        print(f"{name:>22} {full:9.1f} {fast:12.1f}")


if __name__ == "__main__":
    main()
