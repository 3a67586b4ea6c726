"""Threat feeds: lists of domains, networks and URLs a policy names by file, in the formats
feeds are published in, loaded into compact tables with a line number for every entry.

A feed is data the organisation does not write itself, so every line is validated: a bad one
is an error naming the file and line, or (with ``on_error: skip``) counted and reported.

Formats, detected per line (``format:`` in the policy pins one):

- domains: one domain a line; hosts files (``0.0.0.0 evil.example``); Adblock-style
  ``||evil.example^``; CSV with a named column;
- networks: one CIDR or address a line (``;`` also starts a comment, as in Spamhaus DROP);
  CSV;
- URLs: one URL a line (URLhaus, OpenPhish); CSV (URLhaus's CSV names its columns in a
  comment line, which is read as the header).

``#`` starts a comment; gzip files are read as such, whatever their name.

A table keeps, per entry, a 29-bit CRC of its key packed with the entry's index in a sorted
array of floats (whose sort and binary search run in C), the keys themselves in one byte
string, and line numbers in an array: about 36 bytes an entry where a Python set of strings
costs about 100, and a lookup costs the same for a thousand entries as for millions. A compiled
table is cached on disk under the hash of the file's content (see :func:`cache_dir`), so the
second start reads arrays instead of parsing text; a cache file that fails its checksum is
ignored and rebuilt.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import hashlib
import ipaddress
import json
import os
import re
import tempfile
import time
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate, repeat
from operator import add, mul, rshift
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from urlvet.errors import PolicyError
from urlvet.text import cut
from urlvet.url import MAX_DOMAIN_LENGTH, HostKind, InvalidURL, parse

if TYPE_CHECKING:
    from _csv import Reader as CsvReader

FeedKind = Literal["domains", "networks", "urls"]
FeedFormat = Literal["auto", "domains", "hosts", "adblock", "urls", "cidr", "csv"]
OnError = Literal["error", "skip"]

CACHE_ENV = "URLVET_CACHE_DIR"
"""Environment variable naming the cache directory; set it empty to turn the cache off."""
CACHE_VERSION = 3
"""Bumped whenever the table layout or the parsing of any format changes."""
MAX_ENTRIES = 1 << 24
"""Entries one feed file may hold (the index bits packed beside the hash)."""
MAX_LINE_CHARS = 65_536
"""Longer lines are errors: no domain, network or URL in a feed is that long."""
CACHE_KEEP_DAYS = 30
"""Compiled feeds not used for this long are deleted when a new one is written."""
ERROR_SAMPLE = 5
"""How many skipped lines a table remembers to report, beside their count."""
CHUNK_BYTES = 1 << 20
"""Feeds are read this much at a time, so that a large one never sits in memory as lines."""

_HASH_SHIFT = 3  # a CRC-32 shifted right by 3: 29 bits, packed above ...
_HASH_BITS = 29
_INDEX_BITS = 24  # ... 24 bits of entry index: 53 bits, exact in a float
_INDEX_SCALE = float(1 << _INDEX_BITS)
_INDEX_MASK = (1 << _INDEX_BITS) - 1
_MAGIC = b"URLVETFEED\n"

# Names hosts files list for the machine itself, not as blocked sites.
_HOSTS_BOILERPLATE = frozenset(
    {
        "localhost",
        "localhost.localdomain",
        "local",
        "broadcasthost",
        "ip6-localhost",
        "ip6-loopback",
        "ip6-localnet",
        "ip6-mcastprefix",
        "ip6-allnodes",
        "ip6-allrouters",
        "ip6-allhosts",
    }
)

# The common case of each domain format, in lower-case ASCII, checked a chunk at a time; any
# other line (Unicode, A-labels, a single label, odd syntax, errors) goes through the full
# parser. The pattern accepts only names the WHATWG host parser keeps as they are: ASCII
# letters, digits, '-' and '_' in non-empty labels, and a last label that starts with a letter
# (so it is never read as an IPv4 number). A-labels are sent to the full parser (they need
# IDNA validation), and so are names over 253 characters. Possessive quantifiers: no
# backtracking over the labels.
_DOMAIN = rb"(?:[a-z0-9_-]++\.)++[a-z][a-z0-9_-]*+"
_FAST_DOMAIN_LINE = re.compile(
    rb"[ \t]*+(?:(" + _DOMAIN + rb")\.?"
    rb"|(?:0\.0\.0\.0|127\.0\.0\.1)[ \t]++(" + _DOMAIN + rb")\.?"
    rb"|\|\|(" + _DOMAIN + rb")\^)?[ \t]*+(?:#.*)?\r?"
)


@dataclass(frozen=True, slots=True)
class FeedHit:
    """Where a feed lists what matched."""

    list_name: str
    """The list as the policy names it (by default its path as written there)."""
    path: str
    """The file the entry was read from."""
    line: int
    """The entry's line in that file (1-based)."""
    entry: str
    """The entry as urlvet keeps it: a domain, a network, or a URL without its fragment."""

    def describe(self) -> str:
        """``urlhaus.txt, line 812``."""
        return f"{self.list_name}, line {self.line}"


@dataclass(frozen=True)
class FeedTable:
    """One feed file compiled for lookups. Immutable; safe to share across threads."""

    list_name: str
    path: str
    kind: FeedKind
    keys: array[float] = field(repr=False)
    offsets: array[int] = field(repr=False)
    lines: array[int] = field(repr=False)
    blob: bytes = field(repr=False)
    skipped: int = 0
    """Lines that failed validation and were skipped (``on_error: skip``)."""
    skipped_sample: tuple[tuple[int, str], ...] = ()
    """The first few skipped lines: (line, reason)."""
    prefixes: tuple[tuple[int, int], ...] = ()
    """For network feeds: the (IP version, prefix length) pairs present, longest first."""
    single_labels: bool = False
    """True when an entry is a single label (``corp``): lookups try a host's last label."""
    bucket_bits: int = 0
    """The top bits of the hash that index ``buckets``."""
    buckets: array[int] = field(default_factory=lambda: array("I", [0, 0]), repr=False)
    """Where each bucket of ``keys`` starts (and, last, where the keys end)."""
    from_cache: bool = False
    """True when the table was read from the compiled cache instead of parsed."""

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def errors(self) -> tuple[str, ...]:
        """The first few skipped lines as ``file:line: reason``."""
        return tuple(f"{self.path}:{line}: {reason}" for line, reason in self.skipped_sample)

    def report(self) -> str:
        """One line for people: entries, and skipped lines with the first reason."""
        text = f"{self.list_name}: {len(self):,} entries"
        if self.skipped:
            text += f", {self.skipped:,} bad lines skipped (first: {self.errors[0]})"
        return text

    def find(self, key: bytes, crc: int) -> int | None:
        """The index of ``key`` (whose ``crc32(key) >> 3`` is ``crc``), or None."""
        keys = self.keys
        low = crc * _INDEX_SCALE
        # The bucket of the hash's top bits bounds the binary search to a handful of entries,
        # whatever the size of the table.
        bucket = crc >> (_HASH_BITS - self.bucket_bits)
        buckets = self.buckets
        end = buckets[bucket + 1]
        i = bisect_left(keys, low, buckets[bucket], end)
        n = len(keys)
        if i == end or keys[i] >= low + _INDEX_SCALE:
            return None  # the common case: no entry with this hash
        high = low + _INDEX_SCALE
        offsets = self.offsets
        blob = self.blob
        while i < n:
            packed = keys[i]
            if packed >= high:
                return None
            index = int(packed) & _INDEX_MASK
            if blob[offsets[index] : offsets[index + 1]] == key:
                return index
            i += 1
        return None

    def hit(self, index: int) -> FeedHit:
        """The hit for the entry at ``index``."""
        key = self.blob[self.offsets[index] : self.offsets[index + 1]].decode("utf-8")
        if self.kind == "networks":
            key = _network_text(key)
        return FeedHit(self.list_name, self.path, self.lines[index], key)


@dataclass(frozen=True)
class FeedSet:
    """The feeds of one kind in a policy (``domains.blocked_files``, ...)."""

    tables: tuple[FeedTable, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.tables)

    @property
    def entries(self) -> int:
        """Entries over all tables."""
        return sum(len(t) for t in self.tables)

    def _find(self, key: bytes) -> FeedHit | None:
        crc = zlib.crc32(key) >> _HASH_SHIFT
        for table in self.tables:
            index = table.find(key, crc)
            if index is not None:
                return table.hit(index)
        return None

    @cached_property
    def _prefixes(self) -> dict[int, tuple[tuple[int, int], ...]]:
        """Per IP version, the prefix lengths the tables list, longest first."""
        return {
            version: tuple(
                sorted(
                    {p for t in self.tables for p in t.prefixes if p[0] == version},
                    key=lambda p: -p[1],
                )
            )
            for version in (4, 6)
        }

    @cached_property
    def _single_labels(self) -> bool:
        return any(t.single_labels for t in self.tables)

    def match_domain(self, host: str) -> FeedHit | None:
        """The hit for ``host`` or its closest listed parent (A-label, lower case), or None."""
        tables = self.tables
        if not tables:
            return None
        name = host.rstrip(".").lower().encode("utf-8", "surrogatepass")
        # Parents longer than any listed name cannot match: start at the first one short enough.
        start = 0
        if len(name) > MAX_DOMAIN_LENGTH:
            start = name.find(b".", len(name) - MAX_DOMAIN_LENGTH - 1) + 1
            if start == 0:
                return None
        single = self._single_labels
        crc32 = zlib.crc32
        while True:
            key = name[start:] if start else name
            if not single and b"." not in key:
                return None  # the last parent is one label, and no table lists one
            crc = crc32(key) >> _HASH_SHIFT
            for table in tables:
                index = table.find(key, crc)
                if index is not None:
                    return table.hit(index)
            dot = name.find(b".", start)
            if dot < 0:
                return None
            start = dot + 1

    def match_url(self, href: str) -> FeedHit | None:
        """The hit for a normalised href (its fragment ignored), or None."""
        if not self.tables:
            return None
        return self._find(url_key(href).encode("utf-8", "surrogatepass"))

    def match_address(
        self, address: ipaddress.IPv4Address | ipaddress.IPv6Address
    ) -> FeedHit | None:
        """The hit for the most specific listed network holding ``address``, or None."""
        if not self.tables:
            return None
        bits = 32 if address.version == 4 else 128
        value = int(address)
        for version, length in self._prefixes[address.version]:
            masked = (value >> (bits - length)) << (bits - length) if length else 0
            found = self._find(_network_key(version, masked, length))
            if found is not None:
                return found
        return None


EMPTY = FeedSet()


@dataclass(frozen=True)
class FeedSpec:
    """One feed file as a policy names it."""

    path: str
    """Where to read it (already resolved against the policy file's directory)."""
    list_name: str
    """How findings name it."""
    kind: FeedKind
    format: FeedFormat = "auto"
    column: str | None = None
    on_error: OnError = "error"


def url_key(href: str) -> str:
    """A URL entry's key: the normalised href without its fragment."""
    at = href.find("#")
    return href if at < 0 else href[:at]


def _network_key(version: int, value: int, length: int) -> bytes:
    return b"%d:%x/%d" % (version, value, length)


def _network_text(key: str) -> str:
    version, rest = key.split(":", 1)
    value, length = rest.split("/")
    address = (ipaddress.IPv4Address if version == "4" else ipaddress.IPv6Address)(int(value, 16))
    return f"{address}/{length}"


# --- parsing one entry ---------------------------------------------------------------------


class _BadLine(ValueError):
    """A line that is not a valid entry; the message says why."""


def _domain(text: str) -> str:
    from urlvet.url import normalize_domain

    if "://" in text:
        raise _BadLine(f"{_clip(text)} is a URL, not a domain: list URLs under urls.blocked_files")
    if "*" in text:
        raise _BadLine(
            f"{_clip(text)}: write the domain without '*': a listed domain already matches "
            "itself and every name under it"
        )
    try:
        return normalize_domain(text)
    except ValueError as exc:
        raise _BadLine(str(exc)) from None


def _domain_line(text: str) -> list[str]:
    """The domains a line of a domain list names: plain, hosts-file or Adblock style."""
    stripped = text.strip()
    if not stripped or stripped[0] in "#!" or stripped.lower().startswith("[adblock"):
        return []
    if stripped.startswith("@@"):
        raise _BadLine(f"{_clip(stripped)} is an Adblock exception rule, not a domain to list")
    if stripped.startswith("||"):
        body = stripped[2:].split("#", 1)[0].strip()
        if "$" in body:
            raise _BadLine(
                f"{_clip(stripped)}: Adblock rules with options ($...) are not plain domain rules"
            )
        if not body.endswith("^"):
            raise _BadLine(
                f"{_clip(stripped)}: an Adblock domain rule is written ||domain^ "
                "(rules with paths are not domains)"
            )
        return [_domain(body[:-1])]
    words = stripped.split("#", 1)[0].split()
    if not words:
        return []
    if len(words) > 1:
        try:
            ipaddress.ip_address(words[0].split("%", 1)[0])
        except ValueError:
            raise _BadLine(
                f"{_clip(stripped)}: expected one domain a line, or a hosts-file line "
                "(an address, then names)"
            ) from None
        names = []
        for word in words[1:]:
            if word.lower() in _HOSTS_BOILERPLATE:
                continue
            try:
                ipaddress.ip_address(word)
                continue  # `0.0.0.0 0.0.0.0` in hosts files
            except ValueError:
                pass
            names.append(_domain(word))
        return names
    try:
        ipaddress.ip_address(words[0])
    except ValueError:
        return [_domain(words[0])]
    raise _BadLine(f"{_clip(words[0])} is an IP address: list it under networks.blocked_files")


def _network_line(text: str) -> list[str]:
    value = text.split("#", 1)[0].split(";", 1)[0].strip()
    if not value:
        return []
    if len(value.split()) > 1:
        raise _BadLine(f"{_clip(value)}: expected one network (CIDR) or address a line")
    try:
        net = ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise _BadLine(f"{_clip(value)} is not an IP network in CIDR form") from None
    return [_network_key(net.version, int(net.network_address), net.prefixlen).decode()]


def _url_line(text: str) -> list[str]:
    value = text.strip()
    if not value or value.startswith("#"):
        return []
    if any(c.isspace() for c in value):
        raise _BadLine(f"{_clip(value)}: expected one URL a line")
    try:
        url = parse(value)
    except InvalidURL as exc:
        raise _BadLine(f"{_clip(value)} is not a URL a browser opens: {exc}") from None
    if url.host_kind in (HostKind.EMPTY, HostKind.OPAQUE) and "://" not in value:
        raise _BadLine(f"{_clip(value)} is not a web URL (no scheme://host)")
    return [url_key(url.href)]


_LINE_PARSERS: dict[FeedKind, Callable[[str], list[str]]] = {
    "domains": _domain_line,
    "networks": _network_line,
    "urls": _url_line,
}

_FORMATS_OF: dict[FeedKind, frozenset[str]] = {
    "domains": frozenset({"auto", "domains", "hosts", "adblock", "csv"}),
    "networks": frozenset({"auto", "cidr", "csv"}),
    "urls": frozenset({"auto", "urls", "csv"}),
}


def _clip(text: str, limit: int = 80) -> str:
    return repr(cut(text, limit))


# --- reading a file ------------------------------------------------------------------------


class _Builder:
    """Collects a table's entries (key bytes, line) and its skipped lines."""

    def __init__(self, spec: FeedSpec) -> None:
        self.spec = spec
        self.parts: list[bytes] = []
        self.size = 0
        self.offsets = array("I", [0])
        self.lines = array("I")
        self.crcs = array("I")
        self.skipped = 0
        self.errors: list[tuple[int, str]] = []
        self.prefixes: set[tuple[int, int]] = set()
        self.single_labels = False

    def add(self, keys: list[bytes], lines: Iterable[int]) -> None:
        if not keys:
            return
        self.crcs.extend(map(zlib.crc32, keys))
        self.offsets.pop()  # the previous end: accumulate's initial value gives it back
        self.offsets.extend(accumulate(map(len, keys), initial=self.size))
        part = b"".join(keys)
        self.parts.append(part)
        self.size += len(part)
        self.lines.extend(lines)
        if len(self.lines) > MAX_ENTRIES:
            raise PolicyError(
                f"{self.spec.path}: more than {MAX_ENTRIES:,} entries in one feed file: "
                "split it into several files"
            )

    def note(self, keys: list[str]) -> None:
        """Record what lookups must know of entries read one at a time."""
        if self.spec.kind == "networks":
            for key in keys:
                version, rest = key.split(":", 1)
                self.prefixes.add((int(version), int(rest.rsplit("/", 1)[1])))
        elif self.spec.kind == "domains" and any("." not in k for k in keys):
            self.single_labels = True

    def bad(self, line: int, reason: str) -> None:
        if self.spec.on_error == "error":
            raise PolicyError(f"{self.spec.path}:{line}: {reason}")
        self.skipped += 1
        if len(self.errors) < ERROR_SAMPLE:
            self.errors.append((line, reason))

    def table(self) -> FeedTable:
        n = len(self.lines)
        blob = b"".join(self.parts)
        self.parts.clear()
        # Sorting floats runs in C with a specialised comparison: hash above, index below.
        packed = sorted(
            map(
                add,
                map(mul, map(rshift, self.crcs, repeat(_HASH_SHIFT)), repeat(_INDEX_SCALE)),
                range(n),
            )
        )
        keys = array("d", packed)
        del packed
        bits, buckets = _buckets(keys)
        return FeedTable(
            list_name=self.spec.list_name,
            path=self.spec.path,
            kind=self.spec.kind,
            keys=keys,
            bucket_bits=bits,
            buckets=buckets,
            offsets=self.offsets,
            lines=self.lines,
            blob=blob,
            skipped=self.skipped,
            skipped_sample=tuple(self.errors),
            prefixes=tuple(sorted(self.prefixes, key=lambda p: (p[0], -p[1]))),
            single_labels=self.single_labels,
        )


def _buckets(keys: array[float]) -> tuple[int, array[int]]:
    """About eight entries a bucket: the start of each in the sorted keys, and the end."""
    bits = min(_HASH_BITS, (len(keys) // 8).bit_length())
    shift = _HASH_BITS - bits
    starts = array("I", (bisect_left(keys, (b << shift) * _INDEX_SCALE) for b in range(1 << bits)))
    starts.append(len(keys))
    return bits, starts


def _open(path: str, raw_head: bytes) -> Iterator[bytes]:
    """The file's bytes a chunk at a time, each chunk ending at a line end (gzip read as such)."""
    opener = gzip.open if raw_head[:2] == b"\x1f\x8b" else open
    carry = b""
    try:
        with opener(path, "rb") as f:
            while True:
                block = f.read(CHUNK_BYTES)
                if not block:
                    break
                block = carry + block
                cut = block.rfind(b"\n")
                if cut < 0:
                    carry = block
                    if len(carry) > MAX_LINE_CHARS * 4:
                        # No line is that long: a binary file or a decompression bomb.
                        raise PolicyError(
                            f"{path}: a line longer than {MAX_LINE_CHARS:,} characters: "
                            "this is not a feed of one entry a line"
                        )
                    continue
                carry = block[cut + 1 :]
                yield block[: cut + 1]
    except (OSError, EOFError, zlib.error) as exc:
        raise PolicyError(
            f"{path}: cannot read feed: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    if carry:
        yield carry


def _decode(builder: _Builder, line_no: int, raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        builder.bad(line_no, "the line is not valid UTF-8")
        return None
    if len(text) > MAX_LINE_CHARS:
        builder.bad(line_no, f"the line is longer than {MAX_LINE_CHARS:,} characters")
        return None
    return text.removeprefix("\ufeff") if line_no == 1 else text


def _read_lines(spec: FeedSpec, builder: _Builder, head: bytes) -> None:
    parse_line = _LINE_PARSERS[spec.kind]
    fast = spec.kind == "domains"
    line_no = 0
    for chunk in _open(spec.path, head):
        count = chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
        base = line_no + 1
        line_no += count
        if not chunk.translate(None, _BLANK_BYTES):
            # Blank lines only: a few kilobytes of gzip hold megabytes of them, and reading
            # each as a line of its own cost seconds for nothing.
            continue
        slow: Sequence[int] = _fast_domains(builder, chunk, count, base) if fast else range(count)
        if not slow:
            continue
        raw_lines = chunk.split(b"\n")  # only for the lines the bulk path left
        for i in slow:
            text = _decode(builder, base + i, raw_lines[i])
            if text is None:
                continue
            try:
                keys = parse_line(text)
            except _BadLine as exc:
                builder.bad(base + i, str(exc))
                continue
            builder.note(keys)
            builder.add(
                [k.encode("utf-8", "surrogatepass") for k in keys], repeat(base + i, len(keys))
            )


_BLANK_BYTES = b" \t\r\n\x0b\x0c"
_DOMAIN_BYTES = b"abcdefghijklmnopqrstuvwxyz0123456789-_.\n"
# Both start with a literal, which the regex engine finds with a fast scan: searching a whole
# chunk costs about as much as reading it.
_INNER_LINE_WITHOUT_DOT = re.compile(rb"\n[^.\n]*\n")
_LAST_LABEL_NOT_A_LETTER = re.compile(rb"\.[0-9_-][a-z0-9_-]*(?:\n|\Z)")


def _plain_names(lowered: bytes) -> list[bytes] | None:
    """The lines of a chunk that holds nothing but domains the fast pattern accepts, one a
    line, checked with a few scans of the whole chunk in C; None for any other chunk."""
    body = lowered[:-1] if lowered.endswith(b"\n") else lowered
    if (
        not body
        or body.translate(None, _DOMAIN_BYTES)
        or b".." in body
        or b"\n." in body
        or b".\n" in body
        or body[:1] == b"."
        or body[-1:] == b"."
        or b"xn--" in body
        or b"." not in body[: body.find(b"\n")]  # the first line (or the only one)
        or b"." not in body[body.rfind(b"\n") + 1 :]  # the last line
        or _INNER_LINE_WITHOUT_DOT.search(body)  # also finds empty lines
        or _LAST_LABEL_NOT_A_LETTER.search(body)
    ):
        return None
    names = body.split(b"\n")
    return names if max(map(len, names)) <= MAX_DOMAIN_LENGTH else None


def _fast_domains(builder: _Builder, chunk: bytes, count: int, base: int) -> list[int]:
    """Take the ordinary lines of a domain list in bulk; return the indexes of the others."""
    lowered = chunk.lower()
    plain = _plain_names(lowered)
    if plain is not None and len(plain) == count:
        builder.add(plain, range(base, base + count))
        return []
    lines = lowered.split(b"\n")
    matches = list(map(_FAST_DOMAIN_LINE.fullmatch, lines[:count]))
    slow = [i for i, m in enumerate(matches) if m is None] if None in matches else []
    keys = [m[m.lastindex] for m in matches if m is not None and m.lastindex]
    numbers = [base + i for i, m in enumerate(matches) if m is not None and m.lastindex]
    if keys and (b"xn--" in lowered or max(map(len, keys)) > MAX_DOMAIN_LENGTH):
        # A-labels need IDNA validation, and over-long names an error: the full parser.
        keep = [j for j, k in enumerate(keys) if b"xn--" not in k and len(k) <= MAX_DOMAIN_LENGTH]
        if len(keep) != len(keys):
            kept = set(keep)
            slow.extend(numbers[j] - base for j in range(len(keys)) if j not in kept)
            slow.sort()
            keys = [keys[j] for j in keep]
            numbers = [numbers[j] for j in keep]
    builder.add(keys, numbers)
    return slow


def _read_csv(spec: FeedSpec, builder: _Builder, head: bytes) -> None:
    if not spec.column:
        raise PolicyError(f"{spec.path}: a CSV feed needs `column:` naming the column to read")
    pending: list[tuple[int, str]] = []

    def texts() -> Iterator[str]:
        no = 0
        for chunk in _open(spec.path, head):
            for raw in chunk.split(b"\n"):
                no += 1
                text = _decode(builder, no, raw.rstrip(b"\r"))
                pending.append((no, text or ""))
                yield text or ""

    reader = csv.reader(texts())
    try:
        _read_csv_rows(spec, builder, reader, pending)
    except csv.Error as exc:
        # A quoted field over the csv module's limit (128 KiB), or text it cannot read as
        # CSV: nothing after it can be trusted to be the rows the file means.
        raise PolicyError(
            f"{spec.path}:{reader.line_num}: not readable as CSV ({exc}): no feed entry is that "
            "long; check the file's quoting"
        ) from None


def _read_csv_rows(
    spec: FeedSpec, builder: _Builder, reader: CsvReader, pending: list[tuple[int, str]]
) -> None:
    assert spec.column is not None
    parse_line = _LINE_PARSERS[spec.kind]
    wanted = spec.column.strip().lower()
    last_comment: str | None = None
    column: int | None = None
    for row in reader:
        no = reader.line_num
        first = pending[0][1] if pending else ""
        pending.clear()
        if not row or not "".join(row).strip():
            continue
        if row[0].lstrip().startswith("#"):
            last_comment = first.lstrip()[1:]
            continue
        if column is None:
            header = [c.strip().lower() for c in row]
            if wanted in header:
                column = header.index(wanted)
                continue
            # URLhaus writes its header as a comment line just above the data.
            commented = (
                [c.strip().lower() for c in next(csv.reader([last_comment]))]
                if last_comment
                else []
            )
            if wanted not in commented:
                raise PolicyError(
                    f"{spec.path}:{no}: no column named {spec.column!r} in the CSV header "
                    f"({', '.join(header[:12])})"
                )
            column = commented.index(wanted)
        if column >= len(row):
            builder.bad(no, f"the row has no column {spec.column!r}")
            continue
        try:
            keys = parse_line(row[column])
        except _BadLine as exc:
            builder.bad(no, str(exc))
            continue
        builder.note(keys)
        builder.add([k.encode("utf-8", "surrogatepass") for k in keys], repeat(no, len(keys)))


def _content_digest(path: str) -> tuple[str, bytes]:
    try:
        with open(path, "rb") as f:
            head = f.read(2)
            f.seek(0)
            digest = hashlib.file_digest(f, "blake2b").hexdigest()
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read feed: {exc.strerror or exc}") from None
    return digest, head


# --- the compiled cache ----------------------------------------------------------------------


def cache_dir() -> Path | None:
    """Where compiled feeds are cached: ``$URLVET_CACHE_DIR``, else ``$XDG_CACHE_HOME/urlvet``,
    else ``~/.cache/urlvet``; None when ``URLVET_CACHE_DIR`` is set empty (no cache)."""
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return Path(configured) / "feeds" if configured.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "urlvet" / "feeds"


def _cache_key(spec: FeedSpec, content: str) -> str:
    parts = [str(CACHE_VERSION), spec.kind, spec.format, spec.column or "", spec.on_error, content]
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=20).hexdigest()


def _read_cache(where: Path, spec: FeedSpec) -> FeedTable | None:
    # Anything wrong with a cache file (truncated, corrupted, another version) means: rebuild.
    try:
        with open(where, "rb") as f:
            if f.read(len(_MAGIC)) != _MAGIC:
                return None
            header_len = int.from_bytes(f.read(4), "big")
            if not 0 < header_len < 1 << 20:
                return None
            header_bytes = f.read(header_len)
            header = json.loads(header_bytes)
            n = int(header["entries"])
            blob_len = int(header["blob"])
            bits = int(header["bucket_bits"])
            if not 0 <= bits <= _HASH_BITS:
                return None
            keys = array("d")
            offsets = array("I")
            lines = array("I")
            buckets = array("I")
            keys.fromfile(f, n)
            offsets.fromfile(f, n + 1)
            lines.fromfile(f, n)
            buckets.fromfile(f, (1 << bits) + 1)
            blob = f.read(blob_len)
            digest = f.read(32)
            if len(blob) != blob_len or f.read(1):
                return None
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return None
    check = hashlib.blake2b(header_bytes, digest_size=32)
    for part in (keys, offsets, lines, buckets):
        check.update(memoryview(part).cast("B"))
    check.update(blob)
    if check.digest() != digest or header.get("byteorder") != _byteorder():
        return None
    return FeedTable(
        list_name=spec.list_name,
        path=spec.path,
        kind=spec.kind,
        keys=keys,
        offsets=offsets,
        lines=lines,
        blob=blob,
        skipped=int(header["skipped"]),
        skipped_sample=tuple((int(line), str(reason)) for line, reason in header["errors"]),
        prefixes=tuple((int(v), int(p)) for v, p in header["prefixes"]),
        single_labels=bool(header["single_labels"]),
        bucket_bits=bits,
        buckets=buckets,
        from_cache=True,
    )


def _byteorder() -> str:
    import sys

    return sys.byteorder


def _write_cache(where: Path, table: FeedTable) -> None:
    header_bytes = json.dumps(
        {
            "entries": len(table.keys),
            "blob": len(table.blob),
            "skipped": table.skipped,
            "errors": [list(e) for e in table.skipped_sample],
            "prefixes": [list(p) for p in table.prefixes],
            "single_labels": table.single_labels,
            "bucket_bits": table.bucket_bits,
            "byteorder": _byteorder(),
        }
    ).encode()
    check = hashlib.blake2b(header_bytes, digest_size=32)
    for part in (table.keys, table.offsets, table.lines, table.buckets):
        check.update(memoryview(part).cast("B"))
    check.update(table.blob)
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where.parent, prefix=".tmp-", suffix=".feed")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_MAGIC)
                f.write(len(header_bytes).to_bytes(4, "big"))
                f.write(header_bytes)
                table.keys.tofile(f)
                table.offsets.tofile(f)
                table.lines.tofile(f)
                table.buckets.tofile(f)
                f.write(table.blob)
                f.write(check.digest())
            os.replace(tmp, where)  # atomic: readers see the old file or the whole new one
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return  # a cache that cannot be written only costs the next start time
    _prune(where.parent)


def _prune(directory: Path) -> None:
    """Delete compiled feeds unused for CACHE_KEEP_DAYS (a feed refreshed daily leaves one
    behind a day). Reading a cached feed marks it used."""
    cutoff = time.time() - CACHE_KEEP_DAYS * 86400
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if not entry.name.endswith(".feed"):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
        except OSError:
            continue  # another process pruned it, or it is not ours to delete


# --- loading -------------------------------------------------------------------------------


def load_feed(spec: FeedSpec, cache: Path | None = None, use_cache: bool = True) -> FeedTable:
    """Read and validate one feed file (or its compiled copy). Raises PolicyError."""
    if spec.format not in _FORMATS_OF[spec.kind]:
        allowed = ", ".join(sorted(_FORMATS_OF[spec.kind]))
        raise PolicyError(
            f"{spec.path}: format {spec.format!r} is not one for {spec.kind} feeds ({allowed})"
        )
    if not os.path.isfile(spec.path):
        raise PolicyError(f"{spec.path}: no such feed file")
    content, head = _content_digest(spec.path)
    where = None
    if use_cache:
        base = cache if cache is not None else cache_dir()
        if base is not None:
            where = base / f"{_cache_key(spec, content)}.feed"
            cached = _read_cache(where, spec)
            if cached is not None:
                with contextlib.suppress(OSError):
                    os.utime(where)  # used: keep it from pruning
                return cached
    builder = _Builder(spec)
    is_csv = spec.format == "csv" or (
        spec.format == "auto" and spec.path.lower().removesuffix(".gz").endswith(".csv")
    )
    if is_csv:
        _read_csv(spec, builder, head)
    else:
        _read_lines(spec, builder, head)
    table = builder.table()
    if where is not None:
        _write_cache(where, table)
    return table


def load_feeds(specs: Iterable[FeedSpec], cache: Path | None = None) -> FeedSet:
    """Load the feeds of one kind into a set. Raises PolicyError."""
    return FeedSet(tuple(load_feed(s, cache) for s in specs))


__all__ = [
    "EMPTY",
    "FeedHit",
    "FeedSet",
    "FeedSpec",
    "FeedTable",
    "cache_dir",
    "load_feed",
    "load_feeds",
    "url_key",
]
