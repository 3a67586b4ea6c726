"""The table of every rule: code -> Rule. Importing this module registers all families."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from functools import cache

from urlvet.checks.base import Rule, defined_rules

_FAMILIES = (
    "transport",
    "addresses",
    "redirects",
    "resolution",
    "lookalike",
    "server",
    "message",
    "tls",
    "brands",
    "wrapped",
    "grants",
    "interaction",
)


@cache
def rules() -> Mapping[str, Rule]:
    """Every registered rule by code, in code order."""
    for family in _FAMILIES:
        try:
            importlib.import_module(f"urlvet.checks.{family}")
        except ModuleNotFoundError as exc:
            if exc.name != f"urlvet.checks.{family}":
                raise
    return dict(sorted(defined_rules().items()))


def get(code: str) -> Rule | None:
    """The rule with this code, or None."""
    return rules().get(code.upper())


def expand(selector: str) -> list[str]:
    """Codes matched by a code or a prefix (``UV2``, ``UV20``, ``UV201``) or a rule name."""
    sel = selector.strip()
    by_name = {r.name: c for c, r in rules().items()}
    if sel in by_name:
        return [by_name[sel]]
    sel = sel.upper()
    return [c for c in rules() if c.startswith(sel)]
