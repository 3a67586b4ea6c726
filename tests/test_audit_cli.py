"""`urlvet audit` on the command line: exit codes, baselines, output files, the progress line
under a terminal, and the pre-commit hooks. Offline (--no-dns) throughout."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from urlvet.cli import main

ROOT = Path(__file__).resolve().parents[1]


def audit(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["audit", "--no-dns", *args], input=stdin)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, *lines: str) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


# -- exit codes ----------------------------------------------------------------------------------


def test_exit_0_when_every_url_is_allowed(in_tmp: Path) -> None:
    write(in_tmp / "ok.urls", "https://example.com/", "https://example.org/")
    assert audit("ok.urls")[0] == 0


def test_exit_1_when_a_url_blocks(in_tmp: Path) -> None:
    write(in_tmp / "bad.urls", "https://example.com/", "https://10.0.0.1/")
    code, out, err = audit("bad.urls")
    assert code == 1
    assert "1 URLs fail the run" in out
    assert err == ""


def test_fail_on_warn_fails_on_a_warning_only(in_tmp: Path) -> None:
    # UV401 (medium: warn) for a link to another site than the server's.
    write(in_tmp / "warn.urls", "https://docs.python.org/")
    args = ("--server", "https://mcp.example.com/", "warn.urls")
    assert audit(*args)[0] == 0
    assert audit("--fail-on", "warn", *args)[0] == 1


def test_exit_zero_ignores_findings_but_not_input_errors(in_tmp: Path) -> None:
    write(in_tmp / "bad.urls", "https://10.0.0.1/")
    assert audit("--exit-zero", "bad.urls")[0] == 0
    (in_tmp / "broken.urls").write_bytes(b"https://\xff/\n")
    assert audit("--exit-zero", "broken.urls")[0] == 2


@pytest.mark.parametrize(
    "args",
    [
        ("--server", "ftp://x/", "a.urls"),
        ("--policy", "missing.yaml", "a.urls"),
        ("--select", "UV999", "a.urls"),
        ("--baseline", "missing.json", "a.urls"),
        ("-", "-"),
        ("--format", "xml", "a.urls"),
    ],
)
def test_exit_2_for_usage_and_policy_errors(in_tmp: Path, args: tuple[str, ...]) -> None:
    write(in_tmp / "a.urls", "https://example.com/")
    code, out, err = audit(*args)
    assert code == 2
    assert out == ""
    assert err


def test_output_file_leaves_stdout_empty(in_tmp: Path) -> None:
    write(in_tmp / "a.urls", "https://10.0.0.1/")
    code, out, _ = audit("--format", "json", "-o", "report.json", "a.urls")
    assert (code, out) == (1, "")
    (obj,) = json.loads((in_tmp / "report.json").read_text(encoding="utf-8"))
    assert obj["decision"] == "block"


def test_json_array_is_valid_when_empty(in_tmp: Path) -> None:
    write(in_tmp / "a.urls", "# nothing")
    code, out, _ = audit("--format", "json", "a.urls")
    assert (code, json.loads(out)) == (0, [])


# -- secrets -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "jsonl", "sarif", "github"])
def test_secrets_are_redacted_in_every_format(in_tmp: Path, fmt: str) -> None:
    write(
        in_tmp / "s.urls",
        "http://admin:hunter2secret@10.0.0.1/cb?code=authcode123&state=ok&access_token=tok987654",
    )
    code, out, _ = audit("--format", fmt, "s.urls")
    assert code == 1
    for secret in ("hunter2secret", "authcode123", "tok987654"):
        assert secret not in out
    assert "REDACTED" in out
    assert "state=ok" in out
    code, out, _ = audit("--format", fmt, "--show-secrets", "s.urls")
    assert "authcode123" in out


# -- baselines -----------------------------------------------------------------------------------


def test_the_html_report_marks_what_the_baseline_accepts(in_tmp: Path) -> None:
    urls = in_tmp / "urls.txt"
    write(urls, "https://10.0.0.1/admin")
    assert audit("--write-baseline", "baseline.json", "urls.txt")[0] == 0
    write(urls, "https://10.0.0.1/admin", "https://192.168.1.1/")
    code, page, _ = audit("--baseline", "baseline.json", "--format", "html", "urls.txt")
    assert code == 1  # the new finding fails the run
    rows = {row.split("</tr>")[0] for row in page.split('<tr class="row ')[1:]}
    old = next(r for r in rows if "10.0.0.1" in r)
    new = next(r for r in rows if "192.168.1.1" in r)
    assert "(accepted by the baseline)" in old
    assert ">baseline</div>" in old
    assert "accepted by the baseline" not in new
    assert ">baseline</div>" not in new
    assert "1 URL occurrences with findings are accepted by the baseline" in page


def test_baseline_accepts_known_findings_even_after_lines_move(in_tmp: Path) -> None:
    urls = in_tmp / "urls.txt"
    write(urls, "https://example.com/", "https://10.0.0.1/admin", "http://intranet.corp/")
    code, out, _ = audit("--write-baseline", "baseline.json", "urls.txt")
    assert code == 0
    assert "baseline written with 3 findings" in out
    doc = json.loads((in_tmp / "baseline.json").read_text(encoding="utf-8"))
    assert doc["urlvet_baseline"] == 1
    assert {f["code"] for f in doc["findings"]} == {"UV201", "UV101", "UV203"}
    assert all(f["path"] == "urls.txt" for f in doc["findings"])

    # Lines shift: the same URLs, lower down, with others above. Still accepted.
    write(
        urls,
        "# reviewed 2026-01",
        "https://example.org/",
        "",
        "http://intranet.corp/",
        "https://example.com/",
        "https://10.0.0.1/admin",
    )
    code, out, _ = audit("--baseline", "baseline.json", "urls.txt")
    assert code == 0, out
    assert "2 URLs with findings accepted by the baseline" in out

    # A new finding fails the run, and is the only one listed.
    with urls.open("a", encoding="utf-8") as f:
        f.write("https://192.168.1.1/\n")
    code, out, _ = audit("--baseline", "baseline.json", "urls.txt")
    assert code == 1
    assert "192.168.1.1" in out
    assert "10.0.0.1" not in out.split("urlvet audit:")[0]


def test_baseline_is_per_file(in_tmp: Path) -> None:
    write(in_tmp / "a.urls", "https://10.0.0.1/")
    audit("--write-baseline", "b.json", "a.urls")
    write(in_tmp / "other.urls", "https://10.0.0.1/")
    assert audit("--baseline", "b.json", "a.urls")[0] == 0
    assert audit("--baseline", "b.json", "other.urls")[0] == 1


def test_baseline_ignores_rotating_secrets(in_tmp: Path) -> None:
    write(in_tmp / "a.urls", "https://10.0.0.1/cb?token=first-token-value")
    audit("--write-baseline", "b.json", "a.urls")
    assert "first-token-value" not in (in_tmp / "b.json").read_text(encoding="utf-8")
    write(in_tmp / "a.urls", "https://10.0.0.1/cb?token=second-token-value")
    assert audit("--baseline", "b.json", "a.urls")[0] == 0


def test_baseline_accepting_some_codes_still_fails_on_a_new_blocking_one(in_tmp: Path) -> None:
    write(in_tmp / "a.urls", "http://10.0.0.1/")
    audit("--ignore", "UV101", "--write-baseline", "b.json", "a.urls")
    # With UV101 (plaintext-http, high: blocks) back on, it is new beside the accepted UV201.
    code, out, _ = audit("--baseline", "b.json", "--format", "jsonl", "a.urls")
    assert code == 1
    assert json.loads(out)["accepted"] == ["UV201"]


def test_invalid_baseline_is_a_usage_error(in_tmp: Path) -> None:
    write(in_tmp / "a.urls", "https://example.com/")
    (in_tmp / "b.json").write_text('{"something": "else"}', encoding="utf-8")
    code, _, err = audit("--baseline", "b.json", "a.urls")
    assert code == 2
    assert "not a urlvet baseline" in err


# -- progress on a terminal ----------------------------------------------------------------------


def _urlvet() -> list[str]:
    exe = shutil.which("urlvet")
    return [exe] if exe else [sys.executable, "-m", "urlvet.cli"]


def test_progress_goes_to_a_terminal_stderr_and_stdout_stays_clean(tmp_path: Path) -> None:
    import pty

    lines = [f"https://svc{i % 300}.example.com/{i % 1000}" for i in range(20_000)]
    lines[5] = "https://10.0.0.1/"
    lines.insert(
        7, "https://bad\udcff.example/".encode("utf-8", "surrogateescape").decode("latin-1")
    )
    data = "\n".join(lines).encode("latin-1") + b"\n"
    path = tmp_path / "many.urls"
    path.write_bytes(data)

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*_urlvet(), "audit", "--no-dns", "--format", "json", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
        env={**os.environ, "NO_COLOR": "1"},
    )
    os.close(slave)
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    out, _ = proc.communicate(timeout=120)
    reader.join(timeout=10)
    os.close(master)
    terminal = b"".join(chunks).decode("utf-8", "replace")

    assert proc.returncode == 2  # the invalid line
    results = json.loads(out)  # stdout is exactly one JSON document
    assert sum(1 for r in results if r["type"] == "url") == 20_000
    assert "URLs" in terminal
    assert "\r" in terminal
    assert "invalid UTF-8" in terminal  # diagnostics too, on their own line
    assert "\x1b[K" in terminal  # and the line is cleared


def test_no_progress_when_stderr_is_not_a_terminal(in_tmp: Path) -> None:
    write(in_tmp / "a.urls", *[f"https://e{i}.example.com/" for i in range(5000)])
    code, _, err = audit("--format", "jsonl", "a.urls")
    assert (code, err) == (0, "")


# -- pre-commit ----------------------------------------------------------------------------------


def hooks() -> dict[str, dict[str, Any]]:
    data = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    return {h["id"]: h for h in data}


def test_pre_commit_hooks_are_offline_audit_and_policy_check() -> None:
    h = hooks()
    assert set(h) == {"urlvet-audit", "urlvet-policy"}
    for hook in h.values():
        assert {"id", "name", "entry", "language"} <= set(hook)
        re.compile(hook["files"])
    assert h["urlvet-audit"]["entry"].split()[:3] == ["urlvet", "audit", "--no-dns"]
    assert h["urlvet-policy"]["entry"] == "urlvet policy check"
    policy_files = re.compile(h["urlvet-policy"]["files"])
    assert policy_files.search("rules/strict.yaml")
    assert re.search(h["urlvet-policy"]["exclude"], "rules/strict.fixtures.yaml")
    assert re.compile(h["urlvet-audit"]["files"]).search("config/allowed-urls.txt")


def test_pre_commit_entries_run_as_pre_commit_runs_them(in_tmp: Path) -> None:
    h = hooks()
    write(in_tmp / "urls.txt", "https://example.com/")
    write(in_tmp / "more-urls.txt", "https://10.0.0.1/")
    entry = h["urlvet-audit"]["entry"].split()[1:]
    assert CliRunner().invoke(main, [*entry, "urls.txt"]).exit_code == 0
    assert CliRunner().invoke(main, [*entry, "urls.txt", "more-urls.txt"]).exit_code == 1
    policy_entry = h["urlvet-policy"]["entry"].split()[1:]
    result = CliRunner().invoke(main, [*policy_entry, "strict"])
    assert result.exit_code == 0
