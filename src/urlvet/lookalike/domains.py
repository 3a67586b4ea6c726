"""Protected-domain lists: the shipped list and its index, the index a policy needs, lists read
from YAML policy fragments or text files, Tranco/CrUX ranking CSVs, and a list rendered back as
a YAML policy fragment."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from urlvet.errors import InputError, PolicyError
from urlvet.lookalike.index import LookalikeIndex, build_index
from urlvet.lookalike.targets import _ascii_host
from urlvet.lookalike.words import _DATA_FILE, _DATA_PACKAGE
from urlvet.url import (
    HostKind,
    InvalidURL,
    parse,
)


def _parse_text_list(text: str, source: str) -> list[str]:
    out = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if any(c.isspace() for c in line):
            raise PolicyError(f"{source}:{lineno}: expected one domain per line, got {line!r}")
        out.append(line.lower())
    return out


def default_protected_domains() -> tuple[str, ...]:
    """The protected domains shipped with urlvet (kept equal to rules/protected-domains.yaml)."""
    text = resources.files(_DATA_PACKAGE).joinpath(_DATA_FILE).read_text(encoding="utf-8")
    return tuple(_parse_text_list(text, _DATA_FILE))


@cache
def default_index() -> LookalikeIndex:
    """The index of the shipped protected domains, built on first use and then shared.

    Lazy: a run that only meets protected domains and addresses (a one-off ``urlvet check``)
    never compiles it, nor loads ICU.
    """
    return build_index(default_protected_domains(), lazy=True)


@cache
def index_for_policy(extra_domains: tuple[str, ...], use_default: bool = True) -> LookalikeIndex:
    """The index a policy needs: its own protected domains, plus the shipped list by default.

    Cached per argument tuple, so policies that differ elsewhere share one index. With no
    domains at all the index is empty (the rules then find nothing), never the default.
    """
    if not extra_domains:
        return default_index() if use_default else build_index(())
    base = default_protected_domains() if use_default else ()
    # Lazy like the default index; a bad entry is still reported here, when the policy compiles.
    return build_index((*base, *extra_domains), lazy=True)


def load_protected_domains(path: str | Path) -> list[str]:
    """Read a protected-domain list: a YAML policy fragment or a text file.

    YAML (``.yaml``/``.yml``): a mapping with a ``protected_domains`` list of strings. Anything
    else: one domain per line, ``#`` starts a comment. Returns the domains lower-cased, in file
    order, without duplicates. Raises :class:`~urlvet.errors.PolicyError` naming the file.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise PolicyError(f"{p}: cannot read protected domains: {exc.strerror or exc}") from exc
    if p.suffix.lower() not in (".yaml", ".yml"):
        return list(dict.fromkeys(_parse_text_list(text, str(p))))

    import yaml

    try:
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise PolicyError(f"{p}{where}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or "protected_domains" not in data:
        raise PolicyError(f"{p}: expected a mapping with a 'protected_domains' list")
    items = data["protected_domains"]
    if not isinstance(items, list):
        raise PolicyError(f"{p}: 'protected_domains' must be a list of domain names")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            raise PolicyError(f"{p}: protected_domains[{i}] must be a domain name, got {item!r}")
        out.append(item.strip().lower().rstrip("."))
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class RankingImport:
    """What :func:`read_ranking_csv` took from a ranking, and what it skipped."""

    domains: list[str]
    """Registrable domains in rank order, without duplicates, at most ``top``."""
    malformed: int = 0
    """Rows that are neither ``rank,domain`` nor ``origin,rank`` (header and comments aside)."""
    unusable: int = 0
    """Rows read in rank order whose domain or origin names no registrable domain."""
    first_skipped: int | None = None
    """The line of the first row skipped for either reason."""

    @property
    def skipped(self) -> int:
        """Rows skipped for either reason."""
        return self.malformed + self.unusable


def import_ranking_csv(path: str | Path, top: int) -> list[str]:
    """The first ``top`` registrable domains of a ranking CSV: see :func:`read_ranking_csv`."""
    return read_ranking_csv(path, top).domains


def read_ranking_csv(path: str | Path, top: int) -> RankingImport:
    """The first ``top`` registrable domains of a ranking CSV, and the rows it skipped.

    Two forms are read, row by row: ``rank,domain`` as Tranco publishes it (``1,google.com``)
    and ``origin,rank`` as the Chrome UX Report publishes it (``https://www.google.com,1000``,
    with ranks in buckets: 1000, 5000, 10000...). Rows are taken in rank order (file order
    within a bucket); hosts and origins are reduced to their registrable domain and duplicates
    dropped, so the result may draw on more than ``top`` rows. A header row (a first row
    without a rank), blank lines and ``#`` comments are not rows; other rows that cannot be
    used are counted. Raises :class:`~urlvet.errors.InputError` when the file cannot be read
    or has no usable row.
    """
    if top <= 0:
        raise InputError(f"top must be a positive number of domains, got {top}")
    p = Path(path)
    rows: list[tuple[int, int, str]] = []
    malformed: list[int] = []
    try:
        with p.open(encoding="utf-8", newline="") as handle:
            for lineno, row in enumerate(csv.reader(handle), start=1):
                cells = [c.strip() for c in row]
                if not any(cells) or cells[0].startswith("#"):
                    continue
                entry = _ranking_row(cells)
                if entry is not None:
                    rows.append((entry[0], lineno, entry[1]))
                elif lineno > 1 or rows:  # the first row may be a header ("origin,rank")
                    malformed.append(lineno)
    except OSError as exc:
        raise InputError(f"{p}: cannot read the ranking: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{p}: not a rank,domain or origin,rank CSV file: {exc}") from exc
    rows.sort()
    out: dict[str, None] = {}
    unusable: list[int] = []
    for _rank, lineno, name in rows:
        registrable = _ranked_site(name)
        if registrable is None:
            unusable.append(lineno)
            continue
        out.setdefault(registrable)
        if len(out) >= top:
            break
    if not out:
        raise InputError(f"{p}: no rank,domain or origin,rank rows with a usable domain name")
    skipped = malformed + unusable
    return RankingImport(
        list(out), len(malformed), len(unusable), min(skipped) if skipped else None
    )


def _ranking_row(cells: list[str]) -> tuple[int, str] | None:
    """(rank, domain or origin) of a row in either form, or None."""
    if len(cells) < 2:
        return None
    if cells[0].isdigit() and cells[1]:
        return int(cells[0]), cells[1]  # Tranco: rank,domain
    if cells[1].isdigit() and "://" in cells[0]:
        return int(cells[1]), cells[0]  # CrUX: origin,rank
    return None


def _ranked_site(name: str) -> str | None:
    """The registrable domain of a ranked domain name or origin, or None."""
    if "://" not in name:
        try:
            return _ascii_host(name)[1]
        except PolicyError:
            return None
    try:
        parsed = parse(name)
    except InvalidURL:
        return None
    if parsed.scheme not in ("http", "https") or parsed.host_kind is not HostKind.DOMAIN:
        return None
    return parsed.registrable_domain


def render_policy_fragment(domains: Iterable[str], header: str | None = None) -> str:
    """A YAML policy fragment ``protected_domains: [...]`` for ``domains``, one per line.

    ``header`` becomes a ``#`` comment block at the top (say where the list came from).
    """
    lines: list[str] = []
    if header:
        lines.extend(f"# {line}".rstrip() for line in header.splitlines())
    lines.append("protected_domains:")
    for d in dict.fromkeys(domains):
        # Domain names never need YAML quoting (letters, digits, dots, hyphens), but U-labels
        # may, so quote those.
        lines.append(f"  - {d}" if re.fullmatch(r"[a-z0-9.\-]+", d) else f'  - "{d}"')
    return "\n".join(lines) + "\n"
