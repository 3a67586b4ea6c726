"""``urlvet eval``: measure urlvet against labelled cases."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from urlvet.cli.common import (
    fail,
)
from urlvet.cli.options import format_option
from urlvet.errors import InputError, UrlvetError


@click.command("eval")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@format_option("text", "json")
@click.option(
    "--policy",
    "policy_path",
    type=click.Path(dir_okay=False),
    help="Base policy (cases may add settings): a built-in name (default, strict) or a file. "
    "Default: the built-in default.",
)
@click.option(
    "--dns/--no-dns",
    default=False,
    show_default=True,
    help="Resolve names, and run the cases that need DNS (default: offline, those skipped).",
)
@click.option(
    "--nameserver", multiple=True, metavar="HOST[:PORT]", help="Nameserver for --dns (repeatable)."
)
@click.option(
    "--thresholds",
    "thresholds_path",
    type=click.Path(dir_okay=False),
    help="Exit 1 when a figure falls below the one in this file (corpus/thresholds.json).",
)
@click.option(
    "--write-thresholds",
    "write_path",
    type=click.Path(dir_okay=False),
    help="Write this run's figures to FILE as the new thresholds.",
)
@click.option("--misses/--no-misses", default=True, help="List the cases urlvet gets wrong.")
def eval_cmd(
    files: tuple[str, ...],
    fmt: str,
    policy_path: str | None,
    dns: bool,
    nameserver: tuple[str, ...],
    thresholds_path: str | None,
    write_path: str | None,
    misses: bool,
) -> None:
    """Measure urlvet against labelled cases (default: corpus/*.jsonl).

    Prints the share of decisions that match per family, precision and recall of block, the
    confusion of decisions and the agreement on rule codes.
    """
    from urlvet import evaluate
    from urlvet.policy import load_policy

    try:
        paths = list(files) or evaluate.default_corpus_files()
        cases = evaluate.load_cases(paths)
        policy = load_policy(policy_path) if policy_path else None
        report = evaluate.evaluate(cases, policy, dns=dns, nameservers=nameserver)
        committed = None
        if thresholds_path:
            try:
                committed = json.loads(Path(thresholds_path).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise InputError(f"{thresholds_path}: cannot read thresholds: {exc}") from None
    except UrlvetError as exc:
        fail(str(exc))
    figures = report.figures()
    dropped = evaluate.regressions(figures, committed) if committed is not None else []
    if fmt == "json":
        data = report.to_json_dict()
        if not misses:
            data.pop("misses")
        data["regressions"] = dropped
        from urlvet.consent import json_dumps

        click.echo(json_dumps(data, indent=2))
    else:
        click.echo(evaluate.render_text(report, show_misses=misses))
    if write_path:
        try:
            evaluate.write_thresholds(write_path, figures)
        except UrlvetError as exc:
            fail(str(exc))
        click.echo(f"urlvet: wrote the figures to {write_path}", err=True)
    for line in dropped:
        click.echo(f"urlvet: regression: {line}", err=True)
    sys.exit(1 if dropped else 0)
