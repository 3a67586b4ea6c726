"""Detection per family on labelled cases, and false alarms on a large set of real sites.

    python bench/detection_bench.py                       # corpus/blind/round3.jsonl
    python bench/detection_bench.py CASES.jsonl --real 20000

For each family: the share of threat cases (expected warn or block) that urlvet flags (warn or
block), and the share whose decision matches exactly; for the benign cases, the share allowed.
Then every registrable domain with its subdomains in Chromium's HSTS preload list as the
``hstspreload`` package ships it (the leaves two labels deep: real sites whose owners asked
browsers to force https), vetted offline as ``https://DOMAIN/`` from a stdio server; every one
that is not allowed is printed with its codes. ``--real N`` takes every k-th domain so that N
are vetted (0: all).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from urlvet.engine import Vetter  # noqa: E402
from urlvet.evaluate import evaluate, load_cases  # noqa: E402
from urlvet.findings import Decision  # noqa: E402
from urlvet.server import as_server  # noqa: E402

_IS_LEAF = 0x80


def hsts_registrable_domains() -> list[str]:
    """Names two labels deep that the HSTS preload list holds as whole entries, sorted.

    Walks the package's data file the way urlvet.hsts reads it (the layer-1 buckets of its
    jump table); a bench may lean on that layout, the library falls back when it changes."""
    import hstspreload

    data = Path(hstspreload.__file__).with_name("hstspreload.bin").read_bytes()
    names: set[str] = set()
    for jump in hstspreload._JUMPTABLE[1]:
        if jump is None:
            continue
        start, size = jump
        i, end = start, start + size
        while i < end:
            flags, n = data[i], data[i + 1]
            if flags & _IS_LEAF:
                name = data[i + 2 : i + 2 + n].decode("ascii", "replace")
                if name.count(".") == 1:
                    names.add(name)
            i += 2 + n
    return sorted(names)


def main() -> None:
    """Print the figures."""
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", default=[str(ROOT / "corpus/blind/round3.jsonl")])
    ap.add_argument("--real", type=int, default=20000)
    args = ap.parse_args()
    report = evaluate(load_cases(args.cases))
    flagged: Counter[str] = Counter()
    exact: Counter[str] = Counter()
    total: Counter[str] = Counter()
    misses: list[str] = []
    for o in report.outcomes:
        fam = o.case.family
        total[fam] += 1
        threat = o.case.decision is not Decision.ALLOW
        ok = (o.decision is not Decision.ALLOW) == threat
        flagged[fam] += ok
        exact[fam] += o.decision is o.case.decision
        if not ok:
            misses.append(f"  {fam:<9} {o.decision.value:<5} {o.case.url[:110]}  {o.codes}")
    print(f"{'family':<10} {'cases':>5} {'right':>6} {'share':>7} {'exact':>7}")
    for fam in sorted(total):
        n = total[fam]
        print(f"{fam:<10} {n:>5} {flagged[fam]:>6} {flagged[fam] / n:>7.1%} {exact[fam] / n:>7.1%}")
    print("wrong (flagged-or-not):")
    print("\n".join(misses) or "  none")
    domains = hsts_registrable_domains()
    step = max(1, len(domains) // args.real) if args.real else 1
    sample = domains[::step]
    vetter = Vetter()
    stdio = as_server("stdio")
    alarms = []
    t0 = time.perf_counter()
    for d in sample:
        v = vetter.vet_offline(f"https://{d}/", stdio)
        if v.decision is not Decision.ALLOW:
            alarms.append(f"  {d:<40} {v.decision.value:<5} {' '.join(v.codes)}")
    took = time.perf_counter() - t0
    print(
        f"real sites: {len(sample)} of {len(domains)} HSTS-preloaded registrable domains, "
        f"{len(alarms)} flagged ({len(alarms) / len(sample):.2%}), "
        f"{took / len(sample) * 1e6:.0f} us a URL"
    )
    print("\n".join(alarms))


if __name__ == "__main__":
    main()
