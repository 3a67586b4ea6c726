"""What the commands share at run time: the error exit, colour, verbosity, the policy the
options describe, the TLS options applied, and the ending of a command as a shell's commands
end (Ctrl-C exits 130, a closed stdout 141)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any, NoReturn

import click

from urlvet.errors import InputError, PolicyError


def fail(message: str, code: int = 2) -> NoReturn:
    """``urlvet: error: MESSAGE`` on stderr, and exit ``code`` (2: usage, policy or input)."""
    click.echo(f"urlvet: error: {message}", err=True)
    sys.exit(code)


def use_colour(no_color: bool) -> bool:
    """Colour for stdout: never with --no-color or NO_COLOR (no-color.org), always with
    FORCE_COLOR (force-color.org), else when stdout is a terminal. A variable counts when it
    is set and not empty."""
    if no_color or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


VERBOSITY = "urlvet.verbosity"
"""The key of the -q/-v count in the click context's meta (shared by nested contexts)."""


def verbosity() -> int:
    """-1 with -q (errors only on stderr), 0 by default, 1 with -v (what the run used and
    did); given before or after the command's name."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return 0
    count: int = ctx.find_root().meta.get(VERBOSITY, 0)
    return max(-1, min(1, count))


def note(message: str) -> None:
    """A note on stderr (``urlvet: note: ...``), unless -q."""
    if verbosity() >= 0:
        click.echo(f"urlvet: note: {message}", err=True)


def split_codes(values: Sequence[str]) -> list[str]:
    """The rule codes of repeated, comma-separated --select/--ignore values."""
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


SHOW_SETTINGS = "urlvet.show_settings"
"""ctx.meta key: --show-settings was given (read by build_policy, which every command calls)."""


def tls_section(policy: Any, tls: bool | None, ca_file: str | None) -> dict[str, Any] | None:
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

    section = tls_section(policy, tls, ca_file)
    if section is not None:
        try:
            policy = policy.with_changes(tls=section)
        except ValueError as exc:
            fail(f"invalid option: {first_error(exc)}")
    if policy.tls.probe:
        try:
            Prober(timeout=policy.tls.timeout, ca_file=policy.tls.ca_file)
        except InputError as exc:
            fail(str(exc))
        if not policy.dns.enabled:
            note(
                "without DNS the TLS probe reaches IP-literal hosts only: a "
                "name is probed only at an address its DNS check approved"
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
            changes["select"] = split_codes(select)
        if ignore:
            changes["ignore"] = [*policy.ignore, *split_codes(ignore)]
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
            tls = tls_section(policy, ctx.params.get("tls"), ctx.params.get("ca_file"))
            if tls is not None:
                changes["tls"] = tls
                policy = policy.with_changes(tls=tls)
            click.echo(show_settings(choice, policy, sorted(changes)))
            sys.exit(0)
        if verbosity() > 0:
            click.echo(f"urlvet: policy: {choice.describe()}", err=True)
        return policy
    except PolicyError as exc:
        fail(str(exc))
    except ValueError as exc:  # pydantic's ValidationError for command-line values
        fail(f"invalid option: {first_error(exc)}")


def show_settings(choice: Any, policy: Any, changed: Sequence[str]) -> str:
    """What --show-settings prints: where the policy came from, its files, and the policy
    as the command uses it (YAML)."""
    import yaml

    from urlvet.policy import policy_sources

    lines = [
        f"Settings: {choice.describe()}",
        f"Policy: {choice.spec}",
        f"Files: {' -> '.join(source_label(s.path) for s in policy_sources(choice.spec))}",
    ]
    if changed:
        lines.append(f"Changed by command-line options: {', '.join(changed)}")
    lines.append("Resolved policy:")
    body = yaml.safe_dump(policy.model_dump(mode="json", exclude={"extends"}), sort_keys=False)
    lines.extend("  " + line for line in body.splitlines())
    return "\n".join(lines)


def source_label(path: str) -> str:
    """A policy file's path, or its name for a built-in policy."""
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
                note(table.report())
    return lines


def first_error(exc: Exception) -> str:
    """A validation error's messages on one line, each after the key it is about."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = []
        for e in errors():
            loc = ".".join(str(p) for p in e.get("loc", ()))
            parts.append(f"{loc}: {e.get('msg', '')}".removeprefix(": "))
        return "; ".join(parts)
    return str(exc)


INTERRUPTED_EXIT = 130
"""The exit code after Ctrl-C (SIGINT): 128 + SIGINT, as shells report it."""
PIPE_CLOSED_EXIT = 141
"""The exit code when the reader of stdout went away (``| head -1``): 128 + SIGPIPE, as a
shell reports a filter that a closed pipe ended; never 1, which means findings."""


def _quiet_stdout() -> None:
    # Python flushes stdout once more at exit: to a closed pipe, that prints a warning.
    with suppress(OSError, ValueError, AttributeError):  # no descriptor under a test's runner
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _invoke_as_a_shell_command(ctx: click.Context, invoke: Callable[[], Any]) -> Any:
    """Run ``invoke``; Ctrl-C exits 130 with one line on stderr, a closed stdout 141, both
    without a traceback (click's own handling would print "Aborted!" and exit 1)."""
    try:
        return invoke()
    except KeyboardInterrupt:
        # After the terminal's "^C", on a line of its own.
        lead = "\n" if sys.stderr.isatty() else ""
        with suppress(OSError):
            click.echo(f"{lead}urlvet: interrupted", err=True)
        ctx.exit(INTERRUPTED_EXIT)
    except BrokenPipeError:
        _quiet_stdout()
        ctx.exit(PIPE_CLOSED_EXIT)


class UrlvetGroup(click.Group):
    """The ``urlvet`` command group: Ctrl-C and a closed pipe end every command as a shell's
    other commands end, without a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command (see :func:`_invoke_as_a_shell_command`)."""
        return _invoke_as_a_shell_command(ctx, lambda: super(UrlvetGroup, self).invoke(ctx))


class UrlvetCommand(click.Command):
    """A stand-alone command (the Spark job) that ends as :class:`UrlvetGroup`'s do."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command (see :func:`_invoke_as_a_shell_command`)."""
        return _invoke_as_a_shell_command(ctx, lambda: super(UrlvetCommand, self).invoke(ctx))


def exit_on_decisions(decisions: Sequence[Any], fail_on: str) -> NoReturn:
    """Exit 1 when a decision reaches --fail-on (warn or block), else 0."""
    threshold = 1 if fail_on == "warn" else 2
    sys.exit(1 if any(d.rank >= threshold for d in decisions) else 0)


def configured_server(server: str | None, server_name: str | None) -> Any:
    """The server as the user's configuration names it (never its self-reported serverInfo)."""
    from urlvet.server import as_server

    try:
        if server:
            return as_server(server, name=server_name)
        return as_server("stdio", name=server_name) if server_name else None
    except InputError as exc:
        fail(str(exc))


OWN_PROCESS = "urlvet command"
"""The context object of the ``urlvet`` command run as a process of its own (:func:`console`),
not called from Python (a test's runner, say): a command may then end the process at once
when it is done (an audit, whose caches would take a while to free)."""
