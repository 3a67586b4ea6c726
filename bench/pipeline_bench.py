"""What the audit costs around the engine: its ceiling with an engine that costs nothing.

``urlvet audit --no-dns --format jsonl --jobs 2`` on the log mixes (bench/log_mix.py), run
three ways, the reading, routing, record cache, records, JSON and merge of the workers' parts
running as usual in each:
- as it is;
- with the engine's offline vetting replaced by its host stage alone: the URL parsed, the
  findings of the rules on its host looked up in the engine's own host memo (computed on a
  miss), and the verdict on those: what any engine that judges a host once must still do
  for each URL, with no rule on the URL's own tail;
- with the offline vetting replaced by a parse and an empty verdict. This rate is the most
  the audit's own pipeline allows on this machine, whatever the engine costs.

    python3 bench/pipeline_bench.py [--lines 1000000] [--runs 1]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import audit_bench  # noqa: E402
import log_mix  # noqa: E402


def _child(stand_in: str, args: list[str]) -> None:
    """Run ``urlvet`` with ``args``, the engine's offline vetting replaced by ``stand_in``:
    ``host`` (its host stage alone) or ``parse`` (a parse and nothing else)."""
    from urlvet.engine import Vetter
    from urlvet.engine.facts import facts_of
    from urlvet.engine.verdicts import verdict_of
    from urlvet.findings import Decision
    from urlvet.url import InvalidURL, parse

    def parse_only(self: Vetter, url: object, server: object = None, **_: object) -> object:
        try:
            parsed = parse(url) if isinstance(url, str) else None
        except InvalidURL:
            parsed = None
        return verdict_of(str(url), parsed, Decision.ALLOW, (), None, None)

    def host_only(self: Vetter, url: object, server: object = None, **_: object) -> object:
        compiled = self._compiled
        facts = facts_of(url, 0, compiled.settings)
        parsed = facts.url
        found: tuple[Any, ...] = ()
        if parsed is not None:
            key = (parsed.host, parsed.host_kind, None)
            found, _live = self._host_memo.get(key, self._judge_host, facts, self._context)
        decision = compiled.decide([f.severity for f in found])
        return verdict_of(facts.raw, parsed, decision, found, None, None)

    stand_ins = {"host": host_only, "parse": parse_only}
    Vetter.vet_offline = stand_ins[stand_in]  # type: ignore[assignment,method-assign]
    sys.argv = ["urlvet", *args]
    from urlvet.cli import console

    console()


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(cmd[0], cmd)
    _, status, _ = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{cmd} exited {os.waitstatus_to_exitcode(status)}")
    return time.perf_counter() - start


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=1)
    opts = parser.parse_args()
    for tails in ("log", "plain"):
        path = audit_bench.RESULTS / f"pipeline_{tails}.urls"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(log_mix.urls(opts.lines, tails=tails)) + "\n", encoding="utf-8")
        args = ["audit", "--no-dns", "--format", "jsonl", "--jobs", "2", str(path)]
        for _ in range(opts.runs):
            load = os.getloadavg()[0]
            whole = _timed([sys.executable, "-m", "urlvet", *args])
            host = _timed([sys.executable, __file__, "--child", "host", *args])
            bare = _timed([sys.executable, __file__, "--child", "parse", *args])
            print(
                f"{tails + ' tails':<11} audit --jobs 2: {opts.lines / whole:9,.0f} URLs/s as it is, "
                f"{opts.lines / host:9,.0f} with the host stage alone, "
                f"{opts.lines / bare:9,.0f} with a parse alone  load {load:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
