"""How the engine shares a policy's offline rules out by the facts they read, and reads a
memo's key from a URL's facts."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from typing import Any, NamedTuple

from urlvet.checks.base import HOST_FACTS, LINK_FACTS, QUERY_FACTS, Rule
from urlvet.engine.facts import URL_PARTS, URLFacts
from urlvet.url import ParsedURL


class Plan(NamedTuple):
    """The policy's offline rules shared out by what they read (see the module's docstring)."""

    host: tuple[Rule, ...]
    """Rules that read only facts of the host."""
    link: tuple[Rule, ...]
    """Rules that read facts links share but none of the query, and perhaps of the host."""
    link_key: tuple[str, ...]
    """The facts the link rules read, together: their memo's key with the server."""
    query: tuple[Rule, ...]
    """Rules that read facts of the query too (the URLs it carries)."""
    query_key: tuple[str, ...]
    """The facts the query rules read, together: their memo's key with the server."""
    text: tuple[Rule, ...]
    """Rules that read the URL's own text: run on every URL."""


def plan(rules: Sequence[Rule]) -> Plan:
    """Share ``rules`` (the policy's ``raw`` and ``url`` rules, in order) out by their reads."""
    host = tuple(r for r in rules if r.host_only)
    shared = [r for r in rules if not r.host_only and r.all_reads <= HOST_FACTS | LINK_FACTS]
    link = tuple(r for r in shared if not r.all_reads & QUERY_FACTS)
    query = tuple(r for r in shared if r.all_reads & QUERY_FACTS)
    text = tuple(r for r in rules if r not in host and r not in shared)
    return Plan(host, link, _key(link), query, _key(query), text)


def _key(rules: Iterable[Rule]) -> tuple[str, ...]:
    return tuple(sorted({name for r in rules for name in r.all_reads}))


KeyFn = Callable[[ParsedURL, URLFacts], tuple[Any, ...]]
"""What reads a memo's key (but the server) from a URL's parse and facts."""


STANDS_FOR = {
    "has_userinfo": ("username", "password"),
    "effective_port": ("scheme", "port"),
    "is_special": ("scheme",),
}
"""The parse's properties that are functions of its fields: in a key, the fields stand for
them (a field is read where a property would be computed)."""


def key_reader(names: tuple[str, ...]) -> KeyFn:
    """What reads the facts ``names`` of a URL as one tuple: a memo's key. Every fact of the
    host is a function of the host and its kind, so those two stand for all that are read;
    the parse's fields are read from the parse itself (for a property of the parse, the
    fields it is computed from), the other facts from the facts."""
    fields: dict[str, None] = {}
    if any(n in HOST_FACTS for n in names):
        fields.update({"host": None, "host_kind": None})
    for n in names:
        if n in URL_PARTS and n not in HOST_FACTS:
            fields.update(dict.fromkeys(STANDS_FOR.get(n, (n,))))
    parts = list(fields)
    derived = [n for n in names if n not in URL_PARTS]
    read_parts = attrgetter(*parts) if len(parts) > 1 else None
    read_derived = attrgetter(*derived) if len(derived) > 1 else None

    def read(url: ParsedURL, facts: URLFacts) -> tuple[Any, ...]:
        head = read_parts(url) if read_parts is not None else tuple(getattr(url, n) for n in parts)
        if read_derived is not None:
            return (head, read_derived(facts))
        return (head, tuple(getattr(facts, n) for n in derived))

    return read
