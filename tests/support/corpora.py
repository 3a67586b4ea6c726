"""Where the external test corpora live, and small helpers the corpus-driven tests share.

The corpora are test data from public projects urlvet did not write (peers' test suites,
standards bodies' registries, generated attack corpora), kept in ``tests/data/corpora`` so
that the suite passes on a bare clone. Where each file comes from and its licence:
tests/data/README.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CORPORA = Path(__file__).resolve().parents[1] / "data" / "corpora"


def load(relative: str) -> Any:
    """A JSON corpus file, by its path under tests/data/corpora."""
    return json.loads((CORPORA / relative).read_text(encoding="utf-8"))


def strings_in(node: Any, *, keys: bool = False) -> Iterator[str]:
    """Every string of a JSON value, in order: its objects' values (and keys, with ``keys``)
    and its lists' items, at any depth."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            if keys:
                yield key
            yield from strings_in(value, keys=keys)
    elif isinstance(node, list):
        for value in node:
            yield from strings_in(value, keys=keys)


def external_inputs() -> list[str]:
    """Every string of the external corpora, and a web URL on each one that could be a host."""
    found: dict[str, None] = {}
    for path in sorted(CORPORA.glob("**/*.json")):
        for text in strings_in(json.loads(path.read_text(encoding="utf-8")), keys=True):
            found[text] = None
            if text and len(text) < 300 and not any(c in text for c in " /:?#@\\\n"):
                found[f"https://{text}/"] = None
    for path in sorted(CORPORA.glob("**/*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            found[line.strip()] = None
    return list(found)


LOOKALIKE_CORPUS_FILES = (
    "lookalike/chromium_lookalike_cases.json",
    "lookalike/chromium_top_bucket_domains_crux202309.json",
    "lookalike/dnstwist_google.json",
    "lookalike/dnstwist_paypal.json",
    "idn/chromium_idn_cases.json",
    "idn/chromium_idn_extra_cases.json",
)
"""The corpora of hosts (lookalikes, IDN spoofs, popular domains) that the tests of the cheap
rejections hold them to the full computations on."""
