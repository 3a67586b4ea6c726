"""Measure urlvet against labelled cases: the corpus in ``corpus/*.jsonl`` and ``urlvet eval``.

A case is one JSON object per line::

    {"family": "transport", "url": "http://example.com/", "server": "https://mcp.example.com/mcp",
     "decision": "block", "codes": ["UV101"], "absent": ["UV107"], "note": "plain http"}

``decision`` is what a careful security engineer expects, not what urlvet happens to say; the
evaluation reports every disagreement. ``codes`` must all be present and ``absent`` must all be
missing. A code spec is a code (``UV101``), a prefix (``UV3`` for any lookalike rule) or
alternatives (``UV302|UV303``). Optional keys: ``server_name`` (the name in the client's
configuration), ``message`` (the server's message), ``policy`` (a mapping merged over the base
policy, as ``extends:`` merges), ``dns`` (true when only DNS answers decide the case: such cases
are skipped unless the evaluation resolves names).

The figures (decision agreement overall and per family, precision and recall of block, code
agreement) are committed in ``corpus/thresholds.json``; the tests fail when one drops.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from urlvet.engine import Vetter
from urlvet.errors import InputError, PolicyError
from urlvet.files import write_atomically
from urlvet.findings import Decision
from urlvet.policy import Policy, merge
from urlvet.server import Server, as_server
from urlvet.text import printable

__all__ = [
    "Case",
    "MixItem",
    "Outcome",
    "Report",
    "build_mix",
    "default_corpus_files",
    "evaluate",
    "load_cases",
    "regressions",
    "render_text",
    "write_thresholds",
]

_KEYS = frozenset(
    {
        "family",
        "url",
        "server",
        "server_name",
        "message",
        "decision",
        "codes",
        "absent",
        "note",
        "policy",
        "dns",
    }
)
# A corpus line is data a person reviews: refuse lines no reviewer could read in one go, so a
# corrupted file fails fast instead of making the loader hold megabytes per case.
MAX_LINE_CHARS = 1_000_000


@dataclass(frozen=True)
class Case:
    """One labelled URL: what a careful security engineer expects urlvet to decide."""

    url: str
    """The URL exactly as the server sends it."""
    decision: Decision
    """The expected decision."""
    family: str
    """The group the case reports under (transport, addresses, lookalike, server, benign...)."""
    server: str | None = None
    """The asking server: its URL, ``"stdio"``, or None when unknown."""
    server_name: str | None = None
    """The server's name in the client's configuration (for ``servers:`` in the policy)."""
    message: str | None = None
    """The message the server shows beside the URL."""
    codes: tuple[str, ...] = ()
    """Code specs that must be present (code, prefix, or ``A|B`` alternatives)."""
    absent: tuple[str, ...] = ()
    """Code specs that must not be present."""
    policy: Mapping[str, Any] | None = None
    """Policy settings merged over the base policy for this case only."""
    dns: bool = False
    """True when only DNS answers decide the case."""
    note: str = ""
    """Why the expectation is what it is."""
    source: str = ""
    """``file:line`` the case comes from."""


@dataclass(frozen=True)
class Outcome:
    """A case and what urlvet made of it."""

    case: Case
    decision: Decision
    """urlvet's decision."""
    codes: tuple[str, ...]
    """urlvet's finding codes."""
    missing: tuple[str, ...]
    """Expected code specs that no finding matched."""
    unexpected: tuple[str, ...]
    """``absent`` code specs that a finding matched."""

    @property
    def decision_ok(self) -> bool:
        """True when urlvet's decision is the expected one."""
        return self.decision is self.case.decision

    @property
    def codes_ok(self) -> bool:
        """True when every expected code is present and every absent one is absent."""
        return not self.missing and not self.unexpected


@dataclass(frozen=True)
class FamilyFigures:
    """Decision agreement within one family."""

    cases: int
    matches: int

    @property
    def share(self) -> float:
        """The share of cases whose decision matches (1.0 for an empty family)."""
        return self.matches / self.cases if self.cases else 1.0


@dataclass(frozen=True)
class Report:
    """The result of an evaluation: outcomes and the figures computed from them."""

    outcomes: tuple[Outcome, ...]
    skipped: tuple[Case, ...] = ()
    """Cases not run (DNS cases in an offline evaluation)."""
    coverage_gaps: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """``firing``/``not_firing`` -> rule codes without such a case in the evaluated files."""

    @property
    def families(self) -> dict[str, FamilyFigures]:
        """Decision agreement per family, in name order."""
        total: Counter[str] = Counter()
        ok: Counter[str] = Counter()
        for o in self.outcomes:
            total[o.case.family] += 1
            ok[o.case.family] += o.decision_ok
        return {f: FamilyFigures(total[f], ok[f]) for f in sorted(total)}

    @property
    def decision_agreement(self) -> float:
        """The share of all cases whose decision matches."""
        return _share(sum(o.decision_ok for o in self.outcomes), len(self.outcomes))

    @property
    def confusion(self) -> dict[str, dict[str, int]]:
        """expected decision -> urlvet's decision -> number of cases."""
        table = {e.value: {a.value: 0 for a in Decision} for e in Decision}
        for o in self.outcomes:
            table[o.case.decision.value][o.decision.value] += 1
        return table

    def _block_counts(self) -> tuple[int, int, int]:
        tp = sum(
            o.case.decision is Decision.BLOCK and o.decision is Decision.BLOCK
            for o in self.outcomes
        )
        predicted = sum(o.decision is Decision.BLOCK for o in self.outcomes)
        expected = sum(o.case.decision is Decision.BLOCK for o in self.outcomes)
        return tp, predicted, expected

    @property
    def block_precision(self) -> float:
        """Of the URLs urlvet blocks, the share that should be blocked."""
        tp, predicted, _ = self._block_counts()
        return _share(tp, predicted)

    @property
    def block_recall(self) -> float:
        """Of the URLs that should be blocked, the share urlvet blocks."""
        tp, _, expected = self._block_counts()
        return _share(tp, expected)

    @property
    def code_agreement(self) -> float:
        """The share of cases whose expected codes are present and absent codes absent."""
        return _share(sum(o.codes_ok for o in self.outcomes), len(self.outcomes))

    @property
    def misses(self) -> tuple[Outcome, ...]:
        """Outcomes whose decision or codes disagree with the label."""
        return tuple(o for o in self.outcomes if not (o.decision_ok and o.codes_ok))

    def figures(self) -> dict[str, Any]:
        """The figures that ``corpus/thresholds.json`` pins, rounded down to 4 decimals."""
        return {
            "cases": len(self.outcomes),
            "decision_agreement": _floor4(self.decision_agreement),
            "block_precision": _floor4(self.block_precision),
            "block_recall": _floor4(self.block_recall),
            "code_agreement": _floor4(self.code_agreement),
            "families": {f: _floor4(v.share) for f, v in self.families.items()},
        }

    def to_json_dict(self) -> dict[str, Any]:
        """The report as plain JSON data: figures, confusion, misses and skipped cases."""
        tp, predicted, expected = self._block_counts()
        return {
            "figures": self.figures(),
            "families": {
                f: {"cases": v.cases, "matches": v.matches, "share": v.share}
                for f, v in self.families.items()
            },
            "block": {"true_positives": tp, "predicted": predicted, "expected": expected},
            "confusion": self.confusion,
            "coverage_gaps": {k: list(v) for k, v in self.coverage_gaps.items()},
            "skipped": len(self.skipped),
            "misses": [
                {
                    "source": o.case.source,
                    "family": o.case.family,
                    "url": o.case.url,
                    "server": o.case.server,
                    "expected": o.case.decision.value,
                    "actual": o.decision.value,
                    "codes": list(o.codes),
                    "missing_codes": list(o.missing),
                    "unexpected_codes": list(o.unexpected),
                    "note": o.case.note,
                }
                for o in self.misses
            ],
        }


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def _floor4(x: float) -> float:
    # Rounded down, so that a committed figure never exceeds the run that produced it.
    return math.floor(x * 10_000 + 1e-9) / 10_000


# --- loading -------------------------------------------------------------------------------


def default_corpus_files() -> list[Path]:
    """``corpus/*.jsonl`` in the working directory, else beside the source checkout."""
    for root in (Path.cwd(), Path(__file__).resolve().parents[2]):
        folder = root / "corpus"
        files = sorted(folder.glob("*.jsonl"))
        if files:
            return files
    raise InputError("no corpus/*.jsonl here or in the urlvet checkout: name the JSONL files")


def load_cases(paths: Iterable[str | Path]) -> list[Case]:
    """Read cases from JSONL files. Raises :class:`InputError` naming the file and line."""
    cases: list[Case] = []
    for path in paths:
        p = Path(path)
        try:
            fh = p.open(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from None
        with fh:
            try:
                for no, line in enumerate(fh, 1):
                    if not line.strip() or line.lstrip().startswith("//"):
                        continue
                    where = f"{p}:{no}"
                    if len(line) > MAX_LINE_CHARS:
                        raise InputError(f"{where}: line longer than {MAX_LINE_CHARS:,} characters")
                    cases.append(_case(line, where, p.stem))
            except UnicodeDecodeError as exc:
                raise InputError(f"{p}: not UTF-8 text ({exc.reason})") from None
    return cases


def _case(line: str, where: str, default_family: str) -> Case:
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise InputError(f"{where}: invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"{where}: a case must be a JSON object")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise InputError(f"{where}: unknown key {unknown[0]!r}")
    url = data.get("url")
    if not isinstance(url, str):
        raise InputError(f"{where}: 'url' must be a string")
    try:
        decision = Decision(data.get("decision"))
    except ValueError:
        raise InputError(f"{where}: 'decision' must be allow, warn or block") from None
    for key in ("server", "server_name", "message"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise InputError(f"{where}: {key!r} must be a string or null")
    codes = _specs(data.get("codes", []), "codes", where)
    absent = _specs(data.get("absent", []), "absent", where)
    policy = data.get("policy")
    if policy is not None and not isinstance(policy, dict):
        raise InputError(f"{where}: 'policy' must be a mapping of policy settings")
    family = data.get("family", default_family)
    if not isinstance(family, str) or not family:
        raise InputError(f"{where}: 'family' must be a non-empty string")
    return Case(
        url=url,
        decision=decision,
        family=family,
        server=data.get("server"),
        server_name=data.get("server_name"),
        message=data.get("message"),
        codes=codes,
        absent=absent,
        policy=policy,
        dns=bool(data.get("dns", False)),
        note=str(data.get("note", "")),
        source=where,
    )


def _specs(value: Any, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, str)
        and v.strip()
        and all(a.strip().upper().startswith("UV") for a in v.split("|"))
        for v in value
    ):
        raise InputError(f"{where}: {key!r} must be a list of rule codes, prefixes or A|B")
    return tuple(v.strip().upper() for v in value)


def _matches(spec: str, codes: Sequence[str]) -> bool:
    return any(code.startswith(alt.strip()) for alt in spec.split("|") for code in codes)


# --- evaluating ----------------------------------------------------------------------------


def evaluate(
    cases: Sequence[Case],
    policy: Policy | None = None,
    *,
    dns: bool = False,
    nameservers: Sequence[str] = (),
) -> Report:
    """Vet every case and compare. Offline unless ``dns``; DNS cases are skipped offline.

    Raises :class:`InputError` when a case's server or policy settings are invalid.
    """
    base = policy if policy is not None else Policy()
    base_data = base.model_dump(mode="json")
    base_data["dns"] = {
        **base_data["dns"],
        "enabled": dns,
        **({"nameservers": list(nameservers)} if nameservers else {}),
    }
    vetters: dict[str, Vetter] = {}
    outcomes: list[Outcome] = []
    skipped: list[Case] = []
    for case in cases:
        if case.dns and not dns:
            skipped.append(case)
            continue
        vetter = _vetter_for(case, base_data, vetters)
        server = _server(case)
        if case.dns:
            verdict = vetter.vet(case.url, server, message=case.message)
        else:
            verdict = vetter.vet_offline(case.url, server, message=case.message)
        codes = verdict.codes
        outcomes.append(
            Outcome(
                case=case,
                decision=verdict.decision,
                codes=codes,
                missing=tuple(s for s in case.codes if not _matches(s, codes)),
                unexpected=tuple(s for s in case.absent if _matches(s, codes)),
            )
        )
    return Report(tuple(outcomes), tuple(skipped), coverage_gaps(cases))


def _vetter_for(case: Case, base: dict[str, Any], cache: dict[str, Vetter]) -> Vetter:
    key = json.dumps(case.policy, sort_keys=True) if case.policy else ""
    vetter = cache.get(key)
    if vetter is None:
        data = merge(base, case.policy) if case.policy else base
        try:
            vetter = Vetter(Policy.model_validate(data))
        except (ValueError, PolicyError) as exc:
            raise InputError(f"{case.source}: invalid 'policy': {_first_line(exc)}") from None
        cache[key] = vetter
    return vetter


def _server(case: Case) -> Server | None:
    try:
        if case.server is not None:
            return as_server(case.server, name=case.server_name)
        if case.server_name:
            return as_server("stdio", name=case.server_name)
    except InputError as exc:
        raise InputError(f"{case.source}: {exc}") from None
    return None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def coverage_gaps(cases: Sequence[Case]) -> dict[str, tuple[str, ...]]:
    """Rule codes with no case where they must fire, and none where they must not."""
    from urlvet.checks import registry

    all_codes = list(registry.rules())
    firing: set[str] = set()
    quiet: set[str] = set()
    for case in cases:
        for spec in case.codes:
            firing.update(c for c in all_codes if _matches(spec, [c]))
        for spec in case.absent:
            quiet.update(c for c in all_codes if _matches(spec, [c]))
    return {
        "firing": tuple(c for c in all_codes if c not in firing),
        "not_firing": tuple(c for c in all_codes if c not in quiet),
    }


def regressions(figures: Mapping[str, Any], thresholds: Mapping[str, Any]) -> list[str]:
    """The figures below their committed thresholds, as sentences. Empty when none dropped.

    Figures that this run did not compute (a family that was skipped) are not compared.
    """
    out: list[str] = []
    for key in ("decision_agreement", "block_precision", "block_recall", "code_agreement"):
        if key in thresholds and key in figures and figures[key] + 1e-9 < thresholds[key]:
            out.append(f"{key} fell to {figures[key]:.4f} (committed {thresholds[key]:.4f})")
    fams = figures.get("families", {})
    for fam, floor in thresholds.get("families", {}).items():
        if fam in fams and fams[fam] + 1e-9 < floor:
            out.append(f"family {fam} fell to {fams[fam]:.4f} (committed {floor:.4f})")
    return out


THRESHOLDS_NOTE = (
    "Figures of `urlvet eval` on corpus/ (offline; the dns family with --dns against the test "
    "zone). tests/test_corpus_eval.py fails when a figure drops below these. Raise them with "
    "`urlvet eval --write-thresholds corpus/thresholds.json` when urlvet improves; never lower "
    "them to make a test pass."
)


def write_thresholds(path: str | Path, figures: Mapping[str, Any]) -> None:
    """Write ``figures`` as thresholds; figures and families this run did not compute keep
    their committed value."""
    p = Path(path)
    old: dict[str, Any] = {}
    if p.exists():
        try:
            old = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"{p}: cannot read the existing thresholds: {exc}") from None
    families = {**old.get("families", {}), **figures.get("families", {})}
    kept = {k: v for k, v in old.items() if k not in ("about", "families")}
    data = {"about": THRESHOLDS_NOTE, **kept, **figures, "families": dict(sorted(families.items()))}
    try:
        # Whole or not at all: a thresholds file cut short would fail every later run.
        write_atomically(p, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())
    except OSError as exc:
        raise InputError(f"{p}: cannot write: {exc.strerror or exc}") from None


# --- rendering -----------------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _shown(text: str | None, limit: int = 140) -> str:
    return "-" if text is None else printable(text, limit)


def render_text(report: Report, *, show_misses: bool = True) -> str:
    """The report as a few plain-text tables."""
    lines: list[str] = []
    fams = report.families
    width = max([len(f) for f in fams] + [6])
    n = len(report.outcomes)
    lines.append(
        f"urlvet eval: {n} cases"
        + (f", {len(report.skipped)} skipped (need DNS: run with --dns)" if report.skipped else "")
    )
    lines.append("")
    lines.append(f"{'family':<{width}}  {'cases':>5}  {'match':>5}  {'share':>6}")
    for fam, v in fams.items():
        lines.append(f"{fam:<{width}}  {v.cases:>5}  {v.matches:>5}  {_pct(v.share):>6}")
    total = sum(o.decision_ok for o in report.outcomes)
    lines.append(f"{'all':<{width}}  {n:>5}  {total:>5}  {_pct(report.decision_agreement):>6}")
    lines.append("")
    tp, predicted, expected = report._block_counts()
    lines.append(
        f"block precision {_pct(report.block_precision)} ({tp}/{predicted}), "
        f"recall {_pct(report.block_recall)} ({tp}/{expected})"
    )
    ok_codes = sum(o.codes_ok for o in report.outcomes)
    lines.append(
        f"code agreement {_pct(report.code_agreement)} ({ok_codes}/{n}): expected codes present, "
        "absent ones absent"
    )
    lines.append("")
    lines.append("confusion (rows: expected, columns: urlvet)")
    lines.append(f"{'':<8}" + "".join(f"{d.value:>7}" for d in Decision))
    for exp, row in report.confusion.items():
        lines.append(f"{exp:<8}" + "".join(f"{row[d.value]:>7}" for d in Decision))
    gaps = {k: v for k, v in report.coverage_gaps.items() if v}
    if gaps:
        lines.append("")
        for kind, codes in gaps.items():
            lines.append(f"rules without a {kind.replace('_', '-')} case: {', '.join(codes)}")
    if show_misses and report.misses:
        lines.append("")
        lines.append(f"misses ({len(report.misses)}):")
        for o in report.misses:
            c = o.case
            got = ",".join(o.codes) or "-"
            detail = []
            if o.missing:
                detail.append("missing " + ",".join(o.missing))
            if o.unexpected:
                detail.append("unexpected " + ",".join(o.unexpected))
            lines.append(
                f"  {c.source}: expected {c.decision.value}, got {o.decision.value} [{got}]"
                + (f" ({'; '.join(detail)})" if detail else "")
            )
            lines.append(f"      {_shown(c.url)}  server={_shown(c.server)}")
            if c.note:
                lines.append(f"      {_shown(c.note)}")
    return "\n".join(lines)


# --- the benchmark mix ---------------------------------------------------------------------


@dataclass(frozen=True)
class MixItem:
    """One URL of a benchmark mix, with the server that asks."""

    url: str
    server: str | None
    message: str | None = None
    family: str = ""


def build_mix(n: int, files: Iterable[str | Path] | None = None) -> list[MixItem]:
    """``n`` URLs expanded deterministically from the corpus, for benchmarks.

    The corpus is taken in file and line order and repeated; from the second round on each
    web URL gets a distinct query parameter (``mix=ROUND``, before any fragment), so that no
    cache sees the same URL twice and the share of each family stays that of the corpus.
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    cases = load_cases(files if files is not None else default_corpus_files())
    if not cases:
        raise InputError("the corpus is empty")
    out: list[MixItem] = []
    for i in range(n):
        case = cases[i % len(cases)]
        rnd = i // len(cases)
        url = case.url if rnd == 0 else _vary(case.url, rnd)
        out.append(MixItem(url, case.server, case.message, case.family))
    return out


def _vary(url: str, rnd: int) -> str:
    if not url.lower().lstrip().startswith(("http://", "https://")):
        return url
    head, hash_, frag = url.partition("#")
    sep = "&" if "?" in head else "?"
    return f"{head}{sep}mix={rnd}{hash_}{frag}"
