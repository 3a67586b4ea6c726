"""Policies reviewed as code: `urlvet policy test`, `urlvet policy diff`, `urlvet check --explain`.

Run on the project's own rules/ and on a team's policy repository laid out in a temporary
directory (an organisation policy with feeds, a team policy that extends it with its own).
"""

from __future__ import annotations

import gzip
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from urlvet.cli import main

ROOT = Path(__file__).resolve().parents[1]
RULES_DIR = ROOT / "rules"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def team_repo(root: Path) -> Path:
    """A security team's policy repository: org policy + feeds, a team policy extending it."""
    (root / "feeds").mkdir(parents=True)
    (root / "feeds/hosts.gz").write_bytes(
        gzip.compress(b"# org hosts blocklist\n0.0.0.0 tracker.example\n0.0.0.0 malware.example\n")
    )
    _write(root / "feeds/drop.txt", "; DROP\n203.0.113.0/24 ; SBL1\n")
    _write(
        root / "policies/org.yaml",
        "# Organisation policy\n"
        "extends: ../default.yaml\n"
        "domains:\n"
        "  blocked_files:\n"
        "    - ../feeds/hosts.gz\n"
        "  allowed: [corp.example]\n"
        "networks:\n"
        "  blocked_files: [../feeds/drop.txt]\n"
        "severity:\n"
        "  UV107: info\n",
    )
    _write(
        root / "policies/org.fixtures.yaml",
        "- url: https://malware.example/dl\n"
        "  must: [UV208]\n"
        "  decision: block\n"
        "- url: https://203.0.113.7/\n"
        "  must: [blocked-network]\n"
        "  must_not: [UV205]\n"
        "  decision: block\n"
        "- url: https://wiki.corp.example/\n"
        "  must_not: [UV2]\n"
        "  decision: allow\n"
        "- url: https://example.com:8443/\n"
        "  must: [UV107]\n"
        "  decision: allow\n",
    )
    _write(root / "policies/payments/feeds/phish.txt", "# OpenPhish\nhttps://pay.example/login\n")
    _write(
        root / "policies/payments/payments.yaml",
        "extends: ../org.yaml\n"
        "thresholds: {warn: low, block: medium}\n"
        "urls:\n"
        "  blocked_files: [feeds/phish.txt]\n"
        "servers:\n"
        "  billing: {domains: [billing.example]}\n",
    )
    _write(
        root / "policies/payments/payments.fixtures.yaml",
        "- url: https://pay.example/login#x\n"
        "  must: [UV211]\n"
        "  decision: block\n"
        "- url: https://tracker.example/\n"
        "  must: [UV208]\n"
        "  decision: block\n"
        "- url: https://billing.example/invoice\n"
        "  server_name: billing\n"
        "  decision: allow\n",
    )
    (root / "default.yaml").write_text(
        (RULES_DIR / "default.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    return root


# -- urlvet policy test ---------------------------------------------------------------------------


def test_policy_test_runs_the_projects_own_rules() -> None:
    result = _run("policy", "test", str(RULES_DIR))
    assert result.exit_code == 0, result.output
    cases = sum(
        len(yaml.safe_load(p.read_text(encoding="utf-8")))
        for p in RULES_DIR.glob("*.fixtures.yaml")
    )
    assert result.stdout.strip().endswith(f"{cases} passed, 0 failed")
    assert "rules/default.fixtures.yaml" in result.stdout


def test_policy_test_on_a_team_repository(tmp_path: Path) -> None:
    repo = team_repo(tmp_path / "repo")
    result = _run("policy", "test", str(repo / "policies"))
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().endswith("7 passed, 0 failed")
    # A policy file given by name brings its fixtures.
    result = _run("policy", "test", str(repo / "policies/payments/payments.yaml"))
    assert (result.exit_code, result.stdout.strip().splitlines()[-1]) == (0, "3 passed, 0 failed")


def test_a_failing_case_names_file_and_line_and_what_came_out(tmp_path: Path) -> None:
    repo = team_repo(tmp_path / "repo")
    fixtures = repo / "policies/payments/payments.fixtures.yaml"
    fixtures.write_text(
        fixtures.read_text(encoding="utf-8")
        + "- url: https://example.com/\n  must: [UV208]\n  must_not: [UV1]\n"
        "  decision: block\n"
        "- url: http://example.com/\n  must_not: [plaintext-http]\n",
        encoding="utf-8",
    )
    result = _run("policy", "test", str(repo / "policies"))
    assert result.exit_code == 1
    out = result.stdout
    assert f"FAIL  {fixtures}:10: https://example.com/" in out
    assert "expected decision block, got allow" in out
    assert "expected UV208 to fire; fired: nothing" in out
    assert f"FAIL  {fixtures}:14: http://example.com/" in out
    assert "expected plaintext-http not to fire; fired: UV101" in out
    assert out.strip().endswith("7 passed, 2 failed")


def test_junit_report(tmp_path: Path) -> None:
    repo = team_repo(tmp_path / "repo")
    fixtures = repo / "policies/org.fixtures.yaml"
    fixtures.write_text(
        fixtures.read_text(encoding="utf-8")
        + '- url: "https://example.com/\\u0000\\u202e"\n  decision: allow\n',
        encoding="utf-8",
    )
    report = tmp_path / "report.xml"
    result = _run("policy", "test", "--format", "junit", "-o", str(report), str(repo))
    assert result.exit_code == 1
    assert "7 passed, 1 failed" in result.stderr
    root = ET.fromstring(report.read_text(encoding="utf-8"))  # well-formed despite the NUL
    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "8", "1")
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    org = suites[str(fixtures)]
    (failed,) = [c for c in org.iter("testcase") if c.find("failure") is not None]
    assert failed.get("line") == "14"
    failure = failed.find("failure")
    assert failure is not None
    assert "expected decision allow, got block" in (failure.get("message") or "")
    assert "\\u0000" in (failed.get("name") or "")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- url: https://x.example/\n  decision: maybe\n", ":2: decision: must be allow"),
        ("- url: https://x.example/\n  must: [UV999]\n", ":2: must: unknown rule code"),
        ("- url: https://x.example/\n  expect: block\n", ":2: unknown key 'expect'"),
        ("- url: https://x.example/\n", ":1: the case expects nothing"),
        ("- url: [a\n", "invalid YAML"),
        ("url: https://x.example/\n", ":1: a fixtures file is a list of cases"),
        ("- url: https://x.example/\n  server: ftp://x\n  decision: allow\n", ":2: server:"),
    ],
)
def test_a_broken_fixtures_file_exits_2(tmp_path: Path, text: str, message: str) -> None:
    _write(tmp_path / "p.yaml", "{}\n")
    _write(tmp_path / "p.fixtures.yaml", text)
    _write(tmp_path / "ok.yaml", "{}\n")
    _write(tmp_path / "ok.fixtures.yaml", "- url: https://example.com/\n  decision: allow\n")
    result = _run("policy", "test", str(tmp_path))
    assert result.exit_code == 2, result.output
    assert message in result.stdout
    assert result.stdout.strip().endswith("1 passed, 0 failed, 1 broken file")


def test_a_broken_policy_or_feed_exits_2(tmp_path: Path) -> None:
    _write(tmp_path / "p.yaml", "domains: {blocked_files: [f.txt]}\n")
    _write(tmp_path / "f.txt", "good.example\nnot a domain\n")
    _write(tmp_path / "p.fixtures.yaml", "- url: https://example.com/\n  decision: allow\n")
    result = _run("policy", "test", str(tmp_path / "p.fixtures.yaml"))
    assert result.exit_code == 2
    assert f"{tmp_path / 'f.txt'}:2:" in result.stdout


def test_fixtures_without_a_policy_and_paths_without_fixtures_exit_2(tmp_path: Path) -> None:
    _write(tmp_path / "lonely.fixtures.yaml", "- url: https://example.com/\n  decision: allow\n")
    result = _run("policy", "test", str(tmp_path / "lonely.fixtures.yaml"))
    assert result.exit_code == 2
    assert "no policy file lonely.yaml" in result.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _run("policy", "test", str(empty)).exit_code == 2
