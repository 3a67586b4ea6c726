"""urlvet.text: the one place that makes hidden characters visible and clips display text."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from urlvet.text import (
    clip,
    clip_middle,
    hidden_characters,
    more_characters,
    one_line,
    printable,
    visible,
)

SRC = Path(__file__).resolve().parents[1] / "src" / "urlvet"


def test_visible_and_printable_mark_the_same_characters_differently() -> None:
    text = "a\u202eb\u200bc\x1b[2Jd"
    assert visible(text) == "a⟨U+202E⟩b⟨U+200B⟩c⟨U+001B⟩[2Jd"
    assert printable(text) == "a<U+202E>b<U+200B>c<U+001B>[2Jd"


def test_printable_clips_and_says_how_much() -> None:
    assert printable("x" * 10, 4) == "xxxx… (6 more characters)"
    assert printable("x" * 4, 4) == "xxxx"


def test_visible_keeps_line_feeds_only_when_asked() -> None:
    assert visible("a\nb\rc", keep_newlines=True) == "a\nb⟨U+000D⟩c"
    assert visible("a\nb") == "a⟨U+000A⟩b"


def test_clip_and_clip_middle() -> None:
    assert clip("abcdef", 4) == ("abcd", 2)
    assert clip("abc", 4) == ("abc", 0)
    assert clip_middle("0123456789", 8) == ("01", "456789", 2)
    assert more_characters(1234) == "… [1,234 more characters not shown]"


@given(st.text(max_size=400), st.integers(min_value=1, max_value=200))
def test_one_line_is_one_line_within_the_limit_and_hides_nothing(text: str, limit: int) -> None:
    line = one_line(text, limit)
    assert len(line) <= limit
    assert "\n" not in line
    assert hidden_characters(line) == []


def test_no_module_but_text_defines_its_own_hidden_character_marks() -> None:
    # The copies this module replaced each wrapped a marks table: f"<{marks[i]}>".
    builder = re.compile(r"[<⟨]\{marks\[")
    offenders = [
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if p.name != "text.py" and builder.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []
