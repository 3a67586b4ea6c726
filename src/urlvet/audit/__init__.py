"""Bulk audits: find the URLs in files, vet each distinct one once, report every occurrence.

This module owns the input side and the pipeline of ``urlvet audit``:

- **Sources.** Paths (directories are walked), or ``-`` for stdin. Each source is read as
  bytes, line by line, never whole: a line longer than the limit, a line that is not UTF-8 or
  holds a NUL, and a binary or UTF-16 file are reported as :class:`Diagnostic` values and
  skipped, and the run goes on.
- **Input kinds.** ``urls`` (one URL a line, ``#`` comments), ``jsonl`` (JSON-RPC messages of
  MCP traffic in any of the three wire shapes), ``text`` (free text and logs, URLs found by
  pattern). ``auto`` decides per file from its name and first bytes.
- **Vetting.** Occurrences are keyed by (URL, server, message); a bounded LRU cache keeps one
  :class:`~urlvet.output.record.Record` per key, so a log that repeats a URL a million times
  vets it once. Offline audits can spread the cache misses over worker processes
  (``jobs``); audits with DNS vet each window's misses concurrently on an event loop, with
  the URLs of one host in sequence so that each host is looked up once.
- **Memory.** Nothing here holds more than one window of input: results stream to a
  :class:`Reporter`, which keeps counters and hands each occurrence to a writer.

Locations are 1-based lines and 1-based columns counted in Unicode code points.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import os
import re
import sys
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, NamedTuple, Protocol

from urlvet.errors import InputError
from urlvet.output.baseline import Baseline, BaselineEntry, fingerprint
from urlvet.output.record import Record, record_from_verdict

if TYPE_CHECKING:
    from multiprocessing.pool import AsyncResult, Pool

    from urlvet.engine import Vetter
    from urlvet.policy import Policy
    from urlvet.server import Server

InputKind = Literal["auto", "urls", "jsonl", "text"]
INPUT_KINDS: tuple[InputKind, ...] = ("auto", "urls", "jsonl", "text")
DiagnosticLevel = Literal["error", "warning", "note"]

MAX_LINE_BYTES = 1 << 20
"""Default line limit for URL lists and text: longer lines are reported and skipped."""
MAX_JSONL_LINE_BYTES = 16 << 20
"""Default line limit for JSON Lines: MCP messages with large tool results are long."""
SNIFF_BYTES = 8192
CACHE_SIZE = 262_144
"""The most distinct (URL, server, message) keys whose records are cached."""
CACHE_BYTES = 80 << 20
"""The most bytes (estimated) of cached records: the bound that usually applies."""
WINDOW = 4096
"""Occurrences read ahead of the results, per batch."""
DNS_CONCURRENCY = 64
_TICK = 2048  # occurrences between progress callbacks

_ASCII_WS = " \t\r\n\x0b\x0c"
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
    nul-byte, invalid-server (errors); malformed-mcp (a warning: its URLs are vetted)."""
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


# --- JSON-RPC messages in log lines (read by urlvet.mcp.wire) -----------------------------------------------------------------------


_RPC_KEYS = ("jsonrpc", "method", "result", "error")


def _messages_in_line(obj: Any) -> Iterator[Any]:
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
        elif isinstance(value, str) and value[:1] in ("{", "[") and "url" in value:
            try:
                yield json.loads(value)
            except ValueError:
                continue


def _dotted(obj: Any, path: Sequence[str]) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


# --- text scanning -------------------------------------------------------------------------

# A scheme with '//' (http://, wss://, ms-appx://...), or a scheme that runs code without
# it. `data:` needs a media type, so that "data: {...}" lines of SSE logs are not URLs.
_URL_IN_TEXT = re.compile(
    r"(?<![A-Za-z0-9+.\-])(?:[A-Za-z][A-Za-z0-9+.\-]{0,31}://|(?:javascript|vbscript):"
    r"|data:[a-z]+/[a-z0-9.+\-]+[;,])[^\s<>\"'`\x00-\x1f\x7f]*",
    re.IGNORECASE,
)
_JSON_ESCAPE_END = re.compile(r"\\[\"nrt]")
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_TRAILING = ".,;:!?*\\"


def urls_in_text(text: str) -> Iterator[tuple[int, str]]:
    """(0-based code point offset, URL) for each URL in a line of free text.

    Trailing punctuation is not part of a URL (``see https://a.example/.``), nor is a
    closing bracket that has no opening one inside the URL (``(https://a.example/)``).
    """
    for m in _URL_IN_TEXT.finditer(text):
        url = m.group(0)
        esc = _JSON_ESCAPE_END.search(url)
        if esc is not None:
            url = url[: esc.start()]
        while url:
            c = url[-1]
            if c in _TRAILING or (c in _CLOSERS and url.count(c) > url.count(_CLOSERS[c])):
                url = url[:-1]
                continue
            break
        tail = url.split(":", 1)[1].lstrip("/") if ":" in url else ""
        if tail:
            yield m.start(), url


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
    if len(head) >= SNIFF_BYTES and lines:
        lines = lines[:-1]  # the last line may be cut short
    sample = [s for s in (ln.strip(_ASCII_WS) for ln in lines) if s and not s.startswith("#")]
    sample = sample[:20]
    if not sample:
        return "urls"
    if sample[0][0] in "{[":
        try:
            json.loads(sample[0])
        except ValueError:
            pass
        else:
            return "jsonl"
    # A URL list: most lines are one URL each. A stray non-URL line still makes it a list,
    # where that line is vetted (and blocked as unparseable) instead of ignored.
    urls = sum(1 for s in sample if _LONE_URL.match(_strip_comment(s)))
    if urls == len(sample) or (urls >= 2 and 3 * urls >= 2 * len(sample)):
        return "urls"
    return "text"


_LONE_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:\S*$")


def _strip_comment(s: str) -> str:
    # In a URL list, '#' after whitespace starts a comment; in a URL it is the fragment.
    if "#" in s:
        m = re.search(r"[ \t]#", s)
        if m is not None:
            return s[: m.start()].rstrip(_ASCII_WS)
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


class _Meter:
    """Bytes read so far, shared with the progress display."""

    __slots__ = ("bytes", "name")

    def __init__(self) -> None:
        self.bytes = 0
        self.name = ""


class _Reader:
    """Turns sources into occurrences and diagnostics, one line at a time."""

    def __init__(self, options: AuditOptions, meter: _Meter) -> None:
        self.options = options
        self.meter = meter
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
            yield Diagnostic(source.name, None, None, "unreadable", _os_reason(exc))
            return
        try:
            try:
                head = _read_head(stream)
            except OSError as exc:
                yield Diagnostic(source.name, None, None, "unreadable", _os_reason(exc))
                return
            problem = _binary_problem(head)
            if problem is not None:
                if source.explicit:
                    code, message = problem
                    yield Diagnostic(source.name, None, None, code, message)
                else:
                    self.skipped_files += 1
                return
            self.sources += 1
            kind = self.options.input_kind
            if kind == "auto":
                kind = sniff_kind(source.name, head)
            limit = self.options.max_line_bytes or (
                MAX_JSONL_LINE_BYTES if kind == "jsonl" else MAX_LINE_BYTES
            )
            reader = io.BufferedReader(_Prefixed(head, stream), 1 << 16)
            lines = self._lines(reader, source.name, limit)
            if kind == "urls":
                yield from self._url_list(lines, source.name)
            elif kind == "jsonl":
                yield from self._jsonl(lines, source.name)
            else:
                yield from self._text(lines, source.name, self.options.server, "text")
        finally:
            if source.path is not None:
                stream.close()

    def _lines(
        self, reader: BinaryIO, name: str, limit: int
    ) -> Iterator[tuple[int, str] | Diagnostic]:
        readline = reader.readline
        meter = self.meter
        lineno = 0
        try:
            first = True
            while True:
                raw = readline(limit + 1)
                if not raw:
                    break
                lineno += 1
                meter.bytes += len(raw)
                if first:
                    first = False
                    if raw.startswith(b"\xef\xbb\xbf"):
                        raw = raw[3:]
                if len(raw) > limit and raw[-1:] != b"\n":
                    total = len(raw)
                    while raw[-1:] != b"\n":
                        raw = readline(1 << 16)
                        if not raw:
                            break
                        total += len(raw)
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
        except OSError as exc:
            yield Diagnostic(name, lineno + 1, None, "unreadable", _os_reason(exc))
        finally:
            self.lines += lineno

    def _url_list(
        self, lines: Iterator[tuple[int, str] | Diagnostic], name: str
    ) -> Iterator[Occurrence | Diagnostic]:
        server = self.options.server
        ws = _ASCII_WS
        for item in lines:
            if item.__class__ is Diagnostic:
                yield item
                continue
            lineno, text = item  # type: ignore[misc]
            url = text.strip(ws)
            if not url or url[0] == "#":
                continue
            if "#" in url and ("\t#" in url or " #" in url):
                url = _strip_comment(url)
            column = len(text) - len(text.lstrip(ws)) + 1
            yield Occurrence(name, lineno, column, len(url), url, server, None, "url-list")

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
            s = text.lstrip(_ASCII_WS)
            if not s:
                continue
            if s[0] not in "{[":
                # Logs mix JSON with plain lines: URLs there are found as in free text.
                yield from self._text(((lineno, text),), name, self.options.server, "text")
                continue
            # Every wire shape has a "url" key; a line without one (and without escapes
            # that could spell it) carries no URL-mode request.
            if "url" not in s and "\\u" not in s:
                continue
            try:
                obj = json.loads(s)
            except ValueError:
                yield from self._text(((lineno, text),), name, self.options.server, "text")
                continue
            server = self.options.server
            if self._field is not None:
                value = _dotted(obj, self._field)
                if isinstance(value, str) and value.strip():
                    server, bad_server = self._checked_server(value.strip(), name, lineno)
                    if bad_server is not None:
                        yield bad_server
            start = 0
            from urlvet.mcp.proxy.core import read_log_line

            logged = read_log_line(obj)
            if logged is not None:
                # A line of `urlvet proxy --log`: its URL, asked by its server.
                if logged.server is not None and self._field is None and server is None:
                    server, bad_server = self._checked_server(logged.server, name, lineno)
                    if bad_server is not None:
                        yield bad_server
                column, span, start = _locate(text, logged.url, start)
                shape = f"mcp:{logged.shape}"
                yield Occurrence(
                    name, lineno, column, span, logged.url, server, logged.message, shape
                )
                continue
            from urlvet.mcp.wire import url_requests  # the one MCP parser, lenient mode

            for message in _messages_in_line(obj):
                found = url_requests(message)
                for problem in found.problems:
                    yield Diagnostic(name, lineno, None, "malformed-mcp", problem, "warning")
                for req in found.requests:
                    column, span, start = _locate(text, req.url, start)
                    yield Occurrence(
                        name, lineno, column, span, req.url, server, req.message, req.shape
                    )

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


def _locate(line: str, url: str, start: int) -> tuple[int, int, int]:
    """(1-based column, span, next search start) of a URL inside a JSON line."""
    for form in (url, json.dumps(url)[1:-1], json.dumps(url, ensure_ascii=False)[1:-1]):
        i = line.find(form, start)
        if i < 0 and start:
            i = line.find(form)
        if i >= 0:
            return i + 1, len(form), i + len(form)
    # Escaped some other way (``https:\/\/``): the string value of the next "url" key.
    m = _URL_KEY.search(line, start) or _URL_KEY.search(line)
    if m is not None:
        end = _JSON_STRING_END.search(line, m.end())
        stop = end.end() - 1 if end is not None else len(line)
        return m.end() + 1, stop - m.end(), stop
    return 1, 0, start


_URL_KEY = re.compile(r'"url"\s*:\s*"')
_JSON_STRING_END = re.compile(r'(?<!\\)(?:\\\\)*"')


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


# --- vetting -------------------------------------------------------------------------------


class _LRU:
    """A least-recently-used map from keys to records, bounded in entries and in bytes.

    The byte bound is an estimate of what an entry holds (its strings plus a fixed overhead):
    records for long URLs or JSON output are larger, and a count alone would let them grow
    the cache past any memory target.
    """

    __slots__ = ("_data", "budget", "hits", "misses", "size", "used")
    OVERHEAD = 400  # the key and record tuples, the dict entry, string headers (measured)

    def __init__(self, size: int, budget: int) -> None:
        self._data: OrderedDict[tuple[str, str | None, str | None], Record] = OrderedDict()
        self.size = max(1, size)
        self.budget = max(1, budget)
        self.used = 0
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[str, str | None, str | None]) -> Record | None:
        rec = self._data.get(key)
        if rec is not None:
            self._data.move_to_end(key)
        return rec

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def put(self, key: tuple[str, str | None, str | None], rec: Record) -> None:
        data = self._data
        old = data.get(key)
        if old is not None:
            self.used -= self.cost(key, old)
        data[key] = rec
        self.used += self.cost(key, rec)
        while len(data) > 1 and (len(data) > self.size or self.used > self.budget):
            k, r = data.popitem(last=False)
            self.used -= self.cost(k, r)

    @classmethod
    def cost(cls, key: tuple[str, str | None, str | None], rec: Record) -> int:
        """The estimated bytes an entry holds."""
        url, _, message = key
        n = cls.OVERHEAD + len(url) + len(rec.json) + len(rec.codes) * 8
        if rec.href is not None and rec.href is not url:
            n += len(rec.href)
        if message:
            n += len(message)
        for f in rec.findings:
            n += len(f.message) + 64
        return n


class _OfflineVet:
    """Vets keys offline into records; the same code runs in the parent and in workers."""

    def __init__(
        self, vetter: Vetter, server_name: str | None, redact: bool, with_json: bool
    ) -> None:
        self.vetter = vetter
        self.server_name = server_name
        self.redact = redact
        self.with_json = with_json
        self._servers: dict[str | None, Server | None] = {None: None}

    def server(self, text: str | None) -> Server | None:
        found = self._servers.get(text, self)
        if found is not self:
            return found  # type: ignore[return-value]
        from urlvet.server import as_server

        try:
            srv = as_server(text, name=self.server_name)
        except InputError:
            srv = None  # reported by the reader; vetted without a server
        if len(self._servers) < 4096:
            self._servers[text] = srv
        return srv

    def __call__(self, key: tuple[str, str | None, str | None]) -> Record:
        url, server, message = key
        verdict = self.vetter.vet_offline(url, self.server(server), message=message)
        return record_from_verdict(verdict, redact_secrets=self.redact, with_json=self.with_json)


class _Shared:
    """Makes cached records share their equal parts (finding rows, code tuples).

    Most records repeat a few finding rows and code combinations (and in JSON mode the rows
    carry no message at all); one instance of each saves a third of a cached record.
    """

    __slots__ = ("_parts",)
    LIMIT = 20_000

    def __init__(self) -> None:
        self._parts: dict[Any, Any] = {}

    def __call__(self, rec: Record) -> Record:
        parts = self._parts
        findings = parts.get(rec.findings)
        if findings is None:
            findings = tuple(parts.setdefault(f, f) for f in rec.findings)
            if len(parts) < self.LIMIT:
                parts[findings] = findings
        codes = parts.get(rec.codes)
        if codes is None:
            codes = rec.codes
            if len(parts) < self.LIMIT:
                parts[codes] = codes
        return rec._replace(findings=findings, codes=codes)


_WORKER: list[_OfflineVet] = []  # one per worker process, set by _worker_init


def _worker_init(
    policy: dict[str, Any], server_name: str | None, redact: bool, with_json: bool
) -> None:
    """Build this worker's Vetter from the policy's data (any start method works)."""
    from urlvet.engine import Vetter
    from urlvet.policy import Policy

    vetter = Vetter(Policy.model_validate(policy))
    _WORKER[:] = [_OfflineVet(vetter, server_name, redact, with_json)]


def _worker_vet(keys: list[tuple[str, str | None, str | None]]) -> list[Record]:
    vet = _WORKER[0]
    return [vet(k) for k in keys]


# --- reporting -----------------------------------------------------------------------------


class Writer(Protocol):
    """An output format. Gets every occurrence and diagnostic in input order."""

    def start(self) -> None:
        """Called once before anything else."""

    def occurrence(self, occ: Occurrence, record: Record, accepted: frozenset[str]) -> None:
        """One URL occurrence; ``accepted`` holds the codes the baseline accepts here."""

    def diagnostic(self, diag: Diagnostic) -> None:
        """One input problem."""

    def finish(self, summary: Summary) -> None:
        """Called once at the end."""


_DECISIONS = ("block", "warn", "allow")
_LEVELS: tuple[DiagnosticLevel, ...] = ("error", "warning", "note")
_NO_CODES: frozenset[str] = frozenset()


@dataclass
class Summary:
    """The counts of a run: what was read, what was decided, what fails it."""

    sources: int = 0
    """Files (and stdin) read."""
    skipped_files: int = 0
    """Binary files found while walking directories, skipped quietly."""
    lines: int = 0
    """Lines read."""
    urls: int = 0
    """URL occurrences vetted."""
    vetted: int = 0
    """Keys vetted (cache misses): distinct (URL, server, message), bar cache evictions."""
    by_decision: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_DECISIONS, 0))
    """Occurrences per decision."""
    by_rule: dict[str, int] = field(default_factory=dict)
    """Occurrences per rule code."""
    rule_names: dict[str, str] = field(default_factory=dict)
    """Rule code -> name, for the codes in by_rule."""
    failing: int = 0
    """Occurrences at or above --fail-on whose findings the baseline does not accept."""
    accepted: int = 0
    """Occurrences with findings that the baseline accepts."""
    diagnostics: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_LEVELS, 0))
    """Diagnostics per level."""
    baseline_written: int | None = None
    """Findings written with --write-baseline."""
    elapsed: float = 0.0
    """Seconds the run took."""

    @property
    def input_errors(self) -> int:
        """Diagnostics that left input unaudited."""
        return self.diagnostics["error"]


class Reporter:
    """Receives results in input order: counts them, applies the baseline, feeds the writer."""

    def __init__(
        self,
        writer: Writer,
        *,
        fail_at: int,
        baseline: Baseline | None = None,
        collect_baseline: bool = False,
        on_diagnostic: Callable[[Diagnostic], None] | None = None,
    ) -> None:
        """``fail_at``: the severity rank at which an unaccepted finding fails the run."""
        self.writer = writer
        self.fail_at = fail_at
        self.baseline = baseline
        self.summary = Summary()
        self.collected: dict[str, BaselineEntry] | None = {} if collect_baseline else None
        self.on_diagnostic = on_diagnostic
        self._combos: dict[tuple[str, tuple[str, ...]], int] = {}
        self._names: dict[str, str] = {}
        # (path, id(record)) -> (record, its fingerprints); holding the record keeps its id
        # from being reused by another record while the entry lives.
        self._fps: OrderedDict[tuple[str, int], tuple[Record, tuple[tuple[str, str], ...]]]
        self._fps = OrderedDict()

    def occurrence(self, occ: Occurrence, rec: Record) -> None:
        """Count one occurrence and write it."""
        combo = (rec.decision.value, rec.codes)
        self._combos[combo] = self._combos.get(combo, 0) + 1
        accepted = _NO_CODES
        if rec.findings and (self.baseline is not None or self.collected is not None):
            accepted = self._baseline(occ, rec)
        if rec.top_rank >= self.fail_at and (not accepted or self._fails_despite(rec, accepted)):
            self.summary.failing += 1
        if accepted:
            self.summary.accepted += 1
        self.writer.occurrence(occ, rec, accepted)

    def _fails_despite(self, rec: Record, accepted: frozenset[str]) -> bool:
        return any(f.severity.rank >= self.fail_at and f.code not in accepted for f in rec.findings)

    def _baseline(self, occ: Occurrence, rec: Record) -> frozenset[str]:
        key = (occ.path, id(rec))
        entry = self._fps.get(key)
        fps = entry[1] if entry is not None else None
        if fps is None:
            url = rec.normalised_url
            fps = tuple((f.code, fingerprint(f.code, occ.path, url)) for f in rec.findings)
            self._fps[key] = (rec, fps)
            if len(self._fps) > 4096:
                self._fps.popitem(last=False)
            if self.collected is not None:
                for code, fp in fps:
                    self.collected.setdefault(fp, BaselineEntry(fp, code, occ.path, url))
        if self.baseline is None:
            return _NO_CODES
        return frozenset(code for code, fp in fps if fp in self.baseline)

    def diagnostic(self, diag: Diagnostic) -> None:
        """Count one diagnostic, show it on stderr (through the callback) and write it."""
        self.summary.diagnostics[diag.level] += 1
        if self.on_diagnostic is not None:
            self.on_diagnostic(diag)
        self.writer.diagnostic(diag)

    def summarise(self, reader_stats: _Reader, vetted: int, elapsed: float) -> Summary:
        """Complete the summary (the caller then lets the writer finish with it)."""
        s = self.summary
        s.sources = reader_stats.sources
        s.skipped_files = reader_stats.skipped_files
        s.lines = reader_stats.lines
        s.vetted = vetted
        s.elapsed = elapsed
        for (decision, codes), n in self._combos.items():
            s.urls += n
            s.by_decision[decision] += n
            for code in codes:
                s.by_rule[code] = s.by_rule.get(code, 0) + n
        from urlvet.checks import registry

        table = registry.rules()
        s.rule_names = {c: table[c].name if c in table else c for c in s.by_rule}
        return s


# --- the pipeline --------------------------------------------------------------------------

ProgressFn = Callable[[int, int, str], None]
"""Called now and then with (bytes read, URL occurrences done, current source name)."""

Key = tuple[str, str | None, str | None]


class Auditor:
    """Runs an audit: reads sources, vets each distinct key once, reports every occurrence."""

    def __init__(self, policy: Policy, options: AuditOptions | None = None) -> None:
        self.policy = policy
        self.options = options or AuditOptions()

    @property
    def uses_dns(self) -> bool:
        """True when the policy resolves names or probes TLS (the audit then runs on an event
        loop, probes bounded by the prober's concurrency and cached per address, port, host)."""
        compiled = self.policy.compiled
        return bool(compiled.dns_enabled or compiled.tls_probe)

    def run(
        self,
        sources: Iterable[Source],
        reporter: Reporter,
        progress: ProgressFn | None = None,
    ) -> Summary:
        """Audit the sources; results go to ``reporter``. Returns the run's summary.

        The caller starts the reporter's writer before and finishes it after (with the
        summary), so that it can add to the summary first (a baseline written, say).
        """
        started = time.perf_counter()
        meter = _Meter()
        reader = _Reader(self.options, meter)
        items = reader.read(sources)
        cache = _LRU(self.options.cache_size, self.options.cache_bytes)
        if self.uses_dns:
            asyncio.run(self._run_dns(items, reporter, cache, meter, progress))
        elif self.options.jobs > 1:
            # Starting workers costs more than vetting a small input here.
            head = list(itertools.islice(items, WINDOW))
            if len(head) < WINDOW:
                self._run_offline(iter(head), reporter, cache, meter, progress)
            else:
                self._run_pool(itertools.chain(head, items), reporter, cache, meter, progress)
        else:
            self._run_offline(items, reporter, cache, meter, progress)
        return reporter.summarise(reader, cache.misses, time.perf_counter() - started)

    def _offline_vet(self) -> _OfflineVet:
        from urlvet.engine import Vetter

        o = self.options
        return _OfflineVet(Vetter(self.policy), o.server_name, o.redact_secrets, o.json_records)

    # One process: look up, vet on a miss, report. The hot loop of the whole command.
    def _run_offline(
        self,
        items: Iterator[Occurrence | Diagnostic],
        reporter: Reporter,
        cache: _LRU,
        meter: _Meter,
        progress: ProgressFn | None,
    ) -> None:
        vet = self._offline_vet()
        share = _Shared()
        data = cache._data
        put = cache.put
        move = data.move_to_end
        emit = reporter.occurrence
        n = 0
        misses = 0
        for item in items:
            if item.__class__ is Diagnostic:
                reporter.diagnostic(item)
                continue
            occ: Occurrence = item  # type: ignore[assignment]
            key = (occ.url, occ.server, occ.message)
            rec = data.get(key)
            if rec is None:
                misses += 1
                rec = share(vet(key))
                put(key, rec)
            else:
                move(key)
            emit(occ, rec)
            n += 1
            if progress is not None and not n % _TICK:
                progress(meter.bytes, n, meter.name)
        cache.misses += misses
        cache.hits += n - misses

    # Worker processes vet the misses of each window while this process reads ahead and
    # reports earlier windows in order. Hits are looked up once, when the window is read.
    def _run_pool(
        self,
        items: Iterator[Occurrence | Diagnostic],
        reporter: Reporter,
        cache: _LRU,
        meter: _Meter,
        progress: ProgressFn | None,
    ) -> None:
        import multiprocessing

        o = self.options
        jobs = o.jobs
        local: list[_OfflineVet] = []
        share = _Shared()
        inflight: set[Key] = set()
        pending: deque[_Window] = deque()
        done = 0
        data = cache._data
        move = data.move_to_end
        pool: Pool = multiprocessing.get_context().Pool(
            jobs,
            initializer=_worker_init,
            initargs=(
                self.policy.model_dump(mode="json"),
                o.server_name,
                o.redact_secrets,
                o.json_records,
            ),
        )

        def submit(batch: list[Occurrence | Diagnostic]) -> None:
            found: list[Record | None] = []
            keys: list[Key] = []
            seen: set[Key] = set()
            for item in batch:
                if item.__class__ is Diagnostic:
                    found.append(None)
                    continue
                occ: Occurrence = item  # type: ignore[assignment]
                key = (occ.url, occ.server, occ.message)
                rec = data.get(key)
                if rec is not None:
                    move(key)
                else:
                    if key not in seen and key not in inflight:
                        seen.add(key)
                        keys.append(key)
                found.append(rec)
            inflight.update(keys)
            cache.misses += len(keys)
            results = [
                pool.apply_async(_worker_vet, (keys[i : i + _CHUNK],))
                for i in range(0, len(keys), _CHUNK)
            ]
            pending.append(_Window(batch, found, keys, results))

        def drain() -> None:
            nonlocal done
            window = pending.popleft()
            fresh: dict[Key, Record] = {}
            offset = 0
            for res in window.results:
                records = res.get()
                chunk = window.keys[offset : offset + len(records)]
                offset += len(records)
                for k, r in zip(chunk, records, strict=True):
                    fresh[k] = shared = share(r)
                    cache.put(k, shared)
                    inflight.discard(k)
            for item, rec in zip(window.batch, window.found, strict=True):
                if item.__class__ is Diagnostic:
                    reporter.diagnostic(item)
                    continue
                occ: Occurrence = item  # type: ignore[assignment]
                if rec is None:
                    key = (occ.url, occ.server, occ.message)
                    rec = fresh.get(key) or cache.get(key)
                    if rec is None:  # vetted for an earlier window and evicted since
                        if not local:
                            local.append(self._offline_vet())
                        rec = share(local[0](key))
                        cache.put(key, rec)
                        cache.misses += 1
                reporter.occurrence(occ, rec)
                done += 1
            if progress is not None:
                progress(meter.bytes, done, meter.name)

        try:
            batch: list[Occurrence | Diagnostic] = []
            for item in items:
                batch.append(item)
                if len(batch) >= WINDOW:
                    submit(batch)
                    batch = []
                    while len(pending) > 2 * jobs or (pending and pending[0].ready()):
                        drain()
            if batch:
                submit(batch)
            while pending:
                drain()
        finally:
            pool.terminate()
            pool.join()

    # With DNS: per window, the distinct misses are grouped by host; hosts run concurrently,
    # the URLs of one host one after another, so the resolver's cache answers all but the
    # first lookup of each host.
    async def _run_dns(
        self,
        items: Iterator[Occurrence | Diagnostic],
        reporter: Reporter,
        cache: _LRU,
        meter: _Meter,
        progress: ProgressFn | None,
    ) -> None:
        from urlvet.engine import Vetter

        vetter = Vetter(self.policy)
        o = self.options
        offline = _OfflineVet(vetter, o.server_name, o.redact_secrets, o.json_records)
        limit = asyncio.Semaphore(DNS_CONCURRENCY)
        share = _Shared()
        done = 0

        async def vet_host(keys: list[Key], out: dict[Key, Record]) -> None:
            async with limit:
                for key in keys:
                    url, server, message = key
                    verdict = await vetter.avet(url, offline.server(server), message=message)
                    out[key] = record_from_verdict(
                        verdict, redact_secrets=o.redact_secrets, with_json=o.json_records
                    )

        batch: list[Occurrence | Diagnostic] = []
        exhausted = False
        while not exhausted:
            batch = []
            for item in items:
                batch.append(item)
                if len(batch) >= WINDOW:
                    break
            else:
                exhausted = True
            by_host: dict[str, list[Key]] = {}
            seen: set[Key] = set()
            for item in batch:
                if item.__class__ is Diagnostic:
                    continue
                occ: Occurrence = item  # type: ignore[assignment]
                key = (occ.url, occ.server, occ.message)
                if key in seen or key in cache:
                    continue
                seen.add(key)
                by_host.setdefault(host_of(occ.url), []).append(key)
            results: dict[Key, Record] = {}
            await asyncio.gather(*(vet_host(keys, results) for keys in by_host.values()))
            cache.misses += len(results)
            for k, r in results.items():
                results[k] = shared = share(r)
                cache.put(k, shared)
            for item in batch:
                if item.__class__ is Diagnostic:
                    reporter.diagnostic(item)
                    continue
                occ = item  # type: ignore[assignment]
                key = (occ.url, occ.server, occ.message)
                rec = results.get(key) or cache.get(key)
                if rec is None:  # evicted within the window
                    rec = offline(key)
                reporter.occurrence(occ, rec)
                done += 1
            if progress is not None:
                progress(meter.bytes, done, meter.name)


_CHUNK = 256  # keys per task sent to a worker


class _Window(NamedTuple):
    """Occurrences read ahead in pool mode, with what is known of them so far."""

    batch: list[Occurrence | Diagnostic]
    found: list[Record | None]
    """The cached record of each item, when there was one as the window was read."""
    keys: list[Key]
    """The keys sent to the workers, in order."""
    results: list[AsyncResult[list[Record]]]

    def ready(self) -> bool:
        return all(r.ready() for r in self.results)


def host_of(url: str) -> str:
    """The host a browser would connect to for ``url``, or '' when it has none."""
    from urlvet.url import InvalidURL, parse

    try:
        return parse(url).host.rstrip(".").lower()
    except (InvalidURL, ValueError):
        return ""
