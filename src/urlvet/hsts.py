"""Chromium's HSTS preload list: hosts every major browser opens over https: whatever the link says.

The list comes from the ``hstspreload`` package (its version is the list's date). Its own
lookup opens the package's data file for every host it has not seen (about 0.7 ms a host);
here the file is read once, and each bucket of it is indexed the first time a host needs it,
so that a lookup costs a few microseconds. A test holds this lookup equal to the package's.
Should the package change its layout, the package's own lookup is used instead.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_left
from collections.abc import Callable
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "LIST_MAX_AGE_DAYS",
    "QUIET_AGE_WARNING_ENV",
    "hsts_preload_list_date",
    "is_hsts_preloaded",
    "stale_list_warning",
]

LIST_MAX_AGE_DAYS = 365
"""A preload list older than this misses a year of sites that browsers force to https:."""

QUIET_AGE_WARNING_ENV = "URLVET_NO_HSTS_AGE_WARNING"
"""Set (to anything but empty) to silence the warning about an old preload list."""

_IS_LEAF = 0x80
_INCLUDE_SUBDOMAINS = 0x40
_MAX_LAYERS = 5  # the list holds no entry deeper than five labels


def is_hsts_preloaded(host: str) -> bool:
    """True when browsers upgrade ``http:`` for ``host`` before sending anything.

    The host itself is on Chromium's preload list, or a parent (a TLD such as ``.dev``
    included) is listed with its subdomains. ``host`` is an A-label name.
    """
    name = host.rstrip(".").lower()
    if not name or not name.isascii():
        return False
    return _lookup()(name.encode("ascii"))


@cache
def hsts_preload_list_date() -> str:
    """The date of the bundled HSTS preload list: the ``hstspreload`` release, which is
    numbered by date (2025.1.1 -> 2025-01-01)."""
    import hstspreload

    version = str(hstspreload.__version__)
    parts = version.split(".")
    if len(parts) == 3 and all(p.isdigit() for p in parts):
        year, month, day = (int(p) for p in parts)
        return f"{year:04d}-{month:02d}-{day:02d}"
    return version


def stale_list_warning(list_date: str, today: date) -> str | None:
    """The warning to show when the preload list of ``list_date`` (YYYY-MM-DD) is more than
    ``LIST_MAX_AGE_DAYS`` old on ``today``, or None. An undated list gets no warning."""
    try:
        listed = date.fromisoformat(list_date)
    except ValueError:
        return None
    age = (today - listed).days
    if age <= LIST_MAX_AGE_DAYS:
        return None
    return (
        f"the HSTS preload list is from {list_date}, {age} days old: UV101 does not know the "
        "sites preloaded since then (nor tls.hsts_preloaded_severity, for them). "
        "A newer hstspreload release brings a newer list, if there is one (`pip install -U "
        f"hstspreload`; its version is the list's date); set {QUIET_AGE_WARNING_ENV}=1 to "
        "silence this warning"
    )


@cache
def _lookup() -> Callable[[bytes], bool]:
    import hstspreload

    try:
        table = _Table(
            Path(hstspreload.__file__).with_name("hstspreload.bin").read_bytes(),
            hstspreload._JUMPTABLE,
            hstspreload._CRC8_TABLE,
            frozenset(hstspreload._GTLD_INCLUDE_SUBDOMAINS),
        )
    except (AttributeError, OSError):
        return lambda host: bool(hstspreload.in_hsts_preload(host))
    return table.contains


class _Names:
    """Names of one bucket (offsets into the file, lengths) sorted by their hash: about 12
    bytes a name, where a set of bytes takes about 80, and a look-up is a binary search."""

    __slots__ = ("_data", "_hashes", "_places")

    def __init__(self, data: bytes, places: list[tuple[int, int]]) -> None:
        self._data = data
        keyed = sorted((hash(data[at : at + n]), at, n) for at, n in places)
        self._hashes = array("q", [h for h, _, _ in keyed])
        self._places = array("q", [(at << 8) | n for _, at, n in keyed])

    def __contains__(self, name: bytes) -> bool:
        h = hash(name)
        hashes = self._hashes
        i = bisect_left(hashes, h)
        while i < len(hashes) and hashes[i] == h:  # equal hashes: compare the names
            place = self._places[i]
            at, n = place >> 8, place & 0xFF
            if n == len(name) and self._data[at : at + n] == name:
                return True
            i += 1
        return False


_Bucket = tuple[_Names, _Names, _Names]
"""A bucket's listed names with their subdomains, listed names alone, and inner labels."""


class _Table:
    """The package's data file with a lazily built index per (layer, label hash) bucket."""

    def __init__(
        self, data: bytes, jumps: Any, crc_table: Any, tld_subdomains: frozenset[bytes]
    ) -> None:
        self._data = data
        self._jumps = jumps
        self._crc = tuple(crc_table)
        self._tlds = tld_subdomains
        self._lock = threading.Lock()
        self._buckets: dict[tuple[int, int], _Bucket] = {}

    def contains(self, host: bytes) -> bool:
        labels = host.split(b".")
        if labels[-1] in self._tlds:
            return True
        for layer, label in enumerate(reversed(labels)):
            if layer >= _MAX_LAYERS:
                return False
            bucket = self._bucket(layer, self._crc8(label))
            if bucket is None:
                return False
            subdomains, alone, inner = bucket
            # A leaf is a whole listed name: the host itself, or a parent with subdomains.
            if host in subdomains or host in alone:
                return True
            dot = host.find(b".")
            while dot >= 0:
                if host[dot + 1 :] in subdomains:
                    return True
                dot = host.find(b".", dot + 1)
            if label not in inner:
                return False
        return False

    def _crc8(self, label: bytes) -> int:
        checksum = 0
        table = self._crc
        for byte in label:
            checksum = table[checksum ^ byte]
        return checksum

    def _bucket(self, layer: int, crc: int) -> _Bucket | None:
        key = (layer, crc)
        found = self._buckets.get(key)
        if found is not None:
            return found
        jump = self._jumps[layer][crc] if layer < len(self._jumps) else None
        if jump is None:
            return None
        start, size = jump
        data = self._data
        subdomains: list[tuple[int, int]] = []
        alone: list[tuple[int, int]] = []
        inner: list[tuple[int, int]] = []
        i, end = start, start + size
        while i < end:
            flags, n = data[i], data[i + 1]
            if flags & _IS_LEAF:
                (subdomains if flags & _INCLUDE_SUBDOMAINS else alone).append((i + 2, n))
            else:
                inner.append((i + 2, n))
            i += 2 + n
        built = (_Names(data, subdomains), _Names(data, alone), _Names(data, inner))
        with self._lock:
            return self._buckets.setdefault(key, built)
