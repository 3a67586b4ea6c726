"""``urlvet rule [CODE]``: explain a rule, or list every rule."""

from __future__ import annotations

import json
from typing import Any

import click

from urlvet.cli.common import (
    fail,
)
from urlvet.cli.options import format_option


@click.command("rule")
@click.argument("code", required=False)
@format_option("text", "json")
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
        fail(f"unknown rule {code!r}; `urlvet rule` lists them")
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
