"""Where the shared external corpora live, and small helpers the corpus-driven tests share.

The corpora are read in place from ``../shared/corpora`` beside the project (they belong to
the workplace, not to urlvet, and are never copied in).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"


def load(relative: str) -> Any:
    """A JSON corpus file, by its path under ../shared/corpora."""
    return json.loads((CORPORA / relative).read_text(encoding="utf-8"))
