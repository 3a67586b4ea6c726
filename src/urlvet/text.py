"""Display text, shared by every rendering: hidden characters made visible, and clipping.

A URL or a server's message reaches a person through a consent screen, a terminal, a log, a
report or a JSON-RPC message. Each of those shows it through these helpers, so that none can
hide text (bidi overrides, zero-width characters), write terminal escapes, or run on without
end. Two marks for a hidden character:

- ``⟨U+202E⟩`` (:func:`visible`), on the consent screens, which are Unicode;
- ``<U+202E>`` (:func:`printable`), in terminals, logs and reports, which may be ASCII.

This module is at the bottom of the layers: it imports nothing from urlvet.
"""

from __future__ import annotations

import unicodedata

BIDI_CHARACTERS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
)
"""The characters that change the direction of the text around them."""

INVISIBLE_CHARACTERS = frozenset(
    "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e\u200b\u200c\u200d\u2060"
    "\u2061\u2062\u2063\u2064\u3164\ufeff\uffa0"
)
"""Characters that take no room or look like blanks (beside variation selectors and tags)."""

# The characters flagged below that str.isprintable() accepts (it rejects controls, format
# characters and surrogates, which are all the others): printable text without any of these
# has nothing to report.
_PRINTABLE_HIDDEN = frozenset(
    c for c in INVISIBLE_CHARACTERS.union(map(chr, range(0xFE00, 0xFE10))) if c.isprintable()
)

PRINTABLE_LIMIT = 300
"""Characters :func:`printable` shows before it clips, unless told otherwise."""


def hidden_characters(text: str) -> list[tuple[int, str, str]]:
    """(index, U+XXXX, kind) for every control, bidi or invisible character in ``text``."""
    found: list[tuple[int, str, str]] = []
    if text.isprintable() and (text.isascii() or _PRINTABLE_HIDDEN.isdisjoint(text)):
        # The common cases, without a loop in Python: ASCII without controls, and Unicode
        # (an IDN host) without controls, format characters or the few printable invisibles.
        return found
    for i, ch in enumerate(text):
        o = ord(ch)
        if o < 0x20 or 0x7F <= o <= 0x9F:
            kind = "control"
        elif ch in BIDI_CHARACTERS:
            kind = "bidi"
        elif ch in INVISIBLE_CHARACTERS or 0xE0000 <= o <= 0xE007F or 0xFE00 <= o <= 0xFE0F:
            kind = "invisible"
        elif 0xD800 <= o <= 0xDFFF:
            kind = "surrogate"
        elif unicodedata.category(ch) == "Cf":
            kind = "format"
        else:
            continue
        found.append((i, f"U+{o:04X}", kind))
    return found


def _marked(text: str, opening: str, closing: str, keep_newlines: bool) -> str:
    marks = {i: code for i, code, _ in hidden_characters(text)}
    if not marks:
        return text
    out = []
    for i, ch in enumerate(text):
        if i in marks and not (keep_newlines and ch == "\n"):
            out.append(f"{opening}{marks[i]}{closing}")
        else:
            out.append(ch)
    return "".join(out)


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control, bidi and invisible character replaced by ``⟨U+XXXX⟩``.

    With ``keep_newlines``, line feeds stay line breaks (a carriage return is still shown).
    """
    return _marked(text, "⟨", "⟩", keep_newlines)


def clip(text: str, limit: int) -> tuple[str, int]:
    """(shown, cut): the first ``limit`` characters and how many were left out."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with '…' where it was cut (for evidence and
    messages that quote what they are about)."""
    return text if len(text) <= limit else text[:limit] + "\u2026"


def clip_middle(text: str, limit: int) -> tuple[str, str, int]:
    """(head, tail, cut): keep both ends of ``text``; the end nearest the site matters most."""
    if len(text) <= limit:
        return text, "", 0
    head = max(limit // 4, 1)
    tail = limit - head
    return text[:head], text[-tail:], len(text) - head - tail


def more_characters(n: int) -> str:
    """How a consent screen says that ``n`` characters were clipped."""
    return f"… [{n:,} more characters not shown]"


def printable(text: str, limit: int = PRINTABLE_LIMIT) -> str:
    """Text safe for a terminal or a log: controls, bidi and invisible characters are shown
    as ``<U+XXXX>``, and text longer than ``limit`` is cut (saying by how much)."""
    head, cut = clip(text, limit)
    out = _marked(head, "<", ">", keep_newlines=False)
    return out + (f"… ({cut:,} more characters)" if cut else "")


def one_line(text: str, limit: int) -> str:
    """``text`` on one line of at most ``limit`` characters: hidden characters shown as
    ``⟨U+XXXX⟩``, runs of white space (line breaks included) made one space, ``…`` when cut."""
    flat = " ".join(visible(text, keep_newlines=True).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


__all__ = [
    "BIDI_CHARACTERS",
    "INVISIBLE_CHARACTERS",
    "PRINTABLE_LIMIT",
    "clip",
    "clip_middle",
    "hidden_characters",
    "more_characters",
    "one_line",
    "printable",
    "visible",
]
