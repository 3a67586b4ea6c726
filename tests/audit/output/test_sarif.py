"""SARIF output: valid against the OASIS SARIF 2.1.0 schema, and what code scanning needs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from support.corpora import CORPORA
from urlvet.checks import registry
from urlvet.cli import main

SCHEMA_PATH = CORPORA / "sarif" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def sarif(*args: str, stdin: bytes | None = None) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(
        main, ["audit", "--no-dns", "--format", "sarif", *args], input=stdin
    )
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, json.loads(result.stdout)


def results(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["runs"][0]["results"]  # type: ignore[no-any-return]


def test_sarif_is_valid_for_every_input_kind_and_broken_input(
    in_tmp: Path, validator: jsonschema.protocols.Validator
) -> None:
    (in_tmp / "sub dir").mkdir()
    (in_tmp / "sub dir" / "ünï urls.txt").write_text(
        "https://example.com/\nhttps://10.0.0.1/?token=s3cr3tvalue\njavascript:alert(1)\n",
        encoding="utf-8",
    )
    (in_tmp / "t.jsonl").write_text(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "elicitation/create",
                "params": {"mode": "url", "url": "https://169.254.169.254/", "message": "m"},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    (in_tmp / "app.log").write_text("x → http://intranet.corp/ y\n", encoding="utf-8")
    (in_tmp / "bad.txt").write_bytes(b"https://example.com/\n\xff\xfe bad\n")
    (in_tmp / "bin.dat").write_bytes(b"\x00\x01\x02")
    code, doc = sarif(
        "sub dir", "t.jsonl", "app.log", "bad.txt", "bin.dat", "-", stdin=b"https://10.1.1.1/\n"
    )
    validator.validate(doc)
    assert code == 2
    run = doc["runs"][0]
    assert doc["version"] == "2.1.0"
    assert run["columnKind"] == "unicodeCodePoints"
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results(doc)}
    assert "sub%20dir/%C3%BCn%C3%AF%20urls.txt" in uris
    assert {"t.jsonl", "app.log", "%3Cstdin%3E"} <= uris
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert {n["descriptor"]["id"] for n in notes} == {"invalid-utf8", "binary-file"}
    assert run["invocations"][0]["executionSuccessful"] is False


def test_sarif_rules_carry_descriptions_help_and_levels(
    in_tmp: Path, validator: jsonschema.protocols.Validator
) -> None:
    (in_tmp / "a.urls").write_text("https://10.0.0.1/\n", encoding="utf-8")
    _, doc = sarif("a.urls")
    validator.validate(doc)
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["name"] == "urlvet"
    assert driver["version"]
    rules = driver["rules"]
    assert [r["id"] for r in rules] == list(registry.rules())
    for r in rules:
        assert r["shortDescription"]["text"]
        assert r["fullDescription"]["text"]
        assert r["help"]["markdown"].startswith(f"# {r['id']} ")
        assert "## Why is this bad?" in r["help"]["markdown"]
        assert r["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert 0 <= float(r["properties"]["security-severity"]) <= 10
    uv201 = next(r for r in rules if r["id"] == "UV201")
    assert "external/cwe/cwe-918" in uv201["properties"]["tags"]
    (res,) = results(doc)
    assert rules[res["ruleIndex"]]["id"] == res["ruleId"] == "UV201"


def test_sarif_levels_follow_the_policy(in_tmp: Path) -> None:
    # UV401 is medium: it warns, so "warning"; UV201 blocks, so "error".
    (in_tmp / "a.urls").write_text(
        "https://docs.python.org/\nhttps://10.0.0.1/\n", encoding="utf-8"
    )
    _, doc = sarif("--server", "https://mcp.example.com/", "a.urls")
    levels = {r["ruleId"]: r["level"] for r in results(doc)}
    assert levels["UV401"] == "warning"
    assert levels["UV201"] == "error"


def test_sarif_locations_are_1_based_code_points_with_snippet(in_tmp: Path) -> None:
    line = "日本語のログ: https://10.0.0.1/x?password=hunter22 end"
    (in_tmp / "app.log").write_text("first\n" + line + "\n", encoding="utf-8")
    _, doc = sarif("app.log")
    res = results(doc)[0]
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "app.log", "uriBaseId": "%SRCROOT%"}
    region = loc["region"]
    start = line.index("https") + 1
    assert region["startLine"] == 2
    assert region["startColumn"] == start
    assert region["endColumn"] == start + len("https://10.0.0.1/x?password=hunter22")
    assert region["snippet"]["text"] == "https://10.0.0.1/x?password=REDACTED"
    assert "hunter22" not in json.dumps(doc)
    assert doc["runs"][0]["redactionTokens"] == ["REDACTED"]


def test_fingerprints_ignore_the_line_and_follow_rule_and_url(in_tmp: Path) -> None:
    path = in_tmp / "a.urls"
    path.write_text("https://10.0.0.1/\nhttps://10.0.0.2/\n", encoding="utf-8")
    _, before = sarif("a.urls")
    path.write_text("# moved\n\nhttps://10.0.0.2/\nhttps://10.0.0.1/\n", encoding="utf-8")
    _, after = sarif("a.urls")

    def by_url(doc: dict[str, Any]) -> dict[str, str]:
        return {r["properties"]["url"]: r["partialFingerprints"]["urlvet/v1"] for r in results(doc)}

    assert by_url(before) == by_url(after)
    assert len(set(by_url(before).values())) == 2


def test_absolute_paths_outside_the_working_directory_are_file_uris(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, validator: jsonschema.protocols.Validator
) -> None:
    (tmp_path / "elsewhere").mkdir()
    target = tmp_path / "elsewhere" / "a.urls"
    target.write_text("https://10.0.0.1/\n", encoding="utf-8")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    _, doc = sarif(str(target))
    validator.validate(doc)
    location = results(doc)[0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": target.as_uri()}


def test_baseline_state_is_set_with_a_baseline(
    in_tmp: Path, validator: jsonschema.protocols.Validator
) -> None:
    (in_tmp / "a.urls").write_text("https://10.0.0.1/\n", encoding="utf-8")
    CliRunner().invoke(main, ["audit", "--no-dns", "--write-baseline", "b.json", "a.urls"])
    (in_tmp / "a.urls").write_text("https://10.0.0.1/\nhttps://10.0.0.9/\n", encoding="utf-8")
    code, doc = sarif("--baseline", "b.json", "a.urls")
    validator.validate(doc)
    assert code == 1
    assert [r["baselineState"] for r in results(doc)] == ["unchanged", "new"]


def test_empty_audit_is_a_valid_sarif_log(
    in_tmp: Path, validator: jsonschema.protocols.Validator
) -> None:
    (in_tmp / "a.urls").write_text("", encoding="utf-8")
    code, doc = sarif("a.urls")
    validator.validate(doc)
    assert (code, results(doc)) == (0, [])
