"""The lookalike index: protected domains compiled once, then every question about a host
answered with hash lookups (:class:`LookalikeIndex`, :func:`build_index`); the analysis that
runs the techniques in order, one finding per brand."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from urlvet import confusables
from urlvet.errors import InputError, PolicyError
from urlvet.lookalike.brand_words import _brand_labels, _combo
from urlvet.lookalike.matches import _KIND_ORDER, LookalikeMatch, LookalikeReport, MatchKind
from urlvet.lookalike.screen import _Screen
from urlvet.lookalike.targets import (
    _ascii_host,
    _compile_tables,
    _each,
    _label_of,
    _make_target,
    _registrable_or_none,
    _site_of_entry,
    _Tables,
    _Target,
)
from urlvet.lookalike.techniques import (
    _embedded,
    _near_miss,
    _other_suffix,
    _split_by_dots,
    _www_glued,
)
from urlvet.lookalike.words import DEFAULT_KEYWORDS
from urlvet.memo import memo_size
from urlvet.url import (
    MAX_DOMAIN_LENGTH,
    HostKind,
    ParsedURL,
    first_parent_dot,
    site_of,
    to_unicode,
)


class LookalikeIndex:
    """Protected domains compiled for constant-time lookalike questions.

    The list is read (and a bad entry reported) at construction. The hash tables are compiled
    then too, or, for a ``lazy`` index, on the first question that needs them: a host that is a
    protected domain or under one needs none, so a short run that meets only such hosts (or IP
    addresses) never pays for compiling the list, nor for loading ICU. Either way the answers
    are the same, the tables never change once compiled, and the index is safe to share between
    threads. :meth:`analyze` memoises its (pure) answers per host in a bounded cache, since
    hosts repeat across URLs.
    """

    __slots__ = (
        "_display_memo",
        "_domains",
        "_extra_domain",
        "_lock",
        "_memo",
        "_screen",
        "_sites",
        "_tables",
        "_target_for",
        "keywords",
    )

    def __init__(
        self,
        domains: Iterable[str],
        keywords: Iterable[str] = DEFAULT_KEYWORDS,
        *,
        lazy: bool = False,
    ):
        sites: dict[str, str] = {}
        for domain in domains:
            registrable, suffix = _site_of_entry(domain)
            sites.setdefault(registrable, suffix)
        self._sites = sites
        self._domains: frozenset[str] = frozenset(sites)
        self.keywords: tuple[str, ...] = tuple(dict.fromkeys(k.lower() for k in keywords))
        """The combo-squatting keywords, as given."""
        self._tables: _Tables | None = None
        self._screen: _Screen | None = None
        self._lock = threading.Lock()
        # Bounded memo caches of pure functions (thread-safe in CPython); not shared state that
        # changes any answer. Hosts repeat across URLs, and servers are few.
        self._memo = lru_cache(maxsize=memo_size(4096))(self._analyze)
        self._display_memo = lru_cache(maxsize=memo_size(1024))(self._display_safety)
        self._target_for = lru_cache(maxsize=memo_size(256))(_make_target)
        self._extra_domain = lru_cache(maxsize=memo_size(256))(_registrable_or_none)
        if not lazy:
            self._compiled()

    def _compiled(self) -> _Tables:
        """The tables, compiled by the first caller (others wait for it)."""
        tables = self._tables
        if tables is None:
            with self._lock:
                tables = self._tables
                if tables is None:
                    # Compiling allocates millions of small containers at once; the cyclic
                    # garbage collector would rescan them again and again (it doubled the time
                    # for 100,000 domains). None of them form cycles, so pause it meanwhile.
                    gc_was_enabled = gc.isenabled()
                    gc.disable()
                    try:
                        tables = _compile_tables(self._sites, self.keywords)
                    finally:
                        if gc_was_enabled:
                            gc.enable()
                    self._screen = _Screen(tables)
                    self._tables = tables
        return tables

    # -- public API ------------------------------------------------------------------------------

    @property
    def domains(self) -> frozenset[str]:
        """The protected registrable domains (A-label)."""
        return self._domains

    def __len__(self) -> int:
        return len(self._domains)

    def __contains__(self, domain: object) -> bool:
        return isinstance(domain, str) and domain.lower().rstrip(".") in self._domains

    def __repr__(self) -> str:
        return f"LookalikeIndex({len(self._domains)} protected domains)"

    def cache_clear(self) -> None:
        """Forget memoised answers (for benchmarks; answers never go stale)."""
        self._memo.cache_clear()
        self._display_memo.cache_clear()
        if self._screen is not None:
            self._screen.label_facts.cache_clear()

    def protected_parent(self, host: str, extra: str | None = None) -> str | None:
        """The protected domain ``host`` (A-label) is or is a subdomain of, or None.

        ``extra`` is one more protected registrable domain for this question (the server's).
        """
        # The host and its parents, longest first, as slices after each dot; from the first
        # one no longer than any listed domain (policy domains are at most MAX_DOMAIN_LENGTH).
        parent = host.rstrip(".").lower()
        limit = max(MAX_DOMAIN_LENGTH, len(extra or ""))
        if len(parent) > limit:
            dot = first_parent_dot(parent, limit)
            if dot < 0:
                return None
            parent = parent[dot + 1 :]
        dot = 0
        while dot >= 0:
            if parent in self._domains or parent == extra:
                return parent
            dot = parent.find(".")
            parent = parent[dot + 1 :]
        return None

    def similar_protected_domain(self, host_unicode: str, extra: str | None = None) -> str | None:
        """The protected domain whose skeleton ``host_unicode`` (or a parent of it) shares.

        None when there is none, or when the host is that domain or a subdomain of it.
        Implements :class:`urlvet.confusables.TopDomainMatcher` (use :meth:`matcher` to bind
        ``extra``).
        """
        extra_target = self._extra_target(extra)
        tables = self._compiled()
        for target in self._skeleton_matches(tables, host_unicode.lower(), extra_target):
            if host_unicode == target.unicode or host_unicode.endswith("." + target.unicode):
                return None
            return target.domain
        return None

    def lookup_skeleton(self, skeleton: str, separators_removed: bool = False) -> tuple[str, ...]:
        """The protected domains with this whole-domain skeleton (``google.corn``), or, with
        ``separators_removed``, this skeleton of the domain without dots and hyphens
        (``googlecorn``)."""
        tables = self._compiled()
        table = tables.by_nosep if separators_removed else tables.by_skeleton
        return tuple(t.domain for t in _each(table.get(skeleton)))

    def matcher(self, extra: str | None = None) -> confusables.TopDomainMatcher:
        """This index with ``extra`` protected as well, as a display-safety top-domain matcher."""
        return _BoundMatcher(self, extra)

    def display_safety(self, host: str, extra: str | None = None) -> confusables.DisplaySafety:
        """Whether ``host`` (A-label) may be shown in Unicode, judged against this index with
        ``extra`` protected as well: :func:`urlvet.confusables.display_safety` with
        :meth:`matcher`, memoised per host."""
        return self._display_memo(host, extra)

    def _display_safety(self, host: str, extra: str | None) -> confusables.DisplaySafety:
        return confusables.display_safety(host, self.matcher(extra))

    def analyze(self, url: ParsedURL, extra: str | None = None) -> LookalikeReport:
        """Which protected domains the URL's host imitates. ``extra``: the server's domain.

        Never raises: a host the index cannot reason about has no matches.
        """
        if url.host_kind is not HostKind.DOMAIN or not url.host:
            return LookalikeReport(host=url.host, protected=None)
        return self._memo(
            url.host.rstrip(".").lower(),
            url.host_unicode.rstrip(".").lower(),
            url.registrable_domain,
            url.public_suffix,
            url.suffix_is_private,
            self._extra_domain(extra) if extra else None,  # no server: no domain to read
        )

    def analyze_host(self, host: str, extra: str | None = None) -> LookalikeReport:
        """:meth:`analyze` for a bare host name (A- or U-label).

        Raises :class:`~urlvet.errors.InputError` when ``host`` is not a domain name.
        """
        try:
            ascii_host, registrable, suffix = _ascii_host(host)
        except PolicyError as exc:
            raise InputError(str(exc)) from exc
        return self._memo(
            ascii_host,
            to_unicode(ascii_host).lower(),
            registrable,
            suffix,
            site_of(ascii_host)[2],
            self._extra_domain(extra),
        )

    # -- matching --------------------------------------------------------------------------------

    def _extra_target(self, extra: str | None) -> _Target | None:
        if not extra or extra in self._domains:
            return None
        try:
            return self._target_for(extra)
        except PolicyError:
            return None

    @staticmethod
    def _skeleton_matches(
        tables: _Tables, host_unicode: str, extra: _Target | None
    ) -> list[_Target]:
        found: list[_Target] = []
        for sk in confusables.skeletons(host_unicode):
            labels = sk.split(".")
            top = min(len(labels), tables.max_skeleton_labels)
            for n in range(2, top + 1):
                key = ".".join(labels[-n:])
                found.extend(_each(tables.by_skeleton.get(key)))
                if extra is not None and key in extra.skeletons:
                    found.append(extra)
        return list(dict.fromkeys(found))

    def _analyze(
        self,
        host: str,
        host_unicode: str,
        registrable: str | None,
        suffix: str | None,
        private: bool,
        extra_domain: str | None,
    ) -> LookalikeReport:
        protected = self.protected_parent(host, extra_domain)
        if protected is not None:
            return LookalikeReport(host=host, protected=protected)
        tables = self._compiled()
        screen = self._screen
        assert screen is not None  # compiled with the tables
        if extra_domain is None and screen.screened_out(host, host_unicode, registrable, suffix):
            return LookalikeReport(host=host, protected=None)
        return self._matches(tables, host, host_unicode, registrable, suffix, private, extra_domain)

    def _matches(
        self,
        tables: _Tables,
        host: str,
        host_unicode: str,
        registrable: str | None,
        suffix: str | None,
        private: bool,
        extra_domain: str | None,
    ) -> LookalikeReport:
        """Every technique's matches for a host that is not protected (the analysis without
        the screen)."""
        extra = self._extra_target(extra_domain)
        matches: list[LookalikeMatch] = []
        # Brands (protected labels) already explained by a stronger technique: one finding per
        # brand, in the order homoglyph, near miss / other suffix, embedding, combo.
        brands: set[str] = set()

        for t in self._skeleton_matches(tables, host_unicode, extra):
            if t.label in brands:
                continue
            brands.add(t.label)
            matches.append(LookalikeMatch(MatchKind.HOMOGLYPH, t.domain, "same-skeleton"))

        label = None
        label_skeletons: frozenset[str] = frozenset()
        if registrable is not None and suffix is not None:
            label_ascii = _label_of(registrable, suffix)
            label = to_unicode(label_ascii).lower()
            # Near miss and combo both start from the label's skeletons: computed once.
            label_skeletons = confusables.skeletons(label)
            matches.extend(_other_suffix(tables, label, suffix, extra, brands))
            matches.extend(
                _near_miss(
                    tables, label, label_skeletons, label_ascii, registrable, suffix, extra, brands
                )
            )
            matches.extend(_www_glued(tables, label_skeletons, extra, brands))
            matches.extend(_split_by_dots(tables, host_unicode.lower(), suffix, extra, brands))
        matches.extend(_embedded(tables, host_unicode, label, suffix, extra, brands))
        if label is not None and registrable is not None and suffix is not None:
            matches.extend(_brand_labels(tables, host_unicode, registrable, suffix, extra, brands))
            matches.extend(_combo(tables, label, suffix, private, extra, brands))

        matches.sort(key=lambda m: (_KIND_ORDER[m.kind], m.target))
        return LookalikeReport(host=host, protected=None, matches=tuple(matches))


@dataclass(frozen=True, slots=True)
class _BoundMatcher:
    index: LookalikeIndex
    extra: str | None

    def similar_protected_domain(self, host_unicode: str) -> str | None:
        return self.index.similar_protected_domain(host_unicode, self.extra)


def build_index(
    domains: Iterable[str], keywords: Iterable[str] = DEFAULT_KEYWORDS, *, lazy: bool = False
) -> LookalikeIndex:
    """Compile protected domains (registrable domains, A- or U-label) into an index.

    A subdomain in the list protects its whole registrable domain. Raises
    :class:`~urlvet.errors.PolicyError` naming an entry that is not a usable domain. With
    ``lazy``, the matching tables are compiled on the first question that needs them rather
    than now (see :class:`LookalikeIndex`); the answers are the same.
    """
    return LookalikeIndex(domains, keywords, lazy=lazy)
