"""A progress line on stderr for long audits, drawn only when stderr is a terminal.

It is redrawn at most ten times a second with a carriage return, and cleared before anything
else is written to stderr and at the end, so that it never mixes with diagnostics. stdout is
never touched.
"""

from __future__ import annotations

import time
from typing import TextIO

_WIDTH = 24


class Progress:
    """Bytes read (against the total when known), URLs done, rate, current file."""

    def __init__(self, stream: TextIO, total_bytes: int | None = None) -> None:
        self.stream = stream
        self.total = total_bytes or None
        self.started = time.monotonic()
        self._last = 0.0
        self._shown = False

    def __call__(self, done_bytes: int, urls: int, name: str) -> None:
        """Redraw, if the last redraw is old enough."""
        now = time.monotonic()
        if now - self._last < 0.1 and self._shown:
            return
        self._last = now
        rate = urls / max(now - self.started, 1e-6)
        parts = []
        if self.total:
            frac = min(1.0, done_bytes / self.total)
            filled = int(frac * _WIDTH)
            parts.append(f"[{'#' * filled}{'.' * (_WIDTH - filled)}] {frac:4.0%}")
        parts.append(f"{urls:,} URLs")
        parts.append(f"{rate:,.0f}/s")
        if name:
            parts.append(name[-40:])
        self.stream.write("\r\x1b[K" + "  ".join(parts))
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        """Erase the line (before a diagnostic, and at the end)."""
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False
            self._last = 0.0
