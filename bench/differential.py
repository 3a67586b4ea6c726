"""Verdicts with every shortcut on against the reference with every memo off, at scale.

tests/test_memos_off.py holds the engine's memos and shortcuts to the reference (a process
with ``URLVET_MEMOS=off``) on 700 hostile URLs and the corpus. This runs the same comparison
on as many URLs as asked, drawn anew for each seed:
- URLs of the log mix (bench/log_mix.py): tracking parameters, escapes, encoded return URLs,
  carried URLs, non-ASCII queries, dot segments, on Zipf-drawn hosts;
- hostile tails (duplicated parameters, escapes in one to three rounds, long runs, every
  redirect parameter), as the test draws them;
- log tails moved onto the scale mix's hosts (lookalikes, addresses in every spelling,
  internal names, shorteners...), half of them with a redirect parameter spliced in once or
  twice, some with userinfo.
Each URL is vetted from no server, a stdio server and an HTTPS server, forwards then
backwards (a shortcut filled by one URL then answers another), under the default, the strict
and a custom policy with feeds. Prints the mismatches and a line per seed and policy; exits 1
on any mismatch.

    python3 bench/differential.py [--urls 40000] [--seeds 201,202,203]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests")]

import log_mix  # noqa: E402
import mix  # noqa: E402

from support.reference import reference_verdicts  # noqa: E402
from test_memos_off import (  # noqa: E402
    DESTINATIONS,
    OFFLINE,
    PARAMETERS,
    SERVERS,
    _custom_policy,
    _encoded,
    _mismatches,
    hostile_urls,
)
from urlvet import Policy  # noqa: E402
from urlvet.policy import load_policy  # noqa: E402

USERINFO = ("user@", "google.com@", "a:b@")


def moved_tails(count: int, logs: list[str], seed: int) -> list[str]:
    """``count`` log tails on hosts of the scale mix, half with a redirect parameter added."""
    rng = random.Random(seed)
    hosts = mix.hosts(2000, seed)
    out = []
    for _ in range(count):
        tail = rng.choice(logs).split("/", 3)[3]
        url = f"{rng.choice(('http', 'https'))}://{rng.choice(hosts)}/{tail}"
        if rng.random() < 0.5:
            value = _encoded(rng.choice(DESTINATIONS), rng.randint(0, 3))
            extra = f"{rng.choice(PARAMETERS)}={value}"
            url += ("&" if "?" in url else "?") + "&".join([extra] * rng.choice((1, 1, 2)))
        if rng.random() < 0.1:
            url = url.replace("://", "://" + rng.choice(USERINFO), 1)
        out.append(url)
    return out


def urls_for(count: int, seed: int) -> list[str]:
    """The distinct URLs of one seed: about ``count`` and a quarter, in the three kinds."""
    logs = log_mix.urls(count, seed=seed)
    drawn = (
        logs[: count // 2] + hostile_urls(count // 4, seed) + moved_tails(count // 2, logs, seed)
    )
    return list(dict.fromkeys(drawn))


def _policy(which: str, folder: Path) -> tuple[dict[str, Any] | Path, Policy]:
    if which == "default":
        return OFFLINE, Policy.model_validate(OFFLINE)
    source = (
        ROOT / "src" / "urlvet" / "policies" / "strict.yaml"
        if which == "strict"
        else _custom_policy(folder)
    )
    return source, load_policy(source)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--urls", type=int, default=40_000)
    parser.add_argument("--seeds", default="201,202,203")
    opts = parser.parse_args()
    failed = 0
    for seed in (int(s) for s in opts.seeds.split(",")):
        urls = urls_for(opts.urls, seed)
        for which in ("default", "strict", "custom"):
            with tempfile.TemporaryDirectory() as tmp:
                source, policy = _policy(which, Path(tmp))
                start = time.perf_counter()
                reference = reference_verdicts(source, urls, SERVERS)
                middle = time.perf_counter()
                bad = _mismatches(policy, reference, urls)
                end = time.perf_counter()
            for line in bad[:10]:
                print("  mismatch:", line)
            failed += len(bad)
            print(
                f"seed {seed} {which:<7} {len(urls):,} URLs x {len(SERVERS)} servers x 2 orders: "
                f"{len(bad)} mismatches (reference {middle - start:.0f} s, "
                f"with memos {end - middle:.0f} s)",
                flush=True,
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
