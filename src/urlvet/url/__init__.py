"""Parse a URL exactly as a browser will, and describe its host and site.

Parsing is ada-url's implementation of the WHATWG URL Standard, the algorithm browsers use.
Python's ``urllib`` never decides the host here: it disagrees with browsers on backslashes,
userinfo, IPv4 shorthand and more, and a check that looks at another host than the one the
browser opens is worthless.

The registrable domain (the "site") and the public suffix come from tldextract's bundled
snapshot of the Public Suffix List (see ``psl.py``), private section included, so that
``a.github.io`` and ``b.github.io`` are different sites. The suffix list is never fetched and
nothing is written to disk.

One module a job, this package's namespace their public names:

- :mod:`~urlvet.url.hosts`: a host's Unicode form and site, the walk over its parents;
- :mod:`~urlvet.url.parsing`: the WHATWG parse, :class:`ParsedURL`, :func:`normalize_domain`;
- :mod:`~urlvet.url.query`: form decoding and a query's name/value pairs;
- :mod:`~urlvet.url.carried`: the URLs carried in a query, at any depth.
"""

from __future__ import annotations

# Besides the public names, the memos the differential tests inspect (``name as name``: their
# sizes when memos are off, what they keep), reachable where they were before the split.
from urlvet.url.carried import (
    CARRIED_PARAMETER_KEPT_LENGTH,
    CARRIED_PARAMETERS_KEPT,
    CARRIED_SCHEMES,
    MAX_CARRIED,
    MAX_CARRIED_DEPTH,
    MAX_CARRIED_LENGTH,
    MAX_DECODE_ROUNDS,
    CarriedURL,
    carried_urls,
    may_carry,
)
from urlvet.url.carried import _kept_carried_parameter as _kept_carried_parameter
from urlvet.url.carried import _kept_first_item as _kept_first_item
from urlvet.url.hosts import (
    HOST_FACTS_CACHE_SIZE,
    MAX_DOMAIN_LENGTH,
    first_parent_dot,
    site_of,
    to_unicode,
)
from urlvet.url.hosts import _domain_facts as _domain_facts
from urlvet.url.parsing import (
    SPECIAL_SCHEMES,
    HostKind,
    InvalidURL,
    ParsedURL,
    new_parsed,
    normalize_domain,
    parse,
)
from urlvet.url.query import form_decode, percent_decode, query_params, query_values

__all__ = [
    "CARRIED_PARAMETERS_KEPT",
    "CARRIED_PARAMETER_KEPT_LENGTH",
    "CARRIED_SCHEMES",
    "HOST_FACTS_CACHE_SIZE",
    "MAX_CARRIED",
    "MAX_CARRIED_DEPTH",
    "MAX_CARRIED_LENGTH",
    "MAX_DECODE_ROUNDS",
    "MAX_DOMAIN_LENGTH",
    "SPECIAL_SCHEMES",
    "CarriedURL",
    "HostKind",
    "InvalidURL",
    "ParsedURL",
    "carried_urls",
    "first_parent_dot",
    "form_decode",
    "may_carry",
    "new_parsed",
    "normalize_domain",
    "parse",
    "percent_decode",
    "query_params",
    "query_values",
    "site_of",
    "to_unicode",
]
