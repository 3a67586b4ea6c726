"""``urlvet consent URL``: the consent screen a client should show before opening a URL."""

from __future__ import annotations

import click

from urlvet.cli.common import (
    build_policy,
    configured_server,
    exit_on_decisions,
    use_colour,
    with_tls,
)
from urlvet.cli.options import (
    format_option,
    message_option,
    outcome_options,
    policy_options,
    server_options,
    tls_options,
)


@click.command("consent")
@click.argument("url")
@server_options(
    "The server that asks, as your client configuration names it: its URL, or 'stdio'.",
    required=True,
)
@message_option
@format_option("text", "markdown", "html", "json")
@policy_options
@outcome_options
@tls_options
def consent_cmd(
    url: str,
    server: str,
    server_name: str | None,
    message: str | None,
    fmt: str,
    policy_path: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    dns: bool | None,
    nameserver: tuple[str, ...],
    fail_on: str,
    no_color: bool,
    tls: bool | None,
    ca_file: str | None,
) -> None:
    """Print the consent screen a client should show before opening URL for a server."""
    from urlvet.consent import ConsentSummary
    from urlvet.engine import Vetter

    policy = with_tls(build_policy(policy_path, select, ignore, dns, nameserver), tls, ca_file)
    srv = configured_server(server, server_name)
    verdict = Vetter(policy).vet(url, srv, message=message)
    summary = ConsentSummary.from_verdict(verdict, srv, message)
    if fmt == "json":
        click.echo(summary.to_json())
    elif fmt == "markdown":
        click.echo(summary.to_markdown(), nl=False)
    elif fmt == "html":
        click.echo(summary.to_html(), nl=False)
    else:
        colour = use_colour(no_color)
        click.echo(summary.to_text(colour=colour), color=colour)
    exit_on_decisions([verdict.decision], fail_on)
