"""The source's shape: no function over :data:`MAX_FUNCTION_LINES` lines (read with ast)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "urlvet"

MAX_FUNCTION_LINES = 80
"""From ``def`` to the function's last line, docstring included."""

KNOWN_LONG: set[str] = set()
"""Functions still over the limit, as "file: qualified name"; the test fails on any other,
and on one of these once it is short (so that the list only shrinks)."""


def _long_functions(source: str, where: str) -> list[str]:
    """The functions (methods and nested ones too) of a file's source that are over the
    limit, as "where: qualified name"."""
    found: list[str] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    assert child.end_lineno is not None
                    if child.end_lineno - child.lineno + 1 > MAX_FUNCTION_LINES:
                        found.append(f"{where}: {name}")
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def test_no_function_is_over_eighty_lines() -> None:
    long = {
        name
        for path in SRC.rglob("*.py")
        for name in _long_functions(
            path.read_text(encoding="utf-8"), path.relative_to(SRC).as_posix()
        )
    }
    assert long == KNOWN_LONG, "\n".join(sorted(long ^ KNOWN_LONG))


def _function(name: str, lines: int, indent: str = "") -> str:
    return f"{indent}def {name}():\n" + f"{indent}    x = 1\n" * (lines - 1)


def test_functions_and_methods_over_the_limit_are_found_by_qualified_name() -> None:
    source = (
        _function("fits", MAX_FUNCTION_LINES)
        + _function("top", MAX_FUNCTION_LINES + 1)
        + "class Holder:\n"
        + _function("method", MAX_FUNCTION_LINES + 1, "    ")
        + _function("short_method", 3, "    ")
    )
    assert _long_functions(source, "x.py") == ["x.py: top", "x.py: Holder.method"]


MAX_ENGINE_LINES = 400
"""The engine's orchestration (``urlvet/engine/__init__.py``): what runs which rules when."""


def test_the_engine_is_short_and_names_no_rule() -> None:
    # Rules live in urlvet.checks and say what they read; the engine shares their work by
    # those declarations alone. A rule's code in the engine is a rule-specific path.
    engine = SRC / "engine"
    orchestration = (engine / "__init__.py").read_text(encoding="utf-8")
    assert len(orchestration.splitlines()) <= MAX_ENGINE_LINES
    for path in engine.glob("*.py"):
        assert re.search(r"\bUV\d{3}\b", path.read_text(encoding="utf-8")) is None, path.name
