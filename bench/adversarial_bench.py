"""Time and peak memory of each hostile input that tests/test_adversarial.py bounds.

Each input is measured twice in one process: once untraced for the wall time, once under
``tracemalloc`` for the peak of Python allocations. A new Vetter is made for each URL so the
lookalike index's memo does not hide the first call's cost.

    python bench/adversarial_bench.py
"""

from __future__ import annotations

import string
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


def main_() -> None:
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


if __name__ == "__main__":
    main_()
