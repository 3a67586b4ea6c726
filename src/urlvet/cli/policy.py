"""``urlvet policy check|show|test|diff|import-domains|schema``: work with policies."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from urlvet.cli.common import (
    fail,
    report_feeds,
    source_label,
)
from urlvet.cli.options import format_option, output_option, server_option
from urlvet.errors import InputError, UrlvetError
from urlvet.text import printable


@click.group("policy")
def policy_group() -> None:
    """Check, show, test and compare policies; import domain lists; print the schema."""


@policy_group.command("check")
@click.argument("files", nargs=-1, required=True, metavar="NAME|FILE...")
def policy_check(files: tuple[str, ...]) -> None:
    """Validate policies (and the policies they extend); say what each one inherits."""
    from urlvet.policy import load_policy, policy_sources

    bad = 0
    for f in files:
        try:
            # Compiling validates the rule tables and reads the feed files too.
            compiled = load_policy(f).compiled
            sources = policy_sources(f)
        except UrlvetError as exc:
            click.echo(str(exc), err=True)
            bad += 1
        else:
            click.echo(f"{f}: ok")
            click.echo(f"  {inheritance(sources)}")
            for line in report_feeds(compiled.settings, quiet=False):
                click.echo(f"  {line}")
    sys.exit(2 if bad else 0)


def inheritance(sources: Sequence[Any]) -> str:
    """One line on what a policy inherits, from its ``extends`` chain (the file first)."""
    if len(sources) == 1:
        if source_label(sources[0].path).endswith("(built-in)"):
            return "extends: none (states every setting)"
        return (
            "extends: none: starts from nothing; its lists replace the built-in lists, and "
            "keys it leaves out take the built-in values"
        )
    chain = " -> ".join(source_label(s.path) for s in sources[1:])
    own = sources[0].data
    written = "extends" in own and own["extends"] is not None
    implied = "" if written else " (implied: the file has no `extends`)"
    return f"extends: {chain}{implied}; its lists add to the inherited ones, its other settings win"


@policy_group.command("show")
@click.argument("policy", metavar="NAME|FILE")
@click.option(
    "--resolved",
    is_flag=True,
    help="Print the policy with everything it inherits, as a command uses it, instead of the "
    "file as written.",
)
def policy_show(policy: str, resolved: bool) -> None:
    """Print a policy: a built-in one by name (default, strict), or a file.

    The file as written by default, so that it can be read and copied into your own policy.
    """
    import yaml

    from urlvet.policy import load_policy, policy_file

    try:
        if resolved:
            data = load_policy(policy).model_dump(mode="json", exclude={"extends"})
            click.echo(yaml.safe_dump(data, sort_keys=False), nl=False)
            return
        path = policy_file(policy)
        text = path.read_text(encoding="utf-8")
    except UrlvetError as exc:
        fail(str(exc))
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{policy}: cannot read policy file: {getattr(exc, 'strerror', None) or exc}")
    click.echo(text, nl=False)


@policy_group.command("test")
@click.argument("paths", nargs=-1, type=click.Path())
@format_option(
    "text",
    "junit",
    help="text: failures with file:line and a summary; junit: JUnit XML for CI systems.",
)
@output_option(
    "Write the report to this file instead of stdout (the summary still goes to stderr)."
)
def policy_test(paths: tuple[str, ...], fmt: str, output: str | None) -> None:
    """Run policy fixtures: every case of each NAME.fixtures.yaml against NAME.yaml beside it.

    PATHS are directories (searched for *.fixtures.yaml), fixtures files or policy files;
    default: the current directory. Cases are vetted offline. Exit 0 when all pass, 1 when
    any fails, 2 when a file is broken (invalid YAML, unknown keys or codes, a broken policy).
    """
    from urlvet.review import fixtures

    runs = fixtures.run_paths(list(paths) or ["."])
    report = (
        fixtures.render_junit(runs)
        if fmt == "junit"
        else fixtures.render_text(runs, printable=printable)
    )
    if output:
        from urlvet.files import write_atomically

        try:
            write_atomically(output, (report + "\n").encode("utf-8"))
        except InputError as exc:
            fail(str(exc))
        click.echo(fixtures.summary(runs), err=True)
    else:
        click.echo(report)
        if fmt == "junit":
            click.echo(fixtures.summary(runs), err=True)
    sys.exit(fixtures.exit_code(runs))


@policy_group.command("diff")
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@click.argument("url_files", nargs=-1, type=click.Path(dir_okay=False))
@format_option("text", "json")
@server_option("The server that asks for the URL files' URLs.")
@click.option("--exit-code", is_flag=True, help="Exit 1 when any URL's decision or codes change.")
def policy_diff(
    old: str, new: str, url_files: tuple[str, ...], fmt: str, server: str | None, exit_code: bool
) -> None:
    """Show which URLs a policy change moves: OLD and NEW are policy files.

    The URLs are the fixtures of both policies plus URL_FILES (one URL a line), vetted offline
    under each. Every URL whose decision or codes change is listed, grouped by old -> new
    decision, with a summary. To compare against a branch, check it out beside the working
    tree first (`git worktree add ../base main`), so that `extends` and feed paths resolve.
    """
    from urlvet.policy import load_policy
    from urlvet.review import diff

    try:
        old_policy = load_policy(old)
        new_policy = load_policy(new)
        probes = diff.probes_for([old, new], url_files, server)
        result = diff.diff_policies(old_policy, new_policy, probes, old, new)
    except UrlvetError as exc:
        fail(str(exc))
    if fmt == "json":
        from urlvet.consent import json_dumps

        click.echo(json_dumps(result.to_json_dict(), indent=2))
    else:
        click.echo(diff.render_text(result, printable=printable))
    sys.exit(1 if exit_code and result.changes else 0)


@policy_group.command("import-domains")
@click.argument("ranking", type=click.Path(dir_okay=False))
@click.option(
    "--top",
    type=click.IntRange(1, 1_000_000),
    default=10_000,
    show_default=True,
    help="How many registrable domains to take, in rank order.",
)
@output_option("Write the fragment to this file instead of stdout.")
def policy_import_domains(ranking: str, top: int, output: str | None) -> None:
    """Turn a ranking CSV into a policy fragment: rank,domain as Tranco publishes it, or
    origin,rank as the Chrome UX Report publishes it (https://www.example.com,1000).

    The fragment lists `protected_domains`; include it in a policy with `extends`. Rows that
    cannot be used are skipped and counted on stderr.
    """
    from urlvet.lookalike import read_ranking_csv, render_policy_fragment

    try:
        ranked = read_ranking_csv(ranking, top)
    except UrlvetError as exc:
        fail(str(exc))
    domains = ranked.domains
    if ranked.skipped:
        click.echo(
            f"urlvet: warning: {ranking}: skipped {ranked.skipped:,} rows "
            f"({ranked.malformed:,} neither rank,domain nor origin,rank; "
            f"{ranked.unusable:,} naming no registrable domain), the first at line "
            f"{ranked.first_skipped}",
            err=True,
        )
    text = render_policy_fragment(
        domains,
        header=f"Protected domains: the top {len(domains):,} sites of {Path(ranking).name}.",
    )
    if output:
        from urlvet.files import write_atomically

        try:
            write_atomically(output, text.encode("utf-8"))
        except InputError as exc:
            fail(str(exc))
        click.echo(f"wrote {len(domains):,} domains to {output}", err=True)
    else:
        click.echo(text, nl=not text.endswith("\n"))


@policy_group.command("schema")
def policy_schema() -> None:
    """Print the JSON Schema of policy files."""
    from urlvet.policy import policy_json_schema

    click.echo(json.dumps(policy_json_schema(), indent=2, sort_keys=True))
