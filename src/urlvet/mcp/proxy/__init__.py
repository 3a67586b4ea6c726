"""``urlvet proxy``: vet every URL an MCP server asks for, between any client and any server.

- :mod:`.core`: the relay's decisions, whatever the transport (:class:`Relay`, :class:`Step`);
- :mod:`.judge`: the one seam onto vetting (a server message in, a judgement out);
- :mod:`.stdio`: the server as a child process, JSON-RPC lines both ways;
- :mod:`.http`: a Streamable HTTP endpoint in front of an upstream one (httpx and uvicorn),
  with :mod:`.sse` (event streams read as the HTML standard says) and :mod:`.listener` (who
  may use the endpoint).

:func:`run_proxy` is what ``urlvet proxy`` calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from urlvet.mcp.proxy.core import MAX_MESSAGE, VET_LIMIT, ProxyLog, Relay, Step
from urlvet.mcp.proxy.stdio import GRACE, ProxyError, StdioProxy, run_stdio

if TYPE_CHECKING:
    from urlvet.policy import Policy


def run_proxy(
    policy: Policy,
    *,
    command: Sequence[str] = (),
    upstream: str | None = None,
    listen: str | None = None,
    server: str | None = None,
    server_name: str | None = None,
    log: str | None = None,
    grace: float = GRACE,
    allow_remote: bool = False,
    auth_token: str | None = None,
    allow_origins: Sequence[str] = (),
    allow_hosts: Sequence[str] = (),
) -> int:
    """Run the proxy until its child exits (stdio) or it is stopped (HTTP); its exit status.

    ``command`` starts a stdio server; ``upstream`` and ``listen`` put an HTTP endpoint in
    front of a Streamable HTTP one. ``server`` is the server as the client's configuration
    names it: ``stdio`` (the default for a command) or the upstream URL (the default for HTTP).
    Over HTTP, ``allow_remote`` with ``auth_token`` lets the proxy listen beyond loopback, and
    ``allow_origins``/``allow_hosts`` widen the ``Origin`` and ``Host`` it accepts
    (:mod:`.listener`).
    Raises :class:`ProxyError` or :class:`~urlvet.errors.InputError` for unusable options.
    """
    from urlvet.engine import Vetter
    from urlvet.server import Server, as_server

    if upstream is None and listen is None:
        if not command:
            raise ProxyError("give the server's command after '--', or --upstream and --listen")
    elif command:
        raise ProxyError("give either a command after '--' or --upstream/--listen, not both")
    elif upstream is None or listen is None:
        raise ProxyError("--upstream URL and --listen HOST:PORT go together")
    configured = as_server(server or (upstream if upstream is not None else "stdio"), server_name)
    assert configured is not None
    if server_name is not None and configured.name is None:
        configured = Server(name=server_name, url=configured.url, parsed=configured.parsed)
    proxy_log = ProxyLog(log) if log is not None else None
    try:
        relay = Relay.build(Vetter(policy), configured, proxy_log)
        if upstream is not None and listen is not None:
            try:
                from urlvet.mcp.proxy.http import run_http
            except ImportError as exc:
                raise ProxyError(
                    f"the HTTP proxy needs {exc.name} (urlvet's mcp extra: pip install '.[mcp]' from a checkout)"
                ) from None

            return run_http(
                upstream,
                listen,
                relay,
                allow_remote=allow_remote,
                token=auth_token,
                allow_origins=allow_origins,
                allow_hosts=allow_hosts,
            )
        return run_stdio(command, relay, grace=grace)
    finally:
        if proxy_log is not None:
            proxy_log.close()


__all__ = [
    "GRACE",
    "MAX_MESSAGE",
    "VET_LIMIT",
    "ProxyError",
    "ProxyLog",
    "Relay",
    "StdioProxy",
    "Step",
    "run_proxy",
]
