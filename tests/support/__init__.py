"""What the tests share: the offline vetter, ``codes()``, and the real servers and corpora the
tests run against (one module each: corpora, dnscases, dnsserver, tlsserver, mcp_server,
jsonrpc_server, http_upstream, proxy_harness, mcp_specs).

The tests directory is on ``sys.path`` (pytest puts it there for ``conftest.py``), so tests
import ``from support import OFFLINE, codes`` and ``from support.dnsserver import ...``; the
benchmarks put it there themselves.
"""

from __future__ import annotations

from urlvet import Policy, Server, Vetter

OFFLINE = Vetter(Policy(dns={"enabled": False}))
"""The default policy with DNS off: what every offline test vets with."""


def offline(**policy: object) -> Vetter:
    """A Vetter with DNS off and the rest of the policy from ``policy`` (Policy's fields)."""
    return Vetter(Policy.model_validate({"dns": {"enabled": False}, **policy}))


def codes(url: str, server: Server | str | None = None, vetter: Vetter = OFFLINE) -> set[str]:
    """The rule codes of ``url``'s offline verdict, asked for by ``server``."""
    return set(vetter.vet(url, server).codes)
