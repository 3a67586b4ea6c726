"""The package's layers: no import circle between modules' packages, and no import from a
lower layer to a higher one, not even under TYPE_CHECKING (read from the source with ast)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "urlvet"

# Lowest first: a layer may import only from its own and the layers before it.
LAYERS: list[set[str]] = [
    {"errors", "text", "memo", "findings", "data", "policies", "files"},
    {"url", "addresses", "psl", "hsts", "confusables", "resolve", "tls", "feeds", "server"},
    {"wrappers", "hosting", "identity"},
    {"lookalike", "brands", "steps"},
    {"checks"},
    {"config", "policy"},
    {"engine"},
    {"consent", "evaluate", "review", "mcp", "audit"},
    {"spark"},
    {"cli", "__main__", "__init__"},
]


def _unit(path: Path) -> str:
    """The top-level module or package a source file belongs to; a ``__main__`` module, of the
    package or of a subpackage (``python -m urlvet.spark``), is an entry script, run and never
    imported, and belongs with the command line."""
    if path.name == "__main__.py":
        return "__main__"
    return path.relative_to(SRC).parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    """The urlvet units a file imports, at any place (functions and TYPE_CHECKING too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "urlvet" and len(parts) > 1:
                found.add(parts[1])
    return found


def _rank(unit: str) -> int:
    for i, layer in enumerate(LAYERS):
        if unit in layer:
            return i
    raise AssertionError(f"urlvet.{unit} is in no layer: add it to LAYERS")


def test_no_module_imports_from_a_higher_layer() -> None:
    wrong = []
    for path in SRC.rglob("*.py"):
        unit = _unit(path)
        for imported in _imports(path):
            if imported != unit and _rank(imported) > _rank(unit):
                wrong.append(f"{path.relative_to(SRC)} imports urlvet.{imported}")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_audit_never_imports_spark() -> None:
    # Said by the layers already; named, since a Spark strategy is the likeliest way back.
    for path in (SRC / "audit").rglob("*.py"):
        assert "spark" not in _imports(path), path


def test_no_module_imports_the_command_line() -> None:
    for path in SRC.rglob("*.py"):
        if _unit(path) not in ("cli", "__main__"):
            assert "cli" not in _imports(path), path


def test_no_check_imports_the_engine() -> None:
    for path in (SRC / "checks").rglob("*.py"):
        assert "engine" not in _imports(path), path
