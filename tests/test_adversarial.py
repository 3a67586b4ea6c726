"""Hostile inputs end in a clear finding or a clear error, within a stated memory bound.

Each test names its bound: the peak of Python allocations during the call (``tracemalloc``),
which covers what urlvet itself builds (strings, lists, sets), not the few buffers of C
extensions. What these inputs cost in time is measured by ``bench/adversarial_bench.py``, not
asserted here: a timed test says more about the machine's load than about the code.
"""

from __future__ import annotations

import string
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from click.testing import CliRunner

from urlvet import Decision, Policy, PolicyError, Verdict, Vetter
from urlvet.cli import main
from urlvet.mcp import MAX_LINE, answer_line
from urlvet.policy import load_policy

T = TypeVar("T")
MB = 1 << 20
VETTER = Vetter(Policy(dns={"enabled": False}))
SERVER = "https://mcp.example.com/mcp"


@dataclass(frozen=True)
class Measured:
    value: Any
    peak_bytes: int


def measure(fn: Callable[[], T]) -> Measured:
    """Run ``fn`` under the allocation tracer: its value and the peak of its allocations."""
    tracemalloc.start()
    try:
        value = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return Measured(value, peak)


def vet_within(url: str | bytes, megabytes: float, **kw: Any) -> Verdict:
    VETTER.vet_offline("https://warm.example/", SERVER)  # caches and indexes built beforehand
    m = measure(
        lambda: VETTER.vet_offline(url, kw.get("server", SERVER), message=kw.get("message"))
    )
    assert m.peak_bytes <= megabytes * MB, f"peak {m.peak_bytes / MB:.1f} MB (bound {megabytes} MB)"
    verdict: Verdict = m.value
    return verdict


# -- size ----------------------------------------------------------------------------------


def test_a_1_mb_url_is_blocked_as_overlong_within_32_mb() -> None:
    v = vet_within("https://example.com/?q=" + "a" * MB, megabytes=32)
    assert v.decision is Decision.BLOCK
    assert "UV105" in v.codes


def test_a_host_of_100000_labels_is_blocked_within_32_mb() -> None:
    v = vet_within("https://" + "a." * 100_000 + "com/", megabytes=32)
    assert v.decision is Decision.BLOCK
    assert "UV105" in v.codes


def test_a_parseable_host_of_5000_labels_is_vetted_within_16_mb() -> None:
    v = vet_within("https://" + "a." * 5_000 + "com/", megabytes=16)
    assert v.decision is Decision.BLOCK
    assert "UV105" in v.codes


def test_a_host_of_5000_labels_under_a_blocked_domain_is_still_caught() -> None:
    # The parent walks start at the first parent no longer than a DNS name (253 characters),
    # since no listed domain can be longer: the listed domain at the end must still be found.
    vetter = Vetter(Policy(dns={"enabled": False}, domains={"blocked": ["evil.example"]}))
    vetter.vet_offline("https://warm.example/", SERVER)
    m = measure(lambda: vetter.vet_offline("https://" + "a." * 5_000 + "evil.example/", SERVER))
    assert m.peak_bytes <= 16 * MB
    assert m.value.decision is Decision.BLOCK
    assert "UV208" in m.value.codes


def test_a_policy_domain_longer_than_a_dns_name_is_a_clear_error() -> None:
    too_long = ".".join(c * 60 for c in "abcde") + ".com"  # 309 characters, labels of 60
    with pytest.raises(ValueError, match="at most 253"):
        Policy(domains={"blocked": [too_long]})


def test_a_label_of_8000_distinct_characters_is_vetted_within_16_mb() -> None:
    label = (string.ascii_lowercase * 400)[:8_000]
    v = vet_within(f"https://{label}.com/", megabytes=16, server=None)
    assert v.decision is Decision.BLOCK
    assert "UV105" in v.codes


def test_a_1_mb_message_is_read_within_32_mb() -> None:
    v = vet_within("https://example.com/", megabytes=32, message="\u202epaypal.com " * 90_000)
    assert v.decision is Decision.WARN
    assert "UV501" in v.codes


# -- characters ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://exa\x00mple.com/",
        "https://example.com/\x00",
        "\x00https://example.com/",
        "https://example.com/" + "\x00" * 10_000,
        b"https://example.com/\x00admin",
    ],
    ids=["host", "path", "before-scheme", "10000-nuls", "bytes"],
)
def test_nul_bytes_are_blocked_within_16_mb(url: str | bytes) -> None:
    v = vet_within(url, megabytes=16)
    assert v.decision is Decision.BLOCK
    assert {"UV106", "UV100"} & set(v.codes)


@pytest.mark.parametrize(
    "url",
    [
        "https://\ud800.example.com/",
        "https://example.com/\udfff",
        "https://ex\udcffample.com/",  # how Python's argv carries the byte 0xFF
        b"https://ex\xff\xfeample.com/",
        b"https://ex\xed\xa0\x80ample.com/",  # a surrogate encoded in UTF-8: invalid
    ],
    ids=["high", "low", "escaped-byte", "invalid-utf8", "encoded-surrogate"],
)
def test_lone_surrogates_and_invalid_utf8_are_blocked(
    url: str | bytes,
) -> None:
    v = vet_within(url, megabytes=4)
    assert v.decision is Decision.BLOCK
    assert "UV100" in v.codes
    assert v.href is None


def test_a_lone_surrogate_on_the_command_line_gives_json_not_a_traceback() -> None:
    result = CliRunner().invoke(
        main, ["check", "--no-dns", "--format", "json", "https://ex\udcffample.com/"]
    )
    assert result.exit_code == 1, result.output
    assert '"https://ex\\udcffample.com/"' in result.stdout
    result.stdout.encode("utf-8")  # strict UTF-8 out: no raw surrogate reaches the stream


# -- punycode ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "decision", "code"),
    [
        ("https://xn--a.com/", Decision.WARN, "UV301"),  # kept as-is by the URL Standard
        ("https://xn--tešla.com/", Decision.BLOCK, "UV100"),
        ("https://xn--zz-z.example/", Decision.WARN, "UV301"),
        ("https://xn--" + "a" * 60_000 + ".com/", Decision.BLOCK, "UV105"),
        ("https://" + "xn--a." * 10_000 + "com/", Decision.BLOCK, "UV105"),
        ("https://xn--80ak6aa92e.com/", Decision.BLOCK, "UV302"),  # valid, and a homoglyph
    ],
    ids=["undecodable", "non-ascii", "bad-digits", "60k-label", "10k-labels", "homoglyph"],
)
def test_invalid_punycode_gets_a_clear_finding_within_16_mb(
    url: str, decision: Decision, code: str
) -> None:
    v = vet_within(url, megabytes=16, server=None)
    assert v.decision is decision
    assert code in v.codes


# -- JSON-RPC and JSON Lines -------------------------------------------------------------------


def _elicit(url: str, msg_id: int = 1) -> str:
    return (
        f'{{"jsonrpc":"2.0","id":{msg_id},"method":"elicitation/create","params":'
        f'{{"mode":"url","url":"{url}","message":"Sign in","elicitationId":"e{msg_id}"}}}}'
    )


@pytest.mark.parametrize(
    "line",
    [
        "[" * 100_000,
        '{"a":' * 100_000,
        '{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":' * 5_000,
        '{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"mode":"url","url":'
        + "[" * 50_000
        + "]" * 50_000
        + "}}",
    ],
    ids=["arrays", "objects", "params", "url-as-deep-array"],
)
def test_deeply_nested_json_rpc_is_declined_within_64_mb(line: str) -> None:
    m = measure(lambda: answer_line(line, VETTER, "stdio"))
    assert m.peak_bytes <= 64 * MB, m.peak_bytes / MB
    answer = m.value
    assert answer.ok is False
    assert answer.decision is Decision.BLOCK
    assert answer.error is not None


def test_the_hook_keeps_answering_after_a_deeply_nested_line() -> None:
    stdin = "[" * 100_000 + "\n" + _elicit("https://example.com/", 2) + "\n"
    result = CliRunner().invoke(main, ["hook", "--no-dns", "--server", "stdio"], input=stdin)
    assert result.exit_code == 0, result.output
    first, second = result.stdout.splitlines()
    assert '"invalid-json"' in first
    assert '"ok": true' in second


def test_a_10_mb_json_rpc_line_to_the_hook_is_declined_unread_within_32_mb() -> None:
    line = _elicit("https://example.com/?q=" + "a" * (10 * MB))
    assert len(line) > MAX_LINE
    m = measure(lambda: answer_line(line, VETTER, "stdio"))
    assert m.peak_bytes <= 32 * MB
    assert m.value.ok is False
    assert m.value.error.code == "too-long"


@pytest.fixture(scope="module")
def ten_mb_jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    f = tmp_path_factory.mktemp("audit") / "traffic.jsonl"
    with f.open("w", encoding="utf-8") as fh:
        fh.write(_elicit("https://example.com/?q=" + "a" * (10 * MB), 1) + "\n")
        fh.write(_elicit("https://169.254.169.254/latest/meta-data/", 2) + "\n")
    return f


def test_a_10_mb_jsonl_line_is_audited_within_256_mb(ten_mb_jsonl: Path) -> None:
    args = ["audit", "--no-dns", "--no-progress", "--format", "jsonl", str(ten_mb_jsonl)]
    m = measure(lambda: CliRunner().invoke(main, args))
    result = m.value
    assert m.peak_bytes <= 256 * MB, m.peak_bytes / MB
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    # Both lines were read: the huge URL is blocked as over-long, the next one still audited.
    assert "UV105" in result.stdout
    assert "UV201" in result.stdout


def test_a_10_mb_jsonl_line_over_the_line_limit_is_reported_and_skipped(
    ten_mb_jsonl: Path,
) -> None:
    args = ["audit", "--no-dns", "--no-progress", "--max-line-bytes", str(MB), str(ten_mb_jsonl)]
    m = measure(lambda: CliRunner().invoke(main, args))
    assert m.peak_bytes <= 64 * MB, m.peak_bytes / MB
    result = m.value
    assert result.exit_code == 2, result.output  # input could not be read in full
    assert "Traceback" not in result.output
    assert "UV201" in result.stdout  # the line after the skipped one is still audited


# -- policy files ------------------------------------------------------------------------------


def _billion_laughs() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefghi", "bcdefghij", strict=True):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


@pytest.fixture
def policy_dir(tmp_path: Path) -> Path:
    return tmp_path


def test_a_yaml_bomb_policy_is_refused_within_16_mb(policy_dir: Path) -> None:
    bomb = policy_dir / "bomb.yaml"
    bomb.write_text(_billion_laughs(), encoding="utf-8")

    def load() -> str:
        with pytest.raises(PolicyError) as err:
            load_policy(bomb)
        return str(err.value)

    m = measure(load)
    assert m.peak_bytes <= 16 * MB
    assert m.value.startswith(f"{bomb}:1:")
    assert "anchors" in m.value or "aliases" in m.value


def test_a_yaml_bomb_behind_extends_is_refused(policy_dir: Path) -> None:
    (policy_dir / "parent.yaml").write_text(_billion_laughs(), encoding="utf-8")
    child = policy_dir / "child.yaml"
    child.write_text("extends: parent.yaml\n", encoding="utf-8")
    with pytest.raises(PolicyError, match=r"parent\.yaml:1: invalid YAML"):
        load_policy(child)
    result = CliRunner().invoke(main, ["check", "--policy", str(child), "https://example.com/"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.yaml", "a: " + "[" * 100_000),
        ("deep.json", "[" * 100_000),
        ("deep.toml", "a = " + "[" * 100_000),
        ("deep-map.yaml", "a:\n" + "".join(" " * i + "b:\n" for i in range(1, 3_000))),
    ],
    ids=["yaml-flow", "json", "toml", "yaml-block"],
)
def test_a_deeply_nested_policy_is_an_error_within_64_mb(
    policy_dir: Path, name: str, text: str
) -> None:
    f = policy_dir / name
    f.write_text(text, encoding="utf-8")

    def load() -> str:
        with pytest.raises(PolicyError) as err:
            load_policy(f)
        return str(err.value)

    m = measure(load)
    assert m.peak_bytes <= 64 * MB
    assert m.value.startswith(str(f))
    result = CliRunner().invoke(main, ["policy", "check", str(f)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_an_oversized_policy_file_is_refused_unread(policy_dir: Path) -> None:
    f = policy_dir / "huge.yaml"
    f.write_text("domains:\n  blocked:\n" + "  - a.example\n" * 200_000, encoding="utf-8")

    def load() -> str:
        with pytest.raises(PolicyError) as err:
            load_policy(f)
        return str(err.value)

    m = measure(load)
    assert m.peak_bytes <= 16 * MB
    assert "larger than" in m.value
