"""The screen of plain hosts: which ordinary ASCII names no technique can match, an early exit
from the analysis for most hosts of a log."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from urlvet import confusables
from urlvet.lookalike.brand_words import _WORD, MAX_BRAND_LABELS, _is_spelt_differently, _Spelling
from urlvet.lookalike.spelling import _HEAVY_CHARS, _HEAVY_PAIRS, _TOKEN, _quick_fold, fold
from urlvet.lookalike.targets import _each, _label_of, _Tables
from urlvet.lookalike.techniques import MAX_SPLIT_PIECES
from urlvet.lookalike.words import (
    COMMON_WORD_BRANDS,
    MIN_COMBO_BRAND_LENGTH,
    MIN_COMBO_TOKEN_BRAND_LENGTH,
    MIN_EDIT_DISTANCE_LENGTH,
    MIN_FOLD_MATCH_LENGTH,
)
from urlvet.memo import memo_size

SCREEN_GRAM = MIN_COMBO_BRAND_LENGTH
"""How much of a brand the screen looks for inside a label before looking for the brand: the
shortest brand looked for there."""
SCREEN_LABELS_KEPT = 4096
"""Labels left of a registrable domain (www, api, mail...) whose facts a screen keeps: the
same few lead most hosts of a log."""

_LDH_HOST = re.compile(r"[a-z0-9.-]+")
_LDH_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"


def _any_of(words: Iterable[str]) -> str:
    """A regular expression that finds any of ``words`` in a text, written as their trie: at
    each position the engine follows the one branch of the character there, where an
    alternation of the words tried each word in turn (a screened label paid that on every
    letter). Only whether a word is found is read, so a word that another one starts with
    stands for both."""
    trie: _Trie = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}
    return _trie_pattern(trie)


_Trie = dict[str, "_Trie"]


def _trie_pattern(node: _Trie) -> str:
    if "" in node:
        return ""  # a word ends here: found, whatever follows
    branches = [re.escape(ch) + _trie_pattern(child) for ch, child in sorted(node.items())]
    return branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"


class _Screen:
    """Which hosts no technique can match: an early exit from the analysis for the ordinary
    names that are most of a log.

    A screened host is an ASCII name (lower case letters, digits, dots and hyphens, no
    ``xn--`` label) in which none of the look-ups the techniques start from finds a protected
    domain, asked without a server's domain. Every test here is a condition a technique needs
    before it can report anything (a key it looks up, a brand it compares, the second signal
    a brand label needs), read on the strings the technique reads: for such a name each
    skeleton is one ``translate`` of it (:func:`urlvet.confusables.skeletons`), which keeps its
    dots and hyphens where they are, and the spelling fold is :func:`_quick_fold`. Any doubt
    sends the host to the full analysis, so the screen only decides that there is nothing to
    find; a test compares it with the full analysis on the corpora.
    """

    __slots__ = (
        "_brand_starts",
        "_deletion_heads",
        "_deletion_tails",
        "_embedding_starts",
        "_inside_brands",
        "_keyword",
        "_longest_glued_part",
        "_skeleton",
        "_usable",
        "label_facts",
        "tables",
    )

    def __init__(self, tables: _Tables) -> None:
        self.tables = tables
        table = confusables.ascii_skeleton_table()
        self._skeleton = table
        # The host's skeleton split at dots and hyphens must be its labels' and tokens'
        # skeletons: separators kept, no character mapped to one or to nothing.
        self._usable = all(c.translate(table) == c for c in ".-") and all(
            c.translate(table) and not set(c.translate(table)) & {".", "-"} for c in _LDH_CHARS
        )
        # A query is one deletion away from a key of length m only if it shares the key's
        # first m // 2 characters or its rest (see _far_from_every_fold).
        heads: set[tuple[int, str]] = set()
        tails: set[tuple[int, str]] = set()
        for key in tables.by_fold_deletion:
            half = len(key) // 2
            heads.add((len(key), key[:half]))
            tails.add((len(key), key[half:]))
        self._deletion_heads = frozenset(heads)
        self._deletion_tails = frozenset(tails)
        self._embedding_starts = frozenset(tables.by_nosep).union(tables.by_label_skeleton)
        keywords = tables.keywords
        self._keyword = re.compile(_any_of(keywords)) if keywords else None
        lengths = frozenset(tables.brand_fold_lengths)
        self._inside_brands = frozenset(
            key
            for key, bucket in tables.brand_folds.items()
            if len(key) in lengths and any(t.label not in COMMON_WORD_BRANDS for t in _each(bucket))
        )
        self._brand_starts = frozenset(b[:SCREEN_GRAM] for b in self._inside_brands)
        # A token glued of a keyword and a brand splits where each part is one of them.
        self._longest_glued_part = max(
            (len(k) for k in (*tables.keywords, *tables.brand_folds)), default=0
        )
        self.label_facts = lru_cache(maxsize=memo_size(SCREEN_LABELS_KEPT))(self._label_facts)

    def screened_out(
        self, host: str, host_unicode: str, registrable: str | None, suffix: str | None
    ) -> bool:
        """True when no technique can find a match for ``host`` (asked without a server's
        domain); False when one may, and for any host that is not an ordinary ASCII name."""
        if (
            not self._usable
            or host != host_unicode
            or "xn--" in host
            or not _LDH_HOST.fullmatch(host)
        ):
            return False
        tables = self.tables
        skeleton = host.translate(self._skeleton)
        # Homoglyph: the skeleton of the host's last labels, two or more (the slices after
        # its last dots, as the labels joined again would read).
        by_skeleton = tables.by_skeleton
        dot = skeleton.rfind(".")
        for _ in range(tables.max_skeleton_labels - 1):
            if dot < 0:
                break
            dot = skeleton.rfind(".", 0, dot)
            if skeleton[dot + 1 :] in by_skeleton:
                return False
        # Embedding: the skeleton's tokens. Its pieces between separators, empty ones
        # included, hold every token, and no table key is empty: when none is a key's first
        # token, nothing starts there (most hosts), without the tokens themselves.
        pieces = skeleton.replace("-", ".").split(".")
        if not self._embedding_starts.isdisjoint(pieces) and not self._no_embedding(
            _TOKEN.findall(skeleton)
        ):
            return False
        if registrable is None or suffix is None:
            return True  # the other techniques read the label before the public suffix
        label = _label_of(registrable, suffix)
        if host != registrable and not host.endswith("." + registrable):
            return False
        if label in tables.by_label:
            return False  # the same name under another suffix
        in_suffix = suffix.count(".") + 1
        labels = skeleton.split(".")
        before = labels[: len(labels) - in_suffix]
        # Near miss and www glued: the label's folds.
        label_skeleton = before[-1]
        light = label_skeleton.lower().replace("rn", "m")  # fold(), light and heavy
        heavy = light
        for pair, single in _HEAVY_PAIRS:
            heavy = heavy.replace(pair, single)
        heavy = heavy.translate(_HEAVY_CHARS)
        for query in (light,) if light == heavy else (light, heavy):
            if query.startswith("www") or not self._far_from_every_fold(query):
                return False
        # Split by dots: the last labels before the suffix, joined and folded.
        by_fold_deletion = tables.by_fold_deletion
        for k in range(2, min(MAX_SPLIT_PIECES, len(before)) + 1):
            pieces = before[-k:]
            if not all(pieces):
                break
            joined = "".join(pieces)
            if len(joined) >= MIN_EDIT_DISTANCE_LENGTH and fold(joined) in by_fold_deletion:
                return False
        folded = _quick_fold(label)
        return self._no_combo(folded) and (
            host == registrable or self._no_brand_label(host, in_suffix + 1, folded)
        )

    def _no_embedding(self, tokens: list[str]) -> bool:
        """No token (skeleton) starts a protected domain spelt out (:func:`_embedded`)."""
        n = len(tokens)
        if n < 2 or self._embedding_starts.isdisjoint(tokens):
            return True
        by_label_skeleton = self.tables.by_label_skeleton
        by_nosep = self.tables.by_nosep
        for i, sk in enumerate(tokens):
            if sk in by_nosep:
                return False
            for t in _each(by_label_skeleton.get(sk)):
                spelt = t.spelt_skeletons
                if i + len(spelt) <= n and all(
                    spelt[j] == tokens[i + j] for j in range(1, len(spelt))
                ):
                    return False
        return True

    def _far_from_every_fold(self, query: str) -> bool:
        """No key of the near-miss table is ``query`` or one of its deletions (the keys
        :func:`_near_miss` looks up)."""
        tables = self.tables
        size = len(query)
        if size < MIN_FOLD_MATCH_LENGTH or size > tables.max_fold_length + 1:
            return True
        if query in tables.by_fold_deletion:
            return False
        if size < MIN_EDIT_DISTANCE_LENGTH:
            return True
        # A deletion at i keeps the query's first i characters and shifts the rest: a key of
        # length m equal to one keeps either its first m // 2 characters or the rest.
        m = size - 1
        half = m // 2
        # Only the deletions whose key may share the query's head, or its tail, are looked up.
        heads = (m, query[:half]) in self._deletion_heads
        tails = (m, query[half + 1 :]) in self._deletion_tails
        if not heads and not tails:
            return True
        by_fold_deletion = tables.by_fold_deletion
        return not any(
            query[:i] + query[i + 1 :] in by_fold_deletion
            for i in range(0 if tails else half, size if heads else half)
        )

    def _holds_keyword(self, text: str) -> bool:
        return self._keyword is not None and self._keyword.search(text) is not None

    def _glued_to_keyword(self, token: str) -> bool:
        """Whether ``token`` is a keyword glued to a brand, either way round (``appleid``)."""
        brand_folds = self.tables.brand_folds
        keywords = self.tables.keywords
        # Only the splits where both parts may be listed: every other split of a long token
        # cost a copy of it, its length squared in all.
        longest = self._longest_glued_part
        size = len(token)
        for p in range(max(1, size - longest), min(size, longest + 1)):
            head, rest = token[:p], token[p:]
            if (head in keywords and rest in brand_folds) or (
                rest in keywords and head in brand_folds
            ):
                return True
        return False

    def _no_combo(self, text: str) -> bool:
        """:func:`_combo` finds no brand in the registrable label ``text`` (its spelling
        folded): none as a hyphen-separated word of it; and, when it holds a keyword, none
        glued to a keyword or inside it."""
        brand_folds = self.tables.brand_folds
        # With a hyphen in the label, no word of it is the whole label.
        tokens = _WORD.findall(text) if "-" in text else [text]
        if "-" in text and any(token in brand_folds for token in tokens):
            return False
        if not self._holds_keyword(text):
            return True
        if any(self._glued_to_keyword(token) for token in tokens):
            return False
        starts = self._brand_starts
        inside = self._inside_brands
        lengths = self.tables.brand_fold_lengths
        n = len(text)
        for i in range(n - SCREEN_GRAM + 1):
            if text[i : i + SCREEN_GRAM] in starts and any(
                text[i : i + size] in inside for size in lengths if i + size <= n and size < n
            ):
                return False
        return True

    def _no_brand_label(self, host: str, in_site: int, folded_label: str) -> bool:
        """:func:`_brand_labels` finds nothing: no label left of the registrable domain holds
        a brand with a second signal (glued to a keyword, spelt to deceive, or a keyword
        word elsewhere in the name)."""
        parts = host.split(".")
        facts = []
        needing: set[str] = set()
        for sub in parts[: len(parts) - in_site][:MAX_BRAND_LABELS]:
            if not sub:
                continue
            found = self.label_facts(sub)
            if found is None:
                return False
            facts.append(found)
            needing.update(found[0])
        if not needing:
            return True
        keywords = self.tables.keywords
        words = {w for w in folded_label.split("-") if w in keywords}
        words.update(w for _brands, own in facts for w in own)
        return not any(words - {key} for key in needing)

    def _label_facts(self, label: str) -> tuple[frozenset[str], frozenset[str]] | None:
        """What a label left of the registrable domain brings to :func:`_brand_labels`: None
        when it holds a brand that needs nothing more (glued to a keyword, or spelt unlike
        the brand); else the brands it holds, which need a keyword word elsewhere in the
        name, and its own keyword words."""
        tables = self.tables
        sp = _Spelling(label, None)
        text = sp.folded
        brands: set[str] = set()
        for a, b in [(0, len(text)), *sp.tokens()]:
            key = text[a:b]
            if self._glued_to_keyword(key):
                return None
            if len(key) < MIN_COMBO_TOKEN_BRAND_LENGTH or key in tables.keywords:
                continue
            bucket = tables.brand_folds.get(key)
            if bucket is None:
                continue
            spelt = sp.original(a, b)
            if any(_is_spelt_differently(spelt, t) for t in _each(bucket)):
                return None
            brands.add(key)
        words = frozenset(w for w in text.split("-") if w in tables.keywords)
        return frozenset(brands), words
