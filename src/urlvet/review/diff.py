"""What a policy change changes: the URLs whose decision or codes differ between two policies.

The URLs are the fixtures of both policies plus any URL files given; each is vetted offline
under both. This is what a reviewer reads on a policy pull request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from urlvet.errors import InputError, PolicyError
from urlvet.findings import Decision, Verdict
from urlvet.policy import Policy, policy_file
from urlvet.review.fixtures import FIXTURES_SUFFIXES, load_fixtures
from urlvet.server import as_server

MAX_URL_FILE_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Probe:
    """A URL to vet under both policies, and where it came from."""

    url: str
    server: str | None = None
    server_name: str | None = None
    message: str | None = None
    source: str = ""
    """``file:line`` of the fixture or URL-file line."""


@dataclass(frozen=True)
class Change:
    """One URL whose decision or codes differ."""

    probe: Probe
    old: Verdict
    new: Verdict

    @property
    def added(self) -> tuple[str, ...]:
        """Codes only the new policy raises."""
        return tuple(c for c in self.new.codes if c not in set(self.old.codes))

    @property
    def removed(self) -> tuple[str, ...]:
        """Codes only the old policy raised."""
        return tuple(c for c in self.old.codes if c not in set(self.new.codes))

    @property
    def transition(self) -> str:
        """``allow → block``; ``warn → warn`` when only the codes changed."""
        return f"{self.old.decision.value} → {self.new.decision.value}"


@dataclass(frozen=True)
class PolicyDiff:
    """Every URL vetted, and those that changed."""

    old_path: str
    new_path: str
    vetted: int
    changes: tuple[Change, ...]

    def groups(self) -> dict[str, list[Change]]:
        """Changes grouped by old → new decision, the most serious movements first."""
        out: dict[str, list[Change]] = {}
        for change in sorted(self.changes, key=_group_order):
            out.setdefault(change.transition, []).append(change)
        return out

    def summary(self) -> str:
        """One line: how many vetted, how many changed and how."""
        parts = [
            f"{len(v)} {k}" + (" (codes only)" if v[0].old.decision is v[0].new.decision else "")
            for k, v in self.groups().items()
        ]
        changed = len(self.changes)
        text = f"{self.vetted} URLs vetted under both policies; {changed} changed"
        return text + (f": {', '.join(parts)}" if parts else "")

    def to_json_dict(self) -> dict[str, Any]:
        """JSON-ready: the summary counts and every change."""
        return {
            "old": self.old_path,
            "new": self.new_path,
            "vetted": self.vetted,
            "changed": len(self.changes),
            "transitions": {k: len(v) for k, v in self.groups().items()},
            "changes": [
                {
                    "url": c.probe.url,
                    "server": c.probe.server,
                    "server_name": c.probe.server_name,
                    "source": c.probe.source,
                    "old": {"decision": c.old.decision.value, "codes": list(c.old.codes)},
                    "new": {"decision": c.new.decision.value, "codes": list(c.new.codes)},
                    "added": list(c.added),
                    "removed": list(c.removed),
                    "findings": [
                        f.model_dump(mode="json") for f in c.new.findings if f.code in c.added
                    ],
                }
                for group in self.groups().values()
                for c in group
            ],
        }


def _group_order(change: Change) -> tuple[int, int, int, str]:
    # Toward block first (what the change newly stops), then toward allow (what it lets
    # through), then code-only changes; by URL inside a group.
    moved = change.new.decision.rank - change.old.decision.rank
    direction = 0 if moved > 0 else 1 if moved < 0 else 2
    return (direction, -change.new.decision.rank, change.old.decision.rank, change.probe.url)


def fixtures_beside(policy_path: str | Path) -> Path | None:
    """The fixtures file next to a policy file (or a built-in policy), if there is one."""
    path = policy_file(policy_path)
    stem = path.name.rsplit(".", 1)[0]
    for suffix in FIXTURES_SUFFIXES:
        candidate = path.with_name(stem + suffix)
        if candidate.is_file():
            return candidate
    return None


def probes_for(
    policy_paths: Sequence[str | Path],
    url_files: Sequence[str | Path] = (),
    server: str | None = None,
) -> list[Probe]:
    """The fixtures of these policies and the URLs of these files (one a line, ``#``
    comments), without repeats. Raises PolicyError or InputError naming the file and line."""
    seen: set[tuple[str, str | None, str | None, str | None]] = set()
    out: list[Probe] = []

    def add(probe: Probe) -> None:
        key = (probe.url, probe.server, probe.server_name, probe.message)
        if key not in seen:
            seen.add(key)
            out.append(probe)

    for policy_path in policy_paths:
        fixtures = fixtures_beside(policy_path)
        if fixtures is None:
            continue
        for case in load_fixtures(fixtures, Path(policy_path)).cases:
            add(Probe(case.url, case.server, case.server_name, case.message, case.where))
    if server is not None:
        as_server(server)  # InputError for a bad one, before any work
    for url_file in url_files:
        path = Path(url_file)
        try:
            if path.stat().st_size > MAX_URL_FILE_BYTES:
                raise InputError(f"{path}: larger than {MAX_URL_FILE_BYTES:,} bytes")
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise InputError(f"{path}: not UTF-8 text (one URL a line)") from None
        for no, line in enumerate(text.splitlines(), 1):
            url = line.strip()
            if url and not url.startswith("#"):
                add(Probe(url, server, None, None, f"{path}:{no}"))
    return out


def diff_policies(
    old: Policy, new: Policy, probes: Sequence[Probe], old_path: str = "", new_path: str = ""
) -> PolicyDiff:
    """Vet every probe offline under both policies; keep those whose decision or codes change.

    Raises PolicyError when a policy's feeds cannot be read.
    """
    from urlvet.engine import Vetter

    before = Vetter(old)
    after = Vetter(new)
    changes = []
    for probe in probes:
        try:
            srv = (
                as_server(probe.server, name=probe.server_name)
                if probe.server
                else (as_server("stdio", name=probe.server_name) if probe.server_name else None)
            )
        except InputError as exc:
            raise PolicyError(f"{probe.source}: {exc}") from None
        a = before.vet_offline(probe.url, srv, message=probe.message)
        b = after.vet_offline(probe.url, srv, message=probe.message)
        if a.decision is not b.decision or sorted(a.codes) != sorted(b.codes):
            changes.append(Change(probe, a, b))
    return PolicyDiff(old_path, new_path, len(probes), tuple(changes))


def render_text(result: PolicyDiff, printable: Any = str) -> str:
    """Changes grouped by old → new decision, each with the codes added and removed and the
    new findings' messages; then the summary."""
    lines: list[str] = []
    for transition, changes in result.groups().items():
        same = changes[0].old.decision is changes[0].new.decision
        label = f"{transition} (codes changed)" if same else transition
        lines.append(f"{label}: {len(changes)}")
        for change in changes:
            server = f"  (server {change.probe.server})" if change.probe.server else ""
            lines.append(f"  {printable(change.probe.url)}{server}  [{change.probe.source}]")
            codes = [f"+{c}" for c in change.added] + [f"-{c}" for c in change.removed]
            if codes:
                lines.append(f"      {' '.join(codes)}")
            for finding in change.new.findings:
                if finding.code in change.added:
                    lines.append(f"      {finding.code}: {printable(finding.message)}")
        lines.append("")
    lines.append(result.summary())
    return "\n".join(lines)


__all__ = [
    "Change",
    "Decision",
    "PolicyDiff",
    "Probe",
    "diff_policies",
    "fixtures_beside",
    "probes_for",
    "render_text",
]
