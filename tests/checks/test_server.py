"""UV4xx: the URL against the server that asked for it. Each rule firing, and not firing."""

from __future__ import annotations

import pytest

import support
from support import OFFLINE
from urlvet import InputError, Policy, Server, Vetter
from urlvet.server import as_server

REMOTE = "https://mcp.example.com/mcp"
SERVER_RULES = {"UV401", "UV402", "UV403", "UV404", "UV405", "UV406"}


def codes(url: str, server: Server | str | None = REMOTE, vetter: Vetter = OFFLINE) -> set[str]:
    """The server rules' codes of ``url`` asked for by ``server`` (a remote one by default)."""
    return support.codes(url, server, vetter) & SERVER_RULES


# -- UV401 cross-site-from-server ------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "server", "expected"),
    [
        # same site: the server's own registrable domain, any subdomain
        ("https://mcp.example.com/authorize", REMOTE, set()),
        ("https://example.com/pricing", REMOTE, set()),
        ("https://docs.example.com/", REMOTE, set()),
        ("https://EXAMPLE.com./", REMOTE, set()),
        # cross site
        ("https://example-billing.net/pay", REMOTE, {"UV401"}),
        ("https://example.org/", REMOTE, {"UV401"}),
        ("https://8.8.8.8/", REMOTE, {"UV401"}),
        # the PSL private section: different github.io sites are different sites
        ("https://foo.github.io/", "https://bar.github.io/mcp", {"UV401"}),
        ("https://foo.github.io/page", "https://foo.github.io/mcp", set()),
        # trusted third parties: identity providers are information, not a mismatch
        ("https://accounts.google.com/o/oauth2/v2/auth?client_id=x", REMOTE, {"UV403"}),
        ("https://login.microsoftonline.com/common/oauth2/v2.0/authorize", REMOTE, {"UV403"}),
        ("https://github.com/login/oauth/authorize?client_id=x", REMOTE, {"UV403"}),
        ("https://github.com/login/oauth", REMOTE, {"UV403"}),
        ("https://dev-123.okta.com/oauth2/v1/authorize", REMOTE, {"UV403"}),
        # ... but only the trusted path, and only over https
        ("https://github.com/evil/repo", REMOTE, {"UV401"}),
        ("https://github.com/login/oauthx", REMOTE, {"UV401"}),
        ("https://google.com/", REMOTE, {"UV401"}),
        # no server, or a local one: nothing to compare with
        ("https://example-billing.net/pay", None, set()),
        ("https://example-billing.net/pay", "stdio", set()),
        ("https://example-billing.net/pay", "http://127.0.0.1:9000/mcp", set()),
    ],
)
def test_site_of_url_against_server(url: str, server: str | None, expected: set[str]) -> None:
    assert codes(url, server) == expected


def test_cross_site_warns_and_trusted_third_party_allows() -> None:
    assert OFFLINE.vet("https://example-billing.net/", REMOTE).decision.value == "warn"
    idp = OFFLINE.vet("https://accounts.google.com/o/oauth2/v2/auth", REMOTE)
    assert idp.decision.value == "allow"
    (finding,) = idp.findings
    assert finding.severity.value == "info"
    assert finding.evidence["trusted_entry"] == "accounts.google.com"


def test_trusted_third_parties_come_from_the_policy() -> None:
    vetter = Vetter(Policy(dns={"enabled": False}, trusted_third_parties=["auth.partner.example"]))
    assert codes("https://auth.partner.example/x", REMOTE, vetter) == {"UV403"}
    assert codes("https://accounts.google.com/", REMOTE, vetter) == {"UV401"}


def test_trusted_third_party_on_the_servers_own_site_is_not_reported() -> None:
    assert codes("https://accounts.google.com/", "https://mcp.google.com/") == set()


# -- UV402 server-domain-embedded --------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "server", "fires"),
    [
        ("https://mcp.example.com.evil.example/", REMOTE, True),
        ("https://example.com.login.evil.example/", REMOTE, True),
        ("https://example-com.evil.example/", REMOTE, True),
        ("https://login-example-com.net/", REMOTE, True),
        ("https://example.com-secure.net/", REMOTE, True),
        ("https://evil.example/example.com", REMOTE, False),  # in the path, not the host
        ("https://myexample.com.evil.example/", REMOTE, False),  # whole labels only
        ("https://data-co.uk/", "https://a.co/", False),  # `a.co` is not in `data-co`
        ("https://docs.example.com/", REMOTE, False),  # the server's own site
        ("https://example.com.evil.example/", None, False),
        ("https://example.com.evil.example/", "stdio", False),
        # a stdio server with expected domains: those are looked for
        ("https://github.com.evil.example/", Server(name="github"), True),
    ],
)
def test_server_domain_embedded(url: str, server: Server | str | None, fires: bool) -> None:
    vetter = Vetter(Policy(dns={"enabled": False}, servers={"github": {"domains": ["github.com"]}}))
    assert ("UV402" in vetter.vet(url, server).codes) is fires


def test_server_domain_embedded_blocks() -> None:
    verdict = OFFLINE.vet("https://mcp.example.com.evil.example/", REMOTE)
    assert verdict.decision.value == "block"
    (finding,) = [f for f in verdict.findings if f.code == "UV402"]
    assert finding.evidence["server_site"] == "example.com"


# -- UV404 local-callback -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "server", "fires"),
    [
        ("http://127.0.0.1:33418/callback", "stdio", True),
        ("http://localhost:33418/callback", "stdio", True),
        ("https://localhost/callback", "http://127.0.0.1:9000/mcp", True),
        ("http://[::1]:33418/callback", "http://[::1]:9000/mcp", True),
        ("http://127.0.0.1:33418/callback", REMOTE, False),
        ("http://127.0.0.1:33418/callback", None, False),
        ("https://example.com/", "stdio", False),
        ("http://192.168.1.1/", "stdio", False),
    ],
)
def test_local_callback(url: str, server: str | None, fires: bool) -> None:
    assert ("UV404" in codes(url, server)) is fires


@pytest.mark.parametrize(
    ("server", "decision"),
    [
        ("stdio", "allow"),
        ("http://127.0.0.1:9000/mcp", "allow"),
        ("http://localhost:9000/mcp", "allow"),
        (REMOTE, "block"),
        ("https://10.0.0.5/mcp", "block"),  # a private-network server is not local
        (None, "block"),
    ],
)
def test_loopback_http_callback_is_allowed_only_for_a_local_server(
    server: str | None, decision: str
) -> None:
    assert OFFLINE.vet("http://127.0.0.1:33418/callback?code=x", server).decision.value == decision


# -- UV405 unexpected-domain-for-server ----------------------------------------------------------

EXPECTING = Vetter(
    Policy(
        dns={"enabled": False},
        servers={
            "github": {"domains": ["github.com", "githubusercontent.com"]},
            "billing": {"domains": ["billing.example.com"]},
        },
    )
)


@pytest.mark.parametrize(
    ("url", "server", "fires"),
    [
        ("https://github.com/org/repo", Server(name="github"), False),
        ("https://gist.github.com/x", Server(name="github"), False),
        ("https://raw.githubusercontent.com/x", Server(name="github"), False),
        ("https://gist-github.example/", Server(name="github"), True),
        ("https://accounts.google.com/o/oauth2/auth", Server(name="github"), False),  # trusted
        ("http://127.0.0.1:8080/cb", Server(name="github"), False),  # a local callback
        ("https://github.com/", Server(name="other"), False),  # no expectation for it
        ("https://github.com/", Server(name=None), False),
        ("https://billing.example.com/pay", as_server(REMOTE, name="billing"), False),
        ("https://www.example.com/", as_server(REMOTE, name="billing"), True),
    ],
)
def test_unexpected_domain_for_server(url: str, server: Server, fires: bool) -> None:
    verdict = EXPECTING.vet(url, server)
    assert ("UV405" in verdict.codes) is fires
    if server.name in ("github", "billing"):
        assert "UV401" not in verdict.codes  # expectations replace the site comparison


def test_unexpected_domain_warns() -> None:
    verdict = EXPECTING.vet("https://gist-github.example/", Server(name="github"))
    assert verdict.decision.value == "warn"


# -- servers as the client configures them ---------------------------------------------------------


def test_server_built_by_hand_is_parsed_and_not_local() -> None:
    server = Server(name="remote", url="https://mcp.example.com/mcp")
    assert server.transport == "http"
    assert server.is_local is False
    assert server.registrable_domain == "example.com"
    assert OFFLINE.vet("http://127.0.0.1:1/cb", server).decision.value == "block"


@pytest.mark.parametrize(
    ("text", "local", "origin"),
    [
        ("stdio", True, "stdio"),
        ("STDIO", True, "stdio"),
        ("http://127.0.0.1:9000/mcp", True, "http://127.0.0.1:9000"),
        ("http://[::1]:9000/mcp", True, "http://[::1]:9000"),
        ("http://localhost/mcp", True, "http://localhost"),
        ("http://app.localhost/mcp", True, "http://app.localhost"),
        ("https://mcp.example.com/mcp", False, "https://mcp.example.com"),
        ("https://0.0.0.0/mcp", False, "https://0.0.0.0"),
    ],
)
def test_server_locality_and_origin(text: str, local: bool, origin: str) -> None:
    server = as_server(text)
    assert server is not None
    assert server.is_local is local
    assert server.origin == origin


@pytest.mark.parametrize(
    "text", ["javascript:alert(1)", "not a url", "ftp://example.com/", "file:///tmp/sock"]
)
def test_bad_server_is_an_input_error(text: str) -> None:
    with pytest.raises(InputError):
        OFFLINE.vet("https://example.com/", text)
    with pytest.raises(InputError):
        Server(url=text)


# -- UV406 sign-in-redirect-off-site ---------------------------------------------------------

MS_AUTHORIZE = "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=abc&"


@pytest.mark.parametrize(
    ("query", "server", "fires"),
    [
        ("redirect_uri=https%3A%2F%2Fevil.example%2Fcb", REMOTE, True),
        ("redirect_uri=https://attacker.net/cb&scope=openid", REMOTE, True),
        ("redirect%5Furi=https://attacker.net/cb", REMOTE, True),  # the name decoded too
        ("redirect_uri=https://mcp.example.com/x&redirect_uri=https://attacker.net/", REMOTE, True),
        ("redirect_uri=https%3A%2F%2Fmcp.example.com%2Foauth%2Fcallback", REMOTE, False),
        ("redirect_uri=https://api.example.com/cb", REMOTE, False),  # the server's site
        ("redirect_uri=http://127.0.0.1:33418/callback", REMOTE, False),  # a local client
        ("redirect_uri=http://[::1]:8080/cb", REMOTE, False),
        ("redirect_uri=com.example.app:/oauth2redirect", REMOTE, False),  # a native app
        ("redirect_uri=/relative/cb", REMOTE, False),  # not absolute: the provider refuses it
        ("redirect_uri=https://attacker.net/cb", "stdio", False),  # no site to compare
        ("redirect_uri=https://attacker.net/cb", None, False),
        ("state=redirect_uri%3Dhttps://attacker.net/", REMOTE, False),  # only the parameter
    ],
)
def test_sign_in_redirect_off_site(query: str, server: str | None, fires: bool) -> None:
    assert ("UV406" in codes(MS_AUTHORIZE + query, server)) is fires


def test_sign_in_redirect_off_site_warns_on_a_trusted_provider() -> None:
    v = OFFLINE.vet(MS_AUTHORIZE + "redirect_uri=https://attacker.net/cb", REMOTE)
    assert v.decision.value == "warn"
    (hit,) = [f for f in v.findings if f.code == "UV406"]
    assert hit.evidence["redirect_site"] == "attacker.net"
    assert hit.evidence["server_site"] == "example.com"
    assert "attacker.net" in hit.message


def test_the_servers_own_sign_in_may_redirect_anywhere() -> None:
    # The server's own authorization page: where it sends its own grant is its own affair.
    url = "https://auth.example.com/authorize?redirect_uri=https://client.example.net/cb"
    assert "UV406" not in codes(url)


def test_a_redirect_to_a_domain_the_policy_expects_from_the_server_is_fine() -> None:
    vetter = Vetter(
        Policy(
            dns={"enabled": False},
            servers={"crm": {"domains": ["crm-example.net", "login.microsoftonline.com"]}},
        )
    )
    server = Server(name="crm", url=REMOTE)
    ok = MS_AUTHORIZE + "redirect_uri=https://app.crm-example.net/cb"
    assert "UV406" not in codes(ok, server, vetter)
    assert "UV406" in codes(MS_AUTHORIZE + "redirect_uri=https://attacker.net/", server, vetter)


def test_a_huge_redirect_uri_is_shown_cut() -> None:
    v = OFFLINE.vet(MS_AUTHORIZE + "redirect_uri=https://attacker.net/" + "a" * 5000, REMOTE)
    (hit,) = [f for f in v.findings if f.code == "UV406"]
    assert len(hit.evidence["redirect_uri"]) < 400
