"""The options the commands share mean the same on every command: each is declared once (in
urlvet.cli.options), so its type, default, metavar and help never drift between commands."""

from __future__ import annotations

import click
import pytest

from urlvet.cli import main, spark_job_command

# Options that eval and the Spark job declare with their own meaning (a policy read on the
# driver, DNS off by default) are not in this list: they are not the vetting commands' options.
SHARED = (
    "--policy",
    "--show-settings",
    "--select",
    "--ignore",
    "--dns",
    "--nameserver",
    "--fail-on",
    "--no-color",
    "--tls",
    "--ca-file",
    "--server-name",
    "--message",
    "--show-secrets",
    "--quiet",
    "--verbose",
)
OWN_MEANING = {"eval": {"--policy", "--dns", "--nameserver"}, "urlvet-spark": {"--policy", "--dns"}}


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found.extend(_commands(command, f"{prefix}{name} "))
        else:
            found.append((prefix + name, command))
    return found


def _declaration(option: click.Option) -> str:
    # click's own description of a parameter: names, type, default, help, flags.
    return repr(sorted(option.to_info_dict().items()))


def _options_by_command() -> dict[str, dict[str, click.Option]]:
    table: dict[str, dict[str, click.Option]] = {}
    for name, command in [*_commands(main), ("urlvet-spark", spark_job_command)]:
        table[name] = {
            opt: param
            for param in command.params
            if isinstance(param, click.Option)
            for opt in param.opts
            if opt in SHARED and opt not in OWN_MEANING.get(name, set())
        }
    return table


@pytest.mark.parametrize("option", SHARED)
def test_a_shared_option_is_declared_alike_on_every_command(option: str) -> None:
    declared = {
        command: _declaration(options[option])
        for command, options in _options_by_command().items()
        if option in options
    }
    assert declared, f"no command takes {option}"
    distinct = set(declared.values())
    assert len(distinct) == 1, f"{option} differs between commands: {declared}"


def test_the_vetting_commands_take_the_policy_and_tls_options() -> None:
    table = _options_by_command()
    for command in ("check", "audit", "consent", "hook", "proxy"):
        for option in ("--policy", "--select", "--ignore", "--dns", "--nameserver", "--tls"):
            assert option in table[command], f"urlvet {command} lacks {option}"
    for command in ("check", "audit", "consent"):
        assert {"--fail-on", "--no-color"} <= table[command].keys(), command
