"""``urlvet proxy``: vet the URLs an MCP server asks for, between it and the client."""

from __future__ import annotations

import sys

import click

from urlvet.cli.common import (
    build_policy,
    fail,
    with_tls,
)
from urlvet.cli.options import (
    policy_options,
    server_options,
    tls_options,
)
from urlvet.errors import UrlvetError


@click.command(
    "proxy",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@server_options(
    "The server as your client configuration names it (default: stdio for a command, "
    "the upstream URL for HTTP)."
)
@click.option(
    "--upstream", metavar="URL", help="The Streamable HTTP endpoint to put urlvet in front of."
)
@click.option(
    "--listen", metavar="HOST:PORT", help="Where to serve the endpoint (http://HOST:PORT/mcp)."
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Listen on an address other computers can reach (needs a bearer token).",
)
@click.option(
    "--auth-token",
    envvar="URLVET_PROXY_TOKEN",
    metavar="TOKEN",
    help="Bearer token every HTTP request must carry (default: $URLVET_PROXY_TOKEN).",
)
@click.option(
    "--allow-origin",
    "allow_origins",
    multiple=True,
    metavar="ORIGIN",
    help="A browser origin allowed besides this computer's (e.g. https://app.example).",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="HOST",
    help="A Host name the endpoint answers to besides localhost and the --listen address.",
)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False),
    help="Append one JSON line per vetted URL to this file (urlvet audit reads it).",
)
@policy_options
@tls_options
def proxy_cmd(
    command: tuple[str, ...],
    server: str | None,
    server_name: str | None,
    upstream: str | None,
    listen: str | None,
    allow_remote: bool,
    auth_token: str | None,
    allow_origins: tuple[str, ...],
    allow_hosts: tuple[str, ...],
    log_path: str | None,
    policy_path: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    dns: bool | None,
    nameserver: tuple[str, ...],
    tls: bool | None,
    ca_file: str | None,
) -> None:
    """Vet every URL an MCP server asks the client to open, between the two.

    \b
    stdio:  urlvet proxy [OPTIONS] -- COMMAND [ARGS...]
    HTTP:   urlvet proxy --upstream URL --listen HOST:PORT [OPTIONS]

    Allowed URL requests pass unchanged, warned ones reach the client with a first line
    'urlvet: ...', blocked ones never reach it: the server gets a decline. Everything else
    passes through unchanged. With a command, exits with the command's status.
    """
    from urlvet.mcp.proxy import run_proxy

    policy = with_tls(build_policy(policy_path, select, ignore, dns, nameserver), tls, ca_file)
    try:
        status = run_proxy(
            policy,
            command=command,
            upstream=upstream,
            listen=listen,
            server=server,
            server_name=server_name,
            log=log_path,
            allow_remote=allow_remote,
            auth_token=auth_token,
            allow_origins=allow_origins,
            allow_hosts=allow_hosts,
        )
    except (UrlvetError, OSError) as exc:
        fail(str(exc))
    sys.exit(status)
