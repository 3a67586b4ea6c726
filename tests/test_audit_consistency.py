"""An audit's report does not depend on how it was run: one process or several, shortcuts on
or off, the working directory the policy was named from, --server-name with or without
--server."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from urlvet.audit import AuditOptions
from urlvet.audit.command import AuditRun, run_audit
from urlvet.cli import main
from urlvet.policy import Policy, load_policy

OFFLINE = Policy(dns={"enabled": False})
SRC = Path(__file__).resolve().parent.parent / "src"


def _lines() -> list[str]:
    lines: list[str] = []
    for i in range(2000):
        lines.append(f"http://10.0.0.{i % 3}/a")  # plain: its records are cut from a template
        lines.append(f"https://h{i}.example/p")
        lines.append(f"https://h{i % 7}.example/q?next=http://10.0.0.9/")
    return lines


def _report(policy: Policy, path: Path, *, jobs: int, cache_size: int) -> str:
    out = io.BytesIO()
    options = AuditOptions(jobs=jobs, cache_size=cache_size)
    run_audit(
        policy, AuditRun(paths=[str(path)], progress=False, options=options), out, io.StringIO()
    )
    return out.getvalue().decode("utf-8")


def _counts(report: str) -> dict[str, int]:
    """Each listed URL with its "(N times)" (1 when the report gives no count)."""
    counts: dict[str, int] = {}
    url = None
    for line in report.splitlines():
        head = re.match(r"^(?:BLOCK|WARN )\s+(\S+)", line)
        if head:
            url = head.group(1)
            counts[url] = 1
        times = re.search(r"\(([0-9,]+) times\)$", line)
        if times and url is not None:
            counts[url] = int(times.group(1).replace(",", ""))
    return counts


def test_the_text_reports_counts_are_those_of_the_input_however_it_is_run(tmp_path: Path) -> None:
    lines = _lines()
    path = tmp_path / "in.urls"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    truth = Counter(lines)
    # A small record cache, so that records of one URL are made again, cut from templates.
    one = _counts(_report(OFFLINE, path, jobs=1, cache_size=4))
    two = _counts(_report(OFFLINE, path, jobs=2, cache_size=4))
    reference = subprocess.run(
        [sys.executable, "-m", "urlvet", "audit", "--no-dns", "--no-progress", str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "URLVET_MEMOS": "off", "PYTHONPATH": str(SRC)},
        check=False,
    )
    assert reference.returncode == 1, reference.stderr
    without_shortcuts = _counts(reference.stdout)
    assert one == two == without_shortcuts
    assert one == {url: truth[url] for url in one}
    assert one["http://10.0.0.0/a"] == 667


def test_audit_takes_server_name_without_server_as_a_named_stdio_server(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "dns: {enabled: false}\nservers: {github: {domains: [github.com]}}\n", encoding="utf-8"
    )
    urls = tmp_path / "one.urls"
    urls.write_text("https://evil.example/login\n", encoding="utf-8")
    args = ["--policy", str(policy), "--server-name", "github", "--format"]
    check = CliRunner().invoke(main, ["check", *args, "json", "https://evil.example/login"])
    audit = CliRunner().invoke(main, ["audit", *args, "jsonl", "--no-progress", str(urls)])
    (checked,) = json.loads(check.stdout)
    (audited,) = [json.loads(line) for line in audit.stdout.splitlines()]
    assert [f["code"] for f in checked["findings"]] == ["UV405"]
    assert [f["code"] for f in audited["findings"]] == ["UV405"]
    assert audited["server"] == checked["server"] == "github (stdio)"
    assert audit.exit_code == check.exit_code


def test_feed_paths_reach_pool_workers_that_run_in_another_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pol" / "feeds").mkdir(parents=True)
    (tmp_path / "pol" / "feeds" / "bad.txt").write_text("evil.example\n", encoding="utf-8")
    (tmp_path / "pol" / "p.yaml").write_text(
        "dns: {enabled: false}\ndomains: {blocked_files: [feeds/bad.txt]}\n", encoding="utf-8"
    )
    urls = tmp_path / "in.urls"
    urls.write_text(
        "".join(f"https://h{i}.example/\nhttps://evil.example/{i}\n" for i in range(500)),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    policy = load_policy("pol/p.yaml")  # named relative to this directory
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the workers start here
    report = _report(policy, urls, jobs=2, cache_size=1024)
    assert _counts(report) == {f"https://evil.example/{i}": 1 for i in range(500)}
    assert "UV208" in report
