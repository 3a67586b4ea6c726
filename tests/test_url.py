"""urlvet.url: urlvet parses a URL exactly as a browser will open it.

The oracle is the web-platform-tests URL suite (as synced by ada-url): every vector's href and
host, and every vector a browser refuses. Then the site (registrable domain, PSL private
section), the suffix list never touching the network or the disk, and the parser
differential corpus that shows why urllib must never decide the host.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from support import OFFLINE
from support.corpora import CORPORA, load
from urlvet import psl
from urlvet.url import (
    MAX_CARRIED,
    MAX_CARRIED_DEPTH,
    MAX_CARRIED_LENGTH,
    HostKind,
    InvalidURL,
    ParsedURL,
    carried_urls,
    normalize_domain,
    parse,
    site_of,
)

URLTESTDATA: list[dict[str, Any]] = [
    t for t in load("whatwg/urltestdata.json") if isinstance(t, dict)
]
TOASCII: list[dict[str, Any]] = [t for t in load("whatwg/toascii.json") if isinstance(t, dict)]

# Where urlvet knowingly differs from a vector, the input and the reason. Empty: ada-url 4
# agrees with all 891 urltestdata vectors and all 87 toascii vectors, and urlvet adds nothing
# to the parse that could disagree. Note in particular that the current URL Standard and the
# vectors KEEP all-ASCII hosts with undecodable A-labels (`xn--a`, `xn--ls8h=`, `xn--1ug`
# = a lone ZERO WIDTH JOINER): browsers open them, so urlvet must not call them unparseable;
# it only never shows them decoded (test_invalid_a_labels_are_never_shown_decoded).
KNOWN_DIFFERENCES: dict[str, str] = {}


def _host_as_in_vectors(url: ParsedURL) -> str:
    return f"[{url.host}]" if url.host_kind is HostKind.IPV6 else url.host


def _vector_id(t: dict[str, Any]) -> str:
    base = t.get("base")
    return repr(t["input"])[:60] + (f" @ {base!r}"[:40] if base else "")


def _agrees(t: dict[str, Any]) -> bool:
    try:
        url = parse(t["input"], t.get("base"))
    except InvalidURL:
        return bool(t.get("failure"))
    if t.get("failure"):
        return False
    return url.href == t["href"] and _host_as_in_vectors(url) == t["hostname"]


def test_urltestdata_corpus_is_the_expected_one() -> None:
    assert len(URLTESTDATA) == 891
    assert sum(1 for t in URLTESTDATA if t.get("failure")) == 267


def test_urltestdata_agreement_is_total() -> None:
    agree = [t for t in URLTESTDATA if _agrees(t)]
    disagree = [t["input"] for t in URLTESTDATA if not _agrees(t)]
    assert sorted(disagree) == sorted(KNOWN_DIFFERENCES), disagree
    assert len(agree) == len(URLTESTDATA) - len(KNOWN_DIFFERENCES)


@pytest.mark.parametrize("t", [t for t in URLTESTDATA if not t.get("failure")], ids=_vector_id)
def test_valid_vector_gives_the_browsers_href_and_host(t: dict[str, Any]) -> None:
    url = parse(t["input"], t.get("base"))
    assert url.href == t["href"]
    assert _host_as_in_vectors(url) == t["hostname"]
    assert url.scheme + ":" == t["protocol"]
    assert url.username == t["username"]
    assert url.password == t["password"]
    assert url.pathname == t["pathname"]
    assert url.search == t["search"]
    assert url.hash == t["hash"]
    assert (str(url.port) if url.port is not None else "") == t["port"]


@pytest.mark.parametrize(
    "t", [t for t in URLTESTDATA if t.get("failure") and t.get("base") is None], ids=_vector_id
)
def test_refused_vector_without_base_is_blocked_as_unparseable(t: dict[str, Any]) -> None:
    verdict = OFFLINE.vet(t["input"])
    assert verdict.decision.value == "block"
    assert "UV100" in verdict.codes
    assert verdict.href is None


@pytest.mark.parametrize(
    "t", [t for t in URLTESTDATA if t.get("failure") and t.get("base") is not None], ids=_vector_id
)
def test_refused_vector_with_base_is_refused_by_the_parser(t: dict[str, Any]) -> None:
    # Vet takes no base URL (a server sends absolute URLs); the parser under it takes one.
    with pytest.raises(InvalidURL):
        parse(t["input"], t["base"])


@pytest.mark.parametrize("t", TOASCII, ids=lambda t: repr(t["input"])[:50])
def test_toascii_vector_gives_the_browsers_host(t: dict[str, Any]) -> None:
    if t["output"] is None:
        with pytest.raises(InvalidURL):
            parse(f"https://{t['input']}/x")
        assert OFFLINE.vet(f"https://{t['input']}/x").decision.value == "block"
    else:
        assert parse(f"https://{t['input']}/x").host == t["output"]


@pytest.mark.parametrize(
    ("host", "shown"),
    [
        ("xn--a.example", "xn--a.example"),  # decodes to U+0080, a control character
        ("xn--1ug.example", "xn--1ug.example"),  # a lone ZERO WIDTH JOINER: invisible
        ("xn--7ba.example", "xn--7ba.example"),  # upper-case Ä, which UTS #46 maps
        ("xn--kba.example", "xn--kba.example"),  # SOFT HYPHEN, ignored by UTS #46
        ("xn--a-ecp.example", "xn--a-ecp.example"),  # a⒈, disallowed
        ("xn--xn--zca-hia.example", "xn--xn--zca-hia.example"),  # decodes to another xn--
        ("xn--zca.example", "ß.example"),  # valid: decoded
        ("xn--mnchen-3ya.de", "münchen.de"),
        ("xn--a.xn--zca", "xn--a.ß"),  # label by label
    ],
)
def test_invalid_a_labels_are_never_shown_decoded(host: str, shown: str) -> None:
    url = parse(f"https://{host}/")
    assert url.host == host
    assert url.host_unicode == shown
    assert OFFLINE.vet(f"https://{host}/").host_unicode == shown


# -- the parsed fields ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "kind", "host", "ip"),
    [
        ("https://example.com/", HostKind.DOMAIN, "example.com", None),
        ("https://127.1/", HostKind.IPV4, "127.0.0.1", "127.0.0.1"),
        ("https://[::1]/", HostKind.IPV6, "::1", "::1"),
        ("javascript:alert(1)", HostKind.EMPTY, "", None),
        ("file:///etc/passwd", HostKind.EMPTY, "", None),
        ("ssh://git@github.com/x", HostKind.OPAQUE, "github.com", None),
    ],
)
def test_host_kind_and_address(raw: str, kind: HostKind, host: str, ip: str | None) -> None:
    url = parse(raw)
    assert url.host_kind is kind
    assert url.host == host
    assert (str(url.ip) if url.ip is not None else None) == ip


def test_address_read_from_its_bytes_is_the_one_its_text_gives() -> None:
    # The parser reads an IP host's address from its bytes (socket.inet_aton, inet_pton),
    # not with ipaddress's text parser: for every vector and IP spelling that parses to an
    # address, the two give the same address.
    import ipaddress

    spellings = [
        "https://2130706433/",
        "https://0x7f.1/",
        "https://0177.0.0.1/",
        "https://[::ffff:127.0.0.1]/",
        "https://[0:0:0:0:0:ffff:7f00:1]/",
        "https://[2001:db8:0:0:1:0:0:1]/",
        "https://[fe80::1]/",
        "https://[::]/",
        "https://0.0.0.0/",
        "https://255.255.255.255/",
    ]
    compared = 0
    payloads = (CORPORA / "ssrf" / "ssrf_payloads.txt").read_text(encoding="utf-8").splitlines()
    vectors = [str(t["input"]) for t in URLTESTDATA if not t.get("base")]
    for raw in vectors + payloads + spellings:
        try:
            url = parse(raw)
        except InvalidURL:
            continue
        if url.ip is None:
            continue
        assert url.ip == ipaddress.ip_address(url.host), raw
        assert type(url.ip) is type(ipaddress.ip_address(url.host)), raw
        compared += 1
    assert compared > 100


def test_parsed_url_carries_what_the_consent_screen_needs() -> None:
    url = parse("HTTPS://User:Pw@BÜCHER.example.co.uk:8443/a/../b?q=1#frag")
    assert url.href == "https://User:Pw@xn--bcher-kva.example.co.uk:8443/b?q=1#frag"
    assert url.scheme == "https"
    assert url.has_userinfo
    assert url.username == "User"
    assert url.password == "Pw"
    assert url.host == "xn--bcher-kva.example.co.uk"
    assert url.host_unicode == "bücher.example.co.uk"
    assert url.port == 8443
    assert url.effective_port == 8443
    assert url.registrable_domain == "example.co.uk"
    assert url.public_suffix == "co.uk"
    assert not url.suffix_is_private
    assert parse("https://example.com:443/").port is None  # the default port is dropped


def test_parse_refuses_what_is_not_text() -> None:
    with pytest.raises(InvalidURL):
        parse(b"https://example.com/")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("example.com", "no scheme"),
        ("https://exa mple.com/", "browser would refuse"),
        ("https://[::1/", "browser would refuse"),
        ("https://example.com:99999/", "browser would refuse"),
        ("https://a\x00b.com/", "NUL"),
    ],
)
def test_refusal_reasons_are_plain_language(raw: str, reason: str) -> None:
    with pytest.raises(InvalidURL, match=reason):
        parse(raw)


# -- sites: the registrable domain, with the PSL private section ----------------------------


@pytest.mark.parametrize(
    ("host", "site", "suffix", "private"),
    [
        ("foo.github.io", "foo.github.io", "github.io", True),
        ("bar.github.io", "bar.github.io", "github.io", True),
        ("a.b.foo.github.io", "foo.github.io", "github.io", True),
        ("github.io", None, "github.io", True),
        ("www.example.com", "example.com", "com", False),
        ("example.com.", "example.com", "com", False),
        ("a.example.co.uk", "example.co.uk", "co.uk", False),
        ("myapp.herokuapp.com", "myapp.herokuapp.com", "herokuapp.com", True),
        ("bucket.s3.amazonaws.com", "bucket.s3.amazonaws.com", "s3.amazonaws.com", True),
        ("xn--mnchen-3ya.de", "xn--mnchen-3ya.de", "de", False),
        ("www.xn--55qx5d.xn--fiqs8s", "xn--55qx5d.xn--fiqs8s", "xn--fiqs8s", False),
        ("evil.example", None, None, False),  # .example is no public suffix
        ("intranet", None, None, False),
    ],
)
def test_registrable_domain_includes_the_private_section(
    host: str, site: str | None, suffix: str | None, private: bool
) -> None:
    assert site_of(host) == (site, suffix, private)


def test_sibling_hosts_of_a_private_suffix_are_different_sites() -> None:
    foo, bar = parse("https://foo.github.io/"), parse("https://bar.github.io/")
    assert foo.registrable_domain != bar.registrable_domain
    verdict = OFFLINE.vet("https://foo.github.io/x", server="https://bar.github.io/mcp")
    assert "UV401" in verdict.codes
    same = OFFLINE.vet("https://foo.github.io/x", server="https://foo.github.io/mcp")
    assert "UV401" not in same.codes


SITE_SAMPLE = [
    "www.google.com",
    "foo.github.io",
    "a.b.c.blogspot.co.uk",
    "myapp.herokuapp.com",
    "www.xn--55qx5d.xn--fiqs8s",
    "test.city.kawasaki.jp",  # an exception rule (!city.kawasaki.jp)
    "a.b.kawasaki.jp",  # a wildcard rule (*.kawasaki.jp)
    "foo.bar.ck",
    "www.ck",
    "example.local",
    "com",
    "s3.amazonaws.com",
    "bucket.s3.dualstack.us-east-1.amazonaws.com",
    "x.appspot.com",
    "x.y.cloudfront.net",
    "münchen.de",
]


def test_site_lookup_equals_tldextract_offline(tmp_path: Path, monkeypatch: Any) -> None:
    """psl.py matches tldextract's rules itself; its answers equal tldextract's own.

    tldextract is built the only way urlvet allows: no suffix-list URLs (nothing to fetch)
    and no cache directory (nothing written). The check runs with sockets forbidden and
    HOME/XDG pointed at an empty directory, which must stay empty.
    """
    import tldextract

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TLDEXTRACT_CACHE", raising=False)

    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("tldextract tried to use the network")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    extract = tldextract.TLDExtract(
        cache_dir=None, suffix_list_urls=(), include_psl_private_domains=True
    )
    for host in SITE_SAMPLE:
        ascii_host = parse(f"https://{host}/").host
        ext = extract(ascii_host)
        expected = f"{ext.domain}.{ext.suffix}" if ext.domain and ext.suffix else ""
        got_site, got_suffix, _ = psl.split(ascii_host)
        assert (got_site, got_suffix) == (expected, ext.suffix), host
    assert list(tmp_path.iterdir()) == []


def test_site_lookup_does_no_io_after_the_first_read() -> None:
    site_of("warm.example.com")  # the snapshot is read once, on first use
    events: list[str] = []
    recording = [True]

    def hook(event: str, args: Any) -> None:
        if recording[0] and (event == "open" or event.startswith("socket.")):
            events.append(event)

    sys.addaudithook(hook)  # audit hooks cannot be removed: switched off below
    try:
        parse("https://deep.sub.example.github.io/")
        site_of("a.b.c.d.example.co.uk")
        OFFLINE.vet("https://foo.bar.github.io/x", "https://mcp.example.com/")
    finally:
        recording[0] = False
    assert events == []


# -- policy domains are spelled as the browser spells hosts ---------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Example.COM.", "example.com"),
        ("faß.de", "xn--fa-hia.de"),  # UTS #46 nontransitional (IDNA 2003 says fass.de)
        ("BÜCHER.example", "xn--bcher-kva.example"),
        ("ｅｘａｍｐｌｅ．ｃｏｍ", "example.com"),
        ("xn--mnchen-3ya.de", "xn--mnchen-3ya.de"),
    ],
)
def test_normalize_domain_spells_as_the_browser(text: str, expected: str) -> None:
    assert normalize_domain(text) == expected


@pytest.mark.parametrize("text", ["", "a b", "exa/mple", "1.2.3.4", "[::1]", "user@x", "a:1"])
def test_normalize_domain_refuses_non_domains(text: str) -> None:
    with pytest.raises(ValueError):
        normalize_domain(text)


# -- the ada-vs-urllib differential: urlvet's host is the WHATWG one ---------------------------

DIFFERENTIAL = load("ssrf/parser_differential_ada_vs_urllib.json")["rows"]


@pytest.mark.parametrize("row", DIFFERENTIAL, ids=lambda r: repr(r["url"])[:60])
def test_host_is_the_whatwg_host_never_urllibs(row: dict[str, Any]) -> None:
    expected = row["whatwg_ada"]
    verdict = OFFLINE.vet(row["url"])
    if expected.get("failure"):
        assert verdict.href is None
        assert verdict.decision.value == "block"
        return
    url = parse(row["url"])
    assert _host_as_in_vectors(url) == expected["hostname"]
    assert url.href == expected["href"]
    assert url.username == expected["username"]
    assert (str(url.port) if url.port is not None else "") == expected["port"]
    assert verdict.href == expected["href"]


def test_differential_corpus_really_differs_from_urllib() -> None:
    # The point of the corpus: urllib's host differs on many rows, so using it would be wrong.
    differs = [r for r in DIFFERENTIAL if r.get("differs_3_11_7")]
    assert len(differs) >= 50
    assert (CORPORA / "ssrf/parser_differential_ada_vs_urllib.json").is_file()


def test_parse_builds_the_same_value_as_the_dataclass_constructor() -> None:
    # parse() sets the slots directly (faster than the frozen dataclass's __init__): the
    # result must be the very value the constructor builds from the same fields.
    import dataclasses

    from urlvet.url import ParsedURL

    for raw in (
        "https://user:pw@xn--bcher-kva.de:8443/p?q=1#f",
        "http://[::ffff:127.0.0.1]/",
        "foo://opaque.host/x",
        "javascript:alert(1)",
        "http://0x7f.1/",
    ):
        parsed = parse(raw)
        built = ParsedURL(**{f.name: getattr(parsed, f.name) for f in dataclasses.fields(parsed)})
        assert parsed == built
        assert hash(parsed) == hash(built)
        assert repr(parsed) == repr(built)
        with pytest.raises(dataclasses.FrozenInstanceError):
            parsed.host = "evil.example"  # type: ignore[misc]


def test_parts_read_off_the_href_are_the_parts_ada_url_gives() -> None:
    # The parser reads most parts off the serialised URL instead of asking ada-url for each;
    # ada-url's URL class asks for each (the path taken should its binding move). Every vector,
    # valid or refused, gives the same parts both ways.
    from urlvet.url.parsing import _class_components, _components

    compared = 0
    for t in URLTESTDATA:
        base = t.get("base")
        read, asked = _components(t["input"], base), _class_components(t["input"], base)
        assert read == asked, t["input"]
        compared += read is not None
    assert compared == len(URLTESTDATA) - 267


# -- URLs carried in parameters ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "value", "encoding"),
    [
        ("q=https://a.example/", "https://a.example/", "plain"),
        ("q=https%3A%2F%2Fa.example%2F", "https://a.example/", "plain"),
        ("q=https%253A%252F%252Fa.example%252F", "https://a.example/", "percent-encoded x2"),
        (
            "q=https%25253A%25252F%25252Fa.example%25252F",
            "https://a.example/",
            "percent-encoded x3",
        ),
        # the second round is percent-decoding only: a '+' the first round kept stays a '+'
        (
            "q=https%253A%252F%252Fa.example%252F%253Fx%253Da%252Bb",
            "https://a.example/?x=a+b",
            "percent-encoded x2",
        ),
        ("u=a1aHR0cHM6Ly9hLmV4YW1wbGUv", "https://a.example/", "base64"),
        ("next=javascript%3Aalert(1)", "javascript:alert(1)", "plain"),
    ],
)
def test_carried_url_is_decoded_as_many_times_as_it_was_encoded(
    query: str, value: str, encoding: str
) -> None:
    [item] = carried_urls(parse("https://www.example.com/r?" + query))
    assert (item.value, item.encoding, item.depth) == (value, encoding, 1)


@pytest.mark.parametrize(
    "query",
    [
        "q=hello",
        "next=%2Fhome",
        "next=data:text/html,x",  # browsers refuse to open data: at the top level
        "time=12:30",
        "u=a1bm90LWEtdXJs",  # base64 of "not-a-url"
        "q=https%25252525253A%25252525252F%25252525252Fa.example",  # more rounds than allowed
        "q=" + "https://a.example/" + "x" * MAX_CARRIED_LENGTH,  # too long to read
    ],
)
def test_values_that_are_no_carried_url(query: str) -> None:
    assert carried_urls(parse("https://www.example.com/?" + query)) == ()


def test_carried_urls_follow_nesting_to_a_bound() -> None:
    url = "https://z.example/"
    for i in range(MAX_CARRIED_DEPTH + 3):
        url = f"https://h{i}.example/?next=" + quote(url, safe="")
    found = carried_urls(parse(url))
    assert [c.depth for c in found] == list(range(1, MAX_CARRIED_DEPTH + 1))
    assert found[-1].path == ("next",) * MAX_CARRIED_DEPTH


def test_carried_urls_stop_at_a_count() -> None:
    query = "&".join(f"p{i}=https://a{i}.example/" for i in range(MAX_CARRIED * 3))
    assert len(carried_urls(parse("https://www.example.com/?" + query))) == MAX_CARRIED


def test_only_short_carried_parameters_are_kept_in_memory() -> None:
    from urlvet import url as url_module

    first, deeper = url_module._kept_first_item, url_module._kept_carried_parameter
    first.cache_clear()
    deeper.cache_clear()
    nested = "%3Fnext%3Dhttps%253A%252F%252Fb.example"
    short = parse(f"https://a.example/cb?redirect_uri=https%3A%2F%2Fapp.example%2Fcb{nested}")
    assert [c.target.host for c in carried_urls(short)] == ["app.example", "b.example"]
    # One entry each: the link's parameter with its item, the nested one with its reading.
    assert (first.cache_info().currsize, deeper.cache_info().currsize) == (1, 1)
    # Hostile names as long as the URL limit allows: read, and not kept.
    name = "n" * (url_module.CARRIED_PARAMETER_KEPT_LENGTH + 1)
    nested = f"%3F{name}%3Dhttps%253A%252F%252Fc.example"
    long = parse(f"https://a.example/cb?{name}=https%3A%2F%2Fother.example%2F{nested}")
    assert [c.target.host for c in carried_urls(long)] == ["other.example", "c.example"]
    assert (first.cache_info().currsize, deeper.cache_info().currsize) == (1, 1)
