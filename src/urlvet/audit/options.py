"""How an audit reads its inputs and vets their URLs: the options, in one value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from urlvet.audit.cache import CACHE_BYTES, CACHE_SIZE

InputKind = Literal["auto", "urls", "jsonl", "text"]
INPUT_KINDS: tuple[InputKind, ...] = ("auto", "urls", "jsonl", "text")


@dataclass(frozen=True)
class AuditOptions:
    """How to read the inputs and vet their URLs."""

    input_kind: InputKind = "auto"
    """Force one input kind for every source, or decide per file."""
    server: str | None = None
    """The server for every URL (a URL or 'stdio'), unless a server field gives one."""
    server_name: str | None = None
    """The configured name of ``server``, for the policy's ``servers`` section."""
    server_field: str | None = None
    """A dotted path into each JSON line that holds the server's URL."""
    max_line_bytes: int | None = None
    """The line limit in bytes; None for the per-kind default."""
    jobs: int = 1
    """Worker processes for offline vetting (1: vet in this process)."""
    cache_size: int = CACHE_SIZE
    """Distinct keys whose records are cached, at most."""
    cache_bytes: int = CACHE_BYTES
    """Estimated bytes of cached records, at most."""
    redact_secrets: bool = True
    """Mask secrets in URLs and messages in every report."""
    json_records: bool = True
    """Render each record's JSON (needed by the json and jsonl writers only)."""
    stdin_name: str = "<stdin>"
    """How reports name stdin."""
