"""Where a command's policy comes from, found rather than repeated on every command line.

The first of these wins:

1. ``--policy NAME|FILE`` on the command line;
2. ``URLVET_POLICY`` in the environment (a built-in policy's name, or a file relative to the
   current directory);
3. the nearest configuration file, looking in the current directory and then in each parent,
   up to the root of the repository (a directory holding ``.git`` or ``.hg``) or of the file
   system. In one directory ``.urlvet.yaml`` wins over ``.urlvet.yml``, which wins over
   ``pyproject.toml``. ``.urlvet.yaml`` is a policy file itself; ``pyproject.toml`` counts
   only when it has a ``[tool.urlvet]`` table, whose ``policy`` key names the policy (a
   built-in name, or a file relative to ``pyproject.toml``);
4. the built-in ``default`` policy.

This is how ruff finds ``ruff.toml``/``[tool.ruff]`` and trivy its ``trivy.yaml``. Errors
name the file, the line and the key.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from urlvet.errors import PolicyError
from urlvet.policy import DEFAULT_PARENT, PolicySpec, is_policy_name

ENV_VAR = "URLVET_POLICY"
"""The environment variable that names the policy when ``--policy`` is not given."""

POLICY_FILES = (".urlvet.yaml", ".urlvet.yml")
"""Policy files found by name, in the order they win within one directory."""

PYPROJECT = "pyproject.toml"

REPOSITORY_MARKERS = (".git", ".hg")
"""A directory holding one of these is a repository's root: the search stops there."""

PYPROJECT_KEYS = frozenset({"policy"})
"""The keys ``[tool.urlvet]`` accepts."""

Origin = Literal["option", "environment", "file", "built-in"]
"""Where the policy came from: ``--policy``, ``URLVET_POLICY``, a configuration file, or
nothing (the built-in default)."""


@dataclass(frozen=True)
class PolicyChoice:
    """The policy a command uses and why it is that one."""

    spec: PolicySpec
    """A built-in policy's name or a policy file, as ``load_policy`` takes it."""
    origin: Origin
    """What chose it."""
    settings_path: Path | None = None
    """The configuration file that chose it (``.urlvet.yaml`` or ``pyproject.toml``)."""
    line: int | None = None
    """The line of ``policy =`` in ``pyproject.toml``."""

    def describe(self) -> str:
        """One line that says where the policy came from, for ``--show-settings``."""
        if self.origin == "option":
            return "--policy on the command line"
        if self.origin == "environment":
            return f"{ENV_VAR} in the environment"
        if self.origin == "built-in":
            return "no --policy, no URLVET_POLICY and no configuration file: the built-in default"
        if self.settings_path is not None and self.settings_path.name == PYPROJECT:
            return f"{self.settings_path}:{self.line}: [tool.urlvet] policy"
        return f"{self.settings_path}"


def choose_policy(
    option: str | None, environ: Mapping[str, str] | None = None, cwd: Path | None = None
) -> PolicyChoice:
    """The policy a command uses: ``--policy``, else ``URLVET_POLICY``, else the nearest
    configuration file, else the built-in default. Raises PolicyError for a broken
    ``[tool.urlvet]`` table."""
    env = os.environ if environ is None else environ
    if option:
        return PolicyChoice(option, "option")
    named = env.get(ENV_VAR, "").strip()
    if named:
        return PolicyChoice(named, "environment")
    found = find_settings(Path.cwd() if cwd is None else cwd)
    return found or PolicyChoice(DEFAULT_PARENT, "built-in")


def find_settings(start: Path) -> PolicyChoice | None:
    """The nearest configuration file at or above ``start``, or None. The search stops at a
    repository's root (after looking in it) or at the file system's root."""
    for folder in (start.resolve(), *start.resolve().parents):
        try:
            found = _settings_in(folder)
            at_root = any((folder / marker).exists() for marker in REPOSITORY_MARKERS)
        except PermissionError as exc:
            # Not knowing whether a configuration file is there must not mean "there is none".
            raise PolicyError(
                f"{folder}: cannot look for urlvet's configuration files here: {exc.strerror}"
            ) from None
        if found is not None:
            return found
        if at_root:
            return None
    return None


def _settings_in(folder: Path) -> PolicyChoice | None:
    """The configuration file of one directory, or None."""
    for name in POLICY_FILES:
        candidate = folder / name
        if candidate.is_file():
            return PolicyChoice(candidate, "file", candidate)
    pyproject = folder / PYPROJECT
    if pyproject.is_file():
        return read_pyproject(pyproject)
    return None


def read_pyproject(path: Path) -> PolicyChoice | None:
    """The policy ``[tool.urlvet]`` of a ``pyproject.toml`` names, or None when it has no such
    table. Raises PolicyError naming the file, line and key."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"{path}: cannot read: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"\(at line (\d+), column \d+\)$", str(exc))
        line = where.group(1) if where else "1"
        raise PolicyError(f"{path}:{line}: invalid TOML: {exc}") from None
    tool = data.get("tool")
    if not isinstance(tool, dict) or "urlvet" not in tool:
        return None
    table = tool["urlvet"]
    table_line = _line_of(text, None)
    if not isinstance(table, dict):
        raise PolicyError(f"{path}:{table_line}: tool.urlvet: must be a table")
    unknown = sorted(set(table) - PYPROJECT_KEYS)
    if unknown:
        raise PolicyError(
            f"{path}:{_line_of(text, unknown[0])}: tool.urlvet.{unknown[0]}: unknown key "
            f"([tool.urlvet] takes: {', '.join(sorted(PYPROJECT_KEYS))}; the policy itself "
            "goes in the file that `policy` names)"
        )
    policy = table.get("policy")
    line = _line_of(text, "policy")
    if not isinstance(policy, str) or not policy.strip():
        raise PolicyError(
            f"{path}:{line if policy is not None else table_line}: tool.urlvet.policy: "
            "must name a built-in policy (default, strict) or a policy file"
        )
    spec: PolicySpec = policy if is_policy_name(policy) else path.parent / policy
    return PolicyChoice(spec, "file", path, line)


def _line_of(text: str, key: str | None) -> int:
    """The line of ``[tool.urlvet]`` (key None) or of ``key =`` inside that table."""
    inside = False
    table_line = 1
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("["):
            inside = line.replace(" ", "") in ("[tool.urlvet]", '[tool."urlvet"]')
            if inside:
                table_line = no
                if key is None:
                    return no
            continue
        if inside and key is not None and line.split("=", 1)[0].strip().strip('"') == key:
            return no
    return table_line
