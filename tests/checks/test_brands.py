"""UV215, UV308-UV311 and UV407 through the public API, each with the near misses that must
stay quiet."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from support import OFFLINE, codes
from urlvet import Decision

MS = (
    "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=abc"
    "&scope=Mail.Read&response_type="
)


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("https://microsoft-365-share.s3.amazonaws.com/index.html", "UV308"),
        ("https://pub-0a1b.r2.dev/login.microsoftonline.com/index.html", "UV308"),
        ("https://acct9.z22.web.core.windows.net/owa/auth/logon.aspx", "UV308"),
        ("https://sites.google.com/view/onedrive-secure-login/home", "UV308"),
        ("https://m365-admin-billing.com/", "UV309"),
        ("https://entra.verify-session.com/", "UV309"),
        ("https://square-invoice-pay.net/", "UV309"),
        ("https://ΝΙΚΕ.COM/", "UV310"),
        ("https://ΑΜΕΧ.COM/login", "UV310"),
        ("https://nn1crosoft.com/", "UV311"),
        ("https://gitlhub.com.example.net/", "UV311"),
    ],
)
def test_each_shape_is_reported_from_a_stdio_server(url: str, code: str) -> None:
    assert code in codes(url, "stdio")
    assert OFFLINE.vet(url, "stdio").decision is not Decision.ALLOW


@pytest.mark.parametrize(
    "url",
    [
        "https://www.squarespace.com/",
        "https://www.officedepot.com/",
        "https://www.livenation.com/",
        "https://www.applebees.com/",
        "https://www.metacritic.com/",
        "https://s3.amazonaws.com/aws-cli/awscli-bundle.zip",
        "https://microsoft.github.io/vscode-docs/",
        "https://ΑΘΗΝΑ.gr/",
        "https://GITHUB.COM/login",
        "https://www.nikon.com/",
    ],
)
def test_real_sites_near_the_shapes_stay_quiet(url: str) -> None:
    found = codes(url, "stdio")
    assert not found & {"UV308", "UV309", "UV310", "UV311"}, found


def test_lower_case_greek_is_not_read_as_capitals() -> None:
    assert "UV310" not in codes("https://νικε.com/", "stdio")


@pytest.mark.parametrize(
    ("url", "decision"),
    [
        ("https://urldefense.com/v3/__http://10.0.0.5/admin__;!!a!b$", Decision.BLOCK),
        ("https://www.google.com/amp/s/xn--pypal-4ve.com/", Decision.BLOCK),
        ("https://www.google.com/url?q=data:text/html;base64,PGI+PC9iPg==", Decision.BLOCK),
        ("https://urldefense.com/v3/__https://www.python.org/__;!!a!b$", Decision.ALLOW),
    ],
)
def test_a_wrapped_link_takes_its_destination_verdict(url: str, decision: Decision) -> None:
    verdict = OFFLINE.vet(url, "stdio")
    assert "UV215" in verdict.codes
    assert verdict.decision is decision


@pytest.mark.parametrize(
    ("url", "server", "decision"),
    [
        (
            MS + "token&redirect_uri=" + quote("https://sink.example.net/", safe=""),
            "stdio",
            Decision.BLOCK,
        ),
        (
            MS + "code&redirect_uri=" + quote("https://sink.example.net/", safe=""),
            "stdio",
            Decision.WARN,
        ),
        (
            MS + "code&redirect_uri=" + quote("https://sink.example.net/", safe=""),
            None,
            Decision.WARN,
        ),
        (
            MS + "code&redirect_uri=storagerelay%3A%2F%2Fhttps%2Fsink.example.net%3Fid%3D1",
            "stdio",
            Decision.BLOCK,
        ),
        (
            MS + "token&redirect_uri=" + quote("https://sink.example.net/", safe=""),
            "https://mcp.example.com/mcp",
            Decision.BLOCK,
        ),
    ],
)
def test_a_grant_to_another_party_is_reported_whoever_asks(
    url: str, server: str | None, decision: Decision
) -> None:
    verdict = OFFLINE.vet(url, server)
    assert "UV407" in verdict.codes
    assert verdict.decision is decision


@pytest.mark.parametrize(
    ("redirect", "server"),
    [
        ("http://127.0.0.1:8400/cb", "stdio"),
        ("https://login.microsoftonline.com/common/oauth2/nativeclient", "stdio"),
        ("https://mcp.example.com/oauth/callback", "https://mcp.example.com/mcp"),
        ("com.example.app:/oauth2redirect", "stdio"),
    ],
)
def test_a_grant_back_to_this_computer_the_provider_or_the_server_is_quiet(
    redirect: str, server: str
) -> None:
    url = MS + "code&redirect_uri=" + quote(redirect, safe="")
    assert "UV407" not in codes(url, server)


def test_zoom_sign_in_back_to_the_server_is_allowed() -> None:
    url = "https://zoom.us/oauth/authorize?response_type=code&client_id=a&redirect_uri=" + quote(
        "https://mcp.example.com/cb", safe=""
    )
    assert OFFLINE.vet(url, "https://mcp.example.com/mcp").decision is Decision.ALLOW


ROUND3 = Path(__file__).resolve().parents[2] / "corpus" / "blind" / "round3.jsonl"


def test_the_blind_cases_are_judged_the_same_with_every_memo_off() -> None:
    """The new rules' declarations (per host, blind to a tail except on their hosts) hold:
    the engine's shortcuts give the verdicts of the ordinary path on round three's cases."""
    script = (
        "import json,sys\n"
        "from urlvet import Policy, Vetter\n"
        "v=Vetter(Policy(dns={'enabled': False}))\n"
        "for line in open(sys.argv[1], encoding='utf-8'):\n"
        "    c=json.loads(line)\n"
        "    r=v.vet(c['url'], c['server'])\n"
        "    print(r.decision.value, ' '.join(sorted(r.codes)))\n"
    )
    env = {**os.environ}
    runs = []
    for memos in ("on", "off"):
        env["URLVET_MEMOS"] = memos
        done = subprocess.run(
            [sys.executable, "-c", script, str(ROUND3)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(done.stdout)
    assert runs[0] == runs[1]
    assert runs[0].count("\n") > 300
