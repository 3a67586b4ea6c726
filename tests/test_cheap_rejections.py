"""Cheap rejections against the work they spare: each answers as the full computation does.

A rule that reads every host's words first asks a cheap question that rules most words out
(how a word begins and ends, its halves); these tests hold each cheap question to the full
computation it stands in front of, word by word, on the words of every host of the shared
corpora (Chromium's lookalike and IDN tables, dnstwist's permutations, Chromium's popular
domains), on lookalikes of every protected domain and brand name built here, and on
ordinary names.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

import pytest

from support.corpora import CORPORA, LOOKALIKE_CORPUS_FILES, load, strings_in
from urlvet import Vetter
from urlvet.brands import (
    _WORD_SPLIT,
    BrandNames,
    _glued,
    brand_names,
    parse_brand_names,
    words_of,
)
from urlvet.checks.addresses import may_be_under
from urlvet.checks.base import host_matches, shortest_parent_in
from urlvet.lookalike import DEFAULT_KEYWORDS, default_index, default_protected_domains
from urlvet.lookalike.screen import _any_of
from urlvet.lookalike.spelling import _SPELLING_CHARS, ascii_translation
from urlvet.policy import load_policy
from urlvet.steps import StepIndex, _deletions, fold_letters, fold_pairs

_WORD = re.compile(r"[a-z0-9]+")


def _spellings(name: str) -> Iterator[str]:
    """``name`` and spellings of it the rules look for, and glued to lure words."""
    yield name
    yield name.replace("o", "0").replace("l", "1").replace("i", "1")
    yield name.replace("m", "rn").replace("w", "vv").replace("d", "cl")
    yield name.replace("m", "nn") + "s"
    yield name[1:]
    yield name[:2] + name[3:]
    yield name[:1] + name[2:3] + name[1:2] + name[3:]
    for lure in ("login", "secure", "id", "portal", "verify"):
        yield f"{name}{lure}"
        yield f"{lure}{name}"


@cache
def _words() -> tuple[str, ...]:
    """The lower-case words of the corpora's strings, of the protected domains' and brand
    names' lookalikes, and of ordinary names."""
    found: dict[str, None] = {}
    for name in LOOKALIKE_CORPUS_FILES:
        for text in strings_in(load(name)):
            found.update(dict.fromkeys(_WORD.findall(text.lower())))
    names = brand_names()
    brands = [d.split(".")[0] for d in default_protected_domains()]
    for name in [*brands, *names.names, *names.short, *names.lures]:
        for spelt in _spellings(name):
            found.update(dict.fromkeys(_WORD.findall(spelt)))
    for word in ("acme", "north", "cloud", "harbor", "summit", "www", "api", "cdn"):
        for number in ("", "7", "1234", "65536"):
            found[f"{word}{number}"] = None
    return tuple(found)


def test_the_words_are_enough_of_every_kind() -> None:
    words = _words()
    assert len(words) > 15_000
    assert sum(1 for w in words if STEPS.match(w) is not None) > 200
    assert sum(1 for w in words if _glued(w, brand_names()) is not None) > 200


STEPS = StepIndex(
    [d.split(".")[0] for d in default_protected_domains()] + sorted(brand_names().names)
)


def test_step_keys_are_those_of_every_deletion() -> None:
    keys = STEPS._keys
    wrong = []
    for word in _words():
        if len(word) < 2:
            continue
        for folded in {fold_letters(word), fold_pairs(word)}:
            every = {k for k in {folded} | _deletions(folded) if k in keys}
            if set(STEPS._keys_of(folded)) != every:
                wrong.append(folded)
    assert wrong == []


def _glued_by_every_cut(word: str, table: BrandNames) -> tuple[str, str] | None:
    """:func:`urlvet.brands._glued` trying every cut, as before its ends were read first."""
    for names in (table.names, table.short):
        for cut in range(3, len(word) - 1):
            head, tail = word[:cut], word[cut:]
            if head in names and tail in table.lures:
                return head, tail
            if tail in names and head in table.lures:
                return tail, head
    return None


@pytest.mark.parametrize(
    "table",
    [
        pytest.param(brand_names(), id="shipped"),
        # Names and lures as short as the cuts allow.
        pytest.param(
            parse_brand_names(
                "acme | acme.com | abc acme1 | src\nlure | | go ok xyz | src\n", ("id", "x")
            ),
            id="short-words",
        ),
    ],
)
def test_glued_names_are_those_of_every_cut(table: BrandNames) -> None:
    words = [*_words(), "abcgo", "okacme1", "xyzabc", "abcid", "acme1ok"]
    wrong = [w for w in words if len(w) > 5 and _glued(w, table) != _glued_by_every_cut(w, table)]
    assert wrong == []


@pytest.mark.parametrize(
    "keywords",
    [
        pytest.param(tuple(default_index()._compiled().keywords), id="shipped"),
        pytest.param(("x", "id", "log", "login", "log-in", "a.b", *DEFAULT_KEYWORDS), id="short"),
    ],
)
def test_the_keyword_trie_finds_what_the_alternation_finds(keywords: tuple[str, ...]) -> None:
    trie = re.compile(_any_of(keywords))
    alternation = re.compile("|".join(re.escape(k) for k in sorted(keywords)))
    texts = [*_words(), *(f"{a}-{b}" for a, b in zip(_words(), _words()[1:], strict=False))]
    wrong = [t for t in texts if (trie.search(t) is None) != (alternation.search(t) is None)]
    assert wrong == []
    assert sum(1 for t in texts if trie.search(t) is not None) > 1_000


def test_the_corpora_are_where_the_tests_say() -> None:
    assert all((CORPORA / name).is_file() for name in LOOKALIKE_CORPUS_FILES)


@pytest.mark.parametrize(
    "mapping",
    [
        pytest.param({"i": "l", "q": "g"}, id="heavy-fold"),
        pytest.param(_SPELLING_CHARS, id="spelling"),
        pytest.param({"0": "o", "1": "l", "3": "e", "|": "l", "m": "rn", "é": "e"}, id="mixed"),
    ],
)
def test_a_full_ascii_table_translates_as_the_mapping_does(mapping: dict[str, str]) -> None:
    full, sparse = ascii_translation(mapping), str.maketrans(mapping)
    texts = [*_words(), "".join(map(chr, range(0x300))), "пример-é.日本", "ıİ\u0130K"]
    assert [t.translate(full) for t in texts] == [t.translate(sparse) for t in texts]
    assert any(t.translate(full) != t for t in texts)


def _policy_lists() -> list[frozenset[str]]:
    lists = []
    for name in ("default", "strict"):
        settings = Vetter(load_policy(name)).compiled.settings
        lists += [
            settings.internal_suffixes,
            settings.loopback_dns_suffixes,
            settings.wildcard_dns_suffixes,
        ]
    # Entries a policy may spell oddly: capitals, a final dot, one label, the root.
    lists.append(frozenset({"Corp.Example", "lan.", "uk", "co.uk", "", "nip.io", "a.b.c.d"}))
    return lists


def test_a_host_none_of_a_lists_last_labels_ends_is_under_none_of_it() -> None:
    hosts = [h.strip(".") for h in _words()] + [
        ".".join(w) for w in zip(_words(), _words()[7:], ("uk", "io", "lan", "corp"), strict=False)
    ]
    hosts += ["x.co.uk", "a.b.c.d", "nip.io", "10.0.0.1.nip.io", "printer.lan", "a" * 300 + ".lan"]
    wrong = []
    for domains in _policy_lists():
        for host in hosts:
            found = host_matches(host, domains) or shortest_parent_in(host, domains)
            if found is not None and not may_be_under(host, domains):
                wrong.append((host, found))
    assert wrong == []
    assert any(not may_be_under(h, d) for d in _policy_lists() for h in hosts)


def test_a_label_of_letters_and_digits_is_one_word() -> None:
    texts = [*_words()]
    for name in LOOKALIKE_CORPUS_FILES:
        texts.extend(strings_in(load(name)))
    texts += ["", "ACME-Login", "x_y", "İstanbul", "ǅemal", "ﬁle", "١٢٣", "a--b"]
    wrong = [t for t in texts if words_of(t) != [w for w in _WORD_SPLIT.split(t.lower()) if w]]
    assert wrong == []


def test_a_host_that_ends_as_no_key_has_no_redirector_or_trusted_entry() -> None:
    # redirector_entry and trusted_third_party rule a host out by its last two labels before
    # walking its parents: on the redirectors of the default policy, of one with redirectors
    # and trusted third parties of its own (a key of one label turns the look-up off) and of
    # one with keys under a multi-label suffix, each answers as the walk does.
    from urlvet import Policy
    from urlvet.checks.base import host_table_entry, redirector_entry
    from urlvet.checks.server import trusted_third_party
    from urlvet.url import InvalidURL, parse

    policies = [
        Policy(),
        Policy(redirectors=["*.example.co.uk/go?to", "lnk.example.org?u"]),
        Policy(redirectors=["localhost/r?next", "*.example.com?u"]),
        Policy(trusted_third_parties=["*.id.example.co.uk", "login.example.org/oauth"]),
    ]
    hosts = [h.strip(".") for h in _words()]
    hosts += [f"{w}.example.co.uk" for w in _words()[:200]] + [
        "www.google.com",
        "google.com.",
        "WWW.GOOGLE.COM",
        "l.facebook.com",
        "lnk.example.org",
        "a.lnk.example.org",
        "localhost",
        "x.co.uk",
        "co.uk",
        "login.example.org",
        "accounts.google.com",
        "a" * 300 + ".example.com",
    ]
    checked = ruled_out = 0
    for policy in policies:
        settings = policy.compiled.settings
        for host in hosts:
            if not host:
                continue
            walked = host_table_entry(host, settings.redirectors)
            assert redirector_entry(host, settings) == walked, host
            for path in ("/", "/oauth/authorize", "/go"):
                try:
                    url = parse(f"https://{host}{path}")
                except InvalidURL:
                    continue
                expected = _trusted_by_walking(url, settings)
                assert trusted_third_party(url, settings) == expected, (host, path)
            checked += 1
            ruled_out += settings.redirector_tails is not None and walked is None
    assert checked > 1000
    assert ruled_out > 1000
    assert policies[2].compiled.settings.redirector_tails is None  # "localhost": one label


def _trusted_by_walking(url: object, settings: object) -> str | None:
    """trusted_third_party without its look-up of the last two labels."""
    from dataclasses import replace

    from urlvet.checks.server import trusted_third_party

    return trusted_third_party(url, replace(settings, trusted_tails=None))  # type: ignore[arg-type,type-var]
