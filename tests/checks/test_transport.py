"""UV1xx: transport and form. Each rule firing, and not firing."""

from __future__ import annotations

import pytest

from support import OFFLINE, codes
from urlvet import Policy, Vetter
from urlvet.text import hidden_characters

# -- UV100 unparseable-url -------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "",
        "not a url",
        "example.com/path",
        "https://exa mple.com/",
        "https://[::1/",
        "https://example.com:99999/",
        "https://1.2.3.4.5/",
        "https://999.1.1.1/",
        "https://a<b.com/",
        "https://%zz.com/",
        "https://xn--a.ß/",
        "https:///",
        "http://[]/",
        "http://:123/",
        "https://ex\x00ample.com/",
    ],
)
def test_unparseable_url_blocks(url: str) -> None:
    verdict = OFFLINE.vet(url)
    assert "UV100" in verdict.codes
    assert verdict.decision.value == "block"
    assert verdict.href is None


@pytest.mark.parametrize(
    "url", ["https://example.com/", "https://xn--a.example/", "HTTPS://EXAMPLE.COM"]
)
def test_parseable_url_is_not_unparseable(url: str) -> None:
    assert "UV100" not in codes(url)


def test_non_text_input_gets_a_verdict() -> None:
    assert OFFLINE.vet(b"https://example.com/").decision.value == "allow"
    bad = OFFLINE.vet(b"https://ex\xffample.com/")
    assert "UV100" in bad.codes
    assert bad.decision.value == "block"
    surrogate = OFFLINE.vet("https://example.com/\udc80")
    assert "UV100" in surrogate.codes


# -- UV101 plaintext-http ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "server", "fires"),
    [
        ("http://example.com/", None, True),
        ("http://example.com/", "stdio", True),
        ("ws://example.com/", None, True),
        ("https://example.com/", None, False),
        # loopback http: only for a local server (stdio or a server on loopback)
        ("http://127.0.0.1:8765/callback", "stdio", False),
        ("http://localhost:8765/callback", "stdio", False),
        ("http://[::1]:8765/callback", "http://localhost:9000/mcp", False),
        ("http://127.0.0.1:8765/callback", "http://127.0.0.1:9000/mcp", False),
        ("http://127.0.0.1:8765/callback", None, True),
        ("http://127.0.0.1:8765/callback", "https://mcp.example.com/", True),
        ("http://localhost:8765/callback", "https://mcp.example.com/", True),
        # a local server still may not send users to plain http elsewhere
        ("http://192.168.1.10/", "stdio", True),
        ("http://example.com/", "http://127.0.0.1:9000/mcp", True),
    ],
)
def test_plaintext_http(url: str, server: str | None, fires: bool) -> None:
    assert ("UV101" in codes(url, server)) is fires


def test_plaintext_http_blocks_by_default() -> None:
    assert OFFLINE.vet("http://example.com/").decision.value == "block"


# -- UV102 dangerous-scheme ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "label"),
    [
        ("javascript:alert(document.cookie)", "dangerous"),
        ("JAVASCRIPT:alert(1)", "dangerous"),
        ("  javascript:alert(1)", "dangerous"),
        ("java\tscript:alert(1)", "dangerous"),  # the parser drops the tab
        ("data:text/html,<script>alert(1)</script>", "dangerous"),
        ("file:///etc/passwd", "dangerous"),
        ("file://server/share", "dangerous"),
        ("vbscript:msgbox(1)", "dangerous"),
        ("blob:https://example.com/0b9c4f1a", "dangerous"),
        ("filesystem:https://example.com/temporary/x", "dangerous"),
        ("ms-settings:privacy", "not a web page"),
        ("smb://fileserver/share", "not a web page"),
        ("ssh://git@example.com/repo", "not a web page"),
        ("gopher://127.0.0.1:6379/_SAVE", "not a web page"),
        ("mailto:a@example.com", "not a web page"),
        ("myapp://oauth/callback?code=x", "not a web page"),
        ("wss://example.com/socket", "not a web page"),
        ("ftp://example.com/file", "not a web page"),
    ],
)
def test_dangerous_scheme_blocks(url: str, label: str) -> None:
    verdict = OFFLINE.vet(url)
    assert "UV102" in verdict.codes
    assert verdict.decision.value == "block"
    (finding,) = [f for f in verdict.findings if f.code == "UV102"]
    assert label in finding.message


@pytest.mark.parametrize("url", ["https://example.com/", "http://example.com/"])
def test_web_schemes_are_not_dangerous(url: str) -> None:
    assert "UV102" not in codes(url)


# -- UV103 credentials-in-url, UV104 userinfo-deception -------------------------------------------


@pytest.mark.parametrize(
    ("url", "credentials", "deception"),
    [
        ("https://admin:hunter2@portal.example.com/", True, False),
        ("https://user@example.com/", True, False),
        ("https://:secret@example.com/", True, False),
        ("https://google.com@evil.example/", True, True),
        ("https://accounts.google.com@evil.example/login", True, True),
        ("https://paypal.com:443@198.51.100.7/", True, True),
        ("https://www.google.com%2F@evil.example/", True, True),
        ("https://localhost@evil.example/", True, True),
        ("https://example.com/", False, False),
        ("https://example.com/@not-userinfo", False, False),
        ("https://example.com/?next=a@b.com", False, False),
    ],
)
def test_credentials_and_userinfo_deception(url: str, credentials: bool, deception: bool) -> None:
    found = codes(url)
    assert ("UV103" in found) is credentials
    assert ("UV104" in found) is deception


def test_userinfo_deception_blocks_and_names_the_real_host() -> None:
    verdict = OFFLINE.vet("https://google.com@evil.example/")
    assert verdict.decision.value == "block"
    assert verdict.host == "evil.example"
    (finding,) = [f for f in verdict.findings if f.code == "UV104"]
    assert "evil.example" in finding.message
    assert "google.com" in finding.message


def test_plain_credentials_only_warn() -> None:
    assert OFFLINE.vet("https://user:pw@example.com/").decision.value == "warn"


# -- UV105 overlong-url -------------------------------------------------------------------------


def test_overlong_url_against_the_policy_limit() -> None:
    base = "https://example.com/?q="
    at_limit = base + "a" * (2048 - len(base))
    assert "UV105" not in codes(at_limit)
    assert "UV105" in codes(at_limit + "a")
    short = Vetter(Policy(dns={"enabled": False}, limits={"max_url_length": 64}))
    assert "UV105" in codes(base + "a" * 50, vetter=short)
    assert OFFLINE.vet(at_limit + "a").decision.value == "block"


def test_huge_input_is_not_parsed_but_blocked() -> None:
    verdict = OFFLINE.vet("https://example.com/?" + "a" * 1_000_000)
    assert {"UV100", "UV105"} <= set(verdict.codes)
    assert verdict.decision.value == "block"


# -- UV106 hidden-characters -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://example.com/\u202egnp.exe", "bidi"),
        ("https://example.com/\u2066x\u2069", "bidi"),
        ("https://exa\u200bmple.com/", "invisible"),
        ("https://exam\u00adple.com/", "invisible"),
        ("https://example.com/\ufeff", "invisible"),
        ("https://a.com\n@b.com", "control"),
        ("https://example.com/\t", "control"),
        ("https://example.com/\x7f", "control"),
        ("https://example.com/\u0085", "control"),
        ("https://example.com/\U000e0041", "invisible"),  # a TAG character
        ("https://example.com/\u2063", "invisible"),
    ],
)
def test_hidden_characters_block(url: str, kind: str) -> None:
    verdict = OFFLINE.vet(url)
    assert "UV106" in verdict.codes
    assert verdict.decision.value == "block"
    (finding,) = [f for f in verdict.findings if f.code == "UV106"]
    assert kind in finding.evidence["kinds"]


@pytest.mark.parametrize(
    "url", ["https://example.com/", "https://münchen.de/straße", "https://例え.jp/パス"]
)
def test_visible_unicode_is_not_hidden(url: str) -> None:
    assert "UV106" not in codes(url)


def test_hidden_characters_reports_positions() -> None:
    assert hidden_characters("a\u202eb\u200bc") == [
        (1, "U+202E", "bidi"),
        (3, "U+200B", "invisible"),
    ]
    assert hidden_characters("plain") == []


# -- UV107 non-standard-port ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "server", "fires"),
    [
        ("https://example.com:8443/", None, True),
        ("http://example.com:8080/", None, True),
        ("https://example.com:443/", None, False),  # the default port, dropped by the parser
        ("https://example.com/", None, False),
        ("http://127.0.0.1:33418/cb", "stdio", False),  # a local callback
        ("http://127.0.0.1:33418/cb", "https://mcp.example.com/", True),
        ("ssh://example.com:2222/", None, False),  # not a web URL: UV102 says enough
        # the server's own host: its origin, or another port of the machine it runs on
        ("https://mcp.acme.io:8443/oauth/authorize", "https://mcp.acme.io:8443/mcp", False),
        ("https://MCP.acme.io.:9443/x", "https://mcp.acme.io:8443/mcp", False),
        ("https://mcp.example.com:8443/oauth/start", "https://mcp.example.com/mcp", False),
        ("https://files.acme.io:8443/", "https://mcp.acme.io:8443/mcp", True),  # another host
        ("https://203.0.113.9:8443/", "https://203.0.113.9/mcp", False),
    ],
)
def test_non_standard_port(url: str, server: str | None, fires: bool) -> None:
    assert ("UV107" in codes(url, server)) is fires


def test_non_standard_port_only_warns() -> None:
    assert OFFLINE.vet("https://example.com:8443/").decision.value == "warn"


# -- severities and select/ignore reach these rules ------------------------------------------------


def test_policy_severity_override_changes_the_decision() -> None:
    lenient = Vetter(Policy(dns={"enabled": False}, severity={"UV101": "low"}))
    assert lenient.vet("http://example.com/").decision.value == "warn"
    strict = Vetter(Policy(dns={"enabled": False}, severity={"non-standard-port": "high"}))
    assert strict.vet("https://example.com:8443/").decision.value == "block"


def test_ignored_rule_does_not_run() -> None:
    vetter = Vetter(Policy(dns={"enabled": False}, ignore=["UV1"]))
    assert vetter.vet("javascript:alert(1)").codes == ()
    assert vetter.vet("javascript:alert(1)").decision.value == "allow"
