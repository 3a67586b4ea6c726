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

F = TypeVar("F", bound=Callable[..., Any])

_DECISION_COLOURS = {"allow": "green", "warn": "yellow", "block": "red"}


def _fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"urlvet: error: {message}", err=True)
    sys.exit(code)


def _use_colour(no_color: bool) -> bool:
    return not no_color and "NO_COLOR" not in os.environ and sys.stdout.isatty()


def _split_codes(values: Sequence[str]) -> list[str]:
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


def policy_options(fn: F) -> F:
    """The options every vetting command shares."""
    options = [
        click.option(
            "--policy",
            "policy_path",
            type=click.Path(dir_okay=False),
            help="Policy file (YAML or TOML). Default: the built-in balanced policy.",
        ),
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


def build_policy(
    policy_path: str | None,
    select: Sequence[str],
    ignore: Sequence[str],
    dns: bool | None,
    nameserver: Sequence[str],
) -> Any:
    """The policy the options describe. Exits 2 with a clear message when it is invalid."""
    from urlvet.policy import Policy, load_policy

    try:
        policy = load_policy(policy_path) if policy_path else Policy()
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
        return policy.with_changes(**changes) if changes else policy
    except PolicyError as exc:
        _fail(str(exc))
    except ValueError as exc:  # pydantic's ValidationError for command-line values
        _fail(f"invalid option: {_first_error(exc)}")


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = []
        for e in errors():
            loc = ".".join(str(p) for p in e.get("loc", ()))
            parts.append(f"{loc}: {e.get('msg', '')}".removeprefix(": "))
        return "; ".join(parts)
    return str(exc)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="urlvet")
def main() -> None:
    """Vet the URLs that MCP servers ask a client to open: allow, warn or block."""


@main.command()
@click.argument("urls", nargs=-1, required=True)
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
@policy_options
def check(
    urls: tuple[str, ...],
    server: str | None,
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
) -> None:
    """Vet each URL and print the decision with its findings."""
    from urlvet.engine import Vetter
    from urlvet.server import as_server

    policy = build_policy(policy_path, select, ignore, dns, nameserver)
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
    if fmt == "json":
        click.echo(json.dumps([v.to_json_dict() for v in verdicts], indent=2, ensure_ascii=False))
    else:
        colour = _use_colour(no_color)
        for v in verdicts:
            click.echo(render_text(v, colour))
    threshold = 1 if fail_on == "warn" else 2
    sys.exit(1 if any(v.decision.rank >= threshold for v in verdicts) else 0)


def render_text(verdict: Any, colour: bool) -> str:
    """A verdict as a few lines of text for a terminal."""
    decision = verdict.decision.value
    head = decision.upper().ljust(5)
    if colour:
        head = click.style(head, fg=_DECISION_COLOURS[decision], bold=True)
    lines = [f"{head}  {_printable(verdict.url)}"]
    if verdict.href is not None and verdict.href != verdict.url:
        lines.append(f"       opens {_printable(verdict.href)}")
    if verdict.registrable_domain:
        site = verdict.registrable_domain
        lines.append(f"       site  {click.style(site, bold=True) if colour else site}")
    for f in verdict.findings:
        sev = f"[{f.severity.value}]"
        code = click.style(f.code, bold=True) if colour else f.code
        lines.append(f"  {code} {f.name} {sev}: {f.message}")
    return "\n".join(lines)


def _printable(text: str, limit: int = 300) -> str:
    # Never let a URL write terminal escapes or hide text with bidi controls.
    from urlvet.checks.transport import hidden_characters

    marks = {i: code for i, code, _ in hidden_characters(text)}
    out = "".join(f"<{marks[i]}>" if i in marks else ch for i, ch in enumerate(text[:limit]))
    return out + (f"… ({len(text) - limit:,} more characters)" if len(text) > limit else "")


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
    """Check policy files and print their schema."""


@policy_group.command("check")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def policy_check(files: tuple[str, ...]) -> None:
    """Validate policy files (and the files they extend)."""
    from urlvet.policy import load_policy

    bad = 0
    for f in files:
        try:
            load_policy(f).compiled  # noqa: B018 - compiling validates the rule tables too
        except UrlvetError as exc:
            click.echo(str(exc), err=True)
            bad += 1
        else:
            click.echo(f"{f}: ok")
    sys.exit(2 if bad else 0)


@policy_group.command("schema")
def policy_schema() -> None:
    """Print the JSON Schema of policy files."""
    from urlvet.policy import policy_json_schema

    click.echo(json.dumps(policy_json_schema(), indent=2, sort_keys=True))


def _read_lines(path: str) -> list[str]:
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None


if __name__ == "__main__":  # pragma: no cover
    main()
