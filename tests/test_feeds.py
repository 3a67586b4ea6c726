"""Threat feeds named by policy files: formats, validation, matching, extends, the cache."""

from __future__ import annotations

import gzip
import ipaddress
import os
import time
from array import array
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from urlvet import PolicyError, Vetter, load_policy
from urlvet.checks.base import CheckContext
from urlvet.checks.resolution import private_address_resolution
from urlvet.cli import main
from urlvet.feeds import FeedSet, FeedSpec, load_feed
from urlvet.resolve import Resolution
from urlvet.url import normalize_domain


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _policy(tmp_path: Path, body: str, name: str = "team.yaml") -> Vetter:
    return Vetter(load_policy(_write(tmp_path / name, body)))


def _finding(vetter: Vetter, url: str, code: str) -> str:
    verdict = vetter.vet_offline(url)
    found = [f for f in verdict.findings if f.code == code]
    assert found, f"{code} did not fire on {url}: {verdict.codes}"
    return found[0].message


# -- formats ------------------------------------------------------------------------------------


def test_plain_domain_list_matches_the_domain_and_everything_under_it(tmp_path: Path) -> None:
    _write(tmp_path / "feeds/bad.txt", "# a feed\n\nevil.example\nEVIL2.example.  # trailing\n")
    vetter = _policy(tmp_path, "domains: {blocked_files: [feeds/bad.txt]}\n")
    message = _finding(vetter, "https://login.evil.example/x", "UV208")
    assert "on your blocklist feeds/bad.txt, line 3" in message
    assert "line 4" in _finding(vetter, "https://evil2.example/", "UV208")
    for url in ("https://example/", "https://notevil.example/", "https://evil.example.com/"):
        assert "UV208" not in vetter.vet_offline(url).codes, url


def test_hosts_file(tmp_path: Path) -> None:
    _write(
        tmp_path / "hosts",
        "# StevenBlack-style hosts file\n127.0.0.1 localhost\n::1 ip6-localhost ip6-loopback\n"
        "0.0.0.0 0.0.0.0\n0.0.0.0 ads.example # ad server\n"
        "127.0.0.1\ttrack.example   metrics.example\n:: v6.example\n",
    )
    table = load_feed(FeedSpec(str(tmp_path / "hosts"), "hosts", "domains"))
    feeds = FeedSet((table,))
    assert len(table) == 4
    hit = feeds.match_domain("x.metrics.example")
    assert hit is not None
    assert (hit.line, hit.entry) == (6, "metrics.example")
    assert feeds.match_domain("v6.example") is not None
    assert feeds.match_domain("localhost") is None


def test_adblock_list(tmp_path: Path) -> None:
    _write(
        tmp_path / "adblock.txt",
        "[Adblock Plus 2.0]\n! Title: test\n||evil.example^\n||Phish.Example^ # note\n",
    )
    vetter = _policy(tmp_path, "domains: {blocked_files: [adblock.txt]}\n")
    assert "adblock.txt, line 3" in _finding(vetter, "https://a.evil.example/", "UV208")
    assert "adblock.txt, line 4" in _finding(vetter, "https://phish.example/", "UV208")


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("||evil.example/ads/", "rules with paths are not domains"),
        ("||evil.example^$third-party", "options"),
        ("@@||good.example^", "exception rule"),
        ("*.evil.example", "without '*'"),
        ("https://evil.example/x", "is a URL, not a domain"),
        ("203.0.113.5", "networks.blocked_files"),
        ("two words", "expected one domain a line"),
        ("exa mple..com", "expected one domain a line"),
        ("exa%mple.example", "not a valid domain"),
        ("x" * 300 + ".example", "at most 253"),
        ("ev<il.example", "not a valid domain"),
    ],
)
def test_a_bad_domain_line_is_an_error_naming_file_and_line(
    tmp_path: Path, line: str, reason: str
) -> None:
    _write(tmp_path / "bad.txt", f"good.example\n# comment\n{line}\n")
    policy = load_policy(_write(tmp_path / "team.yaml", "domains: {blocked_files: [bad.txt]}\n"))
    with pytest.raises(PolicyError) as exc:
        Vetter(policy)
    assert str(exc.value).startswith(f"{tmp_path / 'bad.txt'}:3: ")
    assert reason in str(exc.value)


def test_on_error_skip_counts_and_reports_bad_lines(tmp_path: Path) -> None:
    _write(tmp_path / "bad.txt", "good.example\nexa%mple.example\nnot a domain\nalso.example\n")
    team = _write(
        tmp_path / "team.yaml",
        "domains:\n  blocked_files:\n    - {path: bad.txt, on_error: skip}\n",
    )
    settings_ = load_policy(team).compiled.settings
    (table,) = settings_.blocked_domain_feeds.tables
    assert (len(table), table.skipped) == (2, 2)
    assert table.errors[0].startswith(f"{tmp_path / 'bad.txt'}:2: ")
    result = CliRunner().invoke(main, ["policy", "check", str(team)])
    assert result.exit_code == 0, result.output
    assert "bad.txt: 2 entries, 2 bad lines skipped (first: " in result.output
    # Every vetting command says so on stderr.
    result = CliRunner().invoke(main, ["check", "--no-dns", "--policy", str(team), "https://x/"])
    assert "2 bad lines skipped" in result.stderr


def test_url_feed_matches_the_normalised_href_without_fragment(tmp_path: Path) -> None:
    _write(
        tmp_path / "urlhaus.txt",
        "################\n# URLhaus\n################\n"
        "http://203.0.113.9/bins/x.sh\nHTTPS://Evil.Example:443/a/../login?x=1#frag\n"
        "https://evil.example/a b\n",
    )
    team = _write(
        tmp_path / "team.yaml",
        "urls:\n  blocked_files: [{path: urlhaus.txt, on_error: skip}]\n"
        "  blocked: ['https://inline.example/p']\n",
    )
    vetter = Vetter(load_policy(team))
    message = _finding(vetter, "http://203.0.113.9/bins/x.sh#anything", "UV211")
    assert message == "The link is on your blocklist urlhaus.txt, line 4."
    assert "line 5" in _finding(vetter, "https://evil.example/login?x=1", "UV211")
    assert "UV211" in vetter.vet_offline("https://INLINE.example/p#top").codes
    for url in ("https://evil.example/login", "https://evil.example/login?x=2"):
        assert "UV211" not in vetter.vet_offline(url).codes, url
    assert vetter.compiled.settings.blocked_url_feeds.tables[0].skipped == 1


def test_openphish_style_list_and_a_non_url_line(tmp_path: Path) -> None:
    _write(tmp_path / "openphish.txt", "https://phish.example/secure/login.php\nnot a url\n")
    policy = load_policy(_write(tmp_path / "t.yaml", "urls: {blocked_files: [openphish.txt]}\n"))
    with pytest.raises(PolicyError, match=r"openphish.txt:2: 'not a url': expected one URL"):
        Vetter(policy)


def test_cidr_list_with_spamhaus_comments(tmp_path: Path) -> None:
    _write(
        tmp_path / "drop.txt",
        "; Spamhaus DROP List\n203.0.113.0/24 ; SBL1\n198.51.100.7\n2001:db8:bad::/48\n"
        "192.0.2.0/25 # firehol style\n",
    )
    vetter = _policy(tmp_path, "networks: {blocked_files: [drop.txt]}\n")
    assert "in 203.0.113.0/24, on your blocklist drop.txt, line 2" in _finding(
        vetter, "https://203.0.113.77/", "UV207"
    )
    assert "line 3" in _finding(vetter, "https://198.51.100.7/", "UV207")
    assert "line 4" in _finding(vetter, "https://[2001:db8:bad::1]/", "UV207")
    # An IPv6 address that embeds a listed IPv4 address is matched by it.
    assert "line 2" in _finding(vetter, "https://[::ffff:203.0.113.5]/", "UV207")
    verdict = vetter.vet_offline("https://203.0.113.77/")
    assert "UV205" not in verdict.codes  # reported once, as blocked
    assert "UV207" not in vetter.vet_offline("https://198.51.100.8/").codes


def test_a_narrower_allowed_network_carves_an_exception_out_of_a_feed(tmp_path: Path) -> None:
    _write(tmp_path / "drop.txt", "203.0.113.0/24\n")
    vetter = _policy(
        tmp_path, "networks: {blocked_files: [drop.txt], allowed: [203.0.113.128/25]}\n"
    )
    assert "UV207" in vetter.vet_offline("https://203.0.113.1/").codes
    assert "UV207" not in vetter.vet_offline("https://203.0.113.200/").codes


def test_dns_answers_in_a_listed_network_name_the_list(tmp_path: Path) -> None:
    _write(tmp_path / "drop.txt", "# list\n203.0.113.0/24\n")
    vetter = _policy(tmp_path, "networks: {blocked_files: [drop.txt]}\n")
    ctx = CheckContext(
        settings=vetter.compiled.settings,
        resolution=Resolution("app.example", "ok", ("198.51.100.1", "203.0.113.9"), (), 300),
    )
    (hit,) = private_address_resolution(None, ctx)
    assert "on your blocklist drop.txt, line 2" in hit.message
    (listed,) = [f for f in hit.evidence["flagged"] if f["address"] == "203.0.113.9"]
    assert (listed["list"], listed["line"]) == ("drop.txt", 2)


def test_csv_with_a_named_column(tmp_path: Path) -> None:
    _write(
        tmp_path / "domains.csv",
        "first_seen,Domain,threat\n2026-01-01,evil.example,phishing\n"
        '2026-01-02,"phish.example",malware\n',
    )
    vetter = _policy(tmp_path, "domains:\n  blocked_files: [{path: domains.csv, column: domain}]\n")
    assert "domains.csv, line 3" in _finding(vetter, "https://phish.example/", "UV208")


def test_urlhaus_csv_names_its_columns_in_a_comment(tmp_path: Path) -> None:
    _write(
        tmp_path / "urlhaus.csv",
        "################################################################\n"
        "# abuse.ch URLhaus Database Dump (CSV)                          #\n"
        "################################################################\n"
        "#\n"
        "# id,dateadded,url,url_status,last_online,threat,tags,urlhaus_link,reporter\n"
        '"3061","2026-01-01 10:00:00","http://203.0.113.9/bins/x.sh","online","2026-01-01",'
        '"malware_download","elf","https://urlhaus.abuse.ch/url/3061/","someone"\n',
    )
    vetter = _policy(tmp_path, "urls:\n  blocked_files: [{path: urlhaus.csv, column: url}]\n")
    assert "urlhaus.csv, line 6" in _finding(vetter, "http://203.0.113.9/bins/x.sh", "UV211")


def test_csv_without_the_column_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path / "d.csv", "a,b\n1,2\n")
    policy = load_policy(
        _write(tmp_path / "t.yaml", "domains: {blocked_files: [{path: d.csv, column: domain}]}\n")
    )
    with pytest.raises(PolicyError, match=r"d.csv:1: no column named 'domain'"):
        Vetter(policy)


def test_gzip_is_read_as_such_whatever_the_name(tmp_path: Path) -> None:
    (tmp_path / "feed.txt").write_bytes(gzip.compress(b"# gz\nevil.example\n"))
    (tmp_path / "drop.gz").write_bytes(gzip.compress(b"203.0.113.0/24\n"))
    vetter = _policy(
        tmp_path,
        "domains: {blocked_files: [feed.txt]}\nnetworks: {blocked_files: [drop.gz]}\n",
    )
    assert "feed.txt, line 2" in _finding(vetter, "https://evil.example/", "UV208")
    assert "drop.gz, line 1" in _finding(vetter, "https://203.0.113.3/", "UV207")


def test_a_truncated_gzip_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "feed.gz").write_bytes(gzip.compress(b"evil.example\n" * 1000)[:40])
    policy = load_policy(_write(tmp_path / "t.yaml", "domains: {blocked_files: [feed.gz]}\n"))
    with pytest.raises(PolicyError, match="cannot read feed"):
        Vetter(policy)


def test_a_missing_feed_file_names_the_policy_line(tmp_path: Path) -> None:
    team = _write(tmp_path / "team.yaml", "domains:\n  blocked_files:\n    - nowhere.txt\n")
    with pytest.raises(PolicyError) as exc:
        load_policy(team)
    assert str(exc.value) == (f"{team}:3: domains.blocked_files: no such feed file 'nowhere.txt'")


def test_a_format_for_another_kind_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path / "x.txt", "evil.example\n")
    policy = load_policy(
        _write(tmp_path / "t.yaml", "domains: {blocked_files: [{path: x.txt, format: cidr}]}\n")
    )
    with pytest.raises(PolicyError, match="not one for domains feeds"):
        Vetter(policy)


def test_non_utf8_line_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_bytes(b"evil.example\n\xff\xfe.example\n")
    policy = load_policy(_write(tmp_path / "t.yaml", "domains: {blocked_files: [x.txt]}\n"))
    with pytest.raises(PolicyError, match=r"x.txt:2: the line is not valid UTF-8"):
        Vetter(policy)


def test_unicode_domains_are_kept_as_the_browser_spells_them(tmp_path: Path) -> None:
    _write(tmp_path / "x.txt", "MÜNCHEN-phish.example\nxn--fa-hia.example\n")
    vetter = _policy(tmp_path, "domains: {blocked_files: [x.txt]}\n")
    assert "line 1" in _finding(vetter, "https://münchen-phish.example/", "UV208")
    assert "line 2" in _finding(vetter, "https://faß.example/", "UV208")


# -- allowed feeds ------------------------------------------------------------------------------


def test_allowed_feed_lifts_a_feed_block_only_when_as_specific(tmp_path: Path) -> None:
    _write(tmp_path / "block.txt", "hosting.example\n")
    _write(tmp_path / "allow.txt", "ours.hosting.example\n")
    vetter = _policy(
        tmp_path,
        "domains:\n  blocked_files: [block.txt]\n  allowed_files: [allow.txt]\n"
        "  blocked: [retired.ours.hosting.example]\n",
    )
    assert "UV208" in vetter.vet_offline("https://other.hosting.example/").codes
    assert "UV208" not in vetter.vet_offline("https://app.ours.hosting.example/").codes
    # The policy's own blocked list is never lifted.
    assert "UV208" in vetter.vet_offline("https://retired.ours.hosting.example/").codes


def test_allowed_feed_quiets_internal_name_rules(tmp_path: Path) -> None:
    _write(tmp_path / "allow.txt", "corp\n")
    assert (
        "UV203" in _policy(tmp_path, "{}\n", "plain.yaml").vet_offline("https://wiki.corp/").codes
    )
    vetter = _policy(tmp_path, "domains: {allowed_files: [allow.txt]}\n")
    assert "UV203" not in vetter.vet_offline("https://wiki.corp/").codes


# -- extends: feeds at both levels --------------------------------------------------------------


def test_feeds_at_both_levels_of_extends_resolve_against_their_own_file(tmp_path: Path) -> None:
    _write(tmp_path / "org/feeds/org-blocklist.txt", "org-bad.example\n")
    _write(
        tmp_path / "org/base.yaml",
        "domains:\n  blocked_files: [feeds/org-blocklist.txt]\n"
        "networks:\n  blocked_files: [feeds/drop.txt]\n",
    )
    _write(tmp_path / "org/feeds/drop.txt", "203.0.113.0/24\n")
    _write(tmp_path / "team/feeds/team.txt", "# team list\nteam-bad.example\n")
    team = _write(
        tmp_path / "team/policy.yaml",
        "extends: ../org/base.yaml\ndomains:\n  blocked_files: [feeds/team.txt]\n",
    )
    policy = load_policy(team)
    assert [f.name for f in policy.domains.blocked_files] == [  # type: ignore[union-attr]
        "feeds/org-blocklist.txt",
        "feeds/team.txt",
    ]
    vetter = Vetter(policy)
    assert "feeds/org-blocklist.txt, line 1" in _finding(
        vetter, "https://org-bad.example/", "UV208"
    )
    assert "feeds/team.txt, line 2" in _finding(vetter, "https://a.team-bad.example/", "UV208")
    assert "feeds/drop.txt, line 1" in _finding(vetter, "https://203.0.113.4/", "UV207")


def test_a_named_list(tmp_path: Path) -> None:
    _write(tmp_path / "f.txt", "evil.example\n")
    vetter = _policy(tmp_path, "domains: {blocked_files: [{path: f.txt, name: URLhaus}]}\n")
    assert "on your blocklist URLhaus, line 1" in _finding(vetter, "https://evil.example/", "UV208")


# -- the compiled cache -------------------------------------------------------------------------


def test_second_load_comes_from_the_cache_and_a_corrupt_cache_is_rebuilt(tmp_path: Path) -> None:
    feed = _write(tmp_path / "f.txt", "".join(f"d{i}.example\n" for i in range(2000)))
    cache = tmp_path / "cache"
    spec = FeedSpec(str(feed), "f.txt", "domains")
    first = load_feed(spec, cache)
    second = load_feed(spec, cache)
    assert (first.from_cache, second.from_cache) == (False, True)
    assert FeedSet((second,)).match_domain("x.d1999.example").line == 2000  # type: ignore[union-attr]
    (cached,) = cache.iterdir()
    data = bytearray(cached.read_bytes())
    data[len(data) // 2] ^= 0xFF
    cached.write_bytes(bytes(data))
    third = load_feed(spec, cache)
    assert not third.from_cache
    assert FeedSet((third,)).match_domain("d5.example").line == 6  # type: ignore[union-attr]
    cached.write_bytes(b"URLVETFEED\n")  # truncated
    assert not load_feed(spec, cache).from_cache
    assert load_feed(spec, cache).from_cache


def test_the_cache_is_keyed_by_content(tmp_path: Path) -> None:
    feed = _write(tmp_path / "f.txt", "a.example\n")
    cache = tmp_path / "cache"
    load_feed(FeedSpec(str(feed), "f.txt", "domains"), cache)
    _write(feed, "b.example\n")
    table = load_feed(FeedSpec(str(feed), "f.txt", "domains"), cache)
    assert not table.from_cache
    feeds = FeedSet((table,))
    assert feeds.match_domain("b.example") is not None
    assert feeds.match_domain("a.example") is None


def test_cache_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from urlvet.feeds import cache_dir

    monkeypatch.setenv("URLVET_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c" / "feeds"
    monkeypatch.setenv("URLVET_CACHE_DIR", "")
    assert cache_dir() is None
    monkeypatch.delenv("URLVET_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "urlvet" / "feeds"
    feed = _write(tmp_path / "f.txt", "a.example\n")
    load_feed(FeedSpec(str(feed), "f.txt", "domains"))
    assert len(os.listdir(tmp_path / "xdg" / "urlvet" / "feeds")) == 1


def test_an_unwritable_cache_only_costs_time(tmp_path: Path) -> None:
    feed = _write(tmp_path / "f.txt", "a.example\n")
    blocker = _write(tmp_path / "not-a-dir", "")
    table = load_feed(FeedSpec(str(feed), "f.txt", "domains"), blocker / "sub")
    assert len(table) == 1


def test_skipped_lines_are_reported_from_the_cache_too(tmp_path: Path) -> None:
    feed = _write(tmp_path / "f.txt", "a.example\nexa%mple.example\n")
    spec = FeedSpec(str(feed), "f.txt", "domains", on_error="skip")
    load_feed(spec, tmp_path / "c")
    cached = load_feed(spec, tmp_path / "c")
    assert cached.from_cache
    assert (cached.skipped, cached.errors[0][: len(str(feed)) + 3]) == (1, f"{feed}:2:")


# -- the fast path agrees with the browser's host parser ------------------------------------------

_LABEL = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LABEL, min_size=2, max_size=5))
def test_bulk_parsing_agrees_with_normalize_domain(labels: list[str]) -> None:
    import tempfile

    name = ".".join(labels)
    try:
        expected: str | None = normalize_domain(name)
    except ValueError:
        expected = None
    with tempfile.TemporaryDirectory() as tmp:
        feed = Path(tmp) / "f.txt"
        feed.write_text(name + "\n", encoding="utf-8")
        spec = FeedSpec(str(feed), "f.txt", "domains")
        if expected is None:
            with pytest.raises(PolicyError):
                load_feed(spec, use_cache=False)
            return
        table = load_feed(spec, use_cache=False)
    assert table.blob.decode() == expected


def test_network_feed_picks_the_most_specific_network(tmp_path: Path) -> None:
    feed = _write(tmp_path / "n.txt", "10.0.0.0/8\n10.1.0.0/16\n")
    feeds = FeedSet((load_feed(FeedSpec(str(feed), "n.txt", "networks")),))
    hit = feeds.match_address(ipaddress.ip_address("10.1.2.3"))
    assert hit is not None
    assert (hit.entry, hit.line) == ("10.1.0.0/16", 2)


def test_a_host_of_many_labels_is_looked_up_by_its_short_parents_only(tmp_path: Path) -> None:
    feed = _write(tmp_path / "f.txt", "evil.example\ncorp\n")
    feeds = FeedSet((load_feed(FeedSpec(str(feed), "f.txt", "domains")),))
    host = "a." * 100_000 + "x.evil.example"
    hit = feeds.match_domain(host)
    assert hit is not None
    assert hit.entry == "evil.example"
    assert feeds.match_domain("a" * 300) is None
    assert feeds.match_domain("wiki.corp") is not None  # a single-label entry


def test_single_label_parents_are_skipped_only_when_no_entry_has_one(tmp_path: Path) -> None:
    feed = _write(tmp_path / "f.txt", "evil.example\n")
    table = load_feed(FeedSpec(str(feed), "f.txt", "domains"))
    assert not table.single_labels
    assert FeedSet((table,)).match_domain("example") is None


def test_a_file_without_line_ends_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    (tmp_path / "bomb.gz").write_bytes(gzip.compress(b"a" * 5_000_000))
    spec = FeedSpec(str(tmp_path / "bomb.gz"), "bomb.gz", "domains", on_error="skip")
    with pytest.raises(PolicyError, match="not a feed of one entry a line"):
        load_feed(spec, use_cache=False)


def test_cache_files_unused_for_a_month_are_pruned(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    old_feed = _write(tmp_path / "old.txt", "old.example\n")
    load_feed(FeedSpec(str(old_feed), "old.txt", "domains"), cache)
    (stale,) = cache.iterdir()
    month_ago = time.time() - 31 * 86400
    os.utime(stale, (month_ago, month_ago))
    kept = _write(tmp_path / "kept.txt", "kept.example\n")
    load_feed(FeedSpec(str(kept), "kept.txt", "domains"), cache)
    used = cache / "used.feed"
    used.write_bytes(b"")
    os.utime(used, (month_ago, month_ago))
    (cache / "notes.txt").write_text("not ours", encoding="utf-8")
    os.utime(cache / "notes.txt", (month_ago, month_ago))
    new = _write(tmp_path / "new.txt", "new.example\n")
    load_feed(FeedSpec(str(new), "new.txt", "domains"), cache)
    names = sorted(p.name for p in cache.iterdir())
    assert stale.name not in names
    assert "used.feed" not in names
    assert "notes.txt" in names
    assert len([n for n in names if n.endswith(".feed")]) == 2


def test_a_bad_feed_makes_urlvet_check_exit_2_naming_file_and_line(tmp_path: Path) -> None:
    _write(tmp_path / "f.txt", "good.example\n\nhttps://evil.example/\n")
    team = _write(tmp_path / "team.yaml", "domains: {blocked_files: [f.txt]}\n")
    result = CliRunner().invoke(main, ["check", "--no-dns", "--policy", str(team), "https://x/"])
    assert result.exit_code == 2
    assert (
        f"{tmp_path / 'f.txt'}:3: 'https://evil.example/' is a URL, not a domain" in result.stderr
    )
    assert "Traceback" not in result.output


def test_feed_keys_validate_against_the_committed_schema() -> None:
    import json

    import jsonschema
    import yaml

    schema = json.loads(
        (Path(__file__).resolve().parents[1] / "src/urlvet/policies/policy.schema.json").read_text(
            encoding="utf-8"
        )
    )
    good = yaml.safe_load(
        "domains:\n  blocked_files: [a.txt, {path: b.csv.gz, column: domain, name: B}]\n"
        "  allowed_files: [c.txt]\nnetworks: {blocked_files: [{path: d.txt, format: cidr}]}\n"
        "urls: {blocked: ['https://x.example/a'], blocked_files: [{path: e.txt, on_error: skip}]}\n"
    )
    jsonschema.validate(good, schema)
    bad = yaml.safe_load("urls: {blocked_files: [{path: e.txt, on_error: ignore}]}\n")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_a_million_line_feed_keeps_every_line_number_across_chunks(tmp_path: Path) -> None:
    # Correctness at the size real feeds have (bench/feeds_bench.py measures the speed): the
    # file is read in 1 MiB chunks, so entries on both sides of every chunk boundary must keep
    # their line; and the cached copy must answer the same.
    n = 1_000_000
    feed = tmp_path / "big.txt"
    with open(feed, "w", encoding="utf-8") as f:
        f.write("# a large feed\n")
        f.writelines(f"d{i}.example\n" for i in range(n))
    spec = FeedSpec(str(feed), "big.txt", "domains")
    cold = load_feed(spec, tmp_path / "cache")
    cached = load_feed(spec, tmp_path / "cache")
    assert (len(cold), len(cached), cold.from_cache, cached.from_cache) == (n, n, False, True)
    # Every entry, in file order, with its line: nothing lost or shifted at a chunk boundary.
    expected = "".join(f"d{i}.example" for i in range(n)).encode()
    for table in (cold, cached):
        assert table.lines == array("I", range(2, n + 2))
        assert table.blob == expected
        assert table.offsets[-1] == len(expected)
    step = 1_048_576 // len("d500000.example\n")  # about one chunk of lines
    probes = [0, 1, n - 1, *range(step - 3, n, step), *range(step + 3, n, step)]
    for table in (cold, cached):
        feeds = FeedSet((table,))
        for i in probes:
            hit = feeds.match_domain(f"www.d{i}.example")
            assert hit is not None, i
            assert (hit.entry, hit.line) == (f"d{i}.example", i + 2)
        assert feeds.match_domain(f"d{n}.example") is None
