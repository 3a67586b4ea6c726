"""`urlvet policy import-domains`: the two published ranking forms (Tranco's rank,domain and
the Chrome UX Report's origin,rank with rank buckets), and rows that cannot be used counted on
stderr, never dropped silently."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from urlvet.cli import main
from urlvet.lookalike import read_ranking_csv

# As the CrUX top-list CSV files are published: a header, origins, ranks in buckets.
CRUX = """origin,rank
https://www.google.com,1000
https://m.youtube.com,1000
https://www.google.de,1000
https://192.168.0.1,1000
http://shop.example.co.uk:8080,5000
https://accounts.google.com,5000
https://www.wikipedia.org,10000
"""

TRANCO = """1,google.com
2,youtube.com
3,exa mple.com
not-a-rank,facebook.com
4,
5,bbc.co.uk
"""


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_crux_origin_rank_rows_in_bucket_order(tmp_path: Path) -> None:
    (tmp_path / "crux.csv").write_text(CRUX, encoding="utf-8")
    got = read_ranking_csv(tmp_path / "crux.csv", top=10)
    # Bucket 1000 in file order, then 5000 (accounts.google.com adds nothing new), then 10000.
    assert got.domains == [
        "google.com",
        "youtube.com",
        "google.de",
        "example.co.uk",
        "wikipedia.org",
    ]
    assert (got.malformed, got.unusable, got.first_skipped) == (0, 1, 5)  # the IP address


def test_crux_top_takes_the_first_buckets(tmp_path: Path) -> None:
    (tmp_path / "crux.csv").write_text(CRUX, encoding="utf-8")
    code, out, err = run("policy", "import-domains", "--top", "2", str(tmp_path / "crux.csv"))
    assert code == 0
    assert yaml.safe_load(out)["protected_domains"] == ["google.com", "youtube.com"]
    assert err == ""  # the IP-address row lies past the two domains taken


def test_tranco_rows_that_cannot_be_used_are_counted_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "tranco.csv").write_text(TRANCO, encoding="utf-8")
    out_file = tmp_path / "protected.yaml"
    code, out, err = run(
        "policy", "import-domains", "-o", str(out_file), str(tmp_path / "tranco.csv")
    )
    assert (code, out) == (0, "")
    assert yaml.safe_load(out_file.read_text())["protected_domains"] == [
        "google.com",
        "youtube.com",
        "bbc.co.uk",
    ]
    assert (
        f"urlvet: warning: {tmp_path / 'tranco.csv'}: skipped 3 rows (2 neither rank,domain "
        "nor origin,rank; 1 naming no registrable domain), the first at line 3"
    ) in err
    assert "wrote 3 domains" in err


def test_a_file_of_neither_form_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "x.csv").write_text("name,score\nfoo,bar\n", encoding="utf-8")
    code, _out, err = run("policy", "import-domains", str(tmp_path / "x.csv"))
    assert code == 2
    assert "no rank,domain or origin,rank rows with a usable domain name" in err
