"""urlvet.psl: the suffix rules come from tldextract's public API, offline, and are kept in
urlvet's cache so that a cold ``urlvet check`` does not import tldextract."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from urlvet import psl

PROBE = """
import sys
from urlvet import psl
print(psl.split("foo.blogspot.com"), psl.split("a.b.example.co.uk"), psl.split("x.unknown-tld"))
print("tldextract" in sys.modules)
"""
EXPECTED = (
    "('foo.blogspot.com', 'blogspot.com', True) ('example.co.uk', 'co.uk', False) ('', '', False)"
)


def probe(cache: str, **env: str) -> tuple[str, bool]:
    """(answers, whether tldextract was imported) of a fresh interpreter with this cache."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "URLVET_CACHE_DIR": cache, **env},
    )
    answers, imported = out.stdout.splitlines()
    return answers, imported == "True"


def test_rules_are_tldextracts_public_and_private_sections() -> None:
    public, private = psl.tldextract_rules()
    assert "co.uk" in public
    assert "blogspot.com" in private
    assert "blogspot.com" not in public
    assert psl.rules() == psl.build_rules(public, private)


def test_private_section_is_told_apart() -> None:
    assert psl.split("foo.blogspot.com") == ("foo.blogspot.com", "blogspot.com", True)
    assert psl.split("a.b.example.co.uk") == ("example.co.uk", "co.uk", False)


def test_first_run_imports_tldextract_and_later_runs_read_the_cache(tmp_path: Path) -> None:
    first = probe(str(tmp_path))
    assert first == (EXPECTED, True)
    assert len(list((tmp_path / "psl").glob("rules-*.txt"))) == 1
    assert probe(str(tmp_path)) == (EXPECTED, False)


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # cut short
        lambda text: "another format\n" + text.split("\n", 1)[1],
        lambda text: text.replace("// ===BEGIN PRIVATE DOMAINS===\n", ""),
        lambda text: "\x00\xff",
    ],
    ids=["truncated", "header", "no-private-mark", "garbage"],
)
def test_damaged_cache_is_rebuilt_from_tldextract(tmp_path: Path, damage: object) -> None:
    probe(str(tmp_path))
    (cache_file,) = (tmp_path / "psl").glob("rules-*.txt")
    cache_file.write_text(damage(cache_file.read_text("utf-8")), "utf-8")  # type: ignore[operator]
    assert probe(str(tmp_path)) == (EXPECTED, True)
    assert probe(str(tmp_path)) == (EXPECTED, False)  # and written again


def test_empty_cache_setting_caches_nothing(tmp_path: Path) -> None:
    # Were the empty setting taken for "the default place", the cache would land in tmp_path.
    home = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert probe("", **home) == (EXPECTED, True)
    assert probe("", **home) == (EXPECTED, True)
    assert not list(tmp_path.iterdir())
