"""The one memo of the engine: a bounded mapping with one eviction policy, its hits counted.

A :class:`~urlvet.engine.Vetter` keeps two: the findings of the rules that read only facts of
the host, by (host, kind, server), and the findings of the rules that read facts links share,
by the server and the tuple of those facts. Keys are values, never an object's identity, so
a memo can only share findings between URLs on which the rules read the same facts.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from urlvet.memo import memo_size

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_MISSING = object()


class Memo(Generic[K, V]):
    """A bounded mapping from keys to computed values: first in, first out (a log's hosts
    come in runs; one that cycles over more keys than it holds only pays the computation
    again, as without a memo). Size 0, or every memo off (``URLVET_MEMOS=off``), keeps
    nothing. Safe across threads: a value may be computed twice, never half stored."""

    __slots__ = ("_data", "_lock", "hits", "misses", "size")

    def __init__(self, size: int) -> None:
        """A memo of at most ``size`` entries (0 when every memo is off)."""
        if size < 0:
            raise ValueError("a memo's size must be 0 or more")
        self.size = memo_size(size)
        """How many entries it keeps at most."""
        self.hits = 0
        """Look-ups answered from the memo."""
        self.misses = 0
        """Look-ups that computed their value."""
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, compute: Callable[..., V], *args: Any) -> V:
        """The value kept for ``key``, or ``compute(*args)`` kept for it (the arguments
        passed along rather than bound in a closure: one is made for every look-up)."""
        found = self._data.get(key, _MISSING)
        if found is not _MISSING:
            self.hits += 1
            return found  # type: ignore[return-value]
        self.misses += 1
        value = compute(*args)
        if self.size:
            with self._lock:
                if len(self._data) >= self.size:
                    self._data.popitem(last=False)
                self._data[key] = value
        return value

    def __len__(self) -> int:
        """How many entries it holds."""
        return len(self._data)


__all__ = ["Memo"]
