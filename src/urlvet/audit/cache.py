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

MADE_SHARE = 0.25
"""The share of the cache's bounds that records made at once (plain URLs') may take."""

MADE_HIT_FLOOR = 16
"""A generation of made records whose records were met again fewer than once in this many
(an audit of distinct URLs) is dropped, and made records are not kept for a while."""
MADE_SKIP_GENERATIONS = 16
"""For how many generations' worth of made records they are then not kept, before a
generation is kept again to see whether they are met again now."""

Key = tuple[str, str | None, str | None]
"""What a record is cached under: the URL, the server (a URL or 'stdio') and the message."""


class RecordCache:
    """A map from keys to records, bounded in entries and in bytes, in two areas.

    - Records vetted (in a strategy's batches) are kept least recently used first out.
    - Records made at once (a plain URL's, cut from its shape's template: see
      :meth:`~urlvet.audit.pipeline.Strategy.quick`) are kept in two generations: the
      current one takes new records (and those met again from the one before), and when it
      is full it becomes the one before, whose records are dropped all at once. Such a
      record costs about as much to make again as to look up, and an audit of millions of
      distinct URLs makes one for nearly every line: what keeping it costs matters more than
      how long it is kept. The two generations take at most :data:`MADE_SHARE` of the
      bounds, the vetted records the rest. When the records of a generation were hardly met
      again (:data:`MADE_HIT_FLOOR`), as in an audit of distinct URLs, keeping them costs
      more than it saves: they are dropped, and the next :data:`MADE_SKIP_GENERATIONS`
      generations' worth are not kept.

    The byte bound is an estimate of what an entry holds (its strings plus a fixed overhead):
    records for long URLs or JSON output are larger, and a count alone would let them grow
    the cache past any memory target.
    """

    __slots__ = (
        "before_used",
        "budget",
        "data",
        "hits",
        "made",
        "made_before",
        "made_budget",
        "made_hits",
        "made_size",
        "made_skip",
        "made_used",
        "misses",
        "size",
        "used",
    )
    OVERHEAD = 400  # the key and record tuples, the dict entry, string headers (measured)
    MADE_OVERHEAD = 300  # the same for a made record, in a plain dict, its findings shared

    def __init__(self, size: int, budget: int) -> None:
        self.data: OrderedDict[Key, Record] = OrderedDict()
        self.size = max(1, size)
        self.budget = max(1, budget)
        self.used = 0
        """Estimated bytes of the vetted records."""
        self.made: dict[Key, Record] = {}
        self.made_before: dict[Key, Record] = {}
        self.made_used = 0
        """Estimated bytes of the current generation of made records."""
        self.before_used = 0
        """Estimated bytes of the generation of made records before it."""
        # A generation of made records holds at most half of their share.
        self.made_size = max(1, int(self.size * MADE_SHARE / 2))
        self.made_budget = max(1, int(self.budget * MADE_SHARE / 2))
        self.made_hits = 0
        """Made records met again since the current generation started."""
        self.made_skip = 0
        """Made records still not to keep."""
        self.hits = 0
        self.misses = 0

    def get(self, key: Key) -> Record | None:
        """The record cached under ``key``, if any (now the most recently used)."""
        rec = self.data.get(key)
        if rec is not None:
            self.data.move_to_end(key)
            return rec
        made = self.made
        if not made and not self.made_before:
            return None  # made records are not being kept (an audit of distinct URLs)
        rec = made.get(key)
        if rec is None:
            rec = self.made_before.pop(key, None)
            if rec is not None:  # into the current generation
                self.made_hits += 1
                self.before_used -= self.made_cost(key, rec)
                self.add_made(key, rec)
        else:
            self.made_hits += 1
        return rec

    def __contains__(self, key: object) -> bool:
        return key in self.data or key in self.made or key in self.made_before

    def __len__(self) -> int:
        return len(self.data) + len(self.made) + len(self.made_before)

    def put(self, key: Key, rec: Record) -> None:
        """Cache the vetted record ``rec`` under ``key`` (in place of any vetted record
        there), evicting the least recently used vetted records beyond the bounds."""
        old = self.data.get(key)
        if old is not None:
            self.used -= self.cost(key, old)
        self.add(key, rec)

    def add(self, key: Key, rec: Record) -> None:
        """Cache the vetted record ``rec`` under ``key``, which is not cached; as :meth:`put`."""
        data = self.data
        data[key] = rec
        self.used += self.cost(key, rec)
        if (
            self.used + self.made_used + self.before_used > self.budget
            or len(data) + len(self.made) + len(self.made_before) > self.size
        ):
            self._shrink()

    def add_made(self, key: Key, rec: Record) -> None:
        """Cache ``rec``, a record made at once, under ``key``, which is not cached (unless
        made records are not being kept)."""
        if self.made_skip:
            self.made_skip -= 1
            return
        made = self.made
        made[key] = rec
        self.made_used += self.MADE_OVERHEAD + len(key[0]) + len(rec.href or "") + len(rec.json)
        if self.made_used > self.made_budget or len(made) > self.made_size:
            if self.made_hits * MADE_HIT_FLOOR < len(made):  # hardly met again
                self.made_skip = len(made) * MADE_SKIP_GENERATIONS
                self.made_before = {}
                self.before_used = 0
            else:
                self.made_before = made  # the generation before is dropped
                self.before_used = self.made_used
            self.made = {}
            self.made_used = 0
            self.made_hits = 0
            self._shrink()

    def _shrink(self) -> None:
        """Evict vetted records, least recently used first, until the cache is in bounds."""
        data = self.data
        cost = self.cost
        size = self.size - len(self.made) - len(self.made_before)
        budget = self.budget - self.made_used - self.before_used
        while len(data) > 1 and (len(data) > size or self.used > budget):
            k, r = data.popitem(last=False)
            self.used -= cost(k, r)

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

    @classmethod
    def made_cost(cls, key: Key, rec: Record) -> int:
        """The estimated bytes an entry of a made record holds (its findings are its
        template's: shared). As :meth:`add_made` counts it."""
        return cls.MADE_OVERHEAD + len(key[0]) + len(rec.href or "") + len(rec.json)


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
        return rec._replace(findings=findings, codes=codes)
