"""The ``urlvet`` command line. The only module that imports click.

stdout carries results only; diagnostics go to stderr. Exit 0 when nothing reaches
``--fail-on``, 1 when something does, 2 for usage, policy and input errors.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from urlvet.errors import InputError, PolicyError, UrlvetError
from urlvet.text import printable

F = TypeVar("F", bound=Callable[..., Any])

_DECISION_COLOURS = {"allow": "green", "warn": "yellow", "block": "red"}


def _fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"urlvet: error: {message}", err=True)
    sys.exit(code)


def _use_colour(no_color: bool) -> bool:
    return not no_color and "NO_COLOR" not in os.environ and sys.stdout.isatty()


def _split_codes(values: Sequence[str]) -> list[str]:
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


POLICY_HELP = (
    "A built-in policy (default, strict) or a policy file (YAML, TOML, JSON): a name has no "
    "'/' and no '.'. Default: URLVET_POLICY, else the nearest .urlvet.yaml or [tool.urlvet] "
    "in pyproject.toml, else the built-in default."
)
SHOW_SETTINGS = "urlvet.show_settings"
"""ctx.meta key: --show-settings was given (read by build_policy, which every command calls)."""


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
        click.option(
            "--fail-on",
            type=click.Choice(["warn", "block"]),
            default="block",
            show_default=True,
            help="Exit 1 when a URL gets this decision or worse.",
        ),
        click.option(
            "--no-color", is_flag=True, help="No colour (also: NO_COLOR in the environment)."
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


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
    for option in reversed(options):
        fn = option(fn)
    return fn


def _tls_section(policy: Any, tls: bool | None, ca_file: str | None) -> dict[str, Any] | None:
    """The policy's tls section with --tls and --ca-file applied; None when neither was given."""
    if tls is None and not ca_file:
        return None
    section: dict[str, Any] = policy.tls.model_dump(mode="json")
    if tls is not None:
        section["probe"] = tls
    if ca_file:
        section["ca_file"] = ca_file
    return section


def with_tls(policy: Any, tls: bool | None, ca_file: str | None) -> Any:
    """``policy`` with the --tls and --ca-file options applied; exits 2 when the trust
    anchors cannot be loaded."""
    from urlvet.tls import Prober

    section = _tls_section(policy, tls, ca_file)
    if section is not None:
        try:
            policy = policy.with_changes(tls=section)
        except ValueError as exc:
            _fail(f"invalid option: {_first_error(exc)}")
    if policy.tls.probe:
        try:
            Prober(timeout=policy.tls.timeout, ca_file=policy.tls.ca_file)
        except InputError as exc:
            _fail(str(exc))
        if not policy.dns.enabled:
            click.echo(
                "urlvet: note: without DNS the TLS probe reaches IP-literal hosts only: a "
                "name is probed only at an address its DNS check approved",
                err=True,
            )
    return policy


def build_policy(
    policy_path: str | None,
    select: Sequence[str],
    ignore: Sequence[str],
    dns: bool | None,
    nameserver: Sequence[str],
) -> Any:
    """The policy the options describe: --policy, else URLVET_POLICY, else the nearest
    configuration file, else the built-in default. Exits 2 with a clear message when it is
    invalid; with --show-settings, prints the settings and exits 0."""
    from urlvet.config import choose_policy
    from urlvet.policy import load_policy

    try:
        choice = choose_policy(policy_path)
        policy = load_policy(choice.spec)
        changes: dict[str, Any] = {}
        if select:
            changes["select"] = _split_codes(select)
        if ignore:
            changes["ignore"] = [*policy.ignore, *_split_codes(ignore)]
        if dns is not None or nameserver:
            dns_section = policy.dns.model_dump(mode="json")
            if dns is not None:
                dns_section["enabled"] = dns
            if nameserver:
                dns_section["nameservers"] = list(nameserver)
                if dns is None:
                    dns_section["enabled"] = True
            changes["dns"] = dns_section
        if changes:
            policy = policy.with_changes(**changes)
        # Compiling reads the policy's feed files: their errors are policy errors too.
        report_feeds(policy.compiled.settings)
        ctx = click.get_current_context(silent=True)
        if ctx is not None and ctx.meta.get(SHOW_SETTINGS):
            # --tls and --ca-file are applied by with_tls, after this: show them applied too.
            tls = _tls_section(policy, ctx.params.get("tls"), ctx.params.get("ca_file"))
            if tls is not None:
                changes["tls"] = tls
                policy = policy.with_changes(tls=tls)
            click.echo(show_settings(choice, policy, sorted(changes)))
            sys.exit(0)
        return policy
    except PolicyError as exc:
        _fail(str(exc))
    except ValueError as exc:  # pydantic's ValidationError for command-line values
        _fail(f"invalid option: {_first_error(exc)}")


def show_settings(choice: Any, policy: Any, changed: Sequence[str]) -> str:
    """What --show-settings prints: where the policy came from, its files, and the policy
    as the command uses it (YAML)."""
    import yaml

    from urlvet.policy import policy_sources

    lines = [
        f"Settings: {choice.describe()}",
        f"Policy: {choice.spec}",
        f"Files: {' -> '.join(_source_label(s.path) for s in policy_sources(choice.spec))}",
    ]
    if changed:
        lines.append(f"Changed by command-line options: {', '.join(changed)}")
    lines.append("Resolved policy:")
    body = yaml.safe_dump(policy.model_dump(mode="json", exclude={"extends"}), sort_keys=False)
    lines.extend("  " + line for line in body.splitlines())
    return "\n".join(lines)


def _source_label(path: str) -> str:
    from urlvet.policy import builtin_policy_name

    name = builtin_policy_name(path)
    return f"{name} (built-in)" if name else path


def warn_if_hsts_list_is_old() -> None:
    """One line on stderr when the shipped HSTS preload list is more than a year old."""
    from datetime import UTC, datetime

    from urlvet.hsts import QUIET_AGE_WARNING_ENV, hsts_preload_list_date, stale_list_warning

    if os.environ.get(QUIET_AGE_WARNING_ENV):
        return
    warning = stale_list_warning(hsts_preload_list_date(), datetime.now(UTC).date())
    if warning:
        click.echo(f"urlvet: warning: {warning}", err=True)


def report_feeds(settings: Any, quiet: bool = True) -> list[str]:
    """One line per feed file (entries, skipped lines); skipped lines always go to stderr."""
    lines = []
    for feeds in (
        settings.blocked_domain_feeds,
        settings.allowed_domain_feeds,
        settings.blocked_network_feeds,
        settings.blocked_url_feeds,
    ):
        for table in feeds.tables:
            lines.append(table.report())
            if table.skipped and quiet:
                click.echo(f"urlvet: note: {table.report()}", err=True)
    return lines


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = []
        for e in errors():
            loc = ".".join(str(p) for p in e.get("loc", ()))
            parts.append(f"{loc}: {e.get('msg', '')}".removeprefix(": "))
        return "; ".join(parts)
    return str(exc)


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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and the date of the HSTS preload list, and exit.",
)
def main() -> None:
    """Vet the URLs that MCP servers ask a client to open: allow, warn or block."""


@main.command()
@click.argument("urls", nargs=-1)
@click.option(
    "--server",
    metavar="URL|stdio",
    help="The server that asks: its endpoint URL, or 'stdio' for a local server.",
)
@click.option("--server-name", metavar="NAME", help="The server's name in your client config.")
@click.option("--message", metavar="TEXT", help="The message the server shows with the URL.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--explain",
    is_flag=True,
    help="For each finding, the policy file, line and key behind its severity; what the "
    "policy ignored or allowed; the threshold behind the decision.",
)
@policy_options
@tls_options
def check(
    urls: tuple[str, ...],
    server: str | None,
    server_name: str | None,
    message: str | None,
    fmt: str,
    explain: bool,
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
    """Vet each URL and print the decision with its findings."""
    from urlvet.config import choose_policy
    from urlvet.engine import Vetter
    from urlvet.server import as_server

    policy = with_tls(build_policy(policy_path, select, ignore, dns, nameserver), tls, ca_file)
    if not urls:
        raise click.UsageError("Missing argument 'URLS...'.")
    warn_if_hsts_list_is_old()
    try:
        srv = (
            as_server(server, name=server_name)
            if server
            else (as_server("stdio", name=server_name) if server_name else None)
        )
    except InputError as exc:
        _fail(str(exc))
    vetter = Vetter(policy)
    verdicts = [vetter.vet(u, srv, message=message) for u in urls]
    explanations: list[Any] = []
    if explain:
        from urlvet.review.explain import Explainer

        try:
            choice = choose_policy(policy_path)
            # Nothing chose a policy: the explanation says "built-in default", not a file.
            spec = None if choice.origin == "built-in" else str(choice.spec)
            explainer = Explainer(policy, spec, _split_codes(select), _split_codes(ignore))
            explanations = [explainer.explain(v, srv, message) for v in verdicts]
        except UrlvetError as exc:
            _fail(str(exc))
    if fmt == "json":
        from urlvet.consent import json_dumps

        # Hidden characters and lone surrogates (argv bytes that are not UTF-8 arrive as
        # surrogates) are written as \uXXXX: a strict UTF-8 stdout cannot encode them.
        data = [v.to_json_dict() for v in verdicts]
        for item, why in zip(data, explanations, strict=False):
            item["explain"] = why.to_json_dict()
        click.echo(json_dumps(data, indent=2))
    else:
        colour = _use_colour(no_color)
        for i, v in enumerate(verdicts):
            click.echo(render_text(v, colour))
            if explanations:
                click.echo("\n".join(printable(line, 2000) for line in explanations[i].lines()))
    threshold = 1 if fail_on == "warn" else 2
    sys.exit(1 if any(v.decision.rank >= threshold for v in verdicts) else 0)


def render_text(verdict: Any, colour: bool) -> str:
    """A verdict as a few lines of text for a terminal."""
    decision = verdict.decision.value
    head = decision.upper().ljust(5)
    if colour:
        head = click.style(head, fg=_DECISION_COLOURS[decision], bold=True)
    lines = [f"{head}  {printable(verdict.url)}"]
    if verdict.href is not None and verdict.href != verdict.url:
        lines.append(f"       opens {printable(verdict.href)}")
    if verdict.registrable_domain:
        site = verdict.registrable_domain
        lines.append(f"       site  {click.style(site, bold=True) if colour else site}")
    for f in verdict.findings:
        sev = f"[{f.severity.value}]"
        code = click.style(f.code, bold=True) if colour else f.code
        lines.append(f"  {code} {f.name} {sev}: {f.message}")
    return "\n".join(lines)


@main.command("rule")
@click.argument("code", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def rule_cmd(code: str | None, fmt: str) -> None:
    """Explain a rule (UV201, or its name), or list every rule."""
    from urlvet.checks import registry

    if code is None:
        table = registry.rules()
        if fmt == "json":
            click.echo(json.dumps([_rule_json(r) for r in table.values()], indent=2))
            return
        for r in table.values():
            click.echo(f"{r.code}  {r.name:<36} {r.severity.value:<8} {r.summary}")
        return
    matches = registry.expand(code)
    found = registry.get(matches[0]) if len(matches) == 1 else registry.get(code)
    if found is None:
        _fail(f"unknown rule {code!r}; `urlvet rule` lists them")
    if fmt == "json":
        click.echo(json.dumps(_rule_json(found), indent=2))
        return
    click.echo(
        f"# {found.code} {found.name}\n\nDefault severity: {found.severity.value}"
        + (f"  (CWE-{found.cwe})" if found.cwe else "")
        + f"\n\n{found.doc}"
    )


def _rule_json(r: Any) -> dict[str, Any]:
    return {
        "code": r.code,
        "name": r.name,
        "family": r.family,
        "severity": r.severity.value,
        "cwe": r.cwe,
        "summary": r.summary,
        "doc": r.doc,
    }


@main.group("policy")
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
        if _source_label(sources[0].path).endswith("(built-in)"):
            return "extends: none (states every setting)"
        return (
            "extends: none: starts from nothing; its lists replace the built-in lists, and "
            "keys it leaves out take the built-in values"
        )
    chain = " -> ".join(_source_label(s.path) for s in sources[1:])
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
        _fail(str(exc))
    except (OSError, UnicodeDecodeError) as exc:
        _fail(f"{policy}: cannot read policy file: {getattr(exc, 'strerror', None) or exc}")
    click.echo(text, nl=False)


@policy_group.command("test")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "junit"]),
    default="text",
    show_default=True,
    help="text: failures with file:line and a summary; junit: JUnit XML for CI systems.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Write the report to this file instead of stdout (the summary still goes to stderr).",
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
        try:
            Path(output).write_text(report + "\n", encoding="utf-8")
        except OSError as exc:
            _fail(f"{output}: cannot write: {exc.strerror or exc}")
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
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option("--server", metavar="URL|stdio", help="The server that asks for the URL files' URLs.")
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
        _fail(str(exc))
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
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Write the fragment to this file instead of stdout.",
)
def policy_import_domains(ranking: str, top: int, output: str | None) -> None:
    """Turn a ranking CSV (rank,domain as Tranco and CrUX publish) into a policy fragment.

    The fragment lists `protected_domains`; include it in a policy with `extends`.
    """
    from urlvet.lookalike import import_ranking_csv, render_policy_fragment

    try:
        domains = import_ranking_csv(ranking, top)
    except UrlvetError as exc:
        _fail(str(exc))
    text = render_policy_fragment(
        domains,
        header=f"Protected domains: the top {len(domains):,} sites of {Path(ranking).name}.",
    )
    if output:
        Path(output).write_text(text, encoding="utf-8")
        click.echo(f"wrote {len(domains):,} domains to {output}", err=True)
    else:
        click.echo(text, nl=not text.endswith("\n"))


@policy_group.command("schema")
def policy_schema() -> None:
    """Print the JSON Schema of policy files."""
    from urlvet.policy import policy_json_schema

    click.echo(json.dumps(policy_json_schema(), indent=2, sort_keys=True))


def _configured_server(server: str | None, server_name: str | None) -> Any:
    """The server as the user's configuration names it (never its self-reported serverInfo)."""
    from urlvet.server import as_server

    try:
        if server:
            return as_server(server, name=server_name)
        return as_server("stdio", name=server_name) if server_name else None
    except InputError as exc:
        _fail(str(exc))


@main.command("consent")
@click.argument("url")
@click.option(
    "--server",
    required=True,
    metavar="URL|stdio",
    help="The server that asks, as your client configuration names it: its URL, or 'stdio'.",
)
@click.option("--server-name", metavar="NAME", help="The server's name in your client config.")
@click.option("--message", metavar="TEXT", help="The message the server shows with the URL.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "html", "json"]),
    default="text",
    show_default=True,
)
@policy_options
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
    srv = _configured_server(server, server_name)
    verdict = Vetter(policy).vet(url, srv, message=message)
    summary = ConsentSummary.from_verdict(verdict, srv, message)
    if fmt == "json":
        click.echo(summary.to_json())
    elif fmt == "markdown":
        click.echo(summary.to_markdown(), nl=False)
    elif fmt == "html":
        click.echo(summary.to_html(), nl=False)
    else:
        click.echo(summary.to_text(colour=_use_colour(no_color)))
    threshold = 1 if fail_on == "warn" else 2
    sys.exit(1 if verdict.decision.rank >= threshold else 0)


@main.command("hook")
@click.option(
    "--server",
    required=True,
    metavar="URL|stdio",
    help="The server whose messages these are, as your client configuration names it.",
)
@click.option("--server-name", metavar="NAME", help="The server's name in your client config.")
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
    fail_on: str,
    no_color: bool,
    tls: bool | None,
    ca_file: str | None,
) -> None:
    """Answer MCP messages read on stdin, one JSON-RPC message a line, one JSON line each.

    Each output line holds the verdict and consent summary of every URL the message carries
    (draft interaction/create and -32003, 2025-11-25 elicitation/create and -32042,
    2026-07-28 input_required results) and the response to send back. A blocked URL is
    declined; a malformed line gets an error object and a decline. Runs until stdin closes.
    """
    from urlvet.engine import Vetter
    from urlvet.mcp import hook_lines

    policy = with_tls(build_policy(policy_path, select, ignore, dns, nameserver), tls, ca_file)
    srv = _configured_server(server, server_name)
    vetter = Vetter(policy)
    stdin = click.get_binary_stream("stdin")
    out = click.get_binary_stream("stdout")
    for answer in hook_lines(iter(stdin.readline, b""), vetter, srv):
        out.write(answer.encode("utf-8") + b"\n")
        out.flush()


@main.command(
    "proxy",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--server",
    metavar="URL|stdio",
    help="The server as your client configuration names it (default: stdio for a command, "
    "the upstream URL for HTTP).",
)
@click.option("--server-name", metavar="NAME", help="The server's name in your client config.")
@click.option(
    "--upstream", metavar="URL", help="The Streamable HTTP endpoint to put urlvet in front of."
)
@click.option(
    "--listen", metavar="HOST:PORT", help="Where to serve the endpoint (http://HOST:PORT/mcp)."
)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False),
    help="Append one JSON line per vetted URL to this file (urlvet audit reads it).",
)
@click.option("--policy", "policy_path", metavar="NAME|FILE", help=POLICY_HELP)
@show_settings_option
@click.option("--select", multiple=True, metavar="CODES", help="Only these rule codes.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rule codes.")
@click.option(
    "--dns/--no-dns", "dns", default=None, help="Resolve names (default: as the policy says)."
)
@click.option("--nameserver", multiple=True, metavar="HOST[:PORT]", help="Nameserver to ask.")
@tls_options
def proxy_cmd(
    command: tuple[str, ...],
    server: str | None,
    server_name: str | None,
    upstream: str | None,
    listen: str | None,
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
        )
    except (UrlvetError, OSError) as exc:
        _fail(str(exc))
    sys.exit(status)


def _read_lines(path: str) -> list[str]:
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None


# --- urlvet audit --------------------------------------------------------------------------

_AUDIT_FORMATS = ("text", "json", "jsonl", "sarif", "github")


@main.command("audit")
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(_AUDIT_FORMATS),
    default="text",
    show_default=True,
    help="text: grouped report and summary; json/jsonl: one object per URL occurrence; "
    "sarif: SARIF 2.1.0 for code scanning; github: workflow annotations.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Write results to this file instead of stdout.",
)
@click.option(
    "--input-kind",
    type=click.Choice(["auto", "urls", "jsonl", "text"]),
    default="auto",
    show_default=True,
    help="urls: one URL a line; jsonl: MCP JSON-RPC traffic; text: free text and logs; "
    "auto: decide per file.",
)
@click.option("--server", metavar="URL|stdio", help="The server that asked for every URL.")
@click.option("--server-name", metavar="NAME", help="The server's name in your client config.")
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
@click.option("--show-secrets", is_flag=True, help="Do not redact secrets in URLs.")
@policy_options
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
    from urlvet.audit.command import AuditRun, run_audit
    from urlvet.server import as_server

    policy = with_tls(build_policy(policy_path, select, ignore, dns, nameserver), tls, ca_file)
    warn_if_hsts_list_is_old()
    if server_name and not server:
        server = "stdio"  # as for `check`: a server named with no URL is a stdio server
    if server:
        try:
            as_server(server, name=server_name)
        except InputError as exc:
            _fail(str(exc))
    if paths.count("-") > 1:
        _fail("'-' (stdin) can be given once")
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
        colour=_use_colour(no_color),
        progress=not no_progress,
        spark_master=spark_master,
    )
    own_process = click.get_current_context().find_root().obj is OWN_PROCESS
    if own_process:
        from urlvet.audit.pipeline import bulk_gc_to_the_end

        bulk_gc_to_the_end()
    try:
        code = run_audit(policy, run, click.get_binary_stream("stdout"), sys.stderr)
    except UrlvetError as exc:
        _fail(str(exc))
    if own_process:
        from urlvet.audit.pipeline import end_process

        end_process(code)  # the audit's caches are not freed one by one
    sys.exit(code)


@main.command("eval")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
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
        _fail(str(exc))
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
            _fail(str(exc))
        click.echo(f"urlvet: wrote the figures to {write_path}", err=True)
    for line in dropped:
        click.echo(f"urlvet: regression: {line}", err=True)
    sys.exit(1 if dropped else 0)


# --- the Spark job (python -m urlvet.spark, urlvet-spark) -------------------------------------


@click.command(
    "urlvet-spark",
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Vet every URL in INPUT (a path or glob Spark reads: local, hdfs://, s3a://...) and "
    "write one record per URL to OUTPUT (a directory). Exit 0 when written, 2 on usage, "
    "policy, input or Spark errors.",
)
@click.argument("source", metavar="INPUT")
@click.argument("output", metavar="OUTPUT")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["parquet", "jsonl"]),
    default="parquet",
    show_default=True,
    help="parquet: typed columns; jsonl: the objects `urlvet audit --format jsonl` writes.",
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
@click.option(
    "--server",
    metavar="URL|stdio",
    help="The server that asked for every URL (unless --server-col gives one).",
)
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
@click.option("--show-secrets", is_flag=True, help="Do not redact secrets in URLs.")
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


def spark_main(argv: list[str] | None = None) -> None:
    """``python -m urlvet.spark INPUT OUTPUT --format parquet|jsonl ...`` and ``urlvet-spark``:
    the Spark job's command line (see ``--help``)."""
    spark_job_command.main(args=argv, prog_name="python -m urlvet.spark")


OWN_PROCESS = "urlvet command"
"""The context object of the ``urlvet`` command run as a process of its own (:func:`console`),
not called from Python (a test's runner, say): a command may then end the process at once
when it is done (an audit, whose caches would take a while to free)."""


def console() -> None:
    """The ``urlvet`` command: the console script and ``python -m urlvet``."""
    main(prog_name="urlvet", obj=OWN_PROCESS)


if __name__ == "__main__":  # pragma: no cover
    console()
