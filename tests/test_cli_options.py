"""Every option does what it says: `check -` reads stdin, `hook` takes no options it would
ignore, -q and -v mean the same before and after a command's name, NO_COLOR and FORCE_COLOR
are honoured, and every command's options are used by the command."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from urlvet.cli import main, spark_job_command

ROOT = Path(__file__).resolve().parents[1]
ESC = "\x1b["


def run(*args: str, stdin: bytes | str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=stdin)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def command_line(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The real command, its output to a pipe (never a terminal)."""
    full = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full.update(env, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run(
        [sys.executable, "-m", "urlvet", *args],
        capture_output=True,
        text=True,
        env=full,
        timeout=120,
        check=False,
    )


# -- check - --------------------------------------------------------------------------------------


def test_check_dash_reads_urls_from_stdin_one_a_line() -> None:
    stdin = "https://example.com/\n\n# a comment\n  https://10.0.0.1/  \n"
    code, out, err = run("check", "--no-dns", "--format", "json", "-", stdin=stdin)
    assert (code, err) == (1, "")
    assert [v["url"] for v in json.loads(out)] == ["https://example.com/", "https://10.0.0.1/"]


def test_check_dash_keeps_its_place_among_the_arguments() -> None:
    code, out, _ = run(
        "check", "--no-dns", "--format", "json", "javascript:x", "-", "https://example.org/",
        stdin="https://example.com/\n",
    )  # fmt: skip
    assert code == 1
    assert [v["url"] for v in json.loads(out)] == [
        "javascript:x",
        "https://example.com/",
        "https://example.org/",
    ]


def test_check_dash_refuses_stdin_that_is_not_utf8() -> None:
    code, out, err = run("check", "--no-dns", "-", stdin=b"https://example.com/\n\xff\xfe\n")
    assert (code, out) == (2, "")
    assert "stdin:2: invalid UTF-8 (byte 0xff)" in err


def test_check_dash_once() -> None:
    code, _out, err = run("check", "--no-dns", "-", "-", stdin="")
    assert code == 2
    assert "'-' (stdin) can be given once" in err


# -- hook -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("option", [["--fail-on", "warn"], ["--no-color"]])
def test_hook_has_no_option_it_would_ignore(option: list[str]) -> None:
    code, _out, err = run("hook", "--server", "stdio", "--no-dns", *option, stdin="")
    assert code == 2
    assert "No such option" in err


def test_hook_exits_0_once_every_line_is_answered_even_when_urls_block() -> None:
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "url": "https://10.0.0.1/",
                "message": "m",
                "elicitationId": "e",
            },
        }
    )
    code, out, _ = run(
        "hook", "--server", "https://mcp.example.com/mcp", "--no-dns", stdin=line + "\n"
    )
    assert code == 0
    assert "block" in out  # the decision is in the answer, not in the status


# -- quiet and verbose ------------------------------------------------------------------------------


MALFORMED = '{"jsonrpc":"2.0","method":"elicitation/create","params":{"mode":"url","url":7}}\n'


def test_quiet_keeps_errors_and_drops_notes_and_warnings(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(MALFORMED, encoding="utf-8")
    (tmp_path / "bin.urls").write_bytes(b"\x00\x01")
    code, _out, err = run("audit", "--no-dns", str(tmp_path / "t.jsonl"))
    assert "warning:" in err  # a URL that is not a string: a malformed-mcp warning
    for args in (["-q", "audit"], ["audit", "-q"], ["audit", "--quiet"]):
        code, _out, err = run(*args, "--no-dns", str(tmp_path / "t.jsonl"))
        assert err == ""
        code, _out, err = run(*args, "--no-dns", str(tmp_path / "bin.urls"))
        assert code == 2
        assert "error: " in err  # errors always


def test_verbose_says_which_policy_and_the_runs_figures(tmp_path: Path) -> None:
    (tmp_path / "a.urls").write_text("https://example.com/\nhttps://example.com/\n")
    for args in (["-v", "audit"], ["audit", "-v"]):
        code, _out, err = run(*args, "--no-dns", str(tmp_path / "a.urls"))
        assert code == 0
        lines = err.splitlines()
        assert lines[0].startswith("urlvet: policy: "), lines
        assert "the built-in default" in lines[0]
        assert lines[1].startswith("urlvet: audited 1 files, 2 lines, 2 URLs")
    assert run("check", "--no-dns", "https://example.com/")[2] == ""  # default: nothing


def test_quiet_and_verbose_cancel_out() -> None:
    assert run("-v", "check", "-q", "--no-dns", "https://example.com/")[2] == ""


# -- colour ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--no-dns", "javascript:x"],
        ["consent", "--no-dns", "--server", "stdio", "javascript:x"],
        ["audit", "--no-dns", "-"],
    ],
)
def test_force_color_colours_a_pipe_and_no_color_wins(args: list[str]) -> None:
    def out(env: dict[str, str]) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "urlvet", *args],
            input="javascript:x\n",
            capture_output=True,
            text=True,
            env={
                **{k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")},
                **env,
                "PYTHONPATH": str(ROOT / "src"),
            },
            timeout=120,
            check=False,
        )
        assert done.returncode == 1, done.stderr
        return done.stdout

    assert ESC not in out({})  # a pipe is not a terminal
    assert ESC + "31m" in out({"FORCE_COLOR": "1"})  # red, through click's styling
    assert ESC not in out({"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert ESC in out({"FORCE_COLOR": "1", "NO_COLOR": ""})  # an empty NO_COLOR does not count


# -- every option is used ----------------------------------------------------------------------------


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found.extend(_commands(command, f"{prefix}{name} "))
        else:
            found.append((prefix + name, command))
    return found


@pytest.mark.parametrize(
    ("name", "command"),
    [*_commands(main), ("urlvet-spark", spark_job_command)],
    ids=lambda x: str(x),
)
def test_every_option_a_command_takes_is_read_by_it(name: str, command: click.Command) -> None:
    # A parameter the command is given but never reads is a dead option.
    assert command.callback is not None
    source = inspect.getsource(command.callback)
    body = source.split('"""', 2)[-1] if '"""' in source else source
    for param in command.params:
        if not param.expose_value or param.name is None:
            continue
        assert param.name in body, f"urlvet {name}: {param.opts[0]} is never read"
