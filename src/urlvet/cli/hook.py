"""``urlvet hook``: answer MCP messages read on stdin, one JSON line each."""

from __future__ import annotations

import os

import click

from urlvet.cli.common import (
    build_policy,
    configured_server,
    with_tls,
)
from urlvet.cli.options import (
    policy_options,
    server_options,
    tls_options,
)


@click.command("hook")
@server_options(
    "The server whose messages these are, as your client configuration names it.",
    required=True,
)
@policy_options
@tls_options
def hook_cmd(
    server: str,
    server_name: str | None,
    policy_path: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    dns: bool | None,
    nameserver: tuple[str, ...],
    tls: bool | None,
    ca_file: str | None,
) -> None:
    """Answer MCP messages read on stdin, one JSON-RPC message a line, one JSON line each.

    Each output line holds the verdict and consent summary of every URL the message carries
    (draft interaction/create and -32003, 2025-11-25 elicitation/create and -32042,
    2026-07-28 input_required results) and the response to send back. A blocked URL is
    declined; a line that is malformed, not JSON or longer than 1 MiB gets an error object
    and a decline addressed by the id read from it (as the server wrote it), or an error
    that says nothing could be declined. Runs until stdin closes or the reader of stdout
    goes away.

    Each answer carries its own decision, so the exit status does not repeat one: 0 when
    stdin closed and every line was answered, 2 for usage and policy errors.
    """
    import contextlib

    from urlvet.engine import Vetter
    from urlvet.mcp import hook_lines
    from urlvet.mcp.lines import read_lines

    policy = with_tls(build_policy(policy_path, select, ignore, dns, nameserver), tls, ca_file)
    srv = configured_server(server, server_name)
    vetter = Vetter(policy)
    stdin = click.get_binary_stream("stdin")
    out = click.get_binary_stream("stdout")
    try:
        for answer in hook_lines(read_lines(stdin), vetter, srv):
            out.write(answer.encode("utf-8") + b"\n")
            out.flush()
    except BrokenPipeError:
        # The client hung up: say so once, and end without writing to the pipe again.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        click.echo("urlvet hook: the reader of stdout closed it: stopping", err=True)
