"""Where the external test corpora live, and small helpers the corpus-driven tests share.

The corpora are test data from public projects urlvet did not write (peers' test suites,
standards bodies' registries, generated attack corpora), kept in ``tests/data/corpora`` so
that the suite passes on a bare clone. Where each file comes from and its licence:
tests/data/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CORPORA = Path(__file__).resolve().parents[1] / "data" / "corpora"


def load(relative: str) -> Any:
    """A JSON corpus file, by its path under tests/data/corpora."""
    return json.loads((CORPORA / relative).read_text(encoding="utf-8"))
