"""The Public Suffix List lookup behind registrable domains, on tldextract's bundled snapshot.

tldextract ships a snapshot of the Public Suffix List and defines the semantics urlvet follows
(private section included; a name under an unknown top-level domain has no registrable domain).
Importing tldextract itself costs about 0.3 s (it pulls in ``requests``) and builds its trie on
first use, which would dominate a cold ``urlvet check``; so this module reads the same snapshot
file directly, without importing tldextract, and matches rules with plain set lookups. The test
suite checks that the answers equal tldextract's own. Nothing is fetched and nothing written.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ada_url import idna_to_unicode

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


def snapshot_path() -> Path:
    """Where tldextract's bundled suffix-list snapshot lives (found without importing it)."""
    spec = importlib.util.find_spec("tldextract")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("tldextract is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / ".tld_set_snapshot"


def parse_rules(text: str) -> SuffixRules:
    """Parse suffix-list text the way tldextract does (first token of each rule line)."""
    normal: set[str] = set()
    wildcard: set[str] = set()
    exception: set[str] = set()
    private: set[str] = set()
    public_text, _, private_text = text.partition(_PRIVATE_MARK)
    for section, is_private in ((public_text, False), (private_text, True)):
        for line in section.splitlines():
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
                private.add(key)
    max_labels = max((k.count(".") + 1 for k in normal | wildcard | exception), default=1)
    return SuffixRules(
        frozenset(normal),
        frozenset(wildcard),
        frozenset(exception),
        frozenset(private),
        max_labels,
    )


@cache
def rules() -> SuffixRules:
    """The rules from the snapshot, read once on first use (never at import)."""
    return parse_rules(snapshot_path().read_text(encoding="utf-8"))


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
