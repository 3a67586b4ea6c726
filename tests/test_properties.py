"""Laws that hold for every input: a verdict, never an exception; the same verdict twice; the
A-label and U-label spellings of a host get the same decision."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from urlvet import Policy, Server, Verdict, Vetter
from urlvet.url import (
    CARRIED_SCHEMES,
    MAX_CARRIED,
    MAX_CARRIED_DEPTH,
    InvalidURL,
    carried_urls,
    parse,
)

VETTER = Vetter(Policy(dns={"enabled": False}))

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    database=None,  # no .hypothesis directory written into the work tree
    derandomize=True,  # CI runs the same examples every time
    suppress_health_check=[HealthCheck.too_slow],
)

SERVERS = st.sampled_from(
    [
        None,
        "stdio",
        "https://mcp.example.com/mcp",
        "http://127.0.0.1:9000/mcp",
        "https://bar.github.io/",
        Server(name="github"),
    ]
)

ANY_TEXT = st.text(
    alphabet=st.characters(exclude_categories=()),  # surrogates and controls included
    max_size=300,
)

PARTS = st.sampled_from(
    [
        "https://",
        "http://",
        "javascript:",
        "data:",
        "//",
        "\\\\",
        "@",
        ":",
        "/",
        ".",
        "[",
        "]",
        "::ffff:",
        "127.0.0.1",
        "0x7f",
        "%2e",
        "%00",
        "xn--",
        "nip.io",
        "localhost",
        "例え",
        "ß",
        "\u202e",
        "\u200b",
        "\x00",
        "\t",
        "#",
        "?",
        "1",
        "a",
        "?next=",
        "&u=",
        "=",
        "&",
        "%3A%2F%2F",
        "%253A%252F%252F",
        "a1aHR0cHM6Ly9",
        "www.google.com/url?q=",
    ]
)
URL_LIKE = st.lists(PARTS, max_size=20).map("".join)


def _is_verdict(verdict: Verdict) -> None:
    assert isinstance(verdict, Verdict)
    assert verdict.decision.value in ("allow", "warn", "block")
    if verdict.href is None:
        assert verdict.decision.value == "block"


@SETTINGS
@given(url=ANY_TEXT, server=SERVERS)
@example(url="", server=None)
@example(url="\x00", server=None)
@example(url="https://example.com/\udc80", server="stdio")
@example(url="https://" + "a" * 70_000 + ".com/", server=None)
@example(url="https://example.com/?" + "x" * 1_000_000, server="https://mcp.example.com/mcp")
# Found by fuzzing: hosts that end in empty labels (the WHATWG parser keeps `8..` as a domain).
@example(url="https://..", server=None)
@example(url="http://%2e", server=None)
@example(url="https://8../", server=None)
@example(url="http://127.0.0.1../", server="https://mcp.example.com/mcp")
def test_any_string_gets_a_verdict(url: str, server: object) -> None:
    first = VETTER.vet(url, server)  # type: ignore[arg-type]
    _is_verdict(first)
    assert VETTER.vet(url, server) == first  # type: ignore[arg-type]


@SETTINGS
@given(url=URL_LIKE, server=SERVERS)
def test_url_like_strings_get_a_verdict(url: str, server: object) -> None:
    first = VETTER.vet(url, server)  # type: ignore[arg-type]
    _is_verdict(first)
    assert VETTER.vet(url, server) == first  # type: ignore[arg-type]


@SETTINGS
@given(data=st.binary(max_size=200))
def test_any_bytes_get_a_verdict(data: bytes) -> None:
    _is_verdict(VETTER.vet(data))


LETTERS = st.sampled_from(
    list("abcdefghijklmnopqrstuvwxyz0123456789-")
    + list("äöüßéèçñøåæœ")  # Latin
    + list("абвгдежзийклмнопрстуфхцчшщ")  # Cyrillic
    + list("αβγδεζηθικλμνξοπρστυφχψω")  # Greek
    + list("日本語中文字例")  # Han
    + list("אבגדהוזחט")  # Hebrew (right-to-left)
)
TLDS = st.sampled_from(["com", "de", "org", "jp", "example", "xn--p1ai", "рф"])


@SETTINGS
@given(label=st.lists(LETTERS, min_size=1, max_size=12).map("".join), tld=TLDS, server=SERVERS)
def test_a_label_and_u_label_spellings_get_the_same_verdict(
    label: str, tld: str, server: object
) -> None:
    unicode_url = f"https://{label}.{tld}/path"
    try:
        parsed = parse(unicode_url)
    except InvalidURL:
        assume(False)  # not a valid IDN (a leading hyphen, mixed directions...)
        return
    assume(parsed.host != parsed.host_unicode or label.isascii())
    ascii_url = f"https://{parsed.host}/path"
    u = VETTER.vet(unicode_url, server)  # type: ignore[arg-type]
    a = VETTER.vet(ascii_url, server)  # type: ignore[arg-type]
    assert a.href == u.href
    assert a.decision == u.decision
    assert a.codes == u.codes
    assert a.host == u.host
    assert a.host_unicode == u.host_unicode


QUERY_PARTS = st.sampled_from(
    [
        "next=",
        "q=",
        "u=",
        "&",
        "https",
        "%3A",
        "%253A",
        "%2F",
        "%252F",
        "://",
        "%",
        "2F",
        "a1aHR0cHM6Ly9",
        "example.com",
        "?",
        "%3F",
        "%26",
        "%3D",
        "javascript:",
        "+",
    ]
)


@SETTINGS
@given(query=st.lists(QUERY_PARTS, max_size=40).map("".join))
def test_carried_urls_are_bounded_and_well_formed(query: str) -> None:
    try:
        url = parse("https://www.example.com/?" + query)
    except InvalidURL:
        assume(False)
        return
    found = carried_urls(url)
    assert len(found) <= MAX_CARRIED
    for item in found:
        assert 1 <= item.depth <= MAX_CARRIED_DEPTH
        assert len(item.path) == item.depth
        assert item.path[-1] == item.name
        assert item.target.scheme in CARRIED_SCHEMES
