"""`urlvet audit --format html`: one self-contained page, checked in Debian's headless
Chromium with no network, as the consent card is (tests/test_consent_browser.py).

The page is written to ``tests/artifacts/audit-report.html`` with a screenshot beside it,
``audit-report.png``, for a person to look at. The DOM Chromium builds is read back to check
the sections (decisions by rule and by host, top sites, the chart, the filterable table) and
that nothing ran although the input carries markup: the title stays the page's own, no
element the input spelled exists. A last test breaks the escaping on purpose to show that
the page's Content-Security-Policy alone stops a script.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from test_consent_browser import ARTIFACTS, Dom, dump_dom, screenshot
from test_consent_browser import chromium as chromium  # the fixture
from urlvet.audit.output.html import content_security_policy
from urlvet.cli import main

pytestmark = pytest.mark.browser

PWN = "document.title='pwned'"
INJECTED = [
    f'https://google.com@evil.com/"><script>{PWN}</script><img src=x onerror="{PWN}">',
    f'https://example.com/<svg onload="{PWN}"><style>*{{display:none}}</style>',
    f"http://10.0.0.1/'><iframe src=javascript:{PWN}>",
]


def _log() -> str:
    lines = []
    for i in range(1200):
        if i % 40 == 0:
            url = f"http://169.254.169.254/latest/meta-data/{i}"
        elif i % 25 == 0:
            url = f"https://bit.ly/x{i}"
        elif 500 < i < 600 and i % 3 == 0:
            url = f"https://paypa1.com/login?i={i}"
        else:
            url = f"https://svc{i % 30}.example.com/items/{i}"
        lines.append(f'10.1.1.1 - - [01/Jan/2026] "GET /r?to={url} HTTP/1.1" 302')
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("html")
    (folder / "access.log").write_text(_log(), encoding="utf-8")
    # A URL list: each line is a URL whole, markup and all.
    (folder / "inventory.urls").write_text("\n".join(INJECTED) + "\n", encoding="utf-8")
    ARTIFACTS.mkdir(exist_ok=True)
    page = ARTIFACTS / "audit-report.html"
    result = CliRunner().invoke(
        main,
        ["audit", "--no-dns", "--format", "html", "-o", str(page), str(folder)],
    )
    assert result.exit_code == 1, result.output
    return page, page.read_text(encoding="utf-8")


def test_the_page_is_self_contained_and_runs_nothing(report: tuple[Path, str]) -> None:
    _page, text = report
    assert "<script" not in text
    assert not re.search(r"<(img|iframe|link|object|embed)\b", text)
    assert not re.search(r"\s(src|href|on\w+)=", text.split("</style>", 1)[1].split(">", 1)[0])
    css = text.split("<style>", 1)[1].split("</style>", 1)[0]
    assert content_security_policy(css) in text.replace("&#x27;", "'")
    assert "default-src 'none'; script-src 'none'" in text.replace("&#x27;", "'")


def test_the_page_in_chromium(chromium: str, report: tuple[Path, str]) -> None:
    page, _text = report
    width, height = screenshot(chromium, page, ARTIFACTS / "audit-report.png", height=2400)
    assert (width, height) == (820, 2400)
    doc, log = dump_dom(chromium, page)
    dom = Dom(doc)
    assert dom.title == "urlvet audit"  # no injected script ran
    assert dom.count("script") == 0
    assert dom.count("img") == dom.count("iframe") == dom.count("style") - 1 == 0
    assert not dom.with_attr("onerror")
    assert not dom.with_attr("onload")
    for section in ("overview", "chart", "rules", "hosts", "sites", "flagged"):
        assert section in dom.text_by_id
    assert "UV201" in dom.text_by_id["rules"]
    assert "169.254.169.254" in dom.text_by_id["hosts"]
    assert "paypa1.com" in dom.text_by_id["sites"]
    assert dom.count("rect") > 20  # the chart's bars
    # The input's markup is there as text, for a person to read.
    assert "<script>document.title='pwned'</script>" in dom.text_by_id["flagged"]
    assert "Content Security Policy" not in log  # nothing on the page needed blocking


def test_the_table_filters_by_decision_and_rule_without_script(report: tuple[Path, str]) -> None:
    _page, text = report
    rows = re.findall(r'<tr class="row ([^"]+)">', text)
    assert rows
    assert all(r.split()[0] in ("block", "warn") for r in rows)
    codes = sorted({c for r in rows for c in r.split()[1:]})
    assert "UV212" in codes
    for code in codes:
        assert f'<input type="radio" name="r" id="r-{code}">' in text
        assert f"#r-{code}:checked~.rows tr.row:not(.{code}){{display:none}}" in text
    assert "#d-block:checked~.rows tr.row:not(.block)" in text


def test_the_policy_alone_stops_a_script_that_escaping_let_through(
    chromium: str, report: tuple[Path, str]
) -> None:
    _page, text = report
    broken = ARTIFACTS / "audit-report-broken.html"
    broken.write_text(
        text.replace("<body>", f'<body><script>{PWN}</script><img src=x onerror="{PWN}">'),
        encoding="utf-8",
    )
    doc, log = dump_dom(chromium, broken)
    assert Dom(doc).title == "urlvet audit"
    assert "Content Security Policy" in log


def _visible_rows(chromium: str, text: str, checked: list[str], name: str) -> list[str]:
    """The classes of the table rows Chromium displays with these filters checked: measured
    by a script in a copy of the page made for the measurement (its policy removed)."""
    page = text
    for ident in checked:
        group = ident.split("-", 1)[0]
        page = page.replace(f'id="{group}-all" checked>', f'id="{group}-all">')
        page = page.replace(f'id="{ident}">', f'id="{ident}" checked>')
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    probe = (
        "<script>document.title=[...document.querySelectorAll('tr.row')]"
        ".filter(r=>getComputedStyle(r).display!=='none').map(r=>r.className).join('|')"
        "</script>"
    )
    copy = ARTIFACTS / f"audit-report-{name}.html"
    copy.write_text(page.replace("</body>", probe + "</body>"), encoding="utf-8")
    doc, _log = dump_dom(chromium, copy)
    title = Dom(doc).title
    return title.split("|") if title else []


def test_the_filters_show_only_the_rows_they_name(chromium: str, report: tuple[Path, str]) -> None:
    _page, text = report
    rows = re.findall(r'<tr class="(row [^"]+)">', text)
    every = _visible_rows(chromium, text, [], "all")
    assert every == rows
    warned = _visible_rows(chromium, text, ["d-warn"], "warn")
    assert warned
    assert warned == [r for r in rows if r.split()[1] == "warn"]
    shortener = _visible_rows(chromium, text, ["r-UV212"], "uv212")
    assert shortener == [r for r in rows if "UV212" in r.split()]
    both = _visible_rows(chromium, text, ["d-block", "r-UV201"], "block-uv201")
    assert both
    assert both == [r for r in rows if r.split()[1] == "block" and "UV201" in r.split()]
