"""Policy fixtures: URL cases beside a policy file that say what it must decide.

``team.fixtures.yaml`` sits next to ``team.yaml`` and lists cases, each a mapping with
``url`` and optionally ``server`` ("stdio" or the server's endpoint URL), ``server_name``,
``message``, ``must`` and ``must_not`` (rule codes, prefixes or names) and ``decision``. Cases
are vetted offline (no DNS), as ``semgrep --test`` and ``opa test`` run rule tests: a policy
change that moves one of them is a change to review.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from urlvet.checks import registry
from urlvet.errors import InputError, PolicyError
from urlvet.findings import Decision, Verdict
from urlvet.policy import MAX_POLICY_BYTES, Policy, load_policy, yaml_nodes
from urlvet.server import Server, as_server

FIXTURES_SUFFIXES = (".fixtures.yaml", ".fixtures.yml")
POLICY_SUFFIXES = (".yaml", ".yml", ".toml", ".json")
CASE_KEYS = frozenset({"url", "server", "server_name", "message", "must", "must_not", "decision"})


@dataclass(frozen=True)
class FixtureCase:
    """One URL case of a fixtures file."""

    file: str
    line: int
    url: str
    server: str | None = None
    server_name: str | None = None
    message: str | None = None
    must: tuple[str, ...] = ()
    must_not: tuple[str, ...] = ()
    decision: Decision | None = None

    @property
    def where(self) -> str:
        """``file:line`` of the case."""
        return f"{self.file}:{self.line}"

    def as_server(self) -> Server | None:
        """The server the case names, as a client's configuration would."""
        if self.server is None:
            return as_server("stdio", name=self.server_name) if self.server_name else None
        return as_server(self.server, name=self.server_name)


@dataclass(frozen=True)
class FixtureFile:
    """A fixtures file, its policy and its cases."""

    path: str
    policy_path: str
    cases: tuple[FixtureCase, ...]


@dataclass(frozen=True)
class CaseResult:
    """What one case expected and what came out."""

    case: FixtureCase
    verdict: Verdict
    problems: tuple[str, ...]
    seconds: float

    @property
    def passed(self) -> bool:
        """True when every expectation held."""
        return not self.problems


def policy_for(fixtures: Path) -> Path:
    """The policy file a fixtures file belongs to. Raises PolicyError when there is none."""
    name = fixtures.name
    for suffix in FIXTURES_SUFFIXES:
        if name.endswith(suffix):
            stem = name[: -len(suffix)]
            break
    else:
        raise PolicyError(f"{fixtures}: a fixtures file is named NAME.fixtures.yaml")
    for suffix in POLICY_SUFFIXES:
        candidate = fixtures.with_name(stem + suffix)
        if candidate.is_file():
            return candidate
    raise PolicyError(f"{fixtures}: no policy file {stem}.yaml (or .yml, .toml, .json) beside it")


def discover(paths: Sequence[str | Path]) -> list[tuple[Path, Path]]:
    """(fixtures file, policy file) pairs for the paths given: directories are searched for
    ``*.fixtures.yaml``; a policy file brings its fixtures. Raises PolicyError."""
    found: list[tuple[Path, Path]] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files = sorted(p for s in FIXTURES_SUFFIXES for p in path.rglob(f"*{s}"))
            if not files:
                raise PolicyError(f"{path}: no *.fixtures.yaml files under this directory")
            found.extend((f, policy_for(f)) for f in files)
        elif not path.is_file():
            raise PolicyError(f"{path}: no such file or directory")
        elif path.name.endswith(FIXTURES_SUFFIXES):
            found.append((path, policy_for(path)))
        else:
            stem = path.name.rsplit(".", 1)[0]
            fixtures = [path.with_name(stem + s) for s in FIXTURES_SUFFIXES]
            existing = [f for f in fixtures if f.is_file()]
            if not existing:
                raise PolicyError(f"{path}: no fixtures file {fixtures[0].name} beside it")
            found.append((existing[0], path))
    unique: dict[Path, tuple[Path, Path]] = {}
    for pair in found:
        unique.setdefault(pair[0].resolve(), pair)
    return list(unique.values())


def load_fixtures(path: Path, policy_path: Path | None = None) -> FixtureFile:
    """Read and validate a fixtures file. Raises PolicyError naming the file and line."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_POLICY_BYTES * 10:
        raise PolicyError(f"{path}: fixtures file is larger than {MAX_POLICY_BYTES * 10:,} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise PolicyError(f"{path}:{line}: the file is not valid UTF-8") from None
    node, data = yaml_nodes(path, text)
    if node is None:
        cases: list[FixtureCase] = []
    elif not isinstance(node, yaml.SequenceNode) or not isinstance(data, list):
        raise PolicyError(f"{path}:1: a fixtures file is a list of cases (- url: ...)")
    else:
        cases = [_case(path, item, value) for item, value in zip(node.value, data, strict=True)]
    return FixtureFile(str(path), str(policy_path or policy_for(path)), tuple(cases))


def _case(path: Path, node: Any, value: Any) -> FixtureCase:
    line = node.start_mark.line + 1
    where = f"{path}:{line}"
    if not isinstance(value, dict):
        raise PolicyError(f"{where}: a case is a mapping with at least `url`")
    key_lines = (
        {str(k.value): k.start_mark.line + 1 for k, _ in node.value}
        if isinstance(node, yaml.MappingNode)
        else {}
    )

    def at(key: str) -> str:
        return f"{path}:{key_lines.get(key, line)}"

    unknown = sorted(set(map(str, value)) - CASE_KEYS)
    if unknown:
        raise PolicyError(
            f"{at(unknown[0])}: unknown key {unknown[0]!r} in a case "
            f"(known: {', '.join(sorted(CASE_KEYS))})"
        )
    url = value.get("url")
    if not isinstance(url, str):
        raise PolicyError(f"{where}: url: a case needs the URL as a string")
    for key in ("server", "server_name", "message"):
        if value.get(key) is not None and not isinstance(value[key], str):
            raise PolicyError(f"{at(key)}: {key}: must be a string")
    selectors: dict[str, tuple[str, ...]] = {}
    for key in ("must", "must_not"):
        items = value.get(key) or []
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise PolicyError(f"{at(key)}: {key}: must be a list of rule codes")
        for item in items:
            if not registry.expand(item):
                raise PolicyError(f"{at(key)}: {key}: unknown rule code, prefix or name {item!r}")
        selectors[key] = tuple(items)
    decision = value.get("decision")
    if decision is not None:
        try:
            decision = Decision(decision)
        except ValueError:
            raise PolicyError(f"{at('decision')}: decision: must be allow, warn or block") from None
    if decision is None and not selectors["must"] and not selectors["must_not"]:
        raise PolicyError(f"{where}: the case expects nothing: give decision, must or must_not")
    case = FixtureCase(
        file=str(path),
        line=line,
        url=url,
        server=value.get("server"),
        server_name=value.get("server_name"),
        message=value.get("message"),
        must=selectors["must"],
        must_not=selectors["must_not"],
        decision=decision,
    )
    try:
        case.as_server()
    except InputError as exc:
        raise PolicyError(f"{at('server')}: server: {exc}") from None
    return case


def check_case(case: FixtureCase, verdict: Verdict) -> tuple[str, ...]:
    """What the verdict gets wrong about the case ('' for nothing)."""
    got = verdict.codes
    fired = ", ".join(got) or "nothing"
    problems = []
    if case.decision is not None and verdict.decision is not case.decision:
        problems.append(
            f"expected decision {case.decision.value}, got {verdict.decision.value}"
            + (f" ({fired})" if got else "")
        )
    for selector in case.must:
        if not set(registry.expand(selector)) & set(got):
            problems.append(f"expected {selector} to fire; fired: {fired}")
    for selector in case.must_not:
        hits = [c for c in got if c in set(registry.expand(selector))]
        if hits:
            problems.append(f"expected {selector} not to fire; fired: {', '.join(hits)}")
    return tuple(problems)


def run_file(fixtures: FixtureFile, policy: Policy | None = None) -> list[CaseResult]:
    """Vet every case of a fixtures file under its policy (offline). Raises PolicyError."""
    from urlvet.engine import Vetter

    vetter = Vetter(policy if policy is not None else load_policy(fixtures.policy_path))
    results = []
    for case in fixtures.cases:
        start = time.perf_counter()
        verdict = vetter.vet_offline(case.url, case.as_server(), message=case.message)
        results.append(
            CaseResult(case, verdict, check_case(case, verdict), time.perf_counter() - start)
        )
    return results


def all_cases(files: Iterable[FixtureFile]) -> list[FixtureCase]:
    """Every case of these files, in order."""
    return [c for f in files for c in f.cases]


@dataclass(frozen=True)
class FileRun:
    """One fixtures file's run: its results, or why it could not run."""

    path: str
    policy_path: str | None
    results: tuple[CaseResult, ...] = ()
    error: str | None = None


def run_paths(paths: Sequence[str | Path]) -> list[FileRun]:
    """Find and run the fixtures of these paths. A broken file is a FileRun with its error;
    a path that names no fixtures at all is one too."""
    runs: list[FileRun] = []
    pairs: list[tuple[Path, Path]] = []
    for given in paths:
        try:
            pairs.extend(discover([given]))
        except PolicyError as exc:
            runs.append(FileRun(str(given), None, error=str(exc)))
    seen: set[Path] = set()
    for fixtures, policy in pairs:
        if fixtures.resolve() in seen:
            continue
        seen.add(fixtures.resolve())
        try:
            loaded = load_fixtures(fixtures, policy)
            results = run_file(loaded)
        except PolicyError as exc:
            runs.append(FileRun(str(fixtures), str(policy), error=str(exc)))
            continue
        runs.append(FileRun(str(fixtures), str(policy), tuple(results)))
    return runs


def summary(runs: Sequence[FileRun]) -> str:
    """``N passed, M failed`` (and broken files, when any)."""
    passed = sum(r.passed for run in runs for r in run.results)
    failed = sum(not r.passed for run in runs for r in run.results)
    broken = sum(run.error is not None for run in runs)
    text = f"{passed} passed, {failed} failed"
    if broken:
        text += f", {broken} broken file{'s' if broken != 1 else ''}"
    return text


def exit_code(runs: Sequence[FileRun]) -> int:
    """0 when every case passes, 1 when one fails, 2 when a file is broken."""
    if any(run.error is not None for run in runs):
        return 2
    return 1 if any(not r.passed for run in runs for r in run.results) else 0


def render_text(runs: Sequence[FileRun], printable: Any = str) -> str:
    """Each failure with its file and line, what was expected and what came out; a line per
    file; the summary."""
    lines: list[str] = []
    for run in runs:
        if run.error is not None:
            lines.append(f"ERROR {run.error}")
            continue
        for result in run.results:
            if result.passed:
                continue
            case = result.case
            server = f" (server {case.server})" if case.server else ""
            lines.append(f"FAIL  {case.where}: {printable(case.url)}{server}")
            lines.extend(f"      {p}" for p in result.problems)
    if lines:
        lines.append("")
    for run in runs:
        if run.error is None:
            failed = sum(not r.passed for r in run.results)
            lines.append(
                f"{run.path}: {len(run.results) - failed} passed, {failed} failed"
                f"  (policy {run.policy_path})"
            )
    lines.append(summary(runs))
    return "\n".join(lines)


def render_junit(runs: Sequence[FileRun]) -> str:
    """JUnit XML, as CI systems read test reports: a test suite per fixtures file."""
    import xml.etree.ElementTree as ET

    root = ET.Element("testsuites", name="urlvet policy test")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    total_time = 0.0
    for run in runs:
        suite = ET.SubElement(root, "testsuite", name=_xml_text(run.path))
        if run.error is not None:
            suite.attrib.update(tests="1", failures="0", errors="1", time="0")
            load = ET.SubElement(
                suite, "testcase", classname=_classname(run.path), name="load", file=run.path
            )
            ET.SubElement(
                load, "error", message=_xml_text(run.error.splitlines()[0])
            ).text = _xml_text(run.error)
            totals["tests"] += 1
            totals["errors"] += 1
            continue
        failures = sum(not r.passed for r in run.results)
        seconds = sum(r.seconds for r in run.results)
        total_time += seconds
        suite.attrib.update(
            tests=str(len(run.results)),
            failures=str(failures),
            errors="0",
            time=f"{seconds:.6f}",
        )
        if run.policy_path:
            props = ET.SubElement(suite, "properties")
            ET.SubElement(props, "property", name="policy", value=_xml_text(run.policy_path))
        for result in run.results:
            case = result.case
            element = ET.SubElement(
                suite,
                "testcase",
                classname=_classname(run.path),
                name=_xml_text(f"line {case.line}: {case.url[:200]}"),
                file=run.path,
                line=str(case.line),
                time=f"{result.seconds:.6f}",
            )
            if not result.passed:
                ET.SubElement(
                    element, "failure", message=_xml_text(result.problems[0])
                ).text = _xml_text(f"{case.where}: {case.url}\n" + "\n".join(result.problems))
        totals["tests"] += len(run.results)
        totals["failures"] += failures
    root.attrib.update({k: str(v) for k, v in totals.items()}, time=f"{total_time:.6f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def _classname(path: str) -> str:
    return _xml_text(path.removesuffix(".yaml").removesuffix(".yml").replace("/", "."))


def _xml_text(text: str) -> str:
    # XML 1.0 cannot hold most control characters (fixtures test URLs full of them): write
    # those as \uXXXX so the report stays well-formed.
    return "".join(
        ch
        if ch in "\t\n\r"
        or (" " <= ch <= "\ud7ff")
        or ("\ue000" <= ch <= "\ufffd")
        or ch >= "\U00010000"
        else f"\\u{ord(ch):04x}"
        for ch in text
    )
