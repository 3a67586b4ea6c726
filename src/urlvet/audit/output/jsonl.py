"""JSON Lines and JSON: one object per URL occurrence, with its location and its verdict.

Each object is ``{"type": "url", "path", "line", "column", "input", ...verdict}`` where the
verdict members are those of :class:`urlvet.Verdict` (secrets redacted unless asked not to);
with a baseline, ``"accepted"`` lists the codes it accepts there. Input problems are objects
of ``"type": "diagnostic"``. ``json`` writes the same objects as one array, streamed: the
array is never built in memory.

A writer made with ``part=True`` writes one part of such an output elsewhere (a share of a
split audit, in another process); :meth:`JsonWriter.splice` appends the part to the output
as if this writer had written its objects, and :meth:`JsonWriter.splice_lines` appends
objects that JSON Lines part writers wrote, one a line, taken from several parts in turn.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING, BinaryIO, TextIO

from urlvet.audit.output.base import RunInfo
from urlvet.audit.output.record import Record

if TYPE_CHECKING:
    from urlvet.audit.report import Summary
    from urlvet.audit.sources import Diagnostic, Occurrence

_NO_CODES: frozenset[str] = frozenset()


class JsonWriter:
    """Streams one JSON object per occurrence: JSON Lines, or one JSON array."""

    def __init__(
        self, stream: TextIO, info: RunInfo, *, array: bool = False, part: bool = False
    ) -> None:
        self.stream = stream
        self.info = info
        self.array = array
        self.part = part
        self._write = stream.write
        self._first = not part  # a part's objects each follow an earlier one
        self._path = ""
        self._end = "" if array else "\n"
        self._head = '{"type":"url","path":"","line":'  # the object's start, for self._path

    def start(self) -> None:
        """Open the array (json)."""
        if self.array and not self.part:
            self._write("[")

    def _emit(self, body: str) -> None:
        if self.array:
            self._write(("\n" if self._first else ",\n") + body)
            self._first = False
        else:
            self._write(body + "\n")

    def occurrence(self, occ: Occurrence, record: Record, accepted: frozenset[str]) -> None:
        """One object for this occurrence."""
        if occ.path is not self._path:
            self._path = occ.path
            self._head = f'{{"type":"url","path":{json.dumps(occ.path, ensure_ascii=True)},"line":'
        extra = ""
        if self.info.baseline:
            extra = ',"accepted":' + json.dumps(sorted(accepted))
        body = (
            f'{self._head}{occ.line},"column":{occ.column},"input":"{occ.kind}",'
            f"{record.json}{extra}}}{self._end}"
        )
        if self.array:
            self._emit(body)
        else:  # written at once, line break and all: one line for each of a million URLs
            self._write(body)

    def occurrences(self, occs: list[Occurrence], records: list[Record]) -> None:
        """:meth:`occurrence` for each of a row of occurrences with no baseline."""
        if self.array or self.info.baseline:
            for occ, record in zip(occs, records, strict=True):
                self.occurrence(occ, record, _NO_CODES)
            return
        head = self._head
        path = self._path
        end = self._end
        write = self._write  # a line at a time: the stream buffers them
        for occ, record in zip(occs, records, strict=True):
            if occ.path is not path:
                path = occ.path
                head = f'{{"type":"url","path":{json.dumps(path, ensure_ascii=True)},"line":'
            write(
                f'{head}{occ.line},"column":{occ.column},"input":"{occ.kind}",{record.json}}}{end}'
            )
        self._head = head
        self._path = path

    def diagnostic(self, diag: Diagnostic) -> None:
        """One object for an input problem."""
        self._emit(
            json.dumps(
                {
                    "type": "diagnostic",
                    "path": diag.path,
                    "line": diag.line,
                    "column": diag.column,
                    "level": diag.level,
                    "code": diag.code,
                    "message": diag.message,
                },
                ensure_ascii=True,
                separators=(",", ":"),
            )
        )

    def finish(self, summary: Summary) -> None:
        """Close the array (json)."""
        if self.array and not self.part:
            self._write("\n]\n" if not self._first else "]\n")

    def splice(self, part: BinaryIO) -> None:
        """Append what a ``part=True`` writer of the same format wrote (read from ``part``),
        streamed: the objects then stand in the output as if this writer had written them."""
        head = part.read(1)
        if not head:
            return
        self.stream.flush()
        out = self.stream.buffer
        if not (self.array and self._first):
            out.write(head)  # else the comma before a part's first object: this one is first
        self._first = False
        shutil.copyfileobj(part, out, 1 << 20)

    def splice_lines(self, lines: Sequence[bytes]) -> None:
        """Append objects, each one line (with its line break) as a JSON Lines writer made
        with ``part=True`` wrote it: they then stand in the output as if this writer had
        written them, in either format."""
        if not lines:
            return
        self.stream.flush()
        out = self.stream.buffer
        if not self.array:
            out.write(b"".join(lines))  # one write: each line would be a copy and a check
            return
        body = b",\n".join([line[:-1] for line in lines])
        out.write((b"\n" if self._first else b",\n") + body)
        self._first = False
