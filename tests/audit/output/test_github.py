"""GitHub workflow-command annotations: one per URL that warns or blocks, escaped."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from urlvet.audit.output.github import escape_data, escape_property
from urlvet.cli import main


@pytest.mark.parametrize(
    ("text", "data", "prop"),
    [
        ("plain", "plain", "plain"),
        ("100%", "100%25", "100%25"),
        ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
        ("x: y, z", "x: y, z", "x%3A y%2C z"),
        ("%0A", "%250A", "%250A"),
        ("::error::injected", "::error::injected", "%3A%3Aerror%3A%3Ainjected"),
    ],
)
def test_escaping(text: str, data: str, prop: str) -> None:
    assert escape_data(text) == data
    assert escape_property(text) == prop


def annotations(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, ["audit", "--no-dns", "--format", "github", *args])
    return result.exit_code, result.stdout.splitlines()


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_one_annotation_per_blocking_or_warning_url(in_tmp: Path) -> None:
    (in_tmp / "a,b:c.urls").write_text(
        "https://example.com/\nhttps://10.0.0.1/\n  https://docs.python.org/\n", encoding="utf-8"
    )
    code, lines = annotations("--server", "https://mcp.example.com/", "a,b:c.urls")
    assert code == 1
    assert len(lines) == 3
    assert lines[0].startswith(
        "::error file=a%2Cb%3Ac.urls,line=2,col=1,title=UV201 non-public-address-literal::BLOCK: https://10.0.0.1/%0AUV201 "
    )
    assert lines[1].startswith("::warning file=a%2Cb%3Ac.urls,line=3,col=3,title=UV401 ")
    assert lines[2].startswith(
        "::notice title=urlvet::urlvet audit: 3 URLs: 1 block, 1 warn, 1 allow"
    )
    assert all("\n" not in line and "\r" not in line for line in lines)


def test_a_url_cannot_inject_a_workflow_command(in_tmp: Path) -> None:
    (in_tmp / "app.log").write_text(
        "https://10.0.0.1/%0A::set-output%20name=x::y\n", encoding="utf-8"
    )
    _, lines = annotations("app.log")
    assert len(lines) == 2
    assert lines[0].startswith("::error ")
    assert "%250A::set-output" in lines[0]


def test_input_problems_are_annotated(in_tmp: Path) -> None:
    (in_tmp / "a.urls").write_bytes(b"https://example.com/\n\xff\n")
    code, lines = annotations("a.urls")
    assert code == 2
    assert lines[0] == (
        "::error file=a.urls,line=2,col=1,title=urlvet input%3A invalid-utf8::"
        "invalid UTF-8 (byte 0xff: invalid start byte); line skipped"
    )


def test_accepted_findings_are_not_annotated(in_tmp: Path) -> None:
    (in_tmp / "a.urls").write_text("https://10.0.0.1/\n", encoding="utf-8")
    CliRunner().invoke(main, ["audit", "--no-dns", "--write-baseline", "b.json", "a.urls"])
    code, lines = annotations("--baseline", "b.json", "a.urls")
    assert code == 0
    assert [line for line in lines if not line.startswith("::notice")] == []
