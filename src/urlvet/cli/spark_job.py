"""``urlvet-spark`` and ``python -m urlvet.spark``: the Spark job's command line."""

from __future__ import annotations

import click

from urlvet.cli.common import (
    UrlvetCommand,
)
from urlvet.cli.options import format_option, server_option, show_secrets_option


@click.command(
    "urlvet-spark",
    cls=UrlvetCommand,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Vet every URL in INPUT (a path or glob Spark reads: local, hdfs://, s3a://...) and "
    "write one record per URL to OUTPUT (a directory). Exit 0 when written, 2 on usage, "
    "policy, input or Spark errors.",
)
@click.argument("source", metavar="INPUT")
@click.argument("output", metavar="OUTPUT")
@format_option(
    "parquet",
    "jsonl",
    "csv",
    help="parquet: typed columns; jsonl: the objects `urlvet audit --format jsonl` writes "
    "(part-*.jsonl files); csv: flat columns with a header, for spreadsheets.",
)
@click.option(
    "--input-kind",
    type=click.Choice(["auto", "urls", "text", "json", "mcp"]),
    default="auto",
    show_default=True,
    help="urls: one URL a line; text: URLs in free text and logs; json: JSON Lines records "
    "with a URL field (--url-col); mcp: MCP JSON-RPC traffic; auto: from the name and the "
    "first lines.",
)
@click.option(
    "--url-col", default="url", show_default=True, help="json: the (dotted) field with the URL."
)
@click.option(
    "--server-col", metavar="NAME", help="json and mcp: the (dotted) field with the server's URL."
)
@server_option("The server that asked for every URL (unless --server-col gives one).")
@click.option(
    "--policy",
    "policy_path",
    type=click.Path(dir_okay=False),
    help="Policy file (YAML, TOML or JSON), read here and shipped to the workers as data.",
)
@click.option(
    "--dns/--no-dns", default=False, show_default=True, help="Resolve names on the workers."
)
@click.option("--overwrite", is_flag=True, help="Replace OUTPUT if it exists.")
@click.option(
    "--master",
    help="Spark master (default: as spark-submit or the environment says; local[*] otherwise).",
)
@show_secrets_option
def spark_job_command(
    source: str,
    output: str,
    fmt: str,
    input_kind: str,
    url_col: str,
    server_col: str | None,
    server: str | None,
    policy_path: str | None,
    dns: bool,
    overwrite: bool,
    master: str | None,
    show_secrets: bool,
) -> None:
    """The job's command line."""
    from urlvet.spark import JobOptions, run_job

    run_job(
        source,
        output,
        JobOptions(
            input_kind="urls" if input_kind == "auto" else input_kind,  # type: ignore[arg-type]
            fmt=fmt,  # type: ignore[arg-type]
            url_col=url_col,
            server_col=server_col,
            server=server,
            dns=dns,
            redact_secrets=not show_secrets,
        ),
        policy_path=policy_path,
        sniff=input_kind == "auto",
        overwrite=overwrite,
        master=master,
    )
