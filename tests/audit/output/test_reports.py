"""The text report and the json/jsonl writers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from urlvet.audit.output import text as text_module
from urlvet.cli import main


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def audit(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["audit", "--no-dns", *args])
    return result.exit_code, result.stdout


def test_text_groups_occurrences_by_url_and_summarises(in_tmp: Path) -> None:
    lines = ["https://10.0.0.1/"] * 8 + ["https://example.com/", "http://intranet.corp/"]
    (in_tmp / "a.urls").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out = audit("a.urls")
    assert code == 1
    blocks = out.split("\n\n")
    assert blocks[0].startswith(
        "BLOCK  https://10.0.0.1/\n  UV201 non-public-address-literal [critical]:"
    )
    assert (
        "at a.urls:1:1, a.urls:2:1, a.urls:3:1, a.urls:4:1, a.urls:5:1 … and 3 more (8 times)"
        in blocks[0]
    )
    assert blocks[1].startswith("BLOCK  http://intranet.corp/")
    assert "urlvet audit: 10 URLs in 1 file, 10 lines; 3 vetted (distinct)" in out
    table = out[out.index("decision") :]
    assert "block            9" in table
    assert "allow            1" in table
    assert "UV201  non-public-address-literal" in table
    assert "\x1b[" not in out  # no colour when stdout is not a terminal


def test_text_groups_are_capped(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_module, "MAX_GROUPS", 5)
    (in_tmp / "a.urls").write_text(
        "".join(f"https://10.0.0.{i}/\n" for i in range(20)), encoding="utf-8"
    )
    _, out = audit("a.urls")
    assert out.count("\nBLOCK  ") + out.startswith("BLOCK  ") == 5
    assert "… and 15 more URLs with findings, not listed" in out


def test_text_shows_hidden_characters_visibly(in_tmp: Path) -> None:
    (in_tmp / "a.urls").write_text("https://example.com/\u202egnp.exe\n", encoding="utf-8")
    _, out = audit("a.urls")
    assert "\u202e" not in out
    assert "<U+202E>" in out


def test_jsonl_object_has_location_and_verdict(in_tmp: Path) -> None:
    (in_tmp / "a.urls").write_text("  https://10.0.0.1/\n", encoding="utf-8")
    _, out = audit("--format", "jsonl", "a.urls")
    obj = json.loads(out)
    assert {k: obj[k] for k in ("type", "path", "line", "column", "input", "url", "decision")} == {
        "type": "url",
        "path": "a.urls",
        "line": 1,
        "column": 3,
        "input": "url-list",
        "url": "https://10.0.0.1/",
        "decision": "block",
    }
    assert obj["findings"][0]["code"] == "UV201"
    assert {"href", "host", "host_kind", "registrable_domain", "server"} <= set(obj)
    assert "accepted" not in obj


def test_json_is_one_array_of_the_jsonl_objects(in_tmp: Path) -> None:
    (in_tmp / "a.urls").write_text("https://10.0.0.1/\nhttps://example.com/\n", encoding="utf-8")
    _, lines = audit("--format", "jsonl", "a.urls")
    _, array = audit("--format", "json", "a.urls")
    assert json.loads(array) == [json.loads(line) for line in lines.splitlines()]


def corpus_cases() -> list[dict[str, object]]:
    root = Path(__file__).resolve().parents[3] / "corpus"
    cases = []
    for path in sorted(root.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.strip():
                cases.append(json.loads(line))
    return cases


def test_record_json_equals_the_verdicts_own_json_on_the_corpus() -> None:
    from urlvet.audit.output.record import record_from_verdict
    from urlvet.engine import Vetter
    from urlvet.policy import Policy

    vetter = Vetter(Policy(dns={"enabled": False}))
    cases = corpus_cases()
    assert cases
    for case in cases:
        verdict = vetter.vet_offline(
            str(case["url"]),
            case.get("server"),
            message=case.get("message"),  # type: ignore[arg-type]
        )
        record = record_from_verdict(verdict, redact_secrets=False)
        assert json.loads("{" + record.json + "}") == verdict.to_json_dict()
        # Byte for byte as json.dumps writes the verdict's own JSON.
        assert record.json == _dumps(verdict.to_json_dict())[1:-1]


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def test_record_json_is_the_verdicts_with_tls_facts_non_ascii_and_evidence() -> None:
    from urlvet.audit.output.record import record_from_verdict
    from urlvet.findings import Decision, Finding, Severity, TlsFacts, Verdict

    finding = Finding(
        code="UV601",
        name="tls-untrusted-certificate",
        severity=Severity.HIGH,
        message='the certificate of b\u00fccher.example is not trusted "here"',
        evidence={"names": ["a", "\u00e9"], "depth": 2, "nested": {"ok": None, "x": 1.5}},
        cwe=295,
    )
    verdict = Verdict(
        url="https://bücher.example/\u2028",
        href="https://xn--bcher-kva.example/%E2%80%A8",
        decision=Decision.BLOCK,
        findings=(finding, finding.model_copy(update={"cwe": None, "evidence": {}})),
        host="xn--bcher-kva.example",
        host_unicode="bücher.example",
        host_kind="domain",
        registrable_domain="xn--bcher-kva.example",
        server="stdio",
        tls=TlsFacts(address="192.0.2.1", port=443, host="bücher.example", status="untrusted"),
    )
    record = record_from_verdict(verdict, redact_secrets=False)
    assert record.json == _dumps(verdict.to_json_dict())[1:-1]
