"""Policies reviewed as code: `urlvet policy test`, `urlvet policy diff`, `urlvet check --explain`.

Run on the project's own rules/ and on a team's policy repository laid out in a temporary
directory (an organisation policy with feeds, a team policy that extends it with its own).
"""

from __future__ import annotations

import gzip
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from urlvet.cli import main

ROOT = Path(__file__).resolve().parents[1]
POLICIES_DIR = ROOT / "src" / "urlvet" / "policies"


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
        "  decision: allow\n"
        "- url: https://billing.example/pay\n"
        "  message: Sign in to paypal.com to continue\n"
        "  must: [message-names-another-site]\n",
    )
    (root / "default.yaml").write_text(
        (POLICIES_DIR / "default.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    return root


# -- urlvet policy test ---------------------------------------------------------------------------


def test_policy_test_runs_the_projects_own_rules() -> None:
    result = _run("policy", "test", str(POLICIES_DIR))
    assert result.exit_code == 0, result.output
    cases = sum(
        len(yaml.safe_load(p.read_text(encoding="utf-8")))
        for p in POLICIES_DIR.glob("*.fixtures.yaml")
    )
    assert result.stdout.strip().endswith(f"{cases} passed, 0 failed")
    assert "policies/default.fixtures.yaml" in result.stdout


def test_policy_test_on_a_team_repository(tmp_path: Path) -> None:
    repo = team_repo(tmp_path / "repo")
    result = _run("policy", "test", str(repo / "policies"))
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().endswith("8 passed, 0 failed")
    # A policy file given by name brings its fixtures.
    result = _run("policy", "test", str(repo / "policies/payments/payments.yaml"))
    assert (result.exit_code, result.stdout.strip().splitlines()[-1]) == (0, "4 passed, 0 failed")


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
    assert f"FAIL  {fixtures}:13: https://example.com/" in out
    assert "expected decision block, got allow" in out
    assert "expected UV208 to fire; fired: nothing" in out
    assert f"FAIL  {fixtures}:17: http://example.com/" in out
    assert "expected plaintext-http not to fire; fired: UV101" in out
    assert out.strip().endswith("8 passed, 2 failed")


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
    assert "8 passed, 1 failed" in result.stderr
    root = ET.fromstring(report.read_text(encoding="utf-8"))  # well-formed despite the NUL
    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "9", "1")
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


# -- urlvet policy diff ---------------------------------------------------------------------------


def test_policy_diff_on_the_projects_own_rules() -> None:
    result = _run(
        "policy", "diff", str(POLICIES_DIR / "default.yaml"), str(POLICIES_DIR / "strict.yaml")
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    # strict blocks what default warns about: a cross-site link, a public IP literal.
    assert "warn → block: " in out
    section = out.split("warn → block: ", 1)[1].split("\n\n", 1)[0]
    assert "https://8.8.8.8/" in section
    assert (
        "policies/strict.fixtures.yaml:" in section or "policies/default.fixtures.yaml:" in section
    )
    summary = out.strip().splitlines()[-1]
    assert summary.startswith("URLs vetted under both policies", summary.index(" ") + 1)
    data = json.loads(
        _run(
            "policy",
            "diff",
            "--format",
            "json",
            str(POLICIES_DIR / "default.yaml"),
            str(POLICIES_DIR / "strict.yaml"),
        ).stdout
    )
    assert data["transitions"]["warn → block"] >= 1
    assert data["changed"] == len(data["changes"]) == sum(data["transitions"].values())
    assert f"{data['vetted']} URLs vetted" in summary


def test_policy_diff_on_a_team_pull_request(tmp_path: Path) -> None:
    repo = team_repo(tmp_path / "repo")
    base = repo / "policies/payments/payments.yaml"
    proposed = _write(
        repo / "policies/payments/proposed.yaml",
        "extends: ../org.yaml\n"
        "thresholds: {warn: low, block: high}\n"  # relaxes block from medium to high
        "urls:\n  blocked_files: [feeds/phish.txt, feeds/more.txt]\n"
        "servers:\n  billing: {domains: [billing.example]}\n",
    )
    _write(repo / "policies/payments/feeds/more.txt", "https://example.com/new-phish\n")
    urls = _write(
        tmp_path / "urls.txt",
        "# seen in last week's logs\nhttps://example.com/new-phish\nhttps://8.8.8.8/\n"
        "https://example.com/\n",
    )
    result = _run("policy", "diff", str(base), str(proposed), str(urls), "--exit-code")
    assert result.exit_code == 1, result.output
    out = result.stdout
    toward_block, rest = out.split("\n\n", 1)
    assert toward_block.startswith("allow → block: 1")
    assert f"https://example.com/new-phish  [{urls}:2]" in toward_block
    assert "+UV211" in toward_block
    assert "on your blocklist feeds/more.txt, line 1" in toward_block
    assert "block → warn: 1" in rest
    assert f"https://8.8.8.8/  [{urls}:3]" in rest
    assert "https://example.com/  [" not in out  # unchanged URLs are not listed
    assert out.strip().endswith("changed: 1 allow → block, 1 block → warn")
    data = json.loads(
        _run("policy", "diff", "--format", "json", str(base), str(proposed), str(urls)).stdout
    )
    (added,) = [c for c in data["changes"] if c["added"] == ["UV211"]]
    assert added["findings"][0]["evidence"]["line"] == 1
    assert (added["old"]["decision"], added["new"]["decision"]) == ("allow", "block")
    # The base policy's fixtures (the proposal has none yet) and the URL file's three URLs.
    assert data["vetted"] == 4 + 3


def test_policy_diff_of_a_policy_with_itself_changes_nothing(tmp_path: Path) -> None:
    repo = team_repo(tmp_path / "repo")
    policy = str(repo / "policies/org.yaml")
    result = _run("policy", "diff", policy, policy, "--exit-code")
    assert result.exit_code == 0
    assert result.stdout.strip() == "4 URLs vetted under both policies; 0 changed"


def test_policy_diff_errors_exit_2(tmp_path: Path) -> None:
    _write(tmp_path / "p.yaml", "{}\n")
    assert (
        _run("policy", "diff", str(tmp_path / "p.yaml"), str(tmp_path / "none.yaml")).exit_code == 2
    )
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe")
    result = _run(
        "policy",
        "diff",
        str(tmp_path / "p.yaml"),
        str(tmp_path / "p.yaml"),
        str(tmp_path / "bin.txt"),
    )
    assert result.exit_code == 2
    assert "not UTF-8" in result.stderr


# -- urlvet check --explain -----------------------------------------------------------------------


def _explain(*args: str) -> str:
    result = _run("check", "--no-dns", "--explain", *args)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def test_explain_names_the_file_line_and_key_behind_each_finding(tmp_path: Path) -> None:
    repo = team_repo(tmp_path / "repo")
    org = repo / "policies/payments/../org.yaml"  # as `extends` names it
    payments = repo / "policies/payments/payments.yaml"
    out = _explain(
        "--policy", str(payments), "https://a.malware.example/", "https://example.com:8443/"
    )
    feed_line = (
        f"UV208: listed on line 3 of {repo / 'policies/payments/../../feeds/hosts.gz'}, a feed named by "
        f"domains.blocked_files ({org}:5)"
    )
    assert feed_line in out
    assert "UV208: severity critical, the rule's default" in out
    assert (
        f"decision: block: the most serious finding is critical, at or above thresholds.block = medium ({payments}:2)"
        in out
    )
    # UV107 is set to info in the parent; the child's thresholds decide.
    assert f"UV107: severity info, set by severity.UV107 ({org}:10)" in out
    assert (
        f"allow: the most serious finding is info, below thresholds.warn = low ({payments}:2)"
        in out
    )


def test_explain_names_what_was_ignored_and_allowed(tmp_path: Path) -> None:
    _write(tmp_path / "drop.txt", "203.0.113.0/24\n")
    policy = _write(
        tmp_path / "team.yaml",
        "ignore:\n  - UV107\n  - UV205\n"
        "domains:\n  allowed:\n    - corp.example\n    - wiki.lan\n"
        "networks:\n  allowed: [10.0.0.0/8]\n  blocked_files: [drop.txt]\n",
    )
    out = _explain(
        "--policy",
        str(policy),
        "https://8.8.8.8/",
        "https://wiki.lan/",
        "https://10.1.2.3/",
        "https://203.0.113.5/",
    )
    assert (
        f"ignored: UV205 public-address-literal [medium] would fire; turned off by ignore: UV205 "
        f"({policy}:3)"
    ) in out
    assert (
        f"allowed: UV203 internal-name [high] would fire; lifted by domains.allowed wiki.lan ({policy}:7)"
        in out
    )
    assert f"lifted by networks.allowed 10.0.0.0/8 ({policy}:9)" in out
    assert "UV207: listed on line 1 of" in out
    assert f"a feed named by networks.blocked_files ({policy}:10)" in out
    assert "decision: allow: no findings" in out


def test_explain_with_the_built_in_policy_and_command_line_options() -> None:
    out = _explain("--ignore", "UV205", "https://8.8.8.8/", "http://example.com/")
    assert "turned off by --ignore UV205 on the command line" in out
    assert (
        "decision: block: the most serious finding is high, at or above thresholds.block = "
        "high (built-in default)"
    ) in out


def test_explain_in_json(tmp_path: Path) -> None:
    policy = _write(tmp_path / "team.yaml", "severity:\n  plaintext-http: medium\n")
    result = _run(
        "check",
        "--no-dns",
        "--explain",
        "--format",
        "json",
        "--policy",
        str(policy),
        "http://example.com/",
    )
    (item,) = json.loads(result.stdout)
    (why,) = item["explain"]["findings"]
    assert why == {
        "code": "UV101",
        "severity": f"severity medium, set by severity.plaintext-http ({policy}:2)",
        "matched": [],
    }
    assert item["explain"]["decision"].startswith("warn: the most serious finding is medium")


def test_explain_names_a_select_that_leaves_a_rule_out(tmp_path: Path) -> None:
    policy = _write(tmp_path / "team.toml", 'select = ["UV1"]\n')
    out = _explain("--policy", str(policy), "https://8.8.8.8/")
    assert (
        f"UV205 public-address-literal [medium] would fire; turned off by select: UV1 ({policy}:1)"
        in out
    )
    out = _explain("--select", "UV1,UV4", "https://8.8.8.8/")
    assert "turned off by --select UV1,UV4 on the command line" in out


def test_junit_report_of_a_broken_file_is_an_error_element(tmp_path: Path) -> None:
    _write(tmp_path / "p.yaml", "{}\n")
    _write(tmp_path / "p.fixtures.yaml", "- url: https://x.example/\n  must: [UV999]\n")
    result = _run("policy", "test", "--format", "junit", str(tmp_path))
    assert result.exit_code == 2
    root = ET.fromstring(result.stdout)
    assert (root.get("tests"), root.get("errors"), root.get("failures")) == ("1", "1", "0")
    error = root.find("testsuite/testcase/error")
    assert error is not None
    assert "must: unknown rule code, prefix or name 'UV999'" in (error.get("message") or "")
