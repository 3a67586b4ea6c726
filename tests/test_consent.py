"""The consent summary and its renderings: what a person sees before a client opens a URL."""

from __future__ import annotations

import html.parser
import json
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import OFFLINE
from urlvet.consent import CONTENT_SECURITY_POLICY, ConsentSummary, visible
from urlvet.findings import Decision
from urlvet.server import Server, as_server

SERVER = as_server("https://mcp.example.com/mcp", name="example-crm")
assert SERVER is not None
STDIO = Server(name="notes")
VETTER = OFFLINE

INJECTION = (
    "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
    '"><svg onload=alert(1)>]]><!-- \u202egnp.exe \u200b\x1b[31m [click](https://evil.com) '
    "www.evil.com **bold** `code` <https://evil.com> &amp; \\"
)


def summary(url: str, message: str | None = None, server: Server | None = SERVER) -> ConsentSummary:
    return ConsentSummary.from_verdict(VETTER.vet(url, server, message=message), server, message)


# -- the summary ----------------------------------------------------------------------------


def test_who_asks_comes_from_the_configuration() -> None:
    s = summary("https://docs.example.com/page")
    assert (s.server_name, s.server_origin) == ("example-crm", "https://mcp.example.com")
    assert s.server_label == "example-crm (https://mcp.example.com)"
    assert summary("https://docs.example.com/", server=STDIO).server_label == (
        "notes (a local server, stdio)"
    )
    assert summary("https://docs.example.com/", server=None).server_label == (
        "an unidentified server"
    )


@pytest.mark.parametrize(
    ("decision", "url", "actions", "primary"),
    [
        (Decision.ALLOW, "https://docs.example.com/page", ("open", "decline"), "open"),
        (Decision.WARN, "https://billing-example.net/pay", ("open", "decline"), "decline"),
        (Decision.BLOCK, "https://google.com@evil.com/", ("decline",), "decline"),
    ],
)
def test_actions_follow_the_decision(
    decision: Decision, url: str, actions: tuple[str, ...], primary: str
) -> None:
    s = summary(url)
    assert s.decision is decision
    assert s.actions == actions
    assert s.primary_action == primary
    assert s.headline
    assert s.advice


def test_on_warn_decline_is_the_primary_button_everywhere() -> None:
    s = summary("https://billing-example.net/pay")
    assert s.to_text().splitlines()[-1] == "Actions:  [Decline] (default)  [Open]"
    assert s.to_markdown().rstrip().splitlines()[-1] == (
        "**Actions:** **Decline** \\(default\\) · Open"
    )
    doc = s.to_html()
    assert '<span class="btn btn-decline btn-primary" data-action="decline">Decline</span>' in doc
    assert '<span class="btn btn-open" data-action="open">Open</span>' in doc
    allowed = summary("https://docs.example.com/page")
    assert allowed.to_text().splitlines()[-1] == "Actions:  [Open] (default)  [Decline]"
    assert '<span class="btn btn-open btn-primary" data-action="open">Open</span>' in (
        allowed.to_html()
    )


def test_a_redirect_shows_where_the_link_really_goes() -> None:
    url = "https://www.google.com/url?q=https%3A%2F%2Fexample-billing.net%2Fpay&sa=D"
    s = summary(url, server=STDIO)
    assert s.site == "google.com"
    assert s.destination == "https://example-billing.net/pay"
    assert not s.destination_unknown
    assert "Really opens: https://example-billing.net/pay" in s.to_text()
    assert "- **Really opens:** **https\\:\\/\\/example\\-billing\\.net\\/pay**" in (
        s.to_markdown()
    )
    assert '<strong class="mono destination" id="destination">https://example-billing.net/pay' in (
        s.to_html()
    )
    assert s.to_json_dict()["destination"] == "https://example-billing.net/pay"


def test_a_shortener_says_the_destination_is_unknown() -> None:
    s = summary("https://bit.ly/3Kx9TqZ", server=STDIO)
    assert s.destination is None
    assert s.destination_unknown
    assert "Really opens: unknown: a URL shortener hides where this link goes" in s.to_text()
    plain = summary("https://docs.example.com/page")
    assert (plain.destination, plain.destination_unknown) == (None, False)
    assert "Really opens" not in plain.to_text()


def test_the_href_is_shown_as_the_browser_opens_it() -> None:
    s = summary("HTTPS://Docs.EXAMPLE.com:443/a/../b?q=1#f")
    assert s.url == "HTTPS://Docs.EXAMPLE.com:443/a/../b?q=1#f"
    assert s.href == "https://docs.example.com/b?q=1#f"


def test_the_registrable_domain_is_cut_out_for_emphasis() -> None:
    s = summary("https://mcp.example.com.login-check.net/x?next=example.com")
    assert s.href_parts is not None
    parts = s.href_parts
    assert parts.scheme + parts.userinfo + parts.subdomains + parts.site + parts.after == s.href
    assert (parts.subdomains, parts.site, parts.after) == (
        "mcp.example.com.",
        "login-check.net",
        "/x?next=example.com",
    )
    assert s.site == "login-check.net"


def test_userinfo_is_never_shown_as_the_host() -> None:
    s = summary("https://accounts.google.com:secret@evil.com/login")
    assert s.host == "evil.com"
    assert s.site == "evil.com"
    assert s.userinfo == "accounts.google.com:secret"
    assert s.href_parts is not None
    assert s.href_parts.userinfo == "accounts.google.com:secret@"
    assert s.href_parts.site == "evil.com"
    assert (
        "Userinfo:  accounts.google.com:secret  (written before '@': NOT the site)" in s.to_text()
    )
    assert "Site:      evil.com" in s.to_text()
    assert "NOT the site" in s.to_text()


def test_a_safe_idn_is_shown_in_unicode_and_punycode() -> None:
    s = summary("https://xn--mnchen-3ya.de/", server=STDIO)
    assert s.host_shown_as == "unicode+punycode"
    assert (s.host_display, s.site, s.site_ascii) == (
        "münchen.de",
        "münchen.de",
        "xn--mnchen-3ya.de",
    )
    assert "münchen.de (xn--mnchen-3ya.de)" in s.to_text()


def test_an_unsafe_idn_is_shown_in_punycode_only() -> None:
    s = summary("https://xn--pypal-4ve.com/signin")
    assert {"UV301", "UV302"} & set(s.codes)
    assert s.host_shown_as == "punycode"
    assert s.host_display == "xn--pypal-4ve.com"
    assert s.site == "xn--pypal-4ve.com"
    host_line = next(line for line in s.to_text().splitlines() if line.startswith("Host:"))
    assert "pаypal" not in host_line  # the Cyrillic а never appears as the host
    # Only the lookalike rules, which explain the trick, may still name the Unicode form.
    for w in s.warnings:
        if not w.code.startswith("UV30"):
            assert "pаypal" not in w.text
    assert any(w.code == "UV401" and "xn--pypal-4ve.com" in w.text for w in s.warnings)


def test_ip_hosts_are_shown_as_addresses() -> None:
    s = summary("http://[::1]:8080/cb", server=STDIO)
    assert (s.host_shown_as, s.host_display) == ("address", "[::1]")
    assert s.href_parts is not None
    assert s.href_parts.site == "[::1]"


@pytest.mark.parametrize(
    ("url", "server", "relation"),
    [
        ("https://docs.example.com/", SERVER, "same-site"),
        ("https://accounts.google.com/o/oauth2/v2/auth?x=1", SERVER, "trusted-third-party"),
        ("https://billing-example.net/", SERVER, "unrelated"),
        ("http://127.0.0.1:33418/callback", STDIO, "local"),
        ("http://localhost:8080/cb", SERVER, "local"),
        ("https://example.org/", STDIO, "unknown"),
        ("https://example.org/", None, "unknown"),
    ],
)
def test_relation_to_the_server(url: str, server: Server | None, relation: str) -> None:
    s = summary(url, server=server)
    assert s.relation == relation
    assert s.relation_text


def test_warnings_are_plain_language_most_serious_first_with_codes() -> None:
    s = summary("http://mcp.example.com.login-check.net:8443/x")
    ranks = [w.severity.rank for w in s.warnings]
    assert ranks == sorted(ranks, reverse=True)
    assert all(re.fullmatch(r"UV\d{3}", w.code) and w.text for w in s.warnings)
    text = s.to_text()
    assert text.index(s.warnings[0].code) < text.index(s.warnings[-1].code)


def test_information_is_a_note_not_a_warning() -> None:
    s = summary("https://accounts.google.com/o/oauth2/v2/auth?x=1")
    assert s.decision is Decision.ALLOW
    assert s.warnings == ()
    assert [n.code for n in s.notes] == ["UV403"]


def test_hidden_characters_in_the_message_are_made_visible() -> None:
    s = summary("https://docs.example.com/", "Sign in \u202egnp.exe\u200b\x1b[2J\nsecond line")
    assert s.message_visible == "Sign in ⟨U+202E⟩gnp.exe⟨U+200B⟩⟨U+001B⟩[2J\nsecond line"
    assert s.message_hidden_characters == 3
    for rendering in (s.to_text(), s.to_markdown(), s.to_html(), s.to_text(colour=True)):
        assert "\u202e" not in rendering
        assert "\u200b" not in rendering
    assert "\x1b[2J" not in s.to_text(colour=True)


def test_the_count_of_hidden_characters_reads_as_english() -> None:
    one = summary("https://docs.example.com/", "Open \u202egnp.exe")
    three = summary("https://docs.example.com/", "Sign in \u202egnp.exe\u200b\x1b[2J")
    for rendering in (one.to_text(), one.to_html()):
        assert "1 hidden or direction-changing character is" in rendering
    for rendering in (three.to_text(), three.to_html()):
        assert "3 hidden or direction-changing characters are" in rendering


def test_visible_marks_every_hidden_character() -> None:
    assert visible("a\u202eb\u2066c\ufeffd\x00") == "a⟨U+202E⟩b⟨U+2066⟩c⟨U+FEFF⟩d⟨U+0000⟩"
    assert visible("line\nline", keep_newlines=True) == "line\nline"
    assert visible("plain") == "plain"


def test_long_strings_are_cut_visibly_but_the_site_is_always_shown() -> None:
    url = "https://" + "a" * 5000 + "@evil.com/" + "p" * 10_000
    s = summary(url, "m" * 10_000)
    for rendering, site in (
        (s.to_text(), "evil.com"),
        (s.to_markdown(), "evil\\.com"),
        (s.to_html(), "evil.com"),
    ):
        assert site in rendering
        assert "characters not shown" in rendering
        assert len(rendering) < 12_000
    assert s.url == url
    assert s.message == "m" * 10_000


def test_unparseable_urls_still_get_a_summary() -> None:
    s = summary("https://exa mple.com/")
    assert s.decision is Decision.BLOCK
    assert s.href is None
    assert s.href_parts is None
    assert s.actions == ("decline",)
    assert "exa mple.com" in s.to_text()


# -- renderings -----------------------------------------------------------------------------


def test_json_rendering_round_trips() -> None:
    s = summary("https://google.com@evil.com/", INJECTION)
    data = json.loads(s.to_json())
    assert data["decision"] == "block"
    assert data["actions"] == ["decline"]
    assert ConsentSummary.model_validate(data) == s


def test_text_emphasises_the_site_only_with_colour() -> None:
    s = summary("https://mcp.example.com.login-check.net/x")
    plain, coloured = s.to_text(), s.to_text(colour=True)
    assert "\x1b[" not in plain
    assert "\x1b[1m\x1b[4mlogin-check.net\x1b[0m" in coloured
    assert "https://mcp.example.com.\x1b[1m\x1b[4mlogin-check.net\x1b[0m/x" in coloured


_AUTOLINK = re.compile(r"(?<!\\)(?:https?:|www\.|<[a-zA-Z!/?])")


def _markdown_outside_code(md: str) -> str:
    return re.sub(r"(?ms)^(`{3,})text\n.*?\n\1$", "", md)


def test_markdown_escapes_everything_and_has_no_live_link() -> None:
    s = summary("https://evil.com/<b>[x](javascript:alert(1))", INJECTION)
    md = s.to_markdown()
    prose = _markdown_outside_code(md)
    assert not _AUTOLINK.search(prose), prose
    assert "](" not in prose.replace("\\]\\(", "")
    assert "<script" not in prose
    assert "<img" not in prose
    # The message is a fenced code block whose fence is longer than any backtick run in it.
    block = re.search(r"(?ms)^(`{3,})text\n(.*?)\n\1$", md)
    assert block is not None
    assert "<script>" in block.group(2)
    assert "**evil\\.com**" in md


def test_markdown_fence_survives_backticks_in_the_message() -> None:
    s = summary("https://docs.example.com/", "```\n# not a heading\n````")
    md = s.to_markdown()
    assert "`````text\n```\n# not a heading\n````\n`````" in md


class _Collect(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


_ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "main", "div", "span", "strong", "h1",
    "h2", "p", "dl", "dt", "dd", "ul", "li",
}  # fmt: skip
_ALLOWED_ATTRS = {
    "lang",
    "charset",
    "http-equiv",
    "content",
    "name",
    "class",
    "id",
    "data-decision",
    "data-action",
    "title",
}


def _parse_html(doc: str) -> _Collect:
    p = _Collect()
    p.feed(doc)
    p.close()
    return p


def _assert_inert(doc: str) -> None:
    parsed = _parse_html(doc)
    tags = [t for t, _ in parsed.tags]
    assert set(tags) <= _ALLOWED_TAGS, set(tags) - _ALLOWED_TAGS
    assert tags.count("style") == 1
    assert "script" not in tags
    for _, attrs in parsed.tags:
        assert set(attrs) <= _ALLOWED_ATTRS, attrs
    outside_style = doc.split("<style>")[0] + doc.split("</style>")[1]
    # An event-handler attribute would need a tag; in text it is harmless, but it must not be
    # inside a tag, which the parse above already rules out.
    assert not re.search(r"(?i)<[^>]*\son\w+\s*=", outside_style)


def test_html_card_is_self_contained_and_strict() -> None:
    doc = summary("https://docs.example.com/page", "hello").to_html()
    assert doc.startswith("<!DOCTYPE html>")
    assert f'content="{CONTENT_SECURITY_POLICY}"' in doc.replace("&#x27;", "'")
    assert "script-src 'none'" in CONTENT_SECURITY_POLICY
    assert "default-src 'none'" in CONTENT_SECURITY_POLICY
    assert not re.search(r"(?i)<(script|link|img|iframe|object|embed|form|a)\b", doc)
    assert not re.search(r"(?i)(?<![\w-])(src|href|action)\s*=", doc)
    _assert_inert(doc)


def test_html_card_shows_the_emphasised_site_and_the_full_url() -> None:
    s = summary("https://mcp.example.com.login-check.net/x?y=1")
    doc = s.to_html()
    assert '<strong class="site">login-check.net</strong>' in doc
    assert '<strong class="site sitename" id="site">login-check.net</strong>' in doc
    text = "".join(_parse_html(doc).text)
    assert "https://mcp.example.com.login-check.net/x?y=1" in text
    assert 'data-action="decline"' in doc
    assert 'data-action="open"' not in doc


def test_html_card_escapes_injection_in_message_and_url() -> None:
    url = "https://evil.com/\"><script>document.title='pwned'</script><img src=x onerror=alert(1)>"
    s = summary(url, INJECTION)
    doc = s.to_html()
    _assert_inert(doc)
    text = "".join(_parse_html(doc).text)
    assert "<script>document.title='pwned'</script>" in text  # shown, as text
    assert "⟨U+202E⟩" in text
    assert "\u202e" not in doc


@settings(max_examples=150, deadline=None)
@given(url=st.text(max_size=300), message=st.text(max_size=300))
def test_any_message_and_url_render_inert(url: str, message: str) -> None:
    s = summary(url, message)
    doc = s.to_html()
    _assert_inert(doc)
    for rendering in (doc, s.to_text(), s.to_text(colour=True), s.to_markdown()):
        assert not set(rendering) & {
            "\u202a",
            "\u202b",
            "\u202c",
            "\u202d",
            "\u202e",
            "\u2066",
            "\u2067",
            "\u2068",
            "\u2069",
            "\x00",
        }
    assert not _AUTOLINK.search(_markdown_outside_code(s.to_markdown()))
    json.loads(s.to_json())


# -- the CLI --------------------------------------------------------------------------------


def _urlvet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "urlvet.cli", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8"},
    )


@pytest.mark.parametrize("fmt", ["text", "markdown", "html", "json"])
def test_consent_command_prints_each_format(fmt: str) -> None:
    out = _urlvet(
        "consent",
        "https://google.com@evil.com/x",
        "--server",
        "https://mcp.example.com/mcp",
        "--server-name",
        "crm",
        "--message",
        "sign in \u202e",
        "--format",
        fmt,
        "--no-dns",
    )
    assert out.returncode == 1, out.stderr  # blocked, at or above the default --fail-on
    assert "evil.com" in out.stdout.replace("\\", "")  # Markdown escapes the dot
    assert "\u202e" not in out.stdout
    if fmt == "json":
        assert json.loads(out.stdout)["server_name"] == "crm"
    if fmt == "html":
        _assert_inert(out.stdout)


def test_consent_command_exit_codes() -> None:
    ok = _urlvet(
        "consent", "https://docs.example.com/", "--server", "https://mcp.example.com/", "--no-dns"
    )
    assert ok.returncode == 0
    assert ok.stdout.startswith("ALLOW: ")
    warn = _urlvet(
        "consent",
        "https://billing-example.net/",
        "--server",
        "https://mcp.example.com/",
        "--no-dns",
        "--fail-on",
        "warn",
    )
    assert warn.returncode == 1
    bad = _urlvet("consent", "https://docs.example.com/", "--server", "ftp://x", "--no-dns")
    assert bad.returncode == 2
    assert "server URL" in bad.stderr
    missing = _urlvet("consent", "https://docs.example.com/")
    assert missing.returncode == 2


# -- foreign letters of a homoglyph ---------------------------------------------------------


def test_homoglyph_warning_marks_the_foreign_letter_in_every_rendering() -> None:
    s = summary("https://pаypal.com/signin", server=None)  # Cyrillic а
    warning = next(w for w in s.warnings if w.code == "UV302")
    assert warning.marked is not None
    assert warning.marked.text == "pаypal.com"
    assert warning.marked.spans == ((1, 2),)
    assert "the second letter is Cyrillic а, not Latin a" in warning.text
    assert "p**а**ypal\\.com" in s.to_markdown()
    assert 'p<strong class="foreign">а</strong>ypal.com' in s.to_html()
    text = s.to_text()
    assert "pаypal.com (xn--pypal-4ve.com) is made to look exactly like paypal.com" in text
    assert "\x1b[7mа\x1b[0m" in s.to_text(colour=True)
    _assert_inert(s.to_html())


def test_only_homoglyph_warnings_are_marked() -> None:
    s = summary("https://paypal-secure.com/", server=None)
    assert [w.marked for w in s.warnings] == [None] * len(s.warnings)
    assert "foreign" not in s.to_html().split("</style>")[1]


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("https://sso-verify.net/#@accounts.google.com", "accounts.google.com"),
        (
            "https://sso-verify.net/login#https://login.microsoftonline.com/",
            "login.microsoftonline.com",
        ),
        ("https://sso-verify.net/#www.paypal.com/signin", "www.paypal.com"),
    ],
)
def test_a_fragment_that_names_a_host_is_called_out(url: str, named: str) -> None:
    summary = ConsentSummary.from_verdict(VETTER.vet(url, as_server("stdio")))
    assert summary.fragment_host == named
    for shown in (summary.to_text(), summary.to_markdown(), summary.to_html()):
        assert "Fragment" in shown
        assert "never sent" in shown


@pytest.mark.parametrize(
    "url",
    ["https://example.com/#section-2", "https://example.com/#example.com", "https://a.example/"],
)
def test_an_ordinary_fragment_is_not_called_out(url: str) -> None:
    summary = ConsentSummary.from_verdict(VETTER.vet(url, as_server("stdio")))
    assert summary.fragment_host is None
    assert "Fragment" not in summary.to_text()


def test_a_wrapped_link_shows_where_it_really_opens() -> None:
    url = "https://urldefense.com/v3/__https://xn--pypal-4ve.com/__;!!a!b$"
    summary = ConsentSummary.from_verdict(VETTER.vet(url, as_server("stdio")))
    assert summary.destination == "https://xn--pypal-4ve.com/"
    assert summary.decision is Decision.BLOCK
