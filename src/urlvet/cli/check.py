"""``urlvet check URL...``: vet URLs given on the command line or stdin."""

from __future__ import annotations

from typing import Any

import click

from urlvet.cli.common import (
    build_policy,
    configured_server,
    exit_on_decisions,
    fail,
    split_codes,
    use_colour,
    warn_if_hsts_list_is_old,
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
from urlvet.errors import UrlvetError
from urlvet.text import printable

_DECISION_COLOURS = {"allow": "green", "warn": "yellow", "block": "red"}


@click.command("check")
@click.argument("urls", nargs=-1)
@server_options("The server that asks: its endpoint URL, or 'stdio' for a local server.")
@message_option
@format_option("text", "json")
@click.option(
    "--explain",
    is_flag=True,
    help="For each finding, the policy file, line and key behind its severity; what the "
    "policy ignored or allowed; the threshold behind the decision.",
)
@policy_options
@outcome_options
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
    """Vet each URL and print the decision with its findings; '-' reads URLs from stdin, one
    a line (blank lines and lines starting with '#' are skipped)."""
    from urlvet.config import choose_policy
    from urlvet.engine import Vetter

    if urls.count("-") > 1:
        fail("'-' (stdin) can be given once")
    # The policy first: --show-settings and a policy error end the command before stdin is read.
    policy = with_tls(build_policy(policy_path, select, ignore, dns, nameserver), tls, ca_file)
    if "-" in urls:
        at = urls.index("-")
        urls = (*urls[:at], *_stdin_urls(), *urls[at + 1 :])
    if not urls:
        raise click.UsageError("Missing argument 'URLS...'.")
    warn_if_hsts_list_is_old()
    srv = configured_server(server, server_name)
    vetter = Vetter(policy)
    verdicts = [vetter.vet(u, srv, message=message) for u in urls]
    explanations: list[Any] = []
    if explain:
        from urlvet.review.explain import Explainer

        try:
            choice = choose_policy(policy_path)
            # Nothing chose a policy: the explanation says "built-in default", not a file.
            spec = None if choice.origin == "built-in" else str(choice.spec)
            explainer = Explainer(policy, spec, split_codes(select), split_codes(ignore))
            explanations = [explainer.explain(v, srv, message) for v in verdicts]
        except UrlvetError as exc:
            fail(str(exc))
    if fmt == "json":
        from urlvet.consent import json_dumps

        # Hidden characters and lone surrogates (argv bytes that are not UTF-8 arrive as
        # surrogates) are written as \uXXXX: a strict UTF-8 stdout cannot encode them.
        data = [v.to_json_dict() for v in verdicts]
        for item, why in zip(data, explanations, strict=False):
            item["explain"] = why.to_json_dict()
        click.echo(json_dumps(data, indent=2))
    else:
        colour = use_colour(no_color)
        for i, v in enumerate(verdicts):
            click.echo(render_text(v, colour), color=colour)
            if explanations:
                click.echo("\n".join(printable(line, 2000) for line in explanations[i].lines()))
    exit_on_decisions([v.decision for v in verdicts], fail_on)


def _stdin_urls() -> list[str]:
    """The URLs on stdin, one a line; exits 2 at a line that is not UTF-8."""
    urls = []
    for lineno, raw in enumerate(click.get_binary_stream("stdin"), start=1):
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError as exc:
            fail(f"stdin:{lineno}: invalid UTF-8 (byte 0x{raw[exc.start]:02x}): {exc.reason}")
        if line and not line.startswith("#"):
            urls.append(line)
    return urls


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
