"""The link-wrapper decoders, one table per documented or publicly reverse-engineered format."""

from __future__ import annotations

import base64
from urllib.parse import quote

import pytest

from urlvet.url import parse
from urlvet.wrappers import is_wrapper_host, unwrap

TARGET = "https://evil.example/a/login?x=1"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


WRAPPED = [
    # Proofpoint v2: '_' is '/', '-XX' the byte XX.
    (
        "https://urldefense.proofpoint.com/v2/url?u=https-3A__evil.example_a_login-3Fx-3D1"
        "&d=DwMFAg&c=abc&r=def&m=ghi&s=jkl&e=",
        "Proofpoint URL Defense v2",
        TARGET,
    ),
    # Proofpoint v3: the URL between '__' and '__;', each '*' the next of the packed bytes.
    (
        "https://urldefense.com/v3/__https://evil.example/a/login?x=1__;!!G2kpM7uM-TzIFchu!xyz$",
        "Proofpoint URL Defense v3",
        TARGET,
    ),
    (
        "https://urldefense.com/v3/__https://evil.example/a/login*3Fx=1__;JQ!!G2kp!xyz$",
        "Proofpoint URL Defense v3",
        "https://evil.example/a/login%3Fx=1",
    ),
    (
        "https://protect-us.mimecast.com/s/AbCdEfGhIj?domain=evil.example",
        "Mimecast URL Protect",
        "https://evil.example/",
    ),
    (
        "https://linkprotect.cudasvc.com/url?a=" + quote(TARGET, safe="") + "&c=E,1,x&typo=1",
        "Barracuda Link Protection",
        TARGET,
    ),
    (
        "https://eu-central-1.protection.sophos.com?d=evil.example&u="
        + quote(_b64(TARGET), safe="")
        + "&i=a&t=b&h=c",
        "Sophos Time-of-Click",
        TARGET,
    ),
    (
        "https://imsva91-ctp.trendmicro.com:443/wis/clicktime/v1/query?url="
        + quote(TARGET, safe="")
        + "&umid=1&auth=2",
        "Trend Micro click-time protection",
        TARGET,
    ),
    (
        "https://secure-web.cisco.com/1AbCdEfGh/" + quote(TARGET, safe=""),
        "Cisco Secure Email redirector",
        TARGET,
    ),
    (
        "https://www.google.com/amp/s/evil.example/a/login?x=1",
        "Google AMP viewer",
        TARGET,
    ),
    ("https://www.google.co.uk/amp/evil.example/", "Google AMP viewer", "http://evil.example/"),
    (
        "https://r.search.yahoo.com/_ylt=A;_ylu=B/RV=2/RE=1/RO=10/RU="
        + quote(TARGET, safe="")
        + "/RK=2/RS=x-",
        "Yahoo search redirect",
        TARGET,
    ),
    (
        "https://ad.doubleclick.net/ddm/clk/123;456;k?" + TARGET,
        "DoubleClick click-tracker",
        TARGET,
    ),
    (
        "https://adclick.g.doubleclick.net/pcs/click?xai=A&adurl=" + quote(TARGET, safe=""),
        "DoubleClick click-tracker",
        TARGET,
    ),
    ("https://href.li/?" + TARGET, "href.li redirect", TARGET),
]


@pytest.mark.parametrize(("link", "wrapper", "destination"), WRAPPED)
def test_each_wrapper_format_gives_the_url_it_carries(
    link: str, wrapper: str, destination: str
) -> None:
    found = unwrap(parse(link))
    assert found is not None
    assert (found.wrapper, found.destination) == (wrapper, destination)
    assert is_wrapper_host(parse(link))


@pytest.mark.parametrize(
    "link",
    [
        "https://www.google.com/search?q=amp",  # a Google page that is no AMP viewer
        "https://urldefense.com/v3/no-url-here",
        "https://protect-us.mimecast.com/s/AbCd",  # no domain
        "https://linkprotect.cudasvc.com/other?a=x",
        "https://secure-web.cisco.com/only-a-token",
        "https://href.li/",
        "https://example.com/amp/s/evil.example/",  # not a Google host
    ],
)
def test_a_link_that_carries_no_url_is_not_unwrapped(link: str) -> None:
    assert unwrap(parse(link)) is None


def test_a_broken_v3_byte_table_is_not_guessed() -> None:
    assert unwrap(parse("https://urldefense.com/v3/__https://a.example/*__;%%%!!x$")) is None
