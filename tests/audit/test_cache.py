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


def test_the_bytes_used_are_the_kept_estimates_of_the_records_held() -> None:
    # Each entry's estimate is kept beside it and read back on eviction: after any mix of
    # puts, replacements and look-ups, the bytes used are the estimates of the records held,
    # computed afresh, and both bounds hold.
    budget = 20 * (RecordCache.OVERHEAD + 200)
    cache = RecordCache(size=15, budget=budget)
    for i in range(400):
        key = _key(i % 37)
        if i % 5 == 0:
            cache.get(_key((i * 7) % 37))
        cache.put(key, _record(key[0] + "y" * (i % 11)))
        assert cache.used == sum(RecordCache.cost(k, r) for k, r in cache.data.items())
        assert set(cache.costs) == set(cache.data)
        assert len(cache) <= 15
        assert cache.used <= budget


def test_a_record_put_again_replaces_the_old_one_and_is_the_most_recent() -> None:
    cache = RecordCache(size=3, budget=10**9)
    for i in range(3):
        cache.put(_key(i), _record(_key(i)[0]))
    longer = _record(_key(0)[0] + "/longer")
    cache.put(_key(0), longer)
    assert cache.get(_key(0)) is longer
    assert cache.used == sum(RecordCache.cost(k, r) for k, r in cache.data.items())
    cache.put(_key(3), _record(_key(3)[0]))  # evicts the least recently used: key 1
    assert _key(1) not in cache
    assert all(_key(i) in cache for i in (0, 2, 3))
