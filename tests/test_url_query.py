"""urlvet.url's query decoding and the cheap tests before it, held to the plain reading.

Form decoding is a split on '%' with a table of escapes (and text that stays ASCII never
goes through bytes); the reference here is the URL Standard's algorithm written the plain
way, a regular expression over the UTF-8 bytes. ``may_carry`` rules values out before any
decoding; the reference is the full decode (``carried.py``'s reading of a parameter), on
generated hostile values: escapes in one to three rounds, ``%3A`` spelt every way, base64,
duplicated parameters, long runs.
"""

from __future__ import annotations

import random
import re

import pytest

from urlvet.url import form_decode, percent_decode

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
