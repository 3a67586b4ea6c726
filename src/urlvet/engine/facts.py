"""How each fact of a URL is computed: lazily, at most once per URL.

A :class:`URLFacts` holds one URL as given, its parse, and the context facts (how deep in a
chain of redirects it lies); the facts rules declare they read (``urlvet.checks.base``'s
``FACT_NAMES``) are its attributes. The parts of the URL and the facts of its host are those
of the parse; the others are computed on first use and kept for the other rules.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from urlvet.checks.addresses import raw_host
from urlvet.checks.base import (
    FACT_NAMES,
    URL_PARTS,
    CheckSettings,
    UnparsedURL,
    carried_of,
    redirect_position_of,
    written_authority,
)
from urlvet.checks.server import trusted_third_party
from urlvet.engine.verdicts import as_text
from urlvet.url import CarriedURL, InvalidURL, ParsedURL, parse

PARSE_LIMIT = 65_536
"""Longer input is not parsed at all: it is already blocked as over-long, and parsing and
classifying megabytes of text would only give an attacker a lever on our latency."""


def _part(name: str) -> property:
    get = attrgetter(name)

    def read(facts: URLFacts) -> Any:
        url = facts.url
        if url is None:
            raise UnparsedURL(f"the input does not parse: it has no {name}")
        return get(url)

    return property(read, doc=f"The parse's ``{name}``.")


class URLFacts:
    """The facts of one URL (see the module's docstring). Built for every URL: a few slots,
    the derived facts computed on first use."""

    __slots__ = ("_carried", "_position", "hops", "parse_error", "raw", "settings", "url")

    def __init__(
        self,
        raw: str,
        url: ParsedURL | None,
        parse_error: str | None,
        hops: int,
        settings: CheckSettings,
    ) -> None:
        """The facts of ``raw``, parsed as ``url`` (None, with ``parse_error``, when it does
        not parse), ``hops`` redirects deep, under the policy's ``settings``."""
        self.raw = raw
        self.url = url
        self.parse_error = parse_error
        self.hops = hops
        self.settings = settings
        self._carried: tuple[CarriedURL, ...] | None = None
        self._position: int | bool | None = False

    @property
    def length(self) -> int:
        """The length of the URL as given."""
        return len(self.raw)

    @property
    def path_is_root(self) -> bool:
        """True when the path is empty or ``/``."""
        url = self.url
        if url is None:
            raise UnparsedURL("the input does not parse: it has no path")
        return url.pathname in ("", "/")

    @property
    def carried(self) -> tuple[CarriedURL, ...]:
        """The URLs carried in the query, at any depth."""
        found = self._carried
        if found is None:
            url = self.url
            if url is None:
                raise UnparsedURL("the input does not parse: it carries no URL")
            found = self._carried = carried_of(url) if url.search else ()
        return found

    @property
    def carried_key(self) -> tuple[tuple[tuple[str, ...], str, str, int], ...]:
        """What stands for :attr:`carried` in a memo's key: each item's path of parameter
        names, decoded value, encoding and depth (its target is the value parsed, and its
        name the path's last). Strings hash once; a parsed target hashes all its fields on
        every look-up, and a key that held it would keep it alive."""
        return tuple([(c.path, c.value, c.encoding, c.depth) for c in self.carried])

    @property
    def redirect_position(self) -> int | None:
        """Where a listed redirector page's destination stands in :attr:`carried`, or None."""
        position = self._position
        if position is False:
            items = self.carried
            assert self.url is not None  # carried raised otherwise
            position = self._position = redirect_position_of(self.url, items, self.settings)
        return position

    @property
    def authority_as_written(self) -> str | None:
        """The authority as written in the input."""
        return written_authority(self.raw)

    @property
    def host_as_written(self) -> str | None:
        """The host as written in the input, before the browser normalises it."""
        return raw_host(self.raw)

    @property
    def trusted_entry(self) -> str | None:
        """The policy's trusted third party entry that vouches for the URL, or None."""
        url = self.url
        if url is None:
            raise UnparsedURL("the input does not parse: no third party vouches for it")
        return trusted_third_party(url, self.settings)


for _name in URL_PARTS:
    setattr(URLFacts, _name, _part(_name))


def facts_of(url: Any, hops: int, settings: CheckSettings) -> URLFacts:
    """The facts of ``url`` as given (text, bytes, anything), ``hops`` redirects deep: read
    as text, parsed as a browser does when it can be; or already parsed (a carried URL)."""
    if type(url) is ParsedURL:
        return URLFacts(url.raw, url, None, hops, settings)
    raw, parse_error = as_text(url)
    parsed: ParsedURL | None = None
    if parse_error is None:
        if len(raw) > PARSE_LIMIT:
            parse_error = f"the URL is longer than {PARSE_LIMIT:,} characters"
        else:
            try:
                parsed = parse(raw)
            except InvalidURL as exc:
                parse_error = str(exc)
    return URLFacts(raw, parsed, parse_error, hops, settings)


_MISSING_FACTS = FACT_NAMES - set(dir(URLFacts))
if _MISSING_FACTS:  # a fact declared in checks.base must be computed here
    raise ImportError(f"facts with no computation: {sorted(_MISSING_FACTS)}")


__all__ = ["PARSE_LIMIT", "URL_PARTS", "URLFacts", "UnparsedURL", "facts_of"]
