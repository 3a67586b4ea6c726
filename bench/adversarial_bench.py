"""What hostile input costs: how each case grows with its size, and a table of single inputs.

The growth sweep (the default) runs each hostile input of docs/adversarial.md through the
public command that reads it (``urlvet check``, ``hook``, ``audit``, ``policy check``, in
process through the CLI's entry point) at four sizes, each twice the one before, and prints
the time of each size and the growth from the first to the last: linear work doubles with
each size (8x over the sweep), quadratic work quadruples (64x). A case whose run passes
``--stop-after`` seconds is not run at larger sizes (the code before the linear scanners took
minutes there). The table (``--table``) measures single inputs for time and peak memory.

    python bench/adversarial_bench.py [--stop-after SECONDS] [--only NAME] [--table]
"""

from __future__ import annotations

import argparse
import gzip
import json
import string
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from urlvet import Policy, Vetter
from urlvet.cli import main
from urlvet.mcp import answer_line

MB = 1 << 20
SERVER = "https://mcp.example.com/mcp"


def _elicit(url: str, msg_id: int = 1) -> str:
    return (
        f'{{"jsonrpc":"2.0","id":{msg_id},"method":"elicitation/create","params":'
        f'{{"mode":"url","url":"{url}","message":"Sign in","elicitationId":"e{msg_id}"}}}}'
    )


def _billion_laughs() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefghi", "bcdefghij", strict=True):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _measure(make: Callable[[], Callable[[], Any]]) -> tuple[float, float, Any]:
    fn = make()
    start = time.perf_counter()
    value = fn()
    seconds = time.perf_counter() - start
    fn = make()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return seconds, peak / MB, value


def _vet(url: str | bytes, server: str | None = SERVER, message: str | None = None) -> Any:
    def make() -> Callable[[], Any]:
        vetter = Vetter(Policy(dns={"enabled": False}))
        vetter.vet_offline("https://warm.example/", SERVER)
        return lambda: vetter.vet_offline(url, server, message=message)

    return make


def _summary(value: Any) -> str:
    if hasattr(value, "decision") and hasattr(value, "codes"):
        return f"{value.decision.value} {' '.join(sorted(set(value.codes)))}"
    if hasattr(value, "error") and getattr(value, "error", None) is not None:
        return f"declined: {value.error.code}"
    if hasattr(value, "exit_code"):
        return f"exit {value.exit_code}"
    return str(value)[:60]


def table() -> None:
    """Time and peak memory of single hostile inputs (each measured twice in one process:
    untraced for the wall time, under ``tracemalloc`` for the peak of Python allocations; a
    new Vetter for each URL, so the lookalike index's memo does not hide the first call)."""
    label = (string.ascii_lowercase * 400)[:8_000]
    tmp = Path(tempfile.mkdtemp(prefix="urlvet-adv-"))
    jsonl = tmp / "traffic.jsonl"
    with jsonl.open("w", encoding="utf-8") as fh:
        fh.write(_elicit("https://example.com/?q=" + "a" * (10 * MB), 1) + "\n")
        fh.write(_elicit("https://169.254.169.254/latest/meta-data/", 2) + "\n")
    bomb = tmp / "bomb.yaml"
    bomb.write_text(
        "version: 1\nx:\n" + "".join("  " + ln + "\n" for ln in _billion_laughs().splitlines())
    )
    vetter = Vetter(Policy(dns={"enabled": False}))

    def hook(line: str) -> Callable[[], Callable[[], Any]]:
        return lambda: lambda: answer_line(line, vetter, "stdio")

    def cli(args: list[str]) -> Callable[[], Callable[[], Any]]:
        return lambda: lambda: CliRunner().invoke(main, args)

    cases: list[tuple[str, Callable[[], Callable[[], Any]]]] = [
        ("1 MB URL", _vet("https://example.com/?q=" + "a" * MB)),
        ("host of 100,000 labels", _vet("https://" + "a." * 100_000 + "com/")),
        ("host of 5,000 labels", _vet("https://" + "a." * 5_000 + "com/")),
        ("label of 8,000 characters", _vet(f"https://{label}.com/", server=None)),
        (
            "1 MB message of bidi overrides",
            _vet("https://example.com/", message="\u202epaypal.com " * 90_000),
        ),
        ("10,000 NUL bytes", _vet("https://example.com/" + "\x00" * 10_000)),
        ("NUL in the host", _vet("https://exa\x00mple.com/")),
        ("lone surrogate", _vet("https://\ud800.example.com/")),
        ("invalid UTF-8 bytes", _vet(b"https://ex\xff\xfeample.com/")),
        ("undecodable punycode", _vet("https://xn--a.com/", server=None)),
        ("punycode label of 60,000", _vet("https://xn--" + "a" * 60_000 + ".com/", server=None)),
        ("JSON-RPC nested 100,000 deep", hook("[" * 100_000)),
        (
            "10 MB JSON-RPC line to the hook",
            hook(_elicit("https://example.com/?q=" + "a" * (10 * MB))),
        ),
        (
            "10 MB JSONL line, urlvet audit",
            cli(["audit", "--no-dns", "--no-progress", "--format", "jsonl", str(jsonl)]),
        ),
        (
            "YAML-bomb policy file (anchors)",
            cli(["check", "--no-dns", "--policy", str(bomb), "https://example.com/"]),
        ),
    ]
    print(f"{'input':34} {'time':>10} {'peak':>10}  outcome")
    for name, make in cases:
        seconds, peak, value = _measure(make)
        print(f"{name:34} {seconds * 1000:8.1f} ms {peak:7.2f} MB  {_summary(value)}")


# -- the growth sweep ---------------------------------------------------------------------------

SIZES = (1, 2, 4, 8)


def _invoke(args: list[str], stdin: str | None = None) -> int:
    result = CliRunner().invoke(main, args, input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code


def _audit(tmp: Path, name: str, text: str, *extra: str) -> Callable[[], int]:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    args = ["audit", "--no-dns", "--no-progress", "--format", "jsonl", *extra, str(path)]
    return lambda: _invoke(args)


def _percent_urls(tmp: Path, k: int) -> Callable[[], int]:
    # 200 URLs whose query is ?x=1& and a run of '%' (2,000 at x8: the default length limit).
    run = 250 * k
    text = "".join(f"https://h{i}.example/?x=1&{'%' * run}\n" for i in range(200))
    return _audit(tmp, f"pct{k}.urls", text)


def _dashes(tmp: Path, k: int) -> Callable[[], int]:
    url = "https://" + "-" * (8_000 * k) + "g.nip.io/"
    return lambda: _invoke(["check", "--no-dns", "--format", "json", url])


def _dashes_hook(tmp: Path, k: int) -> Callable[[], int]:
    line = _elicit("https://" + "-" * (8_000 * k) + "g.nip.io/") + "\n"
    return lambda: _invoke(["hook", "--no-dns", "--server", "stdio"], stdin=line)


def _parens(tmp: Path, k: int) -> Callable[[], int]:
    line = "see https://a.example/x" + ")" * (16_000 * k) + "\n"
    # As free text (a first line longer than the 8 KiB sniffed would be taken for a URL list).
    return _audit(tmp, f"par{k}.log", line, "--input-kind", "text")


def _dots(tmp: Path, k: int) -> Callable[[], int]:
    line = "see https://a.example/x" + "." * (125_000 * k) + "\n"
    return _audit(tmp, f"dot{k}.log", line, "--input-kind", "text")


def _dots_jsonl(tmp: Path, k: int) -> Callable[[], int]:
    return _audit(tmp, f"dot{k}.jsonl", "see https://a.example/x" + "." * (125_000 * k) + "\n")


def _escaped_requests(tmp: Path, k: int) -> Callable[[], int]:
    requests = [json.loads(_elicit(f"https://e{i}.example/p", i)) for i in range(1_000 * k)]
    line = json.dumps(requests).replace("/", "\\/")
    return _audit(tmp, f"esc{k}.jsonl", line + "\n")


def _token_parameters(tmp: Path, k: int) -> Callable[[], int]:
    query = "".join(f"token=v{i:05d}&" for i in range(8_000 * k))
    return _audit(tmp, f"tok{k}.urls", f"https://example.com/?{query}\n")


def _userinfo_run(tmp: Path, k: int) -> Callable[[], int]:
    text = "see https://x@" + "a1" * (4_096 * k) + "\n"
    return _audit(tmp, f"at{k}.log", text, "--input-kind", "text")


def _toml_key(tmp: Path, k: int) -> Callable[[], int]:
    path = tmp / f"key{k}.toml"
    path.write_text(".".join(["a"] * (3_125 * k)) + " = 1\n", encoding="utf-8")
    return lambda: _invoke(["policy", "check", str(path)])


def _blank_feed(tmp: Path, k: int) -> Callable[[], int]:
    (tmp / f"blank{k}.gz").write_bytes(gzip.compress(b"\n" * (2 * k * MB), 9))
    policy = tmp / f"blank{k}.yaml"
    policy.write_text(f"domains: {{blocked_files: [blank{k}.gz]}}\n", encoding="utf-8")
    return lambda: _invoke(["policy", "check", str(policy)])


CASES: dict[str, tuple[str, Callable[[Path, int], Callable[[], int]]]] = {
    "percent-query": ("audit: 200 URLs, ?x=1& + 250k '%'", _percent_urls),
    "dashes-check": ("check: https:// + 8,000k '-' + g.nip.io/", _dashes),
    "dashes-hook": ("hook: the same URL in an elicitation", _dashes_hook),
    "parens": ("audit: a log line, URL + 16,000k ')'", _parens),
    "dots": ("audit: a log line, URL + 125,000k '.'", _dots),
    "dots-jsonl": ("audit: the same line in JSON Lines", _dots_jsonl),
    "escaped-requests": ("audit: one JSON line, 1,000k escaped URLs", _escaped_requests),
    "token-parameters": ("audit: a URL of 8,000k token= parameters", _token_parameters),
    "userinfo-run": ("audit: '@' then 8,192k letters and digits", _userinfo_run),
    "toml-key": ("policy check: a TOML key of 3,125k parts", _toml_key),
    "blank-feed": ("policy check: gzip feed of 2k MB of blank lines", _blank_feed),
}


def sweep(only: str | None, stop_after: float) -> None:
    """Time each case at each size and print the growth (see the module's docstring)."""
    tmp = Path(tempfile.mkdtemp(prefix="urlvet-growth-"))
    # Imports, the default index and the audit's machinery, before anything is timed.
    _invoke(["check", "--no-dns", "https://warm.example/"])
    _audit(tmp, "warm.urls", "https://warm.example/?x=1&%25\n")()
    print(
        f"{'case':18} {'input (k = 1, 2, 4, 8)':44} "
        + " ".join(f"{'x' + str(k):>8}" for k in SIZES)
        + "   growth"
    )
    for name, (what, make) in CASES.items():
        if only and name != only:
            continue
        times: list[float] = []
        for k in SIZES:
            run = make(tmp, k)
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
            if times[-1] > stop_after:
                break
        cells = " ".join(f"{t:7.2f}s" for t in times) + " " * (9 * (len(SIZES) - len(times)))
        growth = (
            f"{times[-1] / times[0]:6.1f}x over x{SIZES[len(times) - 1]}" if len(times) > 1 else ""
        )
        stopped = "" if len(times) == len(SIZES) else f" (stopped: over {stop_after:g} s)"
        print(f"{name:18} {what:44} {cells}  {growth}{stopped}", flush=True)


def main_() -> None:
    """Run the growth sweep, or the table of single inputs with --table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--table", action="store_true", help="single inputs: time and memory")
    parser.add_argument("--only", choices=sorted(CASES), help="one case of the sweep")
    parser.add_argument("--stop-after", type=float, default=20.0, metavar="SECONDS")
    args = parser.parse_args()
    if args.table:
        table()
    else:
        sweep(args.only, args.stop_after)
    sys.stdout.flush()


if __name__ == "__main__":
    main_()
