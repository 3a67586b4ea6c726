"""The facts of a host name: its Unicode form, its site and public suffix, and the walk over
its parents that policy look-ups take.

The registrable domain (the "site") and the public suffix come from tldextract's bundled
snapshot of the Public Suffix List (see ``psl.py``), private section included, so that
``a.github.io`` and ``b.github.io`` are different sites. The suffix list is never fetched and
nothing is written to disk.
"""

from __future__ import annotations

from functools import lru_cache

from ada_url import idna_to_unicode

from urlvet import psl
from urlvet.memo import memo_size


def site_of(host: str) -> tuple[str | None, str | None, bool]:
    """Registrable domain, public suffix and whether the suffix is from the private section.

    ``host`` is an A-label domain; a trailing dot is ignored.
    """
    registrable, suffix, private = psl.split(host)
    return registrable or None, suffix or None, private


def to_unicode(host: str) -> str:
    """Decode each A-label of a host to Unicode; labels that do not decode are kept as-is.

    The URL Standard keeps an all-ASCII host with an invalid A-label (``xn--a``, ``xn--1ug``
    which is a lone ZERO WIDTH JOINER, ``xn--7ba`` which is an upper-case letter) as it is,
    and so do browsers; such a label must never be shown decoded, or the consent screen
    would show invisible or mapped characters. ada-url's ToUnicode revalidates each decoded
    label (UTS #46) and keeps the A-label when it is invalid; tests pin that.
    """
    if "xn--" not in host:
        return host
    try:
        return str(idna_to_unicode(host))
    except (ValueError, UnicodeError):
        return host


HOST_FACTS_CACHE_SIZE = 65_536
"""Domain hosts whose Unicode form and site :func:`parse` keeps. Logs spread over tens of
thousands of hosts; an entry is four short strings."""


# Hosts repeat across URLs far more than URLs do, and decoding A-labels and the suffix lookup
# are a good part of parsing one: a bounded memo of this pure function (thread-safe in CPython).
@lru_cache(maxsize=memo_size(HOST_FACTS_CACHE_SIZE))
def _domain_facts(host: str) -> tuple[str, str | None, str | None, bool]:
    """The Unicode form, registrable domain, public suffix and private flag of a domain host."""
    return (to_unicode(host), *site_of(host))


MAX_DOMAIN_LENGTH = 253
"""The longest DNS name (RFC 1035, without the trailing dot). Policy domains are held to it, so
the walks over a host's parents start at the first parent this short: a browser accepts longer
hosts, but none of their longer tails can equal a listed domain."""


def first_parent_dot(name: str, limit: int = MAX_DOMAIN_LENGTH) -> int:
    """The dot before the longest parent of ``name`` at most ``limit`` characters long (-1: none).

    ``name[dot + 1:]`` is that parent; the walks then go on with ``name.find(".", dot + 1)``.
    """
    return name.find(".", max(0, len(name) - limit - 1))
