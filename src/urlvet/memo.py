"""The one switch over every memo urlvet keeps: the reference that shortcuts are held to.

Every memo of urlvet's answers (the functools caches of pure functions in the URL, address,
server, confusables and lookalike modules, and a Vetter's own caches) takes its size from
:func:`memo_size`. With ``URLVET_MEMOS=off`` in the environment when urlvet is imported,
every one of them is size 0: each answer is computed afresh, and what a verdict is can then
depend on nothing a memo shares. The differential tests run that reference in a process of
its own and compare it with the ordinary run, verdict by verdict, on hostile input.

Read once at import: flipping the switch in a running process would leave the caches built
before it as they were, which is exactly what the reference must not do.
"""

from __future__ import annotations

import os
from typing import Final

MEMOS_ENV: Final = "URLVET_MEMOS"
"""The environment variable that turns every memo off when it is ``off``."""

MEMOS_ON: Final = os.environ.get(MEMOS_ENV, "on").strip().lower() != "off"
"""False when every memo is off (see the module's docstring)."""


def memo_size(size: int) -> int:
    """``size`` when memos are on, else 0: the size to give a memo of ``size`` entries
    (``functools.lru_cache(maxsize=0)`` keeps nothing and calls the function each time)."""
    return size if MEMOS_ON else 0


__all__ = ["MEMOS_ENV", "MEMOS_ON", "memo_size"]
