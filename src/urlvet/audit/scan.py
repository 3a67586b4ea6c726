"""Text scanning: the URLs written in a line of free text or a log.

A URL is a scheme with ``//`` (``http://``, ``wss://``, ``ms-appx://``...) or a scheme that runs
code without it (``javascript:``, ``data:`` with a media type), up to whitespace or a character
that cannot stand in a URL; trailing punctuation and unbalanced closing brackets are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# A scheme with '//' (http://, wss://, ms-appx://...), or a scheme that runs code without
# it. `data:` needs a media type, so that "data: {...}" lines of SSE logs are not URLs.
_URL_IN_TEXT = re.compile(
    r"(?<![A-Za-z0-9+.\-])(?:[A-Za-z][A-Za-z0-9+.\-]{0,31}://|(?:javascript|vbscript):"
    r"|data:[a-z]+/[a-z0-9.+\-]+[;,])[^\s<>\"'`\x00-\x1f\x7f]*",
    re.IGNORECASE,
)
_JSON_ESCAPE_END = re.compile(r"\\[\"nrt]")
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_TRAILING = ".,;:!?*\\"


def urls_in_text(text: str) -> Iterator[tuple[int, str]]:
    """(0-based code point offset, URL) for each URL in a line of free text.

    Trailing punctuation is not part of a URL (``see https://a.example/.``), nor is a
    closing bracket that has no opening one inside the URL (``(https://a.example/)``).
    """
    for m in _URL_IN_TEXT.finditer(text):
        url = m.group(0)
        esc = _JSON_ESCAPE_END.search(url)
        if esc is not None:
            url = url[: esc.start()]
        url = url[: _kept_length(url)]
        tail = url.split(":", 1)[1].lstrip("/") if ":" in url else ""
        if tail:
            yield m.start(), url


def _kept_length(url: str) -> int:
    """How much of ``url`` is the URL: trailing punctuation and closing brackets without an
    opening one inside it left out. One walk back from the end, with the brackets counted
    once (cutting and counting again at each character cost a long run of ')' or '.' its
    length squared)."""
    end = len(url)
    if end == 0 or (url[-1] not in _TRAILING and url[-1] not in _CLOSERS):
        return end
    surplus = {c: url.count(c) - url.count(opener) for c, opener in _CLOSERS.items()}
    while end:
        c = url[end - 1]
        if c in _TRAILING:
            end -= 1
        elif c in surplus and surplus[c] > 0:
            surplus[c] -= 1
            end -= 1
        else:
            break
    return end
