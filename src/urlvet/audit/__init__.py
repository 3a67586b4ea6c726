"""Bulk audits: find the URLs in files, vet each distinct one once, report every occurrence.

One module a job:

- :mod:`~urlvet.audit.sources`: finding the inputs (paths, directories, stdin), sniffing their
  kind and reading them, line by line, into :class:`Occurrence` and :class:`Diagnostic` values;
- :mod:`~urlvet.audit.scan`: the URLs written in free text;
- :mod:`~urlvet.audit.cache`: one record per distinct (URL, server, message), bounded;
- :mod:`~urlvet.audit.pipeline`: the one loop (window -> look up -> vet -> report) and its
  strategies: in process, a process pool, DNS on an event loop;
- :mod:`~urlvet.audit.split`: offline audits of large files with several workers, the input
  cut into shares at line starts, each share run through the one loop by a worker;
- :mod:`~urlvet.audit.report`: counting, the baseline, the :class:`Summary`;
- :mod:`~urlvet.audit.output`: the writers (text, json, jsonl, SARIF, GitHub annotations),
  records, redaction and baselines.

This package's namespace is the public API of audits.
"""

from __future__ import annotations

from urlvet.audit.cache import CACHE_BYTES, CACHE_SIZE, Key, RecordCache
from urlvet.audit.options import INPUT_KINDS, AuditOptions, InputKind
from urlvet.audit.output.record import FindingRow, Record, record_from_verdict
from urlvet.audit.pipeline import (
    WINDOW,
    Auditor,
    Batch,
    Dns,
    InProcess,
    ProcessPool,
    ProgressFn,
    RecordVetter,
    Strategy,
    host_of,
)
from urlvet.audit.report import Reporter, Summary, Writer
from urlvet.audit.scan import urls_in_text
from urlvet.audit.sources import (
    MAX_JSONL_LINE_BYTES,
    MAX_LINE_BYTES,
    Diagnostic,
    DiagnosticLevel,
    Occurrence,
    Source,
    display_name,
    expand_paths,
    messages_in_line,
    sniff_kind,
    strip_comment,
)

__all__ = [
    "CACHE_BYTES",
    "CACHE_SIZE",
    "INPUT_KINDS",
    "MAX_JSONL_LINE_BYTES",
    "MAX_LINE_BYTES",
    "WINDOW",
    "AuditOptions",
    "Auditor",
    "Batch",
    "Diagnostic",
    "DiagnosticLevel",
    "Dns",
    "FindingRow",
    "InProcess",
    "InputKind",
    "Key",
    "Occurrence",
    "ProcessPool",
    "ProgressFn",
    "Record",
    "RecordCache",
    "RecordVetter",
    "Reporter",
    "Source",
    "Strategy",
    "Summary",
    "Writer",
    "display_name",
    "expand_paths",
    "host_of",
    "messages_in_line",
    "record_from_verdict",
    "sniff_kind",
    "strip_comment",
    "urls_in_text",
]
