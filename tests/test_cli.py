"""The `urlvet` command line: formats, exit codes, colour, rule and policy commands.

Every vetting call passes --no-dns: no test may ask a real resolver.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from urlvet.cli import main

ESC = "\x1b["


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def check(*args: str) -> tuple[int, str, str]:
    return run("check", "--no-dns", *args)


# -- check: formats ------------------------------------------------------------------------------


def test_check_text_format() -> None:
    code, out, err = check("https://example.com/", "javascript:alert(1)")
    assert code == 1
    assert err == ""
    lines = out.splitlines()
    assert lines[0].startswith("ALLOW")
    assert "https://example.com/" in lines[0]
    assert any(line.startswith("BLOCK") and "javascript:alert(1)" in line for line in lines)
    assert any("UV102 dangerous-scheme [critical]" in line for line in lines)


def test_check_text_shows_where_the_link_really_goes() -> None:
    _code, out, _err = check("HTTPS://Example.COM:443/a/../b", "https://xn--mnchen-3ya.de/")
    assert "opens https://example.com/b" in out
    assert "site  example.com" in out
    assert "mnchen-3ya.de" in out or "münchen.de" in out


def test_check_text_never_writes_terminal_escapes_from_a_url() -> None:
    _code, out, _err = check("https://example.com/\x1b[31mred\u202e")
    assert "\x1b" not in out
    assert "<U+001B>" in out
    assert "<U+202E>" in out


def test_check_json_format() -> None:
    code, out, _err = check(
        "--format", "json", "https://example.com/", "http://127.1/", "not a url"
    )
    assert code == 1
    data = json.loads(out)
    assert isinstance(data, list)
    assert len(data) == 3
    ok, loop, bad = data
    assert ok["url"] == "https://example.com/"
    assert ok["href"] == "https://example.com/"
    assert ok["decision"] == "allow"
    assert ok["findings"] == []
    assert loop["url"] == "http://127.1/"
    assert loop["href"] == "http://127.0.0.1/"
    assert loop["decision"] == "block"
    codes = {f["code"] for f in loop["findings"]}
    assert {"UV101", "UV201", "UV206"} <= codes
    for finding in loop["findings"]:
        assert {"code", "name", "severity", "message"} <= set(finding)
        assert finding["severity"] in ("info", "low", "medium", "high", "critical")
    assert bad["href"] is None
    assert bad["decision"] == "block"
    assert [f["code"] for f in bad["findings"]] == ["UV100"]


def test_check_json_with_server() -> None:
    _code, out, _err = check(
        "--format", "json", "--server", "https://mcp.example.com/mcp", "https://other.example/"
    )
    (verdict,) = json.loads(out)
    assert verdict["decision"] == "warn"
    assert [f["code"] for f in verdict["findings"]] == ["UV401"]
    assert verdict["server"] == "https://mcp.example.com"


def test_check_stdio_server_with_name_allows_a_local_callback() -> None:
    code, out, _err = check(
        "--format", "json", "--server", "stdio", "--server-name", "tool", "http://127.0.0.1:5000/cb"
    )
    assert code == 0
    assert json.loads(out)[0]["decision"] == "allow"


# -- exit codes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["https://example.com/"], 0),
        (["https://example.com:8443/"], 0),  # warn does not reach the default --fail-on block
        (["--fail-on", "warn", "https://example.com:8443/"], 1),
        (["--fail-on", "block", "https://example.com:8443/"], 0),
        (["--fail-on", "warn", "https://example.com/"], 0),
        (["javascript:alert(1)"], 1),
        (["--fail-on", "block", "https://127.0.0.1/"], 1),
    ],
)
def test_exit_codes(args: list[str], code: int) -> None:
    assert check(*args)[0] == code


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--no-dns"],  # no URL
        ["check", "--no-dns", "--fail-on", "never", "https://example.com/"],
        ["check", "--no-dns", "--format", "xml", "https://example.com/"],
        ["check", "--no-dns", "--bogus", "https://example.com/"],
        ["nonsense"],
        ["check", "--no-dns", "--select", "UV999", "https://example.com/"],
        ["check", "--no-dns", "--ignore", "nope", "https://example.com/"],
        ["check", "--no-dns", "--server", "javascript:alert(1)", "https://example.com/"],
        ["check", "--no-dns", "--server", "not a url", "https://example.com/"],
        ["check", "--no-dns", "--policy", "/nonexistent/policy.yaml", "https://example.com/"],
    ],
)
def test_usage_policy_and_input_errors_exit_2(args: list[str]) -> None:
    code, out, err = run(*args)
    assert code == 2
    assert out == ""
    assert err


def test_bad_server_message_is_on_stderr() -> None:
    _code, _out, err = check("--server", "ftp://x.example/", "https://example.com/")
    assert "server URL 'ftp://x.example/' must be an http(s) URL" in err


# -- --select / --ignore ---------------------------------------------------------------------------


def test_select_and_ignore() -> None:
    url = "http://0x7f.1:8080/"
    _c, out, _e = check("--format", "json", "--select", "UV2", url)
    assert {f["code"][:3] for f in json.loads(out)[0]["findings"]} == {"UV2"}
    _c, out, _e = check("--format", "json", "--ignore", "UV101,UV107", url)
    got = {f["code"] for f in json.loads(out)[0]["findings"]}
    assert "UV101" not in got
    assert "UV107" not in got
    assert "UV201" in got
    _c, out, _e = check("--format", "json", "--ignore", "plaintext-http", "--ignore", "UV2", url)
    got = {f["code"] for f in json.loads(out)[0]["findings"]}
    assert got == {"UV107"}


# -- colour ------------------------------------------------------------------------------------


def test_no_colour_when_not_a_terminal() -> None:
    _c, out, _e = check("https://example.com/", "javascript:x")
    assert ESC not in out


def test_no_colour_with_no_color_flag_or_env() -> None:
    assert ESC not in check("--no-color", "javascript:x")[1]
    code, out, _ = run("check", "--no-dns", "javascript:x", env={"NO_COLOR": "1"})
    assert code == 1
    assert ESC not in out


def test_colour_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from urlvet import cli

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    assert cli._use_colour(no_color=False) is True
    assert cli._use_colour(no_color=True) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert cli._use_colour(no_color=False) is False
    monkeypatch.setenv("NO_COLOR", "")  # set but empty: does not count (no-color.org)
    assert cli._use_colour(no_color=False) is True
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False, raising=False)
    monkeypatch.delenv("NO_COLOR")
    assert cli._use_colour(no_color=False) is False
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert cli._use_colour(no_color=False) is True
    assert cli._use_colour(no_color=True) is False


# -- rule and policy commands ---------------------------------------------------------------------


def test_rule_lists_and_explains() -> None:
    code, out, _ = run("rule")
    assert code == 0
    assert "UV201  non-public-address-literal" in out
    code, out, _ = run("rule", "UV201")
    assert code == 0
    assert out.startswith("# UV201 non-public-address-literal")
    assert "## What it does" in out
    assert "## Why is this bad?" in out
    assert "## Example" in out
    code, out, _ = run("rule", "--format", "json", "UV201")
    assert code == 0
    assert json.loads(out)["name"] == "non-public-address-literal"
    code, out, _ = run("rule", "--format", "json")
    assert code == 0
    assert any(r["code"] == "UV101" for r in json.loads(out))


def test_policy_check_and_schema(tmp_path: Path) -> None:
    policies = Path(__file__).resolve().parents[1] / "src" / "urlvet" / "policies"
    code, out, _ = run(
        "policy", "check", str(policies / "default.yaml"), str(policies / "strict.yaml")
    )
    assert code == 0
    assert out.count(": ok") == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("severity:\n  UV999: high\n", encoding="utf-8")
    code, out, err = run("policy", "check", str(bad))
    assert code == 2
    assert f"{bad}:2: severity.UV999: unknown rule code 'UV999'" in err
    code, out, _ = run("policy", "schema")
    assert code == 0
    assert json.loads(out)["title"] == "urlvet policy"


# -- the real console script, once --------------------------------------------------------------


def test_console_script_runs_in_a_subprocess(tmp_path: Path) -> None:
    exe = shutil.which("urlvet") or str(Path(sys.executable).with_name("urlvet"))
    assert Path(exe).exists(), "the urlvet console script is not installed (pip install -e .)"
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["URLVET_NAMESERVERS"] = "127.0.0.1:1"
    proc = subprocess.run(
        [exe, "check", "--no-dns", "--format", "json", "https://example.com/", "https://[::1]/"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert [v["decision"] for v in data] == ["allow", "block"]
    assert proc.stderr == ""
    text = subprocess.run(
        [exe, "check", "--no-dns", "javascript:x"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert text.returncode == 1
    assert ESC not in text.stdout  # a pipe is not a terminal


def _untimed(report: str) -> str:
    return re.sub(r"\b\d+\.\d+s\b", "<time>", report)


@pytest.mark.parametrize("fmt", ["jsonl", "text"])
def test_an_audit_process_ends_at_once_with_all_of_its_output(tmp_path: Path, fmt: str) -> None:
    # Run as a process of its own, `urlvet audit` ends without freeing its caches (and its
    # worker processes likewise: jsonl is a split audit, text a process pool). The output,
    # to a pipe and to a file, is still whole, and the exit code is the audit's.
    lines = [
        f"https://svc{i % 500}.example-{i % 7}.com/items/{i}?page={i % 9}" for i in range(60_000)
    ]
    lines[1234] = "https://169.254.169.254/latest/meta-data/"
    path = tmp_path / "big.urls"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert path.stat().st_size > 2 * (1 << 20)  # two shares: the audit is split
    code, expected, _ = run("audit", "--no-dns", "--format", fmt, str(path))
    assert code == 1
    args = ["audit", "--no-dns", "--format", fmt, "--jobs", "2", str(path)]
    piped = subprocess.run(
        [sys.executable, "-m", "urlvet", *args], capture_output=True, timeout=120, cwd=tmp_path
    )
    assert piped.returncode == 1, piped.stderr
    # The text summary ends with the time the run took.
    assert _untimed(piped.stdout.decode()) == _untimed(expected.replace(str(path), "big.urls"))
    out = tmp_path / "out"
    to_file = subprocess.run(
        [sys.executable, "-m", "urlvet", *args, "-o", str(out)],
        capture_output=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert to_file.returncode == 1, to_file.stderr
    assert _untimed(out.read_text()) == _untimed(piped.stdout.decode())
    assert not list(tmp_path.glob(".urlvet-share-*"))  # the shares' folder is removed


_GC_OBSERVER = """
import gc, os, sys
gc.set_threshold(1234, 5, 6)
real_exit = os._exit
command = os.getpid()  # not a worker process, which inherits this hook
def observed(code):
    if os.getpid() == command:
        sys.stderr.write(f"collector thresholds at exit: {gc.get_threshold()}\\n")
    sys.stderr.flush()
    real_exit(code)
os._exit = observed
from urlvet.cli import console
sys.argv = ["urlvet", *sys.argv[1:]]
console()
"""


def test_the_collector_thresholds_of_an_audit_are_put_back_unless_the_process_ends(
    tmp_path: Path,
) -> None:
    # Called from Python (a test's runner, an application), a split audit leaves the
    # collector as it found it. Run as a process of its own, the audit keeps its bulk
    # thresholds to the end: putting them back would make the next allocation walk the
    # whole heap just before the process ends.
    import gc

    from urlvet.audit.pipeline import BULK_GC_THRESHOLDS

    path = tmp_path / "big.urls"
    path.write_text(
        "".join(f"https://svc{i % 300}.example.com/items/{i}\n" for i in range(60_000)),
        encoding="utf-8",
    )
    assert path.stat().st_size > 2 * (1 << 20)  # two shares: the audit is split
    args = ["audit", "--no-dns", "--format", "jsonl", "--jobs", "2", str(path)]
    before = gc.get_threshold()
    gc.set_threshold(1234, 5, 6)
    try:
        code, out, _ = run(*args)
        assert gc.get_threshold() == (1234, 5, 6)
    finally:
        gc.set_threshold(*before)
    assert code == 0
    assert out.count("\n") == 60_000
    done = subprocess.run(
        [sys.executable, "-c", _GC_OBSERVER, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == out
    assert f"collector thresholds at exit: {BULK_GC_THRESHOLDS}" in done.stderr


def test_python_dash_m_urlvet_is_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "urlvet", "check", "--no-dns", "javascript:alert(1)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout.startswith("BLOCK")
    assert "UV102" in done.stdout
    usage = subprocess.run(
        [sys.executable, "-m", "urlvet", "--help"], capture_output=True, text=True, timeout=60
    )
    assert usage.returncode == 0
    assert usage.stdout.startswith("Usage: urlvet ")
