"""``urlvet audit PATH...|-``: audit URL lists, MCP traffic and logs."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, BinaryIO, NoReturn, TextIO

import click

from urlvet.cli.common import (
    OWN_PROCESS,
    build_policy,
    configured_server,
    fail,
    use_colour,
    verbosity,
    warn_if_hsts_list_is_old,
    with_tls,
)
from urlvet.cli.options import (
    format_option,
    outcome_options,
    output_option,
    policy_options,
    server_options,
    show_secrets_option,
    tls_options,
)
from urlvet.errors import UrlvetError

if TYPE_CHECKING:
    from urlvet.audit.command import AuditRun
    from urlvet.policy import Policy

_AUDIT_FORMATS = ("text", "json", "jsonl", "sarif", "github", "html")


@click.command("audit")
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@format_option(
    *_AUDIT_FORMATS,
    help="text: grouped report and summary; json/jsonl: one object per URL occurrence; "
    "sarif: SARIF 2.1.0 for code scanning; github: workflow annotations; html: one "
    "self-contained page (with -o report.html) to look at.",
)
@output_option("Write results to this file instead of stdout.", allow_dash=True)
@click.option(
    "--input-kind",
    type=click.Choice(["auto", "urls", "jsonl", "text"]),
    default="auto",
    show_default=True,
    help="urls: one URL a line; jsonl: MCP JSON-RPC traffic; text: free text and logs; "
    "auto: decide per file.",
)
@server_options("The server that asked for every URL.")
@click.option(
    "--server-field",
    metavar="FIELD",
    help="In JSON Lines: the (dotted) field of each line that holds the server's URL.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Worker processes for offline audits (--no-dns). With jsonl or json output and "
    "large regular files, the input is cut at line starts into shares that the workers audit "
    "whole (the output is the same); otherwise (stdin, compressed input, other formats) the "
    "workers vet the URLs the main process reads.",
)
@click.option(
    "--spark-master",
    metavar="MASTER",
    help="Vet on Spark (local[4], spark://HOST:7077, yarn...): this machine reads and reports, "
    "the cluster vets the distinct URLs. Offline (--no-dns); needs urlvet[spark].",
)
@click.option(
    "--baseline",
    "baseline_path",
    type=click.Path(dir_okay=False),
    help="Findings in this baseline do not fail the run.",
)
@click.option(
    "--write-baseline",
    type=click.Path(dir_okay=False),
    help="Write every finding to this baseline file (and exit 0 unless input failed).",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings reach --fail-on.")
@click.option(
    "--max-line-bytes",
    type=click.IntRange(64, 1 << 30),
    help="Skip (and report) longer lines. Default: 1 MiB, 16 MiB for JSON Lines.",
)
@click.option("--stdin-filename", default="<stdin>", show_default=True, help="Name for '-'.")
@click.option("--no-progress", is_flag=True, help="No progress line on a terminal's stderr.")
@show_secrets_option
@policy_options
@outcome_options
@tls_options
def audit_cmd(
    paths: tuple[str, ...],
    fmt: str,
    output: str | None,
    input_kind: str,
    server: str | None,
    server_name: str | None,
    server_field: str | None,
    jobs: int,
    baseline_path: str | None,
    write_baseline: str | None,
    exit_zero: bool,
    max_line_bytes: int | None,
    stdin_filename: str,
    no_progress: bool,
    show_secrets: bool,
    policy_path: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    dns: bool | None,
    nameserver: tuple[str, ...],
    fail_on: str,
    no_color: bool,
    tls: bool | None,
    ca_file: str | None,
    spark_master: str | None,
) -> None:
    """Audit URL lists, MCP traffic (JSON Lines) and logs; '-' reads stdin.

    Each distinct URL is vetted once; every occurrence is reported with its file, line and
    column. Exit 0 clean, 1 when a URL reaches --fail-on (and the baseline does not accept
    it), 2 for usage and policy errors and when input could not be read (binary files,
    invalid UTF-8, over-long lines: reported and skipped).
    """
    from urlvet.audit import AuditOptions
    from urlvet.audit.command import AuditRun

    policy = with_tls(build_policy(policy_path, select, ignore, dns, nameserver), tls, ca_file)
    warn_if_hsts_list_is_old()
    if server_name and not server:
        server = "stdio"  # as for `check`: a server named with no URL is a stdio server
    configured_server(server, server_name)  # a bad one fails before any input is read
    if paths.count("-") > 1:
        fail("'-' (stdin) can be given once")
    run = AuditRun(
        paths=paths,
        fmt=fmt,
        output=output,
        options=AuditOptions(
            input_kind=input_kind,  # type: ignore[arg-type]
            server=server,
            server_name=server_name,
            server_field=server_field,
            max_line_bytes=max_line_bytes,
            jobs=jobs,
            redact_secrets=not show_secrets,
            json_records=fmt in ("json", "jsonl"),
            stdin_name=stdin_filename,
        ),
        fail_on=fail_on,
        baseline=baseline_path,
        write_baseline=write_baseline,
        exit_zero=exit_zero,
        colour=use_colour(no_color),
        progress=not no_progress and verbosity() >= 0,
        verbosity=verbosity(),
    )
    _run(policy, run, spark_master)


def audit_on(
    policy: Policy, run: AuditRun, stdout: BinaryIO, stderr: TextIO, spark_master: str | None
) -> int:
    """Run the audit with the strategy the command line picks: on Spark at ``spark_master``
    when one is given (the session this starts is stopped after), else the audit's own.
    Returns the exit code; raises what :func:`urlvet.audit.command.run_audit` and
    :func:`urlvet.spark.strategy.spark_strategy` raise."""
    from urlvet.audit.command import run_audit

    if spark_master is None:
        return run_audit(policy, run, stdout, stderr)
    from urlvet.spark.strategy import spark_strategy

    with spark_strategy(spark_master, policy, run.options) as strategy:
        return run_audit(policy, run, stdout, stderr, strategy)


def _run(policy: Policy, run: AuditRun, spark_master: str | None) -> NoReturn:
    """Run the audit and exit with its code; run as a process of its own, the process ends
    at once, without freeing the audit's caches one by one."""
    own_process = click.get_current_context().find_root().obj is OWN_PROCESS
    if own_process:
        from urlvet.audit.pipeline import bulk_gc_to_the_end

        bulk_gc_to_the_end()
    try:
        code = audit_on(policy, run, click.get_binary_stream("stdout"), sys.stderr, spark_master)
    except UrlvetError as exc:
        fail(str(exc))
    if own_process:
        from urlvet.audit.pipeline import end_process

        end_process(code)
    sys.exit(code)
