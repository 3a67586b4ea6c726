"""The record cache: vetted records least recently used first out, records made at once in two
generations within their share, and both within the cache's bounds in entries and bytes."""

from __future__ import annotations

from urlvet.audit.cache import MADE_HIT_FLOOR, MADE_SHARE, MADE_SKIP_GENERATIONS, Key, RecordCache
from urlvet.audit.output.record import Record
from urlvet.findings import Decision


def _record(url: str) -> Record:
    return Record(Decision.ALLOW, (), url, url + "#", None, f'"url":"{url}"', -1, (), url)


def _key(i: int) -> Key:
    return (f"https://h{i}.example/{'x' * (i % 50)}", None, None)


def test_made_records_stay_within_their_share_and_the_bounds() -> None:
    cache = RecordCache(size=400, budget=200_000)
    for i in range(100):
        cache.add(_key(-i - 1), _record(_key(-i - 1)[0]))
    for i in range(5000):
        key = _key(i)
        cache.add_made(key, _record(key[0]))
        assert cache.get(key) is not None  # met again: made records stay worth keeping
        made = len(cache.made) + len(cache.made_before)
        assert made <= 2 * (cache.made_size + 1)
        assert len(cache) <= cache.size
        used = cache.used + cache.made_used + cache.before_used
        assert used <= cache.budget + RecordCache.MADE_OVERHEAD + 200
    assert cache.made_size == int(400 * MADE_SHARE / 2)
    assert len(cache.data) >= 1  # the vetted records keep their own share
    # The latest made records are still there; the oldest are gone.
    assert cache.get(_key(4999)) is not None
    assert cache.get(_key(0)) is None


def test_a_made_record_met_again_moves_into_the_current_generation() -> None:
    cache = RecordCache(size=80, budget=10**9)  # ten made records a generation
    first = _key(0)
    cache.add_made(first, _record(first[0]))
    for i in range(1, 12):  # the first record's generation is now the one before
        cache.add_made(_key(i), _record(_key(i)[0]))
        cache.get(_key(i))  # met again: made records stay worth keeping
    assert first in cache.made_before
    before = cache.before_used
    assert cache.get(first) is not None
    assert first in cache.made
    assert first not in cache.made_before
    assert cache.before_used == before - RecordCache.made_cost(first, cache.made[first])
    for i in range(12, 22):  # a generation later it is still there
        cache.add_made(_key(i), _record(_key(i)[0]))
        cache.get(_key(i))
    assert cache.get(first) is not None


def test_made_records_never_met_again_are_not_kept_for_a_while() -> None:
    cache = RecordCache(size=80, budget=10**9)  # ten made records a generation
    generation = cache.made_size + 1
    i = 0

    def add(n: int, *, again: bool = False) -> None:
        nonlocal i
        for _ in range(n):
            key = _key(i)
            cache.add_made(key, _record(key[0]))
            if again:
                cache.get(key)
            i += 1

    add(generation)  # distinct URLs: a generation none of whose records was met again
    assert len(cache) == 0
    assert cache.made_used == cache.before_used == 0
    add(generation * MADE_SKIP_GENERATIONS)  # not kept meanwhile
    assert len(cache) == 0
    add(1)  # then kept again, to see
    assert cache.get(_key(i - 1)) is not None
    add(generation - 2, again=True)  # met again now: kept on
    add(3 * generation, again=True)
    assert len(cache.made_before) >= cache.made_size  # (the last one moved on, met again)
    assert cache.get(_key(i - 1)) is not None
    # Met again, but fewer than one in MADE_HIT_FLOOR: not worth keeping either.
    add(generation // MADE_HIT_FLOOR + 1)
    add(generation * 2)
    assert len(cache) == 0


def test_vetted_records_are_evicted_least_recently_used_first() -> None:
    cache = RecordCache(size=3, budget=10**9)
    for i in range(3):
        cache.put(_key(i), _record(_key(i)[0]))
    assert cache.get(_key(0)) is not None  # now the most recently used
    cache.put(_key(3), _record(_key(3)[0]))
    assert _key(1) not in cache
    assert all(_key(i) in cache for i in (0, 2, 3))
