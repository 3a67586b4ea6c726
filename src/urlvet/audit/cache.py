"""The cache of an audit: one record per distinct (URL, server, message), bounded in entries
and in bytes, so that a log that repeats a URL a million times vets it once."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from urlvet.audit.output.record import Record

CACHE_SIZE = 262_144
"""The most distinct (URL, server, message) keys whose records are cached."""
CACHE_BYTES = 24 << 20
"""The most bytes (estimated) of cached records: the bound that usually applies."""

SHRINK_MARGIN = 64
"""A full cache evicts down to this fraction (1/64) below each bound at once."""

Key = tuple[str, str | None, str | None]
"""What a record is cached under: the URL, the server (a URL or 'stdio') and the message."""


class RecordCache:
    """A map from keys to records, bounded in entries and in bytes, least recently used
    first out.

    The byte bound is an estimate of what an entry holds (its strings plus a fixed overhead):
    records for long URLs or JSON output are larger, and a count alone would let them grow
    the cache past any memory target. Each entry's estimate is kept beside it: once the
    cache is full, every new record evicts an old one, and the old one's estimate is then
    read, not computed again.
    """

    __slots__ = (
        "budget",
        "costs",
        "data",
        "hits",
        "misses",
        "size",
        "used",
    )
    OVERHEAD = 480  # the key and record tuples, the dict entries, string headers (measured)

    def __init__(self, size: int, budget: int) -> None:
        self.data: OrderedDict[Key, Record] = OrderedDict()
        self.costs: dict[Key, int] = {}
        """The estimated bytes of each entry's record (see :meth:`cost`)."""
        self.size = max(1, size)
        self.budget = max(1, budget)
        self.used = 0
        """Estimated bytes of the vetted records: the sum of :attr:`costs`."""
        self.hits = 0
        self.misses = 0

    def get(self, key: Key) -> Record | None:
        """The record cached under ``key``, if any (now the most recently used)."""
        rec = self.data.get(key)
        if rec is not None:
            self.data.move_to_end(key)
            return rec
        return None

    def __contains__(self, key: object) -> bool:
        return key in self.data

    def __len__(self) -> int:
        return len(self.data)

    def put(self, key: Key, rec: Record) -> None:
        """Cache the vetted record ``rec`` under ``key`` (in place of any vetted record
        there, now the most recently used), evicting the least recently used vetted records
        beyond the bounds."""
        data = self.data
        old = self.costs.get(key)
        if old is not None:
            self.used -= old
            data.move_to_end(key)
        cost = self.cost(key, rec)
        data[key] = rec
        self.costs[key] = cost
        self.used += cost
        if self.used > self.budget or len(data) > self.size:
            self._shrink()

    def _shrink(self) -> None:
        """Evict vetted records, least recently used first, until the cache is in bounds
        with a margin of :data:`SHRINK_MARGIN` of each: a full cache shrinks once every so
        many new records, not at each."""
        data = self.data
        costs = self.costs
        size = self.size - self.size // SHRINK_MARGIN
        budget = self.budget - self.budget // SHRINK_MARGIN
        used = self.used
        while len(data) > 1 and (len(data) > size or used > budget):
            key, _ = data.popitem(last=False)
            used -= costs.pop(key)
        self.used = used

    @classmethod
    def cost(cls, key: Key, rec: Record) -> int:
        """The estimated bytes an entry of a vetted record holds."""
        url, _, message = key
        href = rec.href
        findings = rec.findings
        n = cls.OVERHEAD + len(url) + len(rec.json) + 72 * len(findings)  # a row, its code
        if href is not None and href is not url:
            n += len(href)
        if message:
            n += len(message)
        if not rec.json:  # else the messages are in the JSON only
            for f in findings:
                n += len(f.message)
        return n


class SharedParts:
    """Makes cached records share their equal parts (finding rows, code tuples).

    Most records repeat a few finding rows and code combinations (and in JSON mode the rows
    carry no message at all); one instance of each saves a third of a cached record.
    """

    __slots__ = ("_parts",)
    LIMIT = 20_000

    def __init__(self) -> None:
        self._parts: dict[Any, Any] = {}

    def __call__(self, rec: Record) -> Record:
        if not rec.findings:
            return rec  # nothing to share: most records
        parts = self._parts
        findings = parts.get(rec.findings)
        if findings is None:
            findings = tuple(parts.setdefault(f, f) for f in rec.findings)
            if len(parts) < self.LIMIT:
                parts[findings] = findings
        codes = parts.get(rec.codes)
        if codes is None:
            codes = rec.codes
            if len(parts) < self.LIMIT:
                parts[codes] = codes
        if findings is rec.findings and codes is rec.codes:
            return rec
        # Built directly: namedtuple._replace maps over the fields in Python.
        decision, _, url, href, server, json, top_rank, _, normalised = rec
        return Record(decision, findings, url, href, server, json, top_rank, codes, normalised)
