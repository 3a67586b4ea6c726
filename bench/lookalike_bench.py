"""Benchmark the UV3xx lookalike rules as the protected list grows. Prints figures; not a test.

    python bench/lookalike_bench.py [--sizes 100,1000,10000,100000] [--urls 2000]

For each list size the index is built once (timed, with the garbage collection the build's
millions of objects cause: it would otherwise fall on whatever runs next), then every query URL
runs through all six UV3xx rules once, as the engine would run them. Each URL is new to the
index, so its memo of analyses never answers a later URL (the skeleton memo is emptied too). The figure to watch is
the median microseconds per URL: it should stay flat as the list grows (the index answers with
hash lookups, it never scans the list). Target: the largest list within 1.5x of the smallest.

Lists beyond the curated one are padded with synthetic domains generated from a fixed seed, so
runs are comparable. The query URLs are the same for every size: typos, homoglyphs, embeddings,
combos and subdomains of the first 100 curated domains (which every list contains), plus names
unrelated to any list.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time

from urlvet import confusables
from urlvet.checks.base import CheckContext, CheckSettings, defined_rules
from urlvet.lookalike import build_index, default_protected_domains
from urlvet.url import parse

_SUFFIXES = ("com", "net", "org", "io", "de", "co.uk", "fr", "com.br", "app", "dev")
_SYLLABLES = [
    "ka",
    "ri",
    "to",
    "ne",
    "sa",
    "mi",
    "lo",
    "ve",
    "du",
    "pa",
    "zen",
    "tor",
    "bel",
    "fin",
    "gra",
    "sto",
    "mar",
    "qui",
    "lex",
    "nor",
    "vas",
    "tel",
    "cor",
    "dan",
    "pix",
    "hub",
    "net",
    "lab",
    "soft",
    "data",
    "cloud",
    "bank",
    "pay",
    "shop",
    "mail",
]


def synthetic_domains(n: int, seed: int = 7) -> list[str]:
    """``n`` distinct plausible registrable domains, the same for the same seed."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < n:
        label = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if rng.random() < 0.2:
            label += "-" + rng.choice(_SYLLABLES)
        out.setdefault(f"{label}.{rng.choice(_SUFFIXES)}")
    return list(out)


def protected_list(size: int) -> list[str]:
    curated = list(default_protected_domains())
    if size <= len(curated):
        return curated[:size]
    extra = [d for d in synthetic_domains(size) if d not in set(curated)]
    return curated + extra[: size - len(curated)]


def query_urls(n: int, seed: int = 11) -> list[str]:
    """``n`` distinct URLs: lookalikes of the first 100 curated domains and unrelated names."""
    rng = random.Random(seed)
    bases = list(default_protected_domains())[:100]
    homoglyphs = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "i": "і", "l": "1"}
    urls: dict[str, None] = {}
    while len(urls) < n:
        base = rng.choice(bases)
        label, _, suffix = base.partition(".")
        kind = rng.randrange(7)
        if kind == 0:  # typo
            i = rng.randrange(len(label))
            label = label[:i] + rng.choice("abcdefghijklmnopqrstuvwxyz") + label[i + 1 :]
            host = f"{label}.{suffix}"
        elif kind == 1:  # homoglyph
            chars = [homoglyphs.get(c, c) if rng.random() < 0.4 else c for c in label]
            host = f"{''.join(chars)}.{suffix}"
        elif kind == 2:  # embedding
            host = (
                f"{rng.choice(['login', 'accounts', 'secure'])}.{base}.{rng.randrange(10**6)}.net"
            )
        elif kind == 3:  # combo
            host = f"{label}-{rng.choice(['login', 'verify', 'support'])}{rng.randrange(10**4)}.com"
        elif kind == 4:  # subdomain of a protected domain
            host = f"s{rng.randrange(10**6)}.{base}"
        else:  # unrelated
            words = rng.sample(_SYLLABLES, 3)
            host = f"{''.join(words)}{rng.randrange(10**4)}.{rng.choice(_SUFFIXES)}"
        urls.setdefault(f"https://{host}/path?q={rng.randrange(10**6)}")
    return list(urls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="100,1000,10000,100000")
    parser.add_argument("--urls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    import urlvet.checks.lookalike  # noqa: F401  (registers the rules)

    rules = [r for c, r in sorted(defined_rules().items()) if c.startswith("UV3")]
    parsed = [parse(u) for u in query_urls(args.urls)]
    codes = ", ".join(r.code for r in rules)
    print(f"{len(parsed)} query URLs x {args.rounds} rounds, {len(rules)} rules each ({codes})")

    indexes = {}
    builds = {}
    for size in sizes:
        domains = protected_list(size)
        gc.collect()
        t0 = time.perf_counter()
        indexes[size] = build_index(domains)
        gc.collect()
        builds[size] = time.perf_counter() - t0

    # Rounds interleave the sizes so that machine noise falls on all of them alike; each round
    # starts with an empty memo, so every URL is analysed afresh.
    times: dict[int, list[float]] = {size: [] for size in sizes}
    flagged: dict[int, int] = {}
    for _round in range(args.rounds + 1):
        for size in sizes:
            index = indexes[size]
            index.cache_clear()
            skeletons_cache_clear = getattr(confusables.skeletons, "cache_clear", None)
            if skeletons_cache_clear is not None:  # a memo since the engine speed-up
                skeletons_cache_clear()
            ctx = CheckContext(settings=CheckSettings(lookalike=index))
            count = 0
            round_times = []
            for p in parsed:
                t0 = time.perf_counter_ns()
                hits = 0
                for r in rules:
                    hits += sum(1 for _ in r.check(p, ctx))
                round_times.append((time.perf_counter_ns() - t0) / 1000)
                count += hits > 0
            flagged[size] = count
            if _round:  # the first round only warms ICU, the allocator and the caches
                times[size].extend(round_times)

    print(f"{'protected':>10} {'build s':>8} {'median us':>10} {'p95 us':>8} {'flagged':>8}")
    medians = []
    for size in sizes:
        ts = sorted(times[size])
        median = statistics.median(ts)
        medians.append(median)
        p95 = ts[int(len(ts) * 0.95)]
        print(
            f"{len(indexes[size]):>10} {builds[size]:>8.2f} {median:>10.1f} {p95:>8.1f} "
            f"{flagged[size]:>8}"
        )
    print(f"largest / smallest median: {medians[-1] / medians[0]:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
