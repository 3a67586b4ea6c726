"""Refresh the protocol examples in this folder from a copy of the MCP specification.

    python3 tests/data/mcp/extract.py PATH/TO/SPECS

PATH/TO/SPECS holds ``2025-11-25/`` and ``2026-07-28/`` (``schema.json``, ``elicitation.mdx``,
``examples/``) and ``draft-user-interaction/`` (the proposal's diff), laid out as the
modelcontextprotocol repository publishes them. The schemas and the ``examples/`` files are
copied as they are; of each page only its ``json``/``jsonc`` code blocks are kept, verbatim,
one file a block, numbered in page order (``NN.json``/``NN.jsonc``): the prose stays upstream.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BLOCK = re.compile(r"```(json|jsonc)\n(.*?)```", re.S)
PAGES = {
    "2025-11-25/elicitation.mdx": "2025-11-25/elicitation",
    "2026-07-28/elicitation.mdx": "2026-07-28/elicitation",
}
DRAFT_DIFF = "draft-user-interaction/000_a4b9f737ef0799a4.txt"
DRAFT_PAGE = "docs/specification/draft/client/user_interaction.mdx"


def draft_page(diff: str) -> str:
    """The draft's user_interaction.mdx: the lines its part of the diff adds."""
    lines, inside = [], False
    for line in diff.splitlines():
        if line.startswith("diff --git"):
            inside = DRAFT_PAGE in line
        elif inside and line.startswith("+") and not line.startswith("+++"):
            lines.append(line[1:])
    return "\n".join(lines) + "\n"


def write_blocks(text: str, folder: Path) -> int:
    """Each code block of ``text`` as its own file in ``folder``; returns how many."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    blocks = BLOCK.findall(text)
    for i, (language, body) in enumerate(blocks):
        (folder / f"{i:02d}.{language}").write_text(body, encoding="utf-8")
    return len(blocks)


def main(specs: Path) -> None:
    """Copy the schemas and examples, and extract the pages' code blocks."""
    for version in ("2025-11-25", "2026-07-28"):
        (HERE / version).mkdir(exist_ok=True)
        shutil.copyfile(specs / version / "schema.json", HERE / version / "schema.json")
    examples = HERE / "2026-07-28" / "examples"
    if examples.exists():
        shutil.rmtree(examples)
    shutil.copytree(specs / "2026-07-28" / "examples", examples)
    for page, folder in PAGES.items():
        write_blocks((specs / page).read_text(encoding="utf-8"), HERE / folder)
    diff = (specs / DRAFT_DIFF).read_text(encoding="utf-8")
    write_blocks(draft_page(diff), HERE / "draft" / "user_interaction")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
