"""The options the commands share, each declared once: the policy options, the outcome
options (--fail-on, --no-color), the TLS probe's, the server's, -q/-v, --format, --message."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from urlvet.cli.common import SHOW_SETTINGS, VERBOSITY

F = TypeVar("F", bound=Callable[..., Any])


def _count_verbosity(ctx: click.Context, param: click.Parameter, value: int) -> int:
    if value:
        meta = ctx.find_root().meta
        meta[VERBOSITY] = meta.get(VERBOSITY, 0) + (value if param.name == "verbose" else -value)
    return value


def verbosity_options() -> list[click.Option]:
    """-q/--quiet and -v/--verbose, for the group and for each command."""
    return [
        click.Option(
            ["-q", "--quiet"],
            count=True,
            expose_value=False,
            callback=_count_verbosity,
            help="Only errors on stderr: no notes, no progress line, no input warnings "
            "(those stay in the report).",
        ),
        click.Option(
            ["-v", "--verbose"],
            count=True,
            expose_value=False,
            callback=_count_verbosity,
            help="Also say on stderr which policy the run used and, for an audit, its "
            "figures (files, lines, URLs, distinct URLs vetted, time).",
        ),
    ]


POLICY_HELP = (
    "A built-in policy (default, strict) or a policy file (YAML, TOML, JSON): a name has no "
    "'/' and no '.'. Default: URLVET_POLICY, else the nearest .urlvet.yaml or [tool.urlvet] "
    "in pyproject.toml, else the built-in default."
)


def _remember_show_settings(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    # Kept out of the commands' parameters: build_policy, which every vetting command calls
    # first, prints the settings and exits, so no command needs its own branch for it.
    ctx.meta[SHOW_SETTINGS] = value


show_settings_option = click.option(
    "--show-settings",
    is_flag=True,
    expose_value=False,
    callback=_remember_show_settings,
    help="Print which configuration file chose the policy, the policy's files and the "
    "resolved policy, and exit.",
)
"""--show-settings, for every command that vets."""


def policy_options(fn: F) -> F:
    """The options every vetting command shares."""
    options = [
        click.option("--policy", "policy_path", metavar="NAME|FILE", help=POLICY_HELP),
        show_settings_option,
        click.option(
            "--select",
            multiple=True,
            metavar="CODES",
            help="Only these rule codes, prefixes or names (comma-separated).",
        ),
        click.option(
            "--ignore",
            multiple=True,
            metavar="CODES",
            help="Skip these rule codes, prefixes or names (comma-separated).",
        ),
        click.option(
            "--dns/--no-dns",
            "dns",
            default=None,
            help="Resolve names and check the answers (default: as the policy says).",
        ),
        click.option(
            "--nameserver",
            multiple=True,
            metavar="HOST[:PORT]",
            help="Nameserver to ask instead of the system's (repeatable).",
        ),
    ]
    return _apply(fn, options)


def outcome_options(fn: F) -> F:
    """--fail-on and --no-color: for the commands whose exit code is a decision and whose text
    may be coloured (check, consent, audit); not for hook, whose answers are JSON lines."""
    options = [
        click.option(
            "--fail-on",
            type=click.Choice(["warn", "block"]),
            default="block",
            show_default=True,
            help="Exit 1 when a URL gets this decision or worse.",
        ),
        click.option(
            "--no-color",
            is_flag=True,
            help="No colour (also: NO_COLOR in the environment; FORCE_COLOR forces it).",
        ),
    ]
    return _apply(fn, options)


def tls_options(fn: F) -> F:
    """--tls and --ca-file: the TLS handshake probe (off unless asked for)."""
    options = [
        click.option(
            "--tls/--no-tls",
            "tls",
            default=None,
            help="Probe https: hosts with a TLS handshake (UV601-UV607). Off by default: a "
            "handshake tells the host's operator that someone looked (default: as the policy "
            "says).",
        ),
        click.option(
            "--ca-file",
            type=click.Path(dir_okay=False),
            metavar="PEM",
            help="Trust only the CA certificates of this PEM file in the probe, instead of "
            "the system's trust store.",
        ),
    ]
    return _apply(fn, options)


def _apply(fn: F, options: Sequence[Callable[[Any], Any]]) -> F:
    # click adds options bottom-up: apply them in reverse so --help lists them as written.
    for option in reversed(options):
        fn = option(fn)
    return fn


SERVER_NAME_HELP = "The server's name in your client config."


def server_options(help: str, *, required: bool = False) -> Callable[[F], F]:
    """--server (its help says what the server is to the command) and --server-name, for
    the commands that vet on behalf of a server as the client configuration names it."""

    def decorate(fn: F) -> F:
        return _apply(
            fn,
            [
                server_option(help, required=required),
                click.option("--server-name", metavar="NAME", help=SERVER_NAME_HELP),
            ],
        )

    return decorate


def server_option(help: str, *, required: bool = False) -> Callable[[F], F]:
    """--server alone: an endpoint URL or 'stdio'."""
    return click.option("--server", required=required, metavar="URL|stdio", help=help)


message_option = click.option(
    "--message", metavar="TEXT", help="The message the server shows with the URL."
)
"""--message: the text the server shows beside the URL it asks for."""


def format_option(*choices: str, help: str | None = None) -> Callable[[F], F]:
    """--format, read as ``fmt``: one of ``choices``, the first the default."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(choices),
        default=choices[0],
        show_default=True,
        help=help,
    )


def output_option(help: str, *, allow_dash: bool = False) -> Callable[[F], F]:
    """-o/--output: write to this file instead of stdout."""
    return click.option(
        "-o", "--output", type=click.Path(dir_okay=False, allow_dash=allow_dash), help=help
    )


show_secrets_option = click.option(
    "--show-secrets", is_flag=True, help="Do not redact secrets in URLs."
)
"""--show-secrets, for the commands that write the URLs they read (audit, the Spark job)."""
