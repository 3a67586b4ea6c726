"""Baselines: findings a team has accepted, so that only new ones fail a run.

A finding is identified by its rule code, the file it stands in and the normalised URL (the
href, secrets redacted), never by its line: a baseline survives edits above the URL, and a
rotated token in a query string does not make an old finding new.

The file is JSON, sorted, one finding per entry, so that it reviews well in a diff::

    {"urlvet_baseline": 1,
     "findings": [{"fingerprint": "...", "code": "UV201", "path": "urls.txt",
                   "url": "http://10.0.0.1/"}]}
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from urlvet.errors import InputError

FORMAT_VERSION = 1
MAX_BASELINE_BYTES = 64 * 1024 * 1024


def fingerprint(code: str, path: str, normalised_url: str) -> str:
    """The baseline identity of a finding: rule code, file and normalised URL (not the line)."""
    return hashlib.sha256(f"{code}\0{path}\0{normalised_url}".encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class BaselineEntry:
    """One accepted finding."""

    fingerprint: str
    """The finding's fingerprint (see :func:`fingerprint`)."""
    code: str
    """The rule code, for people reading the file."""
    path: str
    """The file, as the audit named it."""
    url: str
    """The normalised URL, secrets redacted."""


@dataclass(frozen=True, slots=True)
class Baseline:
    """A set of accepted findings."""

    fingerprints: frozenset[str] = field(default_factory=frozenset)
    """The accepted fingerprints."""

    def __contains__(self, fp: object) -> bool:
        return fp in self.fingerprints

    def __len__(self) -> int:
        return len(self.fingerprints)


def load_baseline(path: str | os.PathLike[str]) -> Baseline:
    """Read a baseline file. Raises :class:`InputError` with the reason when it is unusable."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_BASELINE_BYTES:
            raise InputError(f"{p}: baseline is {size:,} bytes, over the {MAX_BASELINE_BYTES:,}")
        data = json.loads(p.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise InputError(f"{p}: cannot read the baseline: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{p}: the baseline is not valid JSON: {exc}") from None
    except RecursionError:
        # A baseline is an object of a list of flat objects: three levels, never hundreds.
        raise InputError(
            f"{p}: the baseline's values are nested too deeply to be a baseline; "
            "write one with --write-baseline"
        ) from None
    if not isinstance(data, dict) or data.get("urlvet_baseline") != FORMAT_VERSION:
        raise InputError(
            f"{p}: not a urlvet baseline (expected an object with "
            f'"urlvet_baseline": {FORMAT_VERSION}); write one with --write-baseline'
        )
    findings = data.get("findings")
    if not isinstance(findings, list):
        raise InputError(f'{p}: "findings" must be a list')
    fps: set[str] = set()
    for i, entry in enumerate(findings):
        fp = entry.get("fingerprint") if isinstance(entry, dict) else None
        if not isinstance(fp, str) or not fp:
            raise InputError(f"{p}: findings[{i}] has no fingerprint")
        fps.add(fp)
    return Baseline(frozenset(fps))


def baseline_document(entries: Iterable[BaselineEntry]) -> dict[str, Any]:
    """The JSON document of a baseline, sorted for stable diffs."""
    rows = sorted(entries, key=lambda e: (e.path, e.code, e.url, e.fingerprint))
    return {
        "urlvet_baseline": FORMAT_VERSION,
        "findings": [
            {"fingerprint": e.fingerprint, "code": e.code, "path": e.path, "url": e.url}
            for e in rows
        ],
    }


def write_baseline(path: str | os.PathLike[str], entries: Iterable[BaselineEntry]) -> int:
    """Write a baseline file atomically; returns the number of findings written."""
    doc = baseline_document(entries)
    p = Path(path)
    tmp = p.with_name(f".{p.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=True) + "\n", encoding="utf-8")
        tmp.replace(p)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(f"{p}: cannot write the baseline: {exc.strerror or exc}") from None
    return len(doc["findings"])
