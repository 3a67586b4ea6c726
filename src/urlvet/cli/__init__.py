"""The ``urlvet`` command line: the ``urlvet`` group, its console script and the Spark job's.
The only package that parses a command line with click (the text renderings use click's
styling for colour, the one colour path); one module per command, the options they share
declared once in :mod:`urlvet.cli.options`.

stdout carries results only; diagnostics go to stderr. Exit 0 when nothing reaches
``--fail-on``, 1 when something does, 2 for usage, policy and input errors, 130 after
Ctrl-C, 141 when the reader of stdout went away (docs/cli.md).
"""

from __future__ import annotations

import click

from urlvet.cli.audit import audit_cmd
from urlvet.cli.check import check
from urlvet.cli.common import (
    INTERRUPTED_EXIT,
    OWN_PROCESS,
    PIPE_CLOSED_EXIT,
    UrlvetCommand,
    UrlvetGroup,
    use_colour,
)
from urlvet.cli.consent import consent_cmd
from urlvet.cli.eval import eval_cmd
from urlvet.cli.hook import hook_cmd
from urlvet.cli.options import verbosity_options
from urlvet.cli.policy import policy_group
from urlvet.cli.proxy import proxy_cmd
from urlvet.cli.rule import rule_cmd
from urlvet.cli.spark_job import spark_job_command

__all__ = [
    "INTERRUPTED_EXIT",
    "PIPE_CLOSED_EXIT",
    "UrlvetCommand",
    "UrlvetGroup",
    "console",
    "main",
    "spark_job_command",
    "spark_main",
]

_use_colour = use_colour  # the name the colour tests read


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from importlib.metadata import PackageNotFoundError, version

    from urlvet.hsts import hsts_preload_list_date

    try:
        ours = version("urlvet")
    except PackageNotFoundError:
        from urlvet import __version__ as ours
    click.echo(f"urlvet, version {ours}")
    click.echo(f"HSTS preload list: {hsts_preload_list_date()} (Chromium's, from hstspreload)")
    ctx.exit()


@click.group(cls=UrlvetGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and the date of the HSTS preload list, and exit.",
)
def main() -> None:
    """Vet the URLs that MCP servers ask a client to open: allow, warn or block.

    Exit 0 clean, 1 findings at or above --fail-on, 2 usage, policy or input errors, 130
    after Ctrl-C, 141 when the reader of stdout went away (| head).
    """


for _command in (
    check,
    rule_cmd,
    policy_group,
    consent_cmd,
    hook_cmd,
    proxy_cmd,
    audit_cmd,
    eval_cmd,
):
    main.add_command(_command)


def spark_main(argv: list[str] | None = None) -> None:
    """``python -m urlvet.spark INPUT OUTPUT --format parquet|jsonl ...`` and ``urlvet-spark``:
    the Spark job's command line (see ``--help``)."""
    spark_job_command.main(args=argv, prog_name="python -m urlvet.spark")


def _with_verbosity(command: click.Command) -> None:
    command.params.extend(verbosity_options())
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _with_verbosity(sub)


_with_verbosity(main)  # -q and -v before the command's name or after it


def console() -> None:
    """The ``urlvet`` command: the console script and ``python -m urlvet``."""
    main(prog_name="urlvet", obj=OWN_PROCESS)
