"""Our labelled corpus (corpus/*.jsonl) and `urlvet eval`: no figure may drop below the one
committed in corpus/thresholds.json, and every rule has cases where it must and must not fire."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from urlvet import evaluate
from urlvet.checks import registry
from urlvet.cli import main
from urlvet.errors import InputError
from urlvet.findings import Decision

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpus"
FILES = sorted(CORPUS.glob("*.jsonl"))
THRESHOLDS = json.loads((CORPUS / "thresholds.json").read_text(encoding="utf-8"))

# Rules no corpus case can make fire, and why. Keep this list short and explained.
NO_FIRING_CASE = {
    "UV224": "a DNS timeout needs a nameserver that never answers; tests/test_resolve.py "
    "covers it against a black hole",
    **dict.fromkeys(
        ("UV601", "UV602", "UV603", "UV604", "UV605", "UV606", "UV607"),
        "the TLS probe needs live servers: tests/test_tls.py runs it against real TLS servers "
        "on loopback",
    ),
}
# Rules that read no URL, so that the URL corpus has no case for them either way.
NOT_ABOUT_URLS = dict.fromkeys(
    ("UV701", "UV702", "UV703", "UV704", "UV705", "UV706", "UV710"),
    "the interaction rules read a form or the client's capabilities, never a URL: "
    "tests/checks/test_interaction.py and tests/test_mcp_interaction.py have their tables",
)


@pytest.fixture(scope="module")
def cases() -> list[evaluate.Case]:
    return evaluate.load_cases(FILES)


@pytest.fixture(scope="module")
def offline_report(cases: list[evaluate.Case]) -> evaluate.Report:
    return evaluate.evaluate(cases)


def test_corpus_has_several_hundred_cases_in_family_files(cases: list[evaluate.Case]) -> None:
    assert len(cases) >= 600
    families = {c.family for c in cases}
    assert {"transport", "addresses", "lookalike", "server", "benign", "message", "dns"} <= families
    for c in cases:
        assert c.family == Path(c.source.rsplit(":", 1)[0]).stem, c.source
        assert c.note, f"{c.source}: every case says why its label is what it is"


def test_every_rule_has_a_firing_and_a_not_firing_case(cases: list[evaluate.Case]) -> None:
    gaps = evaluate.coverage_gaps(cases)
    assert set(gaps["firing"]) == set(NO_FIRING_CASE) | set(NOT_ABOUT_URLS), gaps["firing"]
    assert set(gaps["not_firing"]) == set(NOT_ABOUT_URLS), gaps["not_firing"]
    assert set(NO_FIRING_CASE) | set(NOT_ABOUT_URLS) <= set(registry.rules())
    assert all(registry.rules()[c].kind == "interaction" for c in NOT_ABOUT_URLS)


def test_benign_cases_expect_allow(cases: list[evaluate.Case]) -> None:
    assert all(c.decision is Decision.ALLOW for c in cases if c.family == "benign")


def test_offline_figures_do_not_drop_below_committed(offline_report: evaluate.Report) -> None:
    dropped = evaluate.regressions(offline_report.figures(), THRESHOLDS)
    assert not dropped, "\n".join(dropped) + "\n\n" + evaluate.render_text(offline_report)


def test_offline_evaluation_skips_only_dns_cases(offline_report: evaluate.Report) -> None:
    assert offline_report.skipped
    assert all(c.dns for c in offline_report.skipped)
    assert all(not o.case.dns for o in offline_report.outcomes)


@pytest.mark.dns
def test_dns_family_against_the_test_zone(cases: list[evaluate.Case], nsd: tuple[str, int]) -> None:
    host, port = nsd
    report = evaluate.evaluate(cases, dns=True, nameservers=[f"{host}:{port}"])
    assert not report.skipped
    assert "dns" in report.families
    dropped = evaluate.regressions(report.figures(), THRESHOLDS)
    assert not dropped, "\n".join(dropped) + "\n\n" + evaluate.render_text(report)


def test_figures_are_consistent(offline_report: evaluate.Report) -> None:
    confusion = offline_report.confusion
    assert sum(sum(row.values()) for row in confusion.values()) == len(offline_report.outcomes)
    assert sum(confusion[d.value][d.value] for d in Decision) == sum(
        o.decision_ok for o in offline_report.outcomes
    )
    figures = offline_report.figures()
    assert 0.0 <= figures["block_precision"] <= 1.0
    assert set(figures["families"]) == set(offline_report.families)


def test_code_specs_match_prefixes_and_alternatives(tmp_path: Path) -> None:
    f = tmp_path / "t.jsonl"
    f.write_text(
        json.dumps(
            {
                "url": "https://pаypal.com/",
                "decision": "block",
                "codes": ["UV3", "UV999|UV302"],
                "absent": ["UV1", "UV2"],
                "note": "homoglyph",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    report = evaluate.evaluate(evaluate.load_cases([f]))
    (outcome,) = report.outcomes
    assert outcome.codes_ok, outcome
    assert outcome.case.family == "t"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "invalid JSON"),
        ('["a list"]', "must be a JSON object"),
        ('{"url": "https://a.example/", "decision": "maybe"}', "'decision'"),
        ('{"url": 5, "decision": "allow"}', "'url' must be a string"),
        ('{"url": "https://a.example/", "decision": "allow", "colour": 1}', "unknown key 'colour'"),
        ('{"url": "https://a.example/", "decision": "allow", "codes": ["X1"]}', "'codes'"),
        ('{"url": "https://a.example/", "decision": "allow", "policy": []}', "'policy'"),
        ("[" * 100_000, "invalid JSON"),
    ],
)
def test_a_broken_case_is_an_error_naming_file_and_line(
    tmp_path: Path, line: str, message: str
) -> None:
    f = tmp_path / "broken.jsonl"
    f.write_text('{"url": "https://a.example/", "decision": "allow"}\n' + line + "\n", "utf-8")
    with pytest.raises(InputError) as err:
        evaluate.load_cases([f])
    assert f"{f}:2:" in str(err.value)
    assert message in str(err.value)


def test_an_invalid_case_policy_or_server_is_an_error(tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    f.write_text(
        '{"url": "https://a.example/", "decision": "allow", "policy": {"colour": 1}}\n', "utf-8"
    )
    with pytest.raises(InputError, match=r"p\.jsonl:1: invalid 'policy'"):
        evaluate.evaluate(evaluate.load_cases([f]))
    f.write_text(
        '{"url": "https://a.example/", "decision": "allow", "server": "ftp://x"}\n', "utf-8"
    )
    with pytest.raises(InputError, match=r"p\.jsonl:1: server URL"):
        evaluate.evaluate(evaluate.load_cases([f]))


def test_eval_command_prints_the_tables() -> None:
    result = CliRunner().invoke(main, ["eval", *map(str, FILES)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "block precision" in out
    assert "recall" in out
    assert "confusion (rows: expected, columns: urlvet)" in out
    for family in ("transport", "addresses", "lookalike", "server", "benign"):
        assert family in out


def test_eval_command_json_and_thresholds(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        main, ["eval", "--format", "json", "--thresholds", str(CORPUS / "thresholds.json")]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["regressions"] == []
    assert set(data["confusion"]) == {"allow", "warn", "block"}
    impossible = tmp_path / "t.json"
    impossible.write_text(json.dumps({"decision_agreement": 1.01, "families": {"benign": 1.01}}))
    result = runner.invoke(main, ["eval", "--no-misses", "--thresholds", str(impossible)])
    assert result.exit_code == 1
    assert "regression: decision_agreement" in result.stderr
    assert "regression: family benign" in result.stderr


def test_eval_command_write_thresholds_keeps_families_not_run(tmp_path: Path) -> None:
    out = tmp_path / "thresholds.json"
    out.write_text(json.dumps({"families": {"dns": 0.5, "benign": 0.1}}))
    result = CliRunner().invoke(
        main, ["eval", "--no-misses", "--write-thresholds", str(out), str(CORPUS / "benign.jsonl")]
    )
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())
    assert written["families"]["dns"] == 0.5
    assert written["families"]["benign"] > 0.1


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "/nonexistent/cases.jsonl"],
        ["eval", "--policy", "/nonexistent/policy.yaml"],
        ["eval", "--thresholds", "/nonexistent/thresholds.json"],
    ],
)
def test_eval_command_input_errors_exit_2(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "urlvet: error:" in result.stderr
    assert "Traceback" not in result.output


def test_mix_is_deterministic_sized_and_varied() -> None:
    mix = evaluate.build_mix(20_000)
    assert len(mix) == 20_000
    assert mix == evaluate.build_mix(20_000)
    # Rounds differ in a query parameter, so no cache sees the same request twice (the corpus
    # itself repeats a URL only with another server, message or policy).
    web = [(m.url, m.server, m.message) for m in mix if m.url.startswith(("https://", "http://"))]
    assert len(set(web)) > 0.95 * len(web)
    n_cases = len(evaluate.load_cases(evaluate.default_corpus_files()))
    first = evaluate.build_mix(n_cases)
    assert [m.url for m in first] == [c.url for c in evaluate.load_cases(FILES)]
