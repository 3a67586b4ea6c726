"""urlvet.url's query decoding and the cheap tests before it, held to the plain reading.

Form decoding is a split on '%' with a table of escapes (and text that stays ASCII never
goes through bytes); the reference here is the URL Standard's algorithm written the plain
way, a regular expression over the UTF-8 bytes. ``may_carry`` rules values out before any
decoding; the reference is the full decode (``carried.py``'s reading of a parameter), on
generated hostile values: escapes in one to three rounds, ``%3A`` spelt every way, base64,
duplicated parameters, long runs.
"""

from __future__ import annotations

import base64
import random
import re
from urllib.parse import quote

import pytest

from urlvet.url import InvalidURL, carried_urls, form_decode, may_carry, parse, percent_decode
from urlvet.url.carried import _carried_parameter

_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})")


def _reference_percent_decode(text: str) -> str:
    raw = _ESCAPE.sub(
        lambda m: bytes((int(m.group(1), 16),)), text.encode("utf-8", "surrogatepass")
    )
    return raw.decode("utf-8", "replace")


def _reference_form_decode(text: str) -> str:
    return _reference_percent_decode(text.replace("+", " "))


# Pieces of hostile values: escapes of every kind and case, cut short, doubled, of bytes that
# form UTF-8 sequences (valid, overlong, surrogates, cut), lone surrogates, '+' and '%' alone.
ESCAPE_ATOMS = [
    "%", "%%", "%2", "%25", "%252", "%3a", "%3A", "%253a", "%2525", "%zz", "%0", "%20", "%2B",
    "%2b", "%C3", "%a9", "%C3%A9", "%e2%82%ac", "%E2%82", "%ff", "%80", "%C0%AF", "%ED%A0%80",
    "%F0%9F%98%80", "%F0%9F", "%c2%a0", "%00", "+", "a", "Z", "0", "f", "G", ":", "é", "東",
    "\ud800", "\udfff", " ", "\t", "=", "&",
]  # fmt: skip


def _hostile_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = ["", "%", "+", "plain", "caf%C3%A9", "news%20letter", "a%2", "%%41"]
    for _ in range(count):
        texts.append("".join(rng.choice(ESCAPE_ATOMS) for _ in range(rng.randint(1, 14))))
    texts.append("%41" * 3000 + "%C3%A9" * 3000 + "%" * 3000)  # a long run of each
    return texts


def test_form_decoding_is_the_plain_reading_on_hostile_text() -> None:
    for text in _hostile_texts(40_000, seed=7):
        assert form_decode(text) == _reference_form_decode(text), repr(text)


def test_percent_decoding_is_the_plain_reading_on_hostile_text() -> None:
    for text in _hostile_texts(40_000, seed=8):
        want = text if "%" not in text else _reference_percent_decode(text)
        assert percent_decode(text) == want, repr(text)


@pytest.mark.parametrize(
    ("text", "decoded"),
    [
        ("news%20letter", "news letter"),
        ("spring+sale", "spring sale"),
        ("caf%C3%A9", "café"),
        ("%E2%82%AC100", "€100"),
        ("a%2Bb", "a+b"),
        ("%zz%4", "%zz%4"),  # a '%' that starts no escape stays
        ("%C3", "\ufffd"),  # a cut UTF-8 sequence is replaced
        ("x\ud800", "x" + "\ufffd" * 3),  # a lone surrogate: each of its three bytes
        ("%41\ud800", "A" + "\ufffd" * 3),
    ],
)
def test_form_decoding_of_values_as_logs_carry_them(text: str, decoded: str) -> None:
    assert form_decode(text) == decoded


def test_a_plus_stays_a_plus_in_a_second_round() -> None:
    assert percent_decode("a+b%2B") == "a+b+"


def _encoded(text: str, rounds: int) -> str:
    for _ in range(rounds):
        text = quote(text, safe="")
    return text


def _escaped_every_byte(text: str, rng: random.Random) -> str:
    return "".join(rng.choice(("%{:02X}", "%{:02x}")).format(ord(c)) for c in text)


COLONS = [":", "%3A", "%3a", "%253A", "%253a", "%25253A", "%%33A", "%%33%61", "%25%33%41", "%3"]
DESTINATIONS = [
    "https://a.example/",
    "http://10.0.0.1/",
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    "vbscript:msgbox",
    "data:text/html,x",
    "mailto:a@example.com",
    "HTTPS://A.EXAMPLE",
    " \thttps://a.example/",
]
WORDS = ["news letter", "a/b", "mail@list", "id,name", "café", "€100", "a+b", "/home?x=1", "12:30"]


def _hostile_values(count: int, seed: int) -> list[str]:
    """Values as a hostile link writes them: URLs encoded in one to three rounds (and past
    the bound), every byte escaped, the colon spelt every way, base64, long runs, words with
    escapes that carry nothing."""
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(count):
        shape = rng.randrange(7)
        url = rng.choice(DESTINATIONS)
        if shape == 0:
            out.append(_encoded(url, rng.randint(0, 4)))
        elif shape == 1:
            out.append(_escaped_every_byte(url, rng))
        elif shape == 2:
            scheme, _, rest = url.partition(":")
            out.append(_encoded(scheme, rng.randint(0, 2)) + rng.choice(COLONS) + quote(rest))
        elif shape == 3:
            data = base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")
            if rng.random() < 0.5:  # one of its first letters or digits escaped
                k = rng.randrange(6)
                data = f"{data[:k]}%{ord(data[k]):02X}{data[k + 1 :]}"
            out.append(
                rng.choice(("a1", "a%31", "%61%31", " a1", ""))
                + data
                + rng.choice(("", "=", "%20"))
            )
        elif shape == 4:
            out.append(rng.choice("%:a+.") * rng.randint(50, 3000))
        elif shape == 5:
            out.append(_encoded(rng.choice(WORDS), rng.randint(1, 3)))
        else:
            out.append(
                "".join(rng.choice(ESCAPE_ATOMS + COLONS) for _ in range(rng.randint(1, 12)))
            )
    return out


def test_a_value_ruled_out_before_decoding_is_no_url_when_decoded() -> None:
    ruled_out = read = 0
    for value in _hostile_values(30_000, seed=11):
        found = _carried_parameter("next", value)
        if not may_carry(value):
            ruled_out += 1
            assert found is None, repr(value)
        elif found is not None:
            read += 1
    # Both sides are met: values ruled out, and values read as URLs that were not.
    assert ruled_out > 3_000
    assert read > 3_000


def test_a_query_ruled_out_before_decoding_carries_no_url() -> None:
    rng = random.Random(12)
    values = _hostile_values(4_000, seed=13)
    ruled_out = 0
    for _ in range(4_000):
        parts = [
            f"{rng.choice(('next', 'url', 'q'))}={rng.choice(values)}"
            for _ in range(rng.randint(1, 4))
        ]
        parts += [parts[0]] * rng.choice((0, 1, 2))  # the same parameter again
        query = "&".join(parts)
        if len(query) > 20_000:
            continue
        if not may_carry(query):
            ruled_out += 1
            assert all(not may_carry(part.partition("=")[2]) for part in parts), query
            try:
                link = parse("https://h.example/?" + query)
            except InvalidURL:
                continue  # a lone surrogate: no link at all
            assert carried_urls(link) == (), query
    assert ruled_out > 100


@pytest.mark.parametrize(
    "value",
    [
        "news%20letter",
        "social%2Fads",
        "mail%40list",
        "id%2Cname",
        "caf%C3%A9",
        "%2Fdashboard%3Ftab%3D7",
        "format%2Ccompress",
        "naïve%20search",
    ],
)
def test_tracking_values_with_escapes_are_ruled_out_before_decoding(value: str) -> None:
    assert not may_carry(value)


@pytest.mark.parametrize(
    "value",
    [
        "https%3A%2F%2Fa.example%2F",
        "https%253A%252F%252Fa.example",
        "%68ttps%3A//a.example/",  # a letter escaped: it may be a scheme's
        "https%%33A//a.example/",  # '%', then '3' and 'A' make an escape in a second round
        "a1aHR0cHM6Ly9hLmV4YW1wbGUv",
        "a%31aHR0cHM6Ly9hLmV4YW1wbGUv",
        "a1%61HR0cHM6Ly9hLmV4YW1wbGUv",  # base64 of "http" with a letter escaped
        "a1aHR%30cHM6Ly9hLmV4YW1wbGUv",
        "100%",
    ],
)
def test_values_that_may_decode_to_a_url_are_decoded(value: str) -> None:
    assert may_carry(value)
