"""UV212-UV214: shorteners, redirectors vetted at their destination, unsafe destinations in
`next`/`continue`/... parameters; and the loopback domains of UV204, which are a policy list."""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import quote

import pytest

import support
from support import OFFLINE
from urlvet import Decision, Policy, Vetter, load_policy
from urlvet.checks.base import MAX_REDIRECT_HOPS

REMOTE = "https://mcp.example.com/mcp"


def codes(url: str, server: str | None = "stdio", vetter: Vetter = OFFLINE) -> set[str]:
    """The codes of ``url`` as a stdio server's request (these rules read no server)."""
    return support.codes(url, server, vetter)


def bing(target: str) -> str:
    """A Bing click-tracker link to ``target`` ("a1" and base64url, as Bing writes it)."""
    data = base64.urlsafe_b64encode(target.encode()).decode().rstrip("=")
    return f"https://www.bing.com/ck/a?!&&p=0f1e2d&ptn=3&ver=2&hsh=3&u=a1{data}&ntb=1"


# -- UV212 url-shortener ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "fires"),
    [
        ("https://bit.ly/3Kx9TqZ", True),
        ("https://tinyurl.com/y7k3pz2m", True),
        ("https://rebrand.ly/acct-verify", True),
        ("https://iplogger.org/2abc", True),  # an IP logger forwards after recording you
        ("https://BIT.LY./x", True),
        ("https://bit.ly/", False),  # the shortener's own home page leads nowhere else
        ("https://bit.ly", False),
        ("https://bitly-login.example/x", False),
        ("https://youtu.be/dQw4w9WgXcQ", False),  # a brand's own shortener: only its own site
        ("https://example.com/bit.ly/x", False),
    ],
)
def test_url_shortener(url: str, fires: bool) -> None:
    assert ("UV212" in codes(url)) is fires


def test_shortener_warns_and_says_the_destination_is_unknown() -> None:
    verdict = OFFLINE.vet("https://ow.ly/Ab12cD", "stdio")
    assert verdict.decision is Decision.WARN
    [finding] = verdict.findings
    assert "where it really leads is unknown" in finding.message
    assert finding.evidence == {"host": "ow.ly", "shortener": "ow.ly"}


@pytest.mark.parametrize("extends", ["extends: default\n", ""])
def test_shortener_list_is_a_policy_key_that_extends_add_to(tmp_path: Path, extends: str) -> None:
    # Without `extends` a file starts from the default too: a team's first policy keeps the
    # built-in shorteners.
    child = tmp_path / "team.yaml"
    child.write_text(extends + "domains:\n  shorteners: [go.example.net]\n", encoding="utf-8")
    vetter = Vetter(load_policy(child).with_changes(dns={"enabled": False}))
    assert "UV212" in codes("https://go.example.net/abc", vetter=vetter)
    assert "UV212" in codes("https://bit.ly/abc", vetter=vetter)  # the parent's stay


def test_extends_none_states_the_shortener_list_in_full(tmp_path: Path) -> None:
    child = tmp_path / "team.yaml"
    child.write_text("extends: none\ndomains:\n  shorteners: [go.example.net]\n", "utf-8")
    vetter = Vetter(load_policy(child).with_changes(dns={"enabled": False}))
    assert "UV212" in codes("https://go.example.net/abc", vetter=vetter)
    assert "UV212" not in codes("https://bit.ly/abc", vetter=vetter)
    allowed = Vetter(Policy(dns={"enabled": False}, domains={"allowed": ["bit.ly"]}))
    assert "UV212" not in codes("https://bit.ly/abc", vetter=allowed)


# -- UV213 open-redirect ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "decision"),
    [
        # a homoglyph of paypal.com behind Google's redirector: the destination's UV302 counts
        ("https://www.google.com/url?q=https://xn--pypal-4ve.com/signin&sa=D", Decision.BLOCK),
        # search results write the target in url= with q= empty
        ("https://www.google.com/url?sa=t&q=&url=https%3A%2F%2F10.0.0.5%2F", Decision.BLOCK),
        (bing("https://169.254.169.254/latest/meta-data/"), Decision.BLOCK),
        (bing("https://en.wikipedia.org/wiki/Phishing"), Decision.WARN),  # clean, elsewhere
        (
            "https://nam12.safelinks.protection.outlook.com/?url=https%3A%2F%2Fbit.ly%2Fx&data=0",
            Decision.WARN,
        ),
        (
            "https://l.facebook.com/l.php?u=http%3A%2F%2Fexample.org%2F&h=AT1",
            Decision.BLOCK,
        ),  # http
        ("https://www.youtube.com/redirect?event=x&q=https%3A%2F%2Fexample.org%2F", Decision.WARN),
    ],
)
def test_open_redirect_takes_the_destinations_decision(url: str, decision: Decision) -> None:
    verdict = OFFLINE.vet(url, "stdio")
    assert "UV213" in verdict.codes
    assert verdict.decision is decision


@pytest.mark.parametrize(
    "url",
    [
        "https://www.google.com/url?q=https://www.google.com/search?q%3Dweather&sa=D",
        "https://www.google.com/url?q=https://mail.google.com/",  # same site
        bing("https://www.bing.com/search?q=weather"),
        "https://www.youtube.com/redirect?q=https%3A%2F%2Fwww.youtube.com%2Fwatch%3Fv%3Dx",
        "https://www.google.com/search?q=https%3A%2F%2Fexample.org%2F",  # not a redirector page
        "https://www.google.com/url?sa=D",  # no destination
        "https://www.bing.com/ck/a?u=a1bm90LWEtdXJs",  # base64 of something that is no URL
    ],
)
def test_open_redirect_quiet_for_own_site_and_non_redirects(url: str) -> None:
    assert "UV213" not in codes(url)


def test_open_redirect_evidence_lists_the_destinations_findings() -> None:
    url = "https://www.google.com/url?q=https%253A%252F%252F127.0.0.1%253A8080%252Fadmin&sa=D"
    verdict = OFFLINE.vet(url, REMOTE)
    [finding] = [f for f in verdict.findings if f.code == "UV213"]
    assert finding.severity.value == "critical"
    assert finding.message.startswith(
        "The link names www.google.com, but it is a redirect: it really opens 127.0.0.1."
    )
    ev = finding.evidence
    assert ev["destination"] == "https://127.0.0.1:8080/admin"
    assert ev["encoding"] == "percent-encoded x2"
    assert ev["parameter"] == "q"
    assert [d["code"] for d in ev["destination_findings"]] == ["UV201", "UV107"]
    # the destination's codes stay inside the evidence: no second UV201 or UV107 outside
    assert set(verdict.codes) == {"UV213", "UV401"}
    assert "UV210" not in verdict.codes  # UV213 reports the redirector's destination


def test_open_redirect_follows_a_redirector_inside_a_redirector() -> None:
    inner = "https://l.facebook.com/l.php?u=" + quote("https://xn--80ak6aa92e.com/", safe="")
    url = "https://www.google.com/url?q=" + quote(inner, safe="") + "&sa=D"
    verdict = OFFLINE.vet(url, "stdio")
    assert verdict.decision is Decision.BLOCK
    [finding] = verdict.findings
    assert finding.code == "UV213"
    assert finding.evidence["destination"].startswith("https://l.facebook.com/l.php")
    assert finding.evidence["final_destination"] == "https://xn--80ak6aa92e.com/"
    assert finding.evidence["destination_findings"][0]["code"] == "UV213"
    assert "xn--80ak6aa92e.com" in finding.message


def test_redirect_hops_are_bounded() -> None:
    url = "https://xn--pypal-4ve.com/"
    for hop in range(MAX_REDIRECT_HOPS + 3):
        url = bing(url) if hop % 2 else "https://www.google.com/url?q=" + quote(url, safe="")
    verdict = OFFLINE.vet(url, "stdio")
    # the homoglyph is too deep to be vetted; the hops that are followed still say where
    assert verdict.codes == ("UV213",)
    assert verdict.decision is Decision.WARN
    [finding] = verdict.findings
    assert [d["code"] for d in finding.evidence["destination_findings"]] == ["UV213"]
    # the link, and one message per hop followed, each naming its destination
    assert finding.message.count("it is a redirect") == MAX_REDIRECT_HOPS + 1
    assert "xn--pypal-4ve.com" not in finding.message


def test_open_redirect_shows_the_destination_in_punycode() -> None:
    [finding] = OFFLINE.vet(bing("https://аррӏе.com/"), "stdio").findings
    assert "it really opens xn--80ak6aa92e.com." in finding.message


def test_redirectors_are_a_policy_key() -> None:
    none = Vetter(Policy(dns={"enabled": False}, redirectors=[]))
    assert "UV213" not in codes(bing("https://example.org/"), vetter=none)
    own = Vetter(Policy(dns={"enabled": False}, redirectors=["out.example.net/go?to"]))
    assert "UV213" in codes("https://out.example.net/go?to=https://example.org/", vetter=own)
    assert "UV213" not in codes("https://out.example.net/other?to=https://example.org/", vetter=own)


@pytest.mark.parametrize("entry", ["www.google.com/url", "www.google.com/url?", "x.com/y?a,,b"])
def test_a_redirector_entry_names_its_parameters(entry: str) -> None:
    with pytest.raises(ValueError, match="host/path\\?parameter"):
        Policy(redirectors=[entry])


# -- UV214 unsafe-destination-in-parameter -------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "decision"),
    [
        ("https://www.example.com/login?next=https%3A%2F%2Fxn--pypal-4ve.com%2F", Decision.BLOCK),
        ("https://shop.example.net/go?dest=javascript%3Aalert(document.cookie)", Decision.BLOCK),
        ("https://shop.example.net/go?target=http%3A%2F%2Fexample.org%2F", Decision.BLOCK),
        ("https://shop.example.net/go?goto=https%3A%2F%2Fbit.ly%2Fx", Decision.WARN),
        # return_to inside continue, the inner one encoded twice
        (
            "https://app.example.org/sso?continue=https%3A%2F%2Fportal.example.org%2Fback"
            "%3Freturn_to%3Dhttps%253A%252F%252Fxn--gogle-kua.com%252F",
            Decision.BLOCK,
        ),
    ],
)
def test_unsafe_destination_in_parameter(url: str, decision: Decision) -> None:
    verdict = OFFLINE.vet(url, "stdio")
    assert "UV214" in verdict.codes
    assert verdict.decision is decision


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/login?return_to=https%3A%2F%2Fgithub.com%2Fsettings%2Ftokens",
        "https://accounts.google.com/o/oauth2/v2/auth?client_id=a&redirect_uri=http%3A%2F%2F127.0.0.1%3A53682%2F",
        "https://example.com/?next=data:text/html,x",  # browsers refuse to open data: on top
        "https://example.com/?next=%2Fdashboard",  # a path, not a URL
        "https://example.com/?ref=https%3A%2F%2Fxn--pypal-4ve.com%2F",  # not a forwarding name
        "https://www.google.com/search?q=http%3A%2F%2Fexample.org%2F",  # a search for a URL
        "https://www.google.com/search?q=javascript%3Avoid(0)",
        "https://example.com/?next=https%3A%2F%2F10.0.0.5%2F",  # UV210's
        "https://example.com/login?next=http%3A%2F%2Fwww.example.com%2Fhome",  # its own site
    ],
)
def test_unsafe_destination_quiet(url: str) -> None:
    assert "UV214" not in codes(url)


def test_internal_destination_is_uv210_not_uv213() -> None:
    assert codes("https://example.com/?next=https%3A%2F%2F10.0.0.5%2F") == {"UV210"}


def test_uv210_reads_nested_and_double_encoded_parameters() -> None:
    url = "https://example.com/?next=https%3A%2F%2Fportal.example.org%2F%3Furl%3Dhttp%253A%252F%252F192.168.1.1%252F"
    [finding] = [f for f in OFFLINE.vet(url, REMOTE).findings if f.code == "UV210"]
    assert finding.evidence["parameter"] == "next > url"
    assert finding.evidence["host"] == "192.168.1.1"


def test_uv406_reads_a_double_encoded_redirect_uri() -> None:
    url = (
        "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=x"
        "&redirect_uri=https%253A%252F%252Ffiles-sync.net%252Fcb"
    )
    assert "UV406" in codes(url, REMOTE)


# -- UV204 loopback domains -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://localho.st:3000/",
        "https://app.lvh.me/admin",
        "https://x.y.localtest.me/",
        "https://vcap.me/",
        "https://api.lo0.in/",
        "https://dev.127-0-0-1.org.uk/",
    ],
)
def test_loopback_domains_block_offline(url: str) -> None:
    verdict = OFFLINE.vet(url, "stdio")
    assert "UV204" in verdict.codes
    assert verdict.decision is Decision.BLOCK
    [finding] = [f for f in verdict.findings if f.code == "UV204"]
    assert finding.evidence["loopback"] is True
    assert "leads to this computer" in finding.message


def test_loopback_domains_are_a_policy_list() -> None:
    mine = Vetter(Policy(dns={"enabled": False}, domains={"loopback_dns": ["dev.example.net"]}))
    assert "UV204" in codes("https://a.dev.example.net/", vetter=mine)
    assert "UV204" not in codes("https://lvh.me/", vetter=mine)  # the list replaced
