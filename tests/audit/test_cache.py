"""The record cache: vetted records least recently used first out, records made at once in two
generations within their share, and both within the cache's bounds in entries and bytes."""

from __future__ import annotations

from urlvet.audit.cache import Key, RecordCache
from urlvet.audit.output.record import Record
from urlvet.findings import Decision


def _record(url: str) -> Record:
    return Record(Decision.ALLOW, (), url, url + "#", None, f'"url":"{url}"', -1, (), url)


def _key(i: int) -> Key:
    return (f"https://h{i}.example/{'x' * (i % 50)}", None, None)


def test_vetted_records_are_evicted_least_recently_used_first() -> None:
    cache = RecordCache(size=3, budget=10**9)
    for i in range(3):
        cache.put(_key(i), _record(_key(i)[0]))
    assert cache.get(_key(0)) is not None  # now the most recently used
    cache.put(_key(3), _record(_key(3)[0]))
    assert _key(1) not in cache
    assert all(_key(i) in cache for i in (0, 2, 3))
