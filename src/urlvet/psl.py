"""The Public Suffix List lookup behind registrable domains, on tldextract's bundled snapshot.

tldextract ships a snapshot of the Public Suffix List and defines the semantics urlvet follows
(private section included; a name under an unknown top-level domain has no registrable domain).
The rules come from tldextract's public API, offline: ``TLDExtract(suffix_list_urls=(),
cache_dir=None)`` reads its bundled snapshot, fetches nothing and writes nothing, and its
``tlds`` with and without ``include_psl_private_domains`` tell the private section apart.
Importing tldextract costs about 0.4 s (it pulls in ``requests``), which would dominate a cold
``urlvet check``; so the rules are kept in urlvet's cache directory, keyed by the installed
tldextract (its path, size and modification time), and tldextract is imported only when that
key changes or the cache cannot be read. Matching is plain set look-ups here. The test suite
checks that the answers equal tldextract's own. Nothing is fetched.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ada_url import idna_to_unicode

CACHE_ENV = "URLVET_CACHE_DIR"
"""The cache root (shared with the compiled feeds); set empty, nothing is cached."""
_CACHE_FORMAT = "urlvet suffix rules 1"
_PRIVATE_MARK = "// ===BEGIN PRIVATE DOMAINS==="


@dataclass(frozen=True, slots=True)
class SuffixRules:
    """The rules of the list: normal, wildcard (``*.ck``) and exception (``!www.ck``)."""

    normal: frozenset[str]
    wildcard: frozenset[str]
    """The part after ``*.``."""
    exception: frozenset[str]
    """The part after ``!``."""
    private: frozenset[str]
    """Every rule (in the forms above) from the private section."""
    max_labels: int = 0
    """The most labels in any rule's stored form: no longer tail of a host can match one."""


def build_rules(public: Iterable[str], private: Iterable[str]) -> SuffixRules:
    """The rules from the list's public (ICANN) and private sections, one rule a string."""
    normal: set[str] = set()
    wildcard: set[str] = set()
    exception: set[str] = set()
    private_keys: set[str] = set()
    for section, is_private in ((public, False), (private, True)):
        for line in section:
            rule = line.strip().split(" ", 1)[0].lower()
            if not rule or rule.startswith("//"):
                continue
            if rule.startswith("!"):
                key = rule[1:]
                exception.add(key)
            elif rule.startswith("*."):
                key = rule[2:]
                wildcard.add(key)
            else:
                key = rule
                normal.add(key)
            if is_private:
                private_keys.add(key)
    max_labels = max((k.count(".") + 1 for k in normal | wildcard | exception), default=1)
    return SuffixRules(
        frozenset(normal),
        frozenset(wildcard),
        frozenset(exception),
        frozenset(private_keys),
        max_labels,
    )


def parse_rules(text: str) -> SuffixRules:
    """Parse suffix-list text (the PSL file's format) the way tldextract does."""
    public_text, _, private_text = text.partition(_PRIVATE_MARK)
    return build_rules(public_text.splitlines(), private_text.splitlines())


def tldextract_rules() -> tuple[list[str], list[str]]:
    """(public rules, private rules) from tldextract's public API, on its bundled snapshot.

    Imports tldextract (about 0.4 s): :func:`rules` calls it only when its cache is missing
    or stale.
    """
    import tldextract

    def listed(include_private: bool) -> list[str]:
        extract = tldextract.TLDExtract(
            suffix_list_urls=(), cache_dir=None, include_psl_private_domains=include_private
        )
        return list(extract.tlds)

    public = listed(False)
    in_public = set(public)
    return public, [rule for rule in listed(True) if rule not in in_public]


@cache
def rules() -> SuffixRules:
    """The rules, read once on first use (never at import): from the cache, else tldextract."""
    source = _source_key()
    where = _cache_file(source)
    if where is not None:
        cached = _read_cache(where, source)
        if cached is not None:
            return build_rules(*cached)
    public, private = tldextract_rules()
    if where is not None:
        _write_cache(where, source, public, private)
    return build_rules(public, private)


def _source_key() -> str:
    """What names the installed tldextract: its path, size and modification time (an upgrade
    rewrites the file), found without importing it."""
    spec = importlib.util.find_spec("tldextract")
    if spec is None or spec.origin is None:
        raise RuntimeError("tldextract is not installed: pip install tldextract")
    stat = os.stat(spec.origin)
    return f"{spec.origin}|{stat.st_size}|{stat.st_mtime_ns}"


def _cache_file(source: str) -> Path | None:
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        if not configured.strip():
            return None
        root = Path(configured)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = Path(base) / "urlvet"
    digest = hashlib.blake2b(source.encode(), digest_size=10).hexdigest()
    return root / "psl" / f"rules-{digest}.txt"


def _read_cache(where: Path, source: str) -> tuple[list[str], list[str]] | None:
    # Anything unexpected (missing, truncated, another format or source) means: rebuild.
    try:
        text = where.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    header, _, body = text.partition("\n")
    public_text, mark, private_text = body.partition(_PRIVATE_MARK + "\n")
    if header != f"{_CACHE_FORMAT} {source}" or not mark or not text.endswith("\n"):
        return None
    return public_text.splitlines(), private_text.splitlines()


def _write_cache(where: Path, source: str, public: list[str], private: list[str]) -> None:
    text = "\n".join([f"{_CACHE_FORMAT} {source}", *public, _PRIVATE_MARK, *private]) + "\n"
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        # Written beside and renamed: a reader never sees half a file.
        fd, tmp = tempfile.mkstemp(dir=where.parent, prefix=".rules-", suffix=".tmp")
    except OSError:
        return  # a read-only cache only costs the next run tldextract's import
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, where)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


def split(host: str) -> tuple[str, str, bool]:
    """(registrable domain, public suffix, suffix is private) for an A-label or Unicode host.

    Empty strings where there is none: an unknown top-level domain, or a host that is itself
    a public suffix. The answers are in the host's own spelling (A-labels stay A-labels).
    """
    name = host.rstrip(".").lower()
    if not name:
        return "", "", False
    labels = name.split(".")
    r = rules()
    n = len(labels)
    # A public suffix spans at most max_labels + 1 labels (a wildcard rule adds one) and the
    # registrable domain one more: the labels before those cannot change the answer. Dropping
    # them keeps a host of 100,000 labels linear instead of building every one of its tails.
    skip = n - r.max_labels - 2
    if skip > 0:
        return split(".".join(labels[skip:]))
    # The host from each label on, in its own spelling ("a.b.c", "b.c", "c"): slices after each
    # dot, cheaper than joins (every parsed URL comes here).
    tails = [name]
    dot = name.find(".")
    while dot >= 0:
        tails.append(name[dot + 1 :])
        dot = name.find(".", dot + 1)
    if "xn--" in name:
        decoded = [_decode(label) for label in labels]
        candidates = [".".join(decoded[i:]) for i in range(len(labels))]
    else:
        candidates = tails
    suffix_start = n  # index of the first label of the public suffix; n means none
    private = False
    for i, candidate in enumerate(candidates):
        if candidate in r.exception:
            suffix_start, private = i + 1, candidate in r.private
            break
        if candidate in r.normal:
            suffix_start, private = i, candidate in r.private
            break
        if i > 0 and candidate in r.wildcard:
            suffix_start, private = i - 1, candidate in r.private
            break
    if suffix_start >= n:
        return "", "", False
    if suffix_start == 0:
        return "", tails[0], private
    return tails[suffix_start - 1], tails[suffix_start], private


@cache
def _top_level_domains() -> frozenset[str]:
    r = rules()
    return frozenset(k.rsplit(".", 1)[-1] for k in r.normal | r.wildcard | r.exception)


def is_known_tld(label: str) -> bool:
    """Whether ``label`` (A-label or Unicode, any case) is a top-level domain on the list."""
    name = label.lower()
    if name.startswith("xn--"):
        name = _decode(name)
    return name in _top_level_domains()


def _decode(label: str) -> str:
    if not label.startswith("xn--"):
        return label
    try:
        return str(idna_to_unicode(label)).lower()
    except (ValueError, UnicodeError):
        return label
