"""How the real ``urlvet`` command ends when it is interrupted: Ctrl-C (SIGINT to the whole
process group, as a terminal sends it) exits 130 with one line and no traceback, a reader
that goes away (``| head -1``) ends it quietly with 141, and an output file given with ``-o``
is written whole or not at all."""

from __future__ import annotations

import io
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from urlvet.cli import INTERRUPTED_EXIT, PIPE_CLOSED_EXIT, main
from urlvet.errors import InputError
from urlvet.files import atomic_output, write_atomically

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src")  # this checkout's urlvet, whatever is installed
    env.pop("NO_COLOR", None)
    return env


def _urlvet(*args: str, cwd: Path, **kwargs: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "urlvet", *args],
        cwd=cwd,
        env=_env(),
        start_new_session=True,  # a process group of its own, as a terminal's job
        **kwargs,
    )


def _big_list(path: Path, lines: int = 100_000) -> Path:
    urls = [
        f"https://svc{i % 500}.example-{i % 7}.com/items/{i}?page={i % 9}" for i in range(lines)
    ]
    urls[3] = "https://169.254.169.254/latest/meta-data/"
    path.write_text("\n".join(urls) + "\n", encoding="utf-8")
    return path


def _wait_for(folder: Path, pattern: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not list(folder.glob(pattern)):
        assert proc.poll() is None, "the run ended before it was interrupted"
        assert time.monotonic() < deadline, f"no {pattern} in {folder}"
        time.sleep(0.02)


def _ctrl_c(proc: subprocess.Popen[bytes]) -> tuple[int, str]:
    os.killpg(proc.pid, signal.SIGINT)  # the whole group, workers included
    _out, err = proc.communicate(timeout=60)
    return proc.returncode, err.decode()


# -- Ctrl-C --------------------------------------------------------------------------------------


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_while_reading_stdin_exits_130_and_leaves_no_output_file(
    tmp_path: Path, jobs: str
) -> None:
    # stdin stays open: the audit is certainly still running when Ctrl-C comes (with --jobs 2,
    # the process pool's workers are in the same process group and get SIGINT too).
    proc = _urlvet(
        "audit", "--no-dns", "-j", jobs, "--format", "jsonl", "-o", "report.jsonl", "-",
        cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(b"https://example.com/\nhttps://10.0.0.1/\n")
    proc.stdin.flush()
    _wait_for(tmp_path, ".report.jsonl.*.part", proc)
    code, err = _ctrl_c(proc)
    assert code == INTERRUPTED_EXIT == 130
    assert err == "urlvet: interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no report, no half of one


def test_ctrl_c_during_a_split_audit_ends_workers_and_removes_every_file(tmp_path: Path) -> None:
    _big_list(tmp_path / "big.urls")
    (tmp_path / "report.jsonl").write_text("the previous report\n", encoding="utf-8")
    proc = _urlvet(
        "audit", "--no-dns", "-j", "2", "--format", "jsonl", "-o", "report.jsonl", "big.urls",
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    _wait_for(tmp_path, ".urlvet-share-*", proc)  # the split audit's workers are running
    code, err = _ctrl_c(proc)
    assert code == 130
    assert err == "urlvet: interrupted\n"
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.urls", "report.jsonl"]
    assert (tmp_path / "report.jsonl").read_text() == "the previous report\n"


def test_ctrl_c_is_130_under_the_test_runner_too() -> None:
    # `check -` reads URLs from stdin; an input that raises KeyboardInterrupt stands for Ctrl-C.
    class CtrlC(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            if len(buffer) == 0:  # the runner's probe for a binary stream
                return 0
            raise KeyboardInterrupt

    result = CliRunner().invoke(main, ["check", "--no-dns", "-"], input=io.BufferedReader(CtrlC()))
    assert result.exit_code == 130
    assert result.stderr == "urlvet: interrupted\n"


# -- a closed pipe -------------------------------------------------------------------------------


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_closed_pipe_ends_the_audit_quietly_with_141(tmp_path: Path, jobs: str) -> None:
    # `urlvet audit big.urls | head -1`: the reader takes one line and goes away.
    _big_list(tmp_path / "big.urls")
    proc = _urlvet(
        "audit", "--no-dns", "-j", jobs, "--format", "jsonl", "big.urls",
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    assert proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert first.startswith(b'{"type":"url"')
    assert proc.returncode == PIPE_CLOSED_EXIT == 141  # not 1: that means findings
    assert err == ""
    assert not list(tmp_path.glob(".urlvet-share-*"))


def test_a_closed_pipe_ends_check_quietly(tmp_path: Path) -> None:
    urls = "".join(f"https://a{i}.example.com/\n" for i in range(3000)).encode()
    proc = _urlvet(
        "check", "--no-dns", "-",
        cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdin.write(urls)
    proc.stdin.close()
    assert proc.stdout.readline().startswith(b"ALLOW")
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert proc.returncode == 141
    assert err == ""


# -- output files written whole ----------------------------------------------------------------


def test_an_output_file_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    write_atomically(target, b"new\n")
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["report.txt"]


def test_a_failed_write_leaves_the_previous_file(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    target.write_text("old\n")

    def stopped_part_way() -> None:
        with atomic_output(target) as out:
            out.write(b"half of a new")
            raise RuntimeError("stopped")

    with pytest.raises(RuntimeError):
        stopped_part_way()
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.txt"]


def test_a_device_is_written_in_place_not_replaced() -> None:
    with atomic_output(os.devnull) as out:
        out.write(b"nothing\n")
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_an_output_file_in_a_missing_folder_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot write"):
        write_atomically(tmp_path / "no" / "report.txt", b"x")


def test_the_spark_jobs_command_ends_on_ctrl_c_as_the_others_do() -> None:
    from urlvet.cli import UrlvetCommand, spark_job_command

    assert isinstance(spark_job_command, UrlvetCommand)

    @click.command(cls=UrlvetCommand)
    def interrupted() -> None:
        raise KeyboardInterrupt

    result = CliRunner().invoke(interrupted, [])
    assert (result.exit_code, result.stderr) == (130, "urlvet: interrupted\n")
