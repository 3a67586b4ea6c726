"""How the engine shares a policy's offline rules out by the facts they read, and reads a
memo's key from a URL's facts."""

from __future__ import annotations

import re
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
    """Rules that read the URL's own text and have no condition on the host: run on every
    URL."""
    gated: tuple[Rule, ...]
    """Rules that read the URL's own text, each with a condition on the policy and the host
    (``Rule.when``): run on the URLs of the hosts that pass it."""
    query_needs: str | None
    """The fact every query rule needs (``Rule.needs``): on a URL where it is empty, none of
    them can find anything. None when they do not all need one."""
    link_serverless: tuple[Rule, ...]
    """The link rules that may find something on a URL no server asked for (all but those
    with ``Rule.needs_server``)."""
    query_serverless: tuple[Rule, ...]
    """The query rules that may, likewise."""


def plan(rules: Sequence[Rule]) -> Plan:
    """Share ``rules`` (the policy's ``raw`` and ``url`` rules, in order) out by their reads."""
    host = tuple(r for r in rules if r.host_only)
    shared = [r for r in rules if not r.host_only and r.all_reads <= HOST_FACTS | LINK_FACTS]
    link = tuple(r for r in shared if not r.all_reads & QUERY_FACTS)
    query = tuple(r for r in shared if r.all_reads & QUERY_FACTS)
    rest = [r for r in rules if r not in host and r not in shared]
    text = tuple(r for r in rest if r.when is None or r.kind != "url")
    gated = tuple(r for r in rest if r not in text)
    needs = {r.needs for r in query}
    query_needs = needs.pop() if len(needs) == 1 else None
    link_serverless = tuple(r for r in link if not r.needs_server)
    query_serverless = tuple(r for r in query if not r.needs_server)
    return Plan(
        host,
        link,
        _key(link),
        query,
        _key(query),
        text,
        gated,
        query_needs,
        link_serverless,
        query_serverless,
    )


def _key(rules: Iterable[Rule]) -> tuple[str, ...]:
    return tuple(sorted({name for r in rules for name in r.all_reads}))


KeyFn = Callable[[ParsedURL, URLFacts], tuple[Any, ...]]
"""What reads a memo's key (but the server) from a URL's parse and facts."""


KEYED_AS = {"carried": "carried_key"}
"""Facts whose value a memo's key holds in a smaller form that determines it (see
:attr:`~urlvet.engine.facts.URLFacts.carried_key`)."""

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
    derived = [KEYED_AS.get(n, n) for n in names if n not in URL_PARTS]
    read_parts = attrgetter(*parts) if len(parts) > 1 else None
    read_derived = attrgetter(*derived) if len(derived) > 1 else None

    def read(url: ParsedURL, facts: URLFacts) -> tuple[Any, ...]:
        head = read_parts(url) if read_parts is not None else tuple(getattr(url, n) for n in parts)
        if read_derived is not None:
            return (head, read_derived(facts))
        return (head, tuple(getattr(facts, n) for n in derived))

    return read


AUTHORITY_FACTS = frozenset(
    {
        "scheme",
        "username",
        "password",
        "has_userinfo",
        "port",
        "effective_port",
        "is_special",
        "authority_as_written",
        "host_as_written",
    }
)
"""Facts of a URL that, with the facts of its host, are functions of its text up to the end
of its authority (``https://user@host:port``), when that text is plain (see
:func:`authority_key_reader`)."""

# An http: or https: URL as a log writes it: the scheme in lower case, "//", and an authority
# that neither starts with a slash nor holds a tab, a newline or a carriage return (which a
# browser removes wherever they are, and after which it skips any slashes). Its authority then
# ends, for the browser as for the written facts, no later than at the first "/", "?" or "#".
_PLAIN_AUTHORITY = re.compile(r"https?://[^/\\\t\n\r?#][^/?#\t\n\r]*")


def authority_key_reader(names: tuple[str, ...]) -> KeyFn:
    """What reads the facts ``names`` of a URL as one key, like :func:`key_reader`, but
    cheaper when every fact but ``path_is_root``, ``trusted_entry`` and ``parse_error`` is of
    the host or in :data:`AUTHORITY_FACTS`: a plain URL's text up to the end of its authority
    stands for all those (URLs that agree on it agree on each of them), and the two others
    are read. Any other URL, or any other set of facts, is keyed by :func:`key_reader`."""
    full = key_reader(names)
    tail = {"path_is_root", "trusted_entry", "parse_error"}
    if not set(names) <= HOST_FACTS | AUTHORITY_FACTS | tail:
        return full
    match = _PLAIN_AUTHORITY.match
    read_root = "path_is_root" in names
    read_trusted = "trusted_entry" in names

    def read(url: ParsedURL, facts: URLFacts) -> tuple[Any, ...]:
        raw = facts.raw
        found = match(raw)
        if found is None:
            return full(url, facts)
        end = found.end()
        if end < len(raw) and raw[end] not in "/?#":
            return full(url, facts)
        return (
            raw[:end],
            facts.path_is_root if read_root else None,
            facts.trusted_entry if read_trusted else None,
        )

    return read
