"""The HTML consent card in a real browser: Debian's headless Chromium, with no network.

Each card is written to ``tests/artifacts/`` (gitignored) with a screenshot beside it, for a
person to look at: ``consent-block.png``, ``consent-warn.png``, ``consent-allow.png`` and
``consent-injection.png``. The DOM Chromium builds is read back with ``--dump-dom`` to check
what a person sees (the emphasised site, the full URL) and that nothing ran: the title stays
the card's own, and an injected script or event handler never fires. The buttons' colours are
read as Chromium computes them: the safe choice (Decline) is the primary button on warn and
block, Open only on allow. A last test breaks the
escaping on purpose to show that the card's Content-Security-Policy alone stops the script.
"""

from __future__ import annotations

import html.parser
import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from urlvet.consent import ConsentSummary
from urlvet.engine import Vetter
from urlvet.policy import Policy
from urlvet.server import as_server

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM_HINT = (
    "Chromium is needed for the consent-card tests (a real browser, headless, no network): "
    "install the Debian package with `apt-get install chromium`."
)
SERVER = as_server("https://mcp.example.com/mcp", name="example-crm")
VETTER = Vetter(Policy(dns={"enabled": False}))

CARDS = {
    "block": (
        "https://mcp.example.com.login-check.net/session?next=%2Fbilling",
        "Your session expired. Sign in again to keep your files \u202egnp.exe",
        "login-check.net",
    ),
    "warn": (
        "https://billing-example.net/pay/invoice/2291?amount=120",
        "Pay the open invoice to unlock the export.",
        "billing-example.net",
    ),
    "allow": (
        "https://accounts.example.com/oauth/authorize?client_id=crm&scope=files.read",
        "Sign in to connect your Example account.",
        "example.com",
    ),
}

PWN = "document.title='pwned'"
INJECTED_URL = (
    f'https://google.com@evil.com/"><script>{PWN}</script><img src=x onerror="{PWN}">'
    + "A" * 10_000
)
INJECTED_MESSAGE = (
    f'</div><script>{PWN}</script><img src=x onerror="{PWN}"><svg onload="{PWN}">'
    f'<a href="javascript:{PWN}">click</a><style>*{{display:none}}</style>\u202e\u2066'
    + "B"
    * 10_000
)


def _find_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium", path="/usr/bin:/usr/lib/chromium")


@pytest.fixture(scope="module")
def chromium() -> str:
    """Path of Debian's chromium. Missing, the tests fail (CI installs it in .ci/run)."""
    found = _find_chromium()
    if found is None:
        pytest.fail(CHROMIUM_HINT, pytrace=False)
    return found


def _run(chromium: str, page: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="urlvet-chromium-") as profile:
        return subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--hide-scrollbars",
                "--enable-logging=stderr",
                "--v=0",
                f"--user-data-dir={profile}",
                *extra,
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "HOME": profile},
        )


def dump_dom(chromium: str, page: Path) -> tuple[str, str]:
    """(the DOM after load, Chromium's log with console messages such as CSP violations)."""
    out = _run(chromium, page, "--dump-dom")
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout, out.stderr


def screenshot(chromium: str, page: Path, png: Path, height: int = 1100) -> tuple[int, int]:
    """Take a screenshot of ``page`` into ``png``; return its (width, height)."""
    png.unlink(missing_ok=True)
    out = _run(chromium, page, f"--screenshot={png}", f"--window-size=820,{height}")
    assert out.returncode == 0, out.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, tall = struct.unpack(">II", data[16:24])
    return width, tall


class Dom(html.parser.HTMLParser):
    """The parts of a dumped DOM the tests look at."""

    def __init__(self, doc: str) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text_by_id: dict[str, str] = {}
        self._stack: list[str | None] = []
        self._in_title = False
        self.feed(doc)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        self._in_title = tag == "title"
        if tag not in ("meta", "br", "img", "input", "link"):
            self._stack.append(a.get("id"))
            if a.get("id"):
                self.text_by_id.setdefault(str(a["id"]), "")

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False
        if tag not in ("meta", "br", "img", "input", "link") and self._stack:
            self._stack.pop()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        for ident in self._stack:
            if ident:
                self.text_by_id[ident] += data

    def count(self, tag: str) -> int:
        return sum(1 for t, _ in self.tags if t == tag)

    def with_attr(self, name: str) -> list[str]:
        return [t for t, a in self.tags if name in a]


def _write(name: str, url: str, message: str) -> tuple[Path, ConsentSummary]:
    ARTIFACTS.mkdir(exist_ok=True)
    summary = ConsentSummary.from_verdict(VETTER.vet(url, SERVER, message=message), SERVER, message)
    page = ARTIFACTS / f"consent-{name}.html"
    page.write_text(summary.to_html(), encoding="utf-8")
    return page, summary


@pytest.mark.parametrize("decision", ["block", "warn", "allow"])
def test_card_shows_emphasised_site_and_full_url(chromium: str, decision: str) -> None:
    url, message, site = CARDS[decision]
    page, summary = _write(decision, url, message)
    assert summary.decision.value == decision
    width, height = screenshot(chromium, page, ARTIFACTS / f"consent-{decision}.png")
    assert (width, height) == (820, 1100)

    doc, _ = dump_dom(chromium, page)
    dom = Dom(doc)
    assert dom.title == f"urlvet: {summary.headline}"
    assert dom.text_by_id["site"] == site
    assert f'<strong class="site">{site}</strong>' in doc  # emphasised inside the URL too
    assert dom.text_by_id["url"] == summary.href
    assert dom.text_by_id["server"] == "example-crm (https://mcp.example.com)"
    assert dom.text_by_id["message"] == message.replace("\u202e", "⟨U+202E⟩")
    actions = [a.get("data-action") for _, a in dom.tags if "data-action" in a]
    assert actions == (["decline"] if decision == "block" else ["decline", "open"])
    assert dom.count("script") == 0


PRIMARY_BLUE = "rgb(21, 94, 239)"
SECONDARY_WHITE = "rgb(255, 255, 255)"


def button_backgrounds(chromium: str, page: Path, tmp_path: Path) -> dict[str, str]:
    """The background colour Chromium computes for each action button of the card at ``page``.

    The card forbids scripts, so a copy without its Content-Security-Policy gets a script that
    writes each button's computed style into the DOM, which --dump-dom reads back.
    """
    head, _, rest = page.read_text(encoding="utf-8").partition(
        '<meta http-equiv="Content-Security-Policy"'
    )
    probe = (
        "<script>for (const b of document.querySelectorAll('[data-action]')) "
        "b.setAttribute('title', getComputedStyle(b).backgroundColor);</script>"
    )
    copy = tmp_path / page.name
    copy.write_text(head + rest.partition(">")[2].replace("</body>", probe + "</body>"), "utf-8")
    doc, _ = dump_dom(chromium, copy)
    return {
        str(a["data-action"]): str(a.get("title")) for _, a in Dom(doc).tags if "data-action" in a
    }


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        ("warn", {"decline": PRIMARY_BLUE, "open": SECONDARY_WHITE}),
        ("allow", {"decline": SECONDARY_WHITE, "open": PRIMARY_BLUE}),
        ("block", {"decline": PRIMARY_BLUE}),
    ],
)
def test_the_safe_choice_is_the_primary_button_unless_allowed(
    chromium: str, tmp_path: Path, decision: str, expected: dict[str, str]
) -> None:
    url, message, _ = CARDS[decision]
    page, summary = _write(decision, url, message)
    assert summary.decision.value == decision
    assert button_backgrounds(chromium, page, tmp_path) == expected


def test_no_script_runs_for_injection_in_message_and_url(chromium: str) -> None:
    page, summary = _write("injection", INJECTED_URL, INJECTED_MESSAGE)
    screenshot(chromium, page, ARTIFACTS / "consent-injection.png")
    doc, log = dump_dom(chromium, page)
    dom = Dom(doc)
    assert dom.title == "urlvet: This link was blocked"
    assert "pwned" not in dom.title
    assert dom.count("script") == 0
    assert dom.count("img") == dom.count("svg") == dom.count("a") == 0
    assert not dom.with_attr("onerror")
    assert not dom.with_attr("onload")
    assert dom.count("style") == 1
    # The injection is shown as text, cut visibly, with the bidi controls made visible.
    message = dom.text_by_id["message"]
    assert message.startswith(f"</div><script>{PWN}</script>")
    assert "⟨U+202E⟩⟨U+2066⟩" in message
    assert "\u202e" not in doc
    assert "characters not shown" in doc
    assert dom.text_by_id["site"] == "evil.com"
    assert dom.text_by_id["url"].startswith("https://google.com@evil.com/%22%3E%3Cscript%3E")
    assert summary.decision.value == "block"
    # Nothing was even attempted: no script, no handler, no request for the x image.
    assert "Content Security Policy" not in log


def test_csp_alone_stops_a_script_that_escaping_missed(chromium: str, tmp_path: Path) -> None:
    _, summary = _write("csp", "https://docs.example.com/", "hello")
    payload = f'<script>{PWN}</script><img src="x" onerror="{PWN}">'
    broken = summary.to_html().replace("<main ", payload + "<main ", 1)
    page = tmp_path / "broken.html"
    page.write_text(broken, encoding="utf-8")
    doc, log = dump_dom(chromium, page)
    assert Dom(doc).title == f"urlvet: {summary.headline}"
    assert "violates the following Content Security Policy directive" in log

    # The same page without the policy: the payload runs, so the check above can fail.
    head, _, rest = broken.partition('<meta http-equiv="Content-Security-Policy"')
    unprotected = tmp_path / "unprotected.html"
    unprotected.write_text(head + rest.partition(">")[2], encoding="utf-8")
    doc, _ = dump_dom(chromium, unprotected)
    assert Dom(doc).title == "pwned"
