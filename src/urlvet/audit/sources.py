"""Sources: finding the inputs of an audit and reading them into URL occurrences.

- **Sources.** Paths (directories are walked), or ``-`` for stdin. Each source is read as
  bytes, line by line, never whole: a line longer than the limit, a line that is not UTF-8 or
  holds a NUL, and a binary or UTF-16 file are reported as :class:`Diagnostic` values and
  skipped, and the run goes on.
- **Input kinds.** ``urls`` (one URL a line, ``#`` comments), ``jsonl`` (JSON-RPC messages of
  MCP traffic in any of the three wire shapes, read by :mod:`urlvet.mcp.wire`, and lines of
  ``urlvet proxy --log``), ``text`` (free text and logs, URLs found by :mod:`urlvet.audit.scan`).
  ``auto`` decides per file from its name and first bytes (:func:`sniff_kind`).

Locations are 1-based lines and 1-based columns counted in Unicode code points.
"""

from __future__ import annotations

import bisect
import bz2
import dataclasses
import gzip
import io
import json
import lzma
import os
import re
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal, NamedTuple

from urlvet.audit.options import AuditOptions, InputKind
from urlvet.audit.scan import urls_in_text
from urlvet.checks.interaction import FormText
from urlvet.errors import InputError

DiagnosticLevel = Literal["error", "warning", "note"]

MAX_LINE_BYTES = 1 << 20
"""Default line limit for URL lists and text: longer lines are reported and skipped."""
MAX_JSONL_LINE_BYTES = 16 << 20
"""Default line limit for JSON Lines: MCP messages with large tool results are long."""
SNIFF_BYTES = 8192
LINES_BLOCK = 1 << 16
"""Bytes read at a time: the lines of a block are decoded and split at once."""
_BOM = b"\xef\xbb\xbf"

ASCII_WS = " \t\r\n\x0b\x0c"
_SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox", ".nox"}
    | {".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis"}
)
_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jsonlines")
_URL_LIST_SUFFIXES = (".urls", ".url-list")


# --- values --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Source:
    """One input: a file, or stdin."""

    name: str
    """How reports name it: a path relative to the working directory when it lies below it
    (with '/' separators), else the absolute path; the stdin name for stdin."""
    path: str | None
    """The filesystem path; None for stdin."""
    explicit: bool = True
    """Named on the command line, rather than found by walking a directory."""
    span: Span | None = None
    """Only this byte range of the file (a share of a split audit); None: the whole file."""


@dataclass(frozen=True, slots=True)
class Span:
    """A byte range of a regular file, cut at line starts, read as one input kind.

    A file cut into spans reads as the whole file would: line numbers go on from
    ``first_line``, a byte order mark is dropped only at the file's start, and no line is
    ever cut (a span ends after a line break or at the end of the file).
    """

    start: int
    """The first byte: 0 or just after a line break."""
    end: int
    """The byte after the last one: just after a line break, or the file's size."""
    first_line: int
    """The 1-based number of the line at ``start`` (1 when ``start`` is 0)."""
    kind: InputKind
    """How to read it (never auto: sniffed once, from the file's head)."""


class Occurrence(NamedTuple):
    """One URL at one place in the input."""

    path: str
    """The source's name."""
    line: int
    """1-based line."""
    column: int
    """1-based column in Unicode code points."""
    span: int
    """Code points the URL occupies on the line (0 when not known)."""
    url: str
    """The URL as found."""
    server: str | None
    """The server that asked: a URL or 'stdio', as given."""
    message: str | None
    """The message shown with the URL (MCP traffic only)."""
    kind: str
    """Where it came from: url-list, text, or mcp:<wire shape>."""


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Input that could not be audited, and why. Errors make the run exit 2."""

    path: str
    """The source's name."""
    line: int | None
    """1-based line, when the problem is one line."""
    column: int | None
    """1-based column in code points, when known."""
    code: str
    """A stable identifier: unreadable, binary-file, utf16-file, line-too-long, invalid-utf8,
    nul-byte, json-too-deep, invalid-server (errors); malformed-mcp (a warning: its URLs are vetted)."""
    message: str
    """What was skipped and why, for a person."""
    level: DiagnosticLevel = "error"
    """error (input left unaudited), warning or note."""

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message}"


# --- JSON-RPC messages in log lines (read by urlvet.mcp.wire) -----------------------------------------------------------------------


_RPC_KEYS = ("jsonrpc", "method", "result", "error")


def messages_in_line(obj: Any) -> Iterator[Any]:
    """The JSON-RPC message(s) in one JSON line: the line itself, or one a log wraps."""
    if isinstance(obj, list) or (isinstance(obj, dict) and any(k in obj for k in _RPC_KEYS)):
        yield obj
        return
    if not isinstance(obj, dict):
        return
    # A log record wrapping the message: {"ts": ..., "server": ..., "message": {...}}.
    for value in obj.values():
        if isinstance(value, dict | list):
            yield value
        elif isinstance(value, str) and value[:1] in ("{", "[") and _may_hold_request(value):
            try:
                yield json.loads(value)
            except ValueError:
                continue


def _may_hold_request(text: str) -> bool:
    """False only when JSON ``text`` can hold no URL request and no form elicitation (a form
    needs a ``requestedSchema``; escapes could spell either)."""
    return "url" in text or "requestedSchema" in text or "\\u" in text


def _dotted(obj: Any, path: Sequence[str]) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


# --- reading -------------------------------------------------------------------------------


class _Prefixed(io.RawIOBase):
    """A raw stream that first returns bytes already read (for sniffing), then the rest."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self._head = memoryview(head)
        self._stream = stream
        self._read = getattr(stream, "read1", None) or stream.read

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._read(len(buffer))
        n = len(data)
        buffer[:n] = data
        return n


class _Range(io.RawIOBase):
    """A raw stream that ends ``size`` bytes after the stream's position."""

    def __init__(self, stream: BinaryIO, size: int) -> None:
        self._stream = stream
        self._left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self._left)
        if n <= 0:
            return 0
        data = self._stream.read(n)
        got = len(data)
        buffer[:got] = data
        self._left -= got
        return got


Compression = Literal["gzip", "bzip2", "xz", "zstd"]
"""The compressed formats an audit reads (rotated logs): known by their first bytes."""

ZSTD_EXTRA = "urlvet's zstd extra: pip install zstandard"
"""How to get the zstandard package that zstd input needs."""


def compression_of(head: bytes) -> Compression | None:
    """The compressed format that a file's first bytes announce, or None for plain bytes.

    Known by content, never by name: a rotated log keeps its name through a rename, and a
    file named ``.gz`` may hold plain text."""
    if head.startswith(b"\x1f\x8b\x08"):
        return "gzip"
    # "BZh", the block size, then a block's or the empty stream's magic: text may start "BZh".
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
        return "bzip2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zstd"
    return None


class CorruptInput(OSError):
    """Compressed input whose data cannot be decompressed (truncated or damaged)."""


class _Decompressed(io.RawIOBase):
    """A raw stream of the decompressed bytes of ``stream``, read a bounded piece at a time
    (a decompression bomb costs time, never memory); a damaged stream raises
    :class:`CorruptInput`, which the reader reports as it reports an unreadable file."""

    def __init__(self, stream: BinaryIO, fmt: Compression) -> None:
        self.fmt = fmt
        self._inner = _decompressor(stream, fmt)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self._inner.read1(len(buffer))
        except CorruptInput:
            raise
        except (EOFError, ValueError, OSError, zlib.error, lzma.LZMAError) as exc:
            raise CorruptInput(f"{self.fmt} data is damaged or cut short ({exc})") from None
        except Exception as exc:  # zstandard.ZstdError, whose module is imported lazily
            raise CorruptInput(f"{self.fmt} data is damaged or cut short ({exc})") from None
        n = len(data)
        buffer[:n] = data
        return n

    def close(self) -> None:
        self._inner.close()
        super().close()


def _decompressor(stream: BinaryIO, fmt: Compression) -> Any:
    if fmt == "gzip":
        return gzip.GzipFile(fileobj=stream, mode="rb")
    if fmt == "bzip2":
        return bz2.BZ2File(stream, mode="rb")
    if fmt == "xz":
        return lzma.LZMAFile(stream, mode="rb")
    return _ZstdFrames(stream)


ZSTD_FEED = 256
"""Compressed bytes given to the zstd decompressor at a time. A zstd block of 128 KiB can be
coded in 4 bytes, so this bounds what one step can make at 8 MiB."""


class _ZstdFrames:
    """zstd frames one after another, decompressed a few bytes of input at a time.

    The zstandard package's own stream reader ends quietly where a frame is cut short; this
    one raises :class:`CorruptInput` there, so that a truncated log never reads as a whole
    one."""

    def __init__(self, stream: BinaryIO) -> None:
        try:
            import zstandard
        except ImportError:
            raise CorruptInput(
                f"zstd-compressed input needs the zstandard package: {ZSTD_EXTRA}"
            ) from None
        self._new = zstandard.ZstdDecompressor().decompressobj
        self._source = io.BufferedReader(stream, LINES_BLOCK)  # type: ignore[type-var]
        self._frame: Any = None
        self._left = b""  # input after the end of the last frame, not yet fed
        self._out = bytearray()

    def read1(self, size: int) -> bytes:
        """Up to ``size`` decompressed bytes; b"" at the end of the last whole frame."""
        while not self._out:
            if self._left:
                piece, self._left = self._left[:ZSTD_FEED], self._left[ZSTD_FEED:]
            else:
                piece = self._source.read(ZSTD_FEED)
                if not piece:
                    if self._frame is not None:
                        raise CorruptInput("zstd data is damaged or cut short (a frame ends early)")
                    return b""
            if self._frame is None:
                self._frame = self._new()
            self._out += self._frame.decompress(piece)
            if self._frame.eof:
                self._left = self._frame.unused_data + self._left
                self._frame = None
        data = bytes(self._out[:size])
        del self._out[:size]
        return data

    def close(self) -> None:
        """Nothing to release: the file is closed by its reader."""


_COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".zstd")


def _without_compression_suffix(name: str) -> str:
    # "traffic.jsonl.gz" is sniffed as "traffic.jsonl": the name says what the text is.
    lower = name.lower()
    for suffix in _COMPRESSION_SUFFIXES:
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


class _Counted(io.RawIOBase):
    """A raw stream that counts the bytes read through it on a :class:`Meter` (a compressed
    file's progress is the compressed bytes read, against the file's size)."""

    def __init__(self, stream: io.RawIOBase, meter: Meter) -> None:
        self._stream = stream
        self._meter = meter

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._stream.readinto(buffer) or 0
        self._meter.bytes += n
        return n


def _open_decompressed(
    stream: BinaryIO, head: bytes, meter: Meter | None = None
) -> tuple[BinaryIO, bytes, bool]:
    """(stream, head, compressed): ``stream`` decompressed when ``head`` (its first bytes,
    already read) says it is compressed, with the head of the decompressed bytes; else as it
    is. The compressed bytes read are counted on ``meter``. Raises :class:`CorruptInput` when
    the compressed data cannot be read."""
    fmt = compression_of(head)
    if fmt is None:
        return stream, head, False
    raw: io.RawIOBase = _Prefixed(head, stream)
    if meter is not None:
        raw = _Counted(raw, meter)
    inner = io.BufferedReader(_Decompressed(raw, fmt), LINES_BLOCK)  # type: ignore[arg-type]
    return inner, _read_head(inner), True


def file_kind(source: Source, options: AuditOptions) -> InputKind | None:
    """How a file is read, from its name and head as :class:`Reader` decides it; None when
    the file is not read as lines (binary, UTF-16) or cannot be read."""
    if source.path is None:
        return None
    try:
        with open(source.path, "rb", buffering=0) as stream:
            head = _read_head(stream)
    except OSError:
        return None
    if compression_of(head) is not None or _binary_problem(head) is not None:
        return None  # compressed input is read whole, decompressed, never cut by bytes
    if options.input_kind != "auto":
        return options.input_kind
    return sniff_kind(source.name, head)


def sniff_kind(name: str, head: bytes) -> InputKind:
    """The input kind of a file from its name and first bytes: jsonl, urls or text."""
    lower = name.lower()
    if lower.endswith(_JSONL_SUFFIXES):
        return "jsonl"
    if lower.endswith(_URL_LIST_SUFFIXES):
        return "urls"
    if lower.endswith((".json", ".yaml", ".yml", ".toml", ".md", ".html", ".py", ".js", ".ts")):
        return "text"
    text = head.decode("utf-8", "replace").removeprefix("\ufeff")
    lines = text.splitlines()
    # The last line may be cut short; it is left out unless it is the only one (a first line
    # longer than the head is still a line of its file, and read as one).
    cut = len(head) >= SNIFF_BYTES and len(lines) == 1
    if len(head) >= SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]
    sample = [s for s in (ln.strip(ASCII_WS) for ln in lines) if s and not s.startswith("#")]
    sample = sample[:20]
    if not sample:
        return "urls"
    if sample[0][0] in "{[" and cut:
        return "jsonl"  # the start of a JSON value too long to parse from the head
    if sample[0][0] in "{[":
        try:
            json.loads(sample[0])
        except ValueError:
            pass
        else:
            return "jsonl"
    # A URL list: most lines are one URL each. A stray non-URL line still makes it a list,
    # where that line is vetted (and blocked as unparseable) instead of ignored.
    urls = sum(1 for s in sample if _LONE_URL.match(strip_comment(s)))
    if urls == len(sample) or (urls >= 2 and 3 * urls >= 2 * len(sample)):
        return "urls"
    return "text"


_LONE_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:\S*$")


def strip_comment(s: str) -> str:
    # In a URL list, '#' after whitespace starts a comment; in a URL it is the fragment.
    if "#" in s:
        m = re.search(r"[ \t]#", s)
        if m is not None:
            return s[: m.start()].rstrip(ASCII_WS)
    return s


def expand_paths(paths: Iterable[str], stdin_name: str = "<stdin>") -> Iterator[Source]:
    """Sources for command-line paths: '-' is stdin; directories are walked in name order,
    skipping version-control and tool caches; symlinked directories are not followed."""
    cwd = Path.cwd()
    for p in paths:
        if p == "-":
            yield Source(stdin_name, None)
            continue
        path = Path(p)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
                for f in sorted(files):
                    full = Path(root, f)
                    yield Source(display_name(full, cwd), str(full), explicit=False)
        else:
            yield Source(display_name(path, cwd), str(path))


def display_name(path: Path, cwd: Path | None = None) -> str:
    """A path as reports show it: relative to ``cwd`` with '/' when below it, else absolute."""
    base = cwd or Path.cwd()
    absolute = path if path.is_absolute() else base / path
    try:
        return absolute.resolve(strict=False).relative_to(base.resolve()).as_posix()
    except ValueError:
        return absolute.as_posix() if path.is_absolute() else path.as_posix()


class Meter:
    """Bytes read so far, shared with the progress display."""

    __slots__ = ("bytes", "name")

    def __init__(self) -> None:
        self.bytes = 0
        self.name = ""


ROUTE_HOST_LINES = 1024
"""Lines of one host that a routed read gives to the host's worker; the host's later lines
are dealt out by line number, so that a host that fills much of a log is shared out."""
ROUTE_HOSTS_KEPT = 1 << 18
"""Hosts whose line counts a routed read keeps before it starts counting afresh."""
ROUTE_HOST_CHARS = 256
"""Characters after ``://`` that name a line's host for routing, at most."""
ROUTE_SLOTS_PER_WORKER = 64
"""Hashes and line numbers are dealt to workers through a table of this many slots a worker."""
ROUTE_FIRST_SHARE = 0.98
"""Worker 0's share of the slots, against an even share: it merges the others' output too
(with two workers, one slot of 64 less: measured runs finished closest together so)."""


def route_table(count: int) -> tuple[int, ...]:
    """The worker of each slot (:class:`LineRoute`): each worker in turn, but for a few of
    worker 0's slots (:data:`ROUTE_FIRST_SHARE`), dealt to the others in turn."""
    slots = ROUTE_SLOTS_PER_WORKER * count
    table = [i % count for i in range(slots)]
    give = ROUTE_SLOTS_PER_WORKER - round(ROUTE_SLOTS_PER_WORKER * ROUTE_FIRST_SHARE)
    if count > 1 and give > 0:
        mine = range(count, slots, count)  # worker 0's slots but the first
        for n, slot in enumerate(mine[:: len(mine) // give][:give]):
            table[slot] = 1 + n % (count - 1)
    return tuple(table)


class LineRoute:
    """Which lines one of ``count`` workers audits when each reads the whole input (a routed
    split audit: :mod:`urlvet.audit.split`).

    A line goes to the worker its first URL's host hashes to (the text between the first
    ``://`` and the next ``/``, less a port), so that each worker meets only its own hosts
    and works out what the engine keeps per host and per shape for those alone; once a host
    has had :data:`ROUTE_HOST_LINES` lines, its further lines, and every line without
    ``://``, are dealt out by line number. Hashes and line numbers go to workers through
    :func:`route_table`, which gives worker 0 a little less. Each worker reads the same lines in the same order and counts
    the same way, so every line goes to exactly one worker, whatever the start method of the
    processes (the hash is CRC-32, not Python's salted one). A line that cannot be read
    (a diagnostic) goes by its line number; problems with a file as a whole go to worker 0.
    """

    __slots__ = ("_seen", "_table", "count", "index")

    def __init__(self, index: int, count: int) -> None:
        if not 0 <= index < count:
            raise ValueError(f"worker {index} of {count}")
        self.index = index
        self.count = count
        self._table = route_table(count)
        self._seen: dict[str, int] = {}
        """host -> lines so far * count + the host's worker."""

    def mine(self, lineno: int, text: str) -> bool:
        """True when line ``lineno`` (its text ``text``) is this worker's."""
        return self.keep((lineno, text))

    def keep(self, item: tuple[int, str] | Diagnostic) -> bool:
        """True when ``item`` (from :meth:`Reader._lines`) is this worker's: a line, counted
        as :meth:`block` counts it, or a diagnostic, by its line number."""
        if isinstance(item, Diagnostic):
            return self._table[(item.line or 0) % len(self._table)] == self.index
        lineno, text = item
        return bool(self.block([text], lineno))

    def block(self, lines: list[str], first: int) -> list[tuple[int, str]]:
        """This worker's lines of ``lines``, numbered from ``first``, as (number, text),
        counting hosts: one pass over a block of lines, with nothing made for the others'."""
        count = self.count
        index = self.index
        seen = self._seen
        table = self._table
        slots = len(table)
        hot = ROUTE_HOST_LINES * count
        width = ROUTE_HOST_CHARS
        crc32 = zlib.crc32
        mine: list[tuple[int, str]] = []
        keep = mine.append
        for lineno, text in enumerate(lines, first):
            start = text.find("://") + 3
            if start < 3:
                if table[lineno % slots] == index:
                    keep((lineno, text))
                continue
            end = text.find("/", start, start + width)
            host = text[start:end] if end >= 0 else text[start : start + width]
            if ":" in host:
                port = host.rfind(":")
                if port and host[port + 1 :].isdigit():
                    host = host[:port]  # the same host on another port: the same worker
            state = seen.get(host)
            if state is None:
                if len(seen) >= ROUTE_HOSTS_KEPT:
                    seen.clear()
                state = table[crc32(host.encode("utf-8", "surrogatepass")) % slots]
            elif state >= hot:
                if table[lineno % slots] == index:
                    keep((lineno, text))
                continue
            seen[host] = state + count
            if state % count == index:
                keep((lineno, text))
        return mine


class Reader:
    """Turns sources into occurrences and diagnostics, one line at a time; with a
    :class:`LineRoute`, only the route's lines (and, on worker 0, the problems of files
    as a whole)."""

    def __init__(self, options: AuditOptions, meter: Meter, route: LineRoute | None = None) -> None:
        self.options = options
        self.meter = meter
        self.route = route
        self._files = route is None or route.index == 0
        """True when problems with a file as a whole are this reader's to report."""
        self.skipped_files = 0
        self.sources = 0
        self.lines = 0
        self._field = tuple(options.server_field.split(".")) if options.server_field else None
        self._servers: dict[str, str | None] = {}

    def read(self, sources: Iterable[Source]) -> Iterator[Occurrence | Diagnostic]:
        for source in sources:
            self.meter.name = source.name
            yield from self._source(source)

    def _source(self, source: Source) -> Iterator[Occurrence | Diagnostic]:
        try:
            stream: BinaryIO = (
                sys.stdin.buffer if source.path is None else open(source.path, "rb", buffering=0)  # noqa: SIM115
            )
        except OSError as exc:
            if self._files:
                yield Diagnostic(source.name, None, None, "unreadable", _os_reason(exc))
            return
        if source.span is not None:
            try:
                yield from self._span(source, source.span, stream)
            finally:
                stream.close()
            return
        text = stream  # the file's bytes, decompressed when it is compressed
        try:
            try:
                head = _read_head(stream)
                text, head, compressed = _open_decompressed(stream, head, self.meter)
            except OSError as exc:
                if self._files:
                    yield Diagnostic(source.name, None, None, "unreadable", _os_reason(exc))
                return
            problem = _binary_problem(head)
            if problem is not None:
                if source.explicit and self._files:
                    code, message = problem
                    yield Diagnostic(source.name, None, None, code, message)
                else:
                    self.skipped_files += 1
                return
            self.sources += 1
            kind = self.options.input_kind
            if kind == "auto":
                named = _without_compression_suffix(source.name) if compressed else source.name
                kind = sniff_kind(named, head)
            limit = self._limit(kind)
            reader = io.BufferedReader(_Prefixed(head, text), 1 << 16)
            # Progress counts a compressed file's own bytes (_Counted), not the text's.
            lines = self._lines(reader, source.name, limit, meter=Meter() if compressed else None)
            yield from self._kind(kind, lines, source.name)
        finally:
            if source.path is not None:
                stream.close()

    def _span(
        self, source: Source, span: Span, stream: BinaryIO
    ) -> Iterator[Occurrence | Diagnostic]:
        # The file's head was checked (not binary) and sniffed when it was split.
        if span.start == 0:
            self.sources += 1
        try:
            stream.seek(span.start)
        except OSError as exc:
            if self._files:
                yield Diagnostic(source.name, span.first_line, None, "unreadable", _os_reason(exc))
            return
        reader = io.BufferedReader(_Range(stream, span.end - span.start), 1 << 16)
        lines = self._lines(reader, source.name, self._limit(span.kind), span.first_line)
        yield from self._kind(span.kind, lines, source.name)

    def _limit(self, kind: InputKind) -> int:
        return self.options.max_line_bytes or (
            MAX_JSONL_LINE_BYTES if kind == "jsonl" else MAX_LINE_BYTES
        )

    def _kind(
        self, kind: InputKind, lines: Iterator[tuple[int, str] | Diagnostic], name: str
    ) -> Iterator[Occurrence | Diagnostic]:
        if kind == "urls":
            return self._url_list(lines, name)
        if kind == "jsonl":
            return self._jsonl(lines, name)
        return self._text(lines, name, self.options.server, "text")

    def _lines(
        self,
        reader: BinaryIO,
        name: str,
        limit: int,
        first_line: int = 1,
        meter: Meter | None = None,
    ) -> Iterator[tuple[int, str] | Diagnostic]:
        """Each line as (number, text without its line break), or a Diagnostic for a line
        that cannot be read as text.

        Read a block at a time (as much as is there, up to :data:`LINES_BLOCK`: a pipe's lines
        are read as they come): the whole lines of a block that is valid UTF-8 and holds no
        NUL and no line over the limit, as most are, are decoded and split at once; those of
        any other block are read one by one (:meth:`_each_line`), and so is the rest of a
        source once a line runs past the limit before its break (the line is then skipped
        without being held). With a route, only the route's lines and diagnostics (those of
        a clean block picked in one pass: :meth:`LineRoute.block`).
        """
        route = self.route
        keep = None if route is None else route.keep
        meter = self.meter if meter is None else meter
        lineno = first_line - 1
        read = reader.read1  # type: ignore[attr-defined]
        carry = b""  # the start of a line that the block before broke
        bom = first_line == 1  # a byte order mark counts only at the file's start

        def one_by_one(
            readline: Callable[[int], bytes], counted: Meter | None = None
        ) -> Iterator[tuple[int, str] | Diagnostic]:
            nonlocal lineno
            for item in self._each_line(readline, name, limit, lineno, counted):
                lineno += 1
                if keep is None or keep(item):
                    yield item

        try:
            while True:
                chunk = read(LINES_BLOCK)
                meter.bytes += len(chunk)
                data = carry + chunk if carry else chunk
                if bom and (len(data) >= len(_BOM) or not chunk):
                    bom = False
                    data = data.removeprefix(_BOM)
                if not chunk:  # the last line, when it has no break
                    yield from one_by_one(io.BytesIO(data).readline)
                    return
                end = data.rfind(b"\n") + 1
                if len(data) - end > limit:
                    meter.bytes -= len(data) - end  # counted again as it is read below
                    rest = io.BufferedReader(_Prefixed(data[end:], reader), LINES_BLOCK)
                    yield from one_by_one(io.BytesIO(data[:end]).readline)
                    yield from one_by_one(rest.readline, meter)
                    return
                if bom or end == 0:
                    carry = data
                    continue
                block, carry = data[:end], data[end:]
                text = _clean_text(block, limit)
                if text is None:
                    yield from one_by_one(io.BytesIO(block).readline)
                    continue
                lines = text.split("\n")
                lines.pop()  # the empty text after the last break
                if route is not None:
                    if "\r" in text:
                        lines = [line.rstrip("\r") for line in lines]
                    first = lineno + 1
                    lineno += len(lines)
                    yield from route.block(lines, first)
                    continue
                for line in lines:
                    lineno += 1
                    yield lineno, line.rstrip("\r")
        except OSError as exc:
            diag = Diagnostic(name, lineno + 1, None, "unreadable", _os_reason(exc))
            if keep is None or keep(diag):
                yield diag
        finally:
            self.lines += lineno - (first_line - 1)

    @staticmethod
    def _each_line(
        readline: Callable[[int], bytes],
        name: str,
        limit: int,
        before: int,
        meter: Meter | None = None,
    ) -> Iterator[tuple[int, str] | Diagnostic]:
        """One item for each line that ``readline`` gives, numbered on from ``before``: the
        line, or the Diagnostic of a line over the limit (read to its end, never held whole),
        not UTF-8 or with a NUL. Counts the bytes on ``meter`` when given."""
        lineno = before
        while True:
            raw = readline(limit + 1)
            if not raw:
                return
            lineno += 1
            if meter is not None:
                meter.bytes += len(raw)
            if len(raw) > limit and raw[-1:] != b"\n":
                total = len(raw)
                while raw[-1:] != b"\n":
                    raw = readline(1 << 16)
                    if not raw:
                        break
                    total += len(raw)
                    if meter is not None:
                        meter.bytes += len(raw)
                total -= len(raw) - len(raw.rstrip(b"\r\n"))  # the line break
                yield Diagnostic(
                    name,
                    lineno,
                    None,
                    "line-too-long",
                    f"line is {total:,} bytes, over the {limit:,}-byte limit "
                    "(--max-line-bytes); line skipped",
                )
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                column = len(raw[: exc.start].decode("utf-8", "replace")) + 1
                yield Diagnostic(
                    name,
                    lineno,
                    column,
                    "invalid-utf8",
                    f"invalid UTF-8 (byte 0x{raw[exc.start]:02x}: {exc.reason}); line skipped",
                )
                continue
            if "\x00" in text:
                yield Diagnostic(
                    name,
                    lineno,
                    text.index("\x00") + 1,
                    "nul-byte",
                    "NUL byte in a text line (binary data?); line skipped",
                )
                continue
            yield lineno, text.rstrip("\r\n")

    def _url_list(
        self, lines: Iterator[tuple[int, str] | Diagnostic], name: str
    ) -> Iterator[Occurrence | Diagnostic]:
        server = self.options.server
        ws = ASCII_WS
        new = tuple.__new__
        for item in lines:
            if item.__class__ is Diagnostic:
                yield item
                continue
            lineno, text = item  # type: ignore[misc]
            url = text.strip(ws)
            if not url or url[0] == "#":
                continue
            if "#" in url and ("\t#" in url or " #" in url):
                url = strip_comment(url)
            column = 1 if url is text else len(text) - len(text.lstrip(ws)) + 1
            # The tuple built directly: a named tuple's own __new__ is a Python function.
            yield new(Occurrence, (name, lineno, column, len(url), url, server, None, "url-list"))

    def _text(
        self,
        lines: Iterable[tuple[int, str] | Diagnostic],
        name: str,
        server: str | None,
        kind: str,
    ) -> Iterator[Occurrence | Diagnostic]:
        for item in lines:
            if item.__class__ is Diagnostic:
                yield item
                continue
            lineno, text = item  # type: ignore[misc]
            if ":" not in text:
                continue
            for offset, url in urls_in_text(text):
                yield Occurrence(name, lineno, offset + 1, len(url), url, server, None, kind)

    def _jsonl(
        self, lines: Iterator[tuple[int, str] | Diagnostic], name: str
    ) -> Iterator[Occurrence | Diagnostic]:
        for item in lines:
            if item.__class__ is Diagnostic:
                yield item
                continue
            lineno, text = item  # type: ignore[misc]
            s = text.lstrip(ASCII_WS)
            if not s:
                continue
            if s[0] not in "{[":
                # Logs mix JSON with plain lines: URLs there are found as in free text.
                yield from self._text(((lineno, text),), name, self.options.server, "text")
                continue
            # Every wire shape has a "url" key; a line without one (and without escapes
            # that could spell it) carries no URL-mode request.
            if not _may_hold_request(s):
                continue
            try:
                obj = json.loads(s)
            except ValueError:
                yield from self._text(((lineno, text),), name, self.options.server, "text")
                continue
            except RecursionError:
                yield Diagnostic(name, lineno, None, "json-too-deep", _TOO_DEEP)
                continue
            server = self.options.server
            if self._field is not None:
                value = _dotted(obj, self._field)
                if isinstance(value, str) and value.strip():
                    server, bad_server = self._checked_server(value.strip(), name, lineno)
                    if bad_server is not None:
                        yield bad_server
            where = _Locator(text)
            from urlvet.mcp.forms import FORM_SHAPE
            from urlvet.mcp.proxy.core import read_log_line

            logged = read_log_line(obj)
            if logged is not None and logged.shape == FORM_SHAPE:  # a form the proxy vetted
                logged = dataclasses.replace(logged, url=FormText(logged.url))
            if logged is not None:
                # A line of `urlvet proxy --log`: its URL, asked by its server.
                if logged.server is not None and self._field is None and server is None:
                    server, bad_server = self._checked_server(logged.server, name, lineno)
                    if bad_server is not None:
                        yield bad_server
                column, span = where.locate(logged.url)
                shape = f"mcp:{logged.shape}"
                yield Occurrence(
                    name, lineno, column, span, logged.url, server, logged.message, shape
                )
                continue
            from urlvet.mcp.wire import url_requests  # the one MCP parser, lenient mode

            try:
                messages = list(messages_in_line(obj))
            except RecursionError:  # a log record's message held as nested JSON text
                yield Diagnostic(name, lineno, None, "json-too-deep", _TOO_DEEP)
                continue
            for message in messages:
                found = url_requests(message)
                for problem in found.problems:
                    yield Diagnostic(name, lineno, None, "malformed-mcp", problem, "warning")
                for req in found.requests:
                    column, span = where.locate(req.url)
                    yield Occurrence(
                        name, lineno, column, span, req.url, server, req.message, req.shape
                    )
                yield from _forms(message, text, name, lineno, server)  # UV701-UV706

    def _checked_server(
        self, value: str, name: str, lineno: int
    ) -> tuple[str | None, Diagnostic | None]:
        # Each line with a bad server is reported: its URLs were vetted without the server,
        # so the server rules (UV4xx) could not run on them.
        if value in self._servers:
            known = self._servers[value]
            if known is not None:
                return known, None
        from urlvet.server import as_server

        try:
            as_server(value)
        except InputError as exc:
            if len(self._servers) < 4096:
                self._servers[value] = None
            return None, Diagnostic(
                name,
                lineno,
                None,
                "invalid-server",
                f"--server-field {self.options.server_field}: {exc}; "
                "the URLs on this line were vetted without a server",
            )
        if len(self._servers) < 4096:
            self._servers[value] = value
        return value, None


def _forms(
    message: Any, text: str, name: str, lineno: int, server: str | None
) -> Iterator[Occurrence]:
    """The form elicitations of one logged message, each at its ``requestedSchema``."""
    from urlvet.mcp.forms import FORM_SHAPE, forms_for_audit

    start = 0
    for form, shown in forms_for_audit(message):
        at = text.find('"requestedSchema"', start)
        column, start = (at + 1, at + 1) if at >= 0 else (1, start)
        yield Occurrence(name, lineno, column, 0, form, server, shown, f"mcp:{FORM_SHAPE}")


class _Locator:
    """Where each URL of one JSON line is written, asked in the order the line holds them.

    The URL as written is looked for from where the last one ended; once that fails on a line
    (an escaped ``https:\\/\\/``), the line's ``"url"`` strings are read once, decoded, and
    looked up. Searching the whole line again for each URL, in each of its spellings, cost a
    line of thousands of escaped requests its length times their number."""

    __slots__ = ("_by_value", "_line", "_start")

    def __init__(self, line: str) -> None:
        self._line = line
        self._start = 0
        self._by_value: dict[str, list[tuple[int, int]]] | None = None

    def locate(self, url: str) -> tuple[int, int]:
        """(1-based column, span) of ``url``; (1, 0) when it is not written as such."""
        line, start = self._line, self._start
        if self._by_value is None:
            i = line.find(url, start)
            if i >= 0:
                self._start = i + len(url)
                return i + 1, len(url)
            self._by_value = _url_values(line)
        spans = self._by_value.get(url)
        if not spans:
            return 1, 0
        # The first at or after the search's place; else the first of all (out of order).
        at = bisect.bisect_left(spans, (start, 0))
        begin, end = spans[at] if at < len(spans) else spans[0]
        self._start = end
        return begin + 1, end - begin


def _url_values(line: str) -> dict[str, list[tuple[int, int]]]:
    """The decoded value of each ``"url": "..."`` string of ``line``, with where each is
    written (start and end of its text), in the order of the line: one pass."""
    values: dict[str, list[tuple[int, int]]] = {}
    for m in _URL_KEY.finditer(line):
        end = _JSON_STRING_END.search(line, m.end())
        stop = end.end() - 1 if end is not None else len(line)
        try:
            value = json.loads(line[m.end() - 1 : stop + 1])
        except ValueError:
            continue
        if isinstance(value, str):
            values.setdefault(value, []).append((m.end(), stop))
    return values


_TOO_DEEP = (
    "JSON nested deeper than the parser follows (thousands of levels): no MCP message is; "
    "line skipped"
)
_URL_KEY = re.compile(r'"url"\s*+:\s*+"')
_JSON_STRING_END = re.compile(r'(?<!\\)(?:\\\\)*+"')


def _clean_text(block: bytes, limit: int) -> str | None:
    """The text of a block of whole lines that can be split at once: valid UTF-8, no NUL, and
    no longer than ``limit`` (so no line of it is over the limit); None for any other block."""
    if len(block) > limit:
        return None
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else text


def _read_head(stream: BinaryIO) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < SNIFF_BYTES:
        chunk = stream.read(SNIFF_BYTES - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _binary_problem(head: bytes) -> tuple[str, str] | None:
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf16-file", "UTF-16 text is not supported: convert the file to UTF-8; skipped"
    if b"\x00" in head:
        return "binary-file", "binary file (NUL bytes in its first 8 KiB); skipped"
    return None


def _os_reason(exc: OSError) -> str:
    return f"cannot read: {exc.strerror or exc}"
