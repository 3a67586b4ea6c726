"""The lookalike index's screen of plain hosts against the full analysis.

The screen (``urlvet.lookalike.screen._Screen``) answers "nothing to find" for ordinary ASCII names
without running the techniques. It may only ever be right: for every host of the shared
corpora (Chromium's lookalike and IDN tables, dnstwist's permutations of paypal.com and
google.com, Chromium's popular domains), for lookalikes of every protected domain built here,
and for ordinary names, the analysis with the screen equals the analysis without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import pytest

from support.corpora import LOOKALIKE_CORPUS_FILES, load, strings_in
from urlvet.lookalike import (
    DEFAULT_KEYWORDS,
    LookalikeIndex,
    LookalikeReport,
    build_index,
    default_index,
    default_protected_domains,
)
from urlvet.url import HostKind, InvalidURL, ParsedURL, parse

WORDS = ("shop", "acme", "north", "cloud", "delta", "pixel", "mail", "docs", "data", "nova")
SUBDOMAINS = ("", "www.", "api.", "mail.", "cdn.", "login.", "docs.", "a.b.")
SUFFIXES = ("com", "net", "co.uk", "github.io", "okta.com", "corp", "de", "com.au")

HOSTILE = (
    "pаypal.com",  # Cyrillic а
    "xn--pypal-4ve.com",
    "paypa1.com",
    "rnicrosoft.com",
    "g00gle.com",
    "gooogle.com",
    "pay.pal.com",
    "goo.gle.co.uk",
    "wwwpaypal.com",
    "www-paypal.com",
    "paypal-secure.com",
    "secure-paypal-login.net",
    "paypalsecure.com",
    "accounts.google.com.evil.example",
    "accounts-google-com.evil.example",
    "googlecom-login.net",
    "dropbox.file-share-center.com",
    "login.amazon.order-status-check.net",
    "appleid.verify-device.com",
    "amaz0n.refunds-center.com",
    "www.paypa1.example.net",
    "dr0pbox-transfer.net",
    "paypal-resolution.netlify.app",
    "microsoft.github.io",
    "my-paypal.co.uk",
    "apple-id.com",
    "googlé.com",
    "xn--80ak6aa92e.com",
    "münchen.de",
    "日本.jp",
    "10-0-0-1.nip.io",
    "127.0.0.1.nip.io",
    "paypal.com.co",
    "google.net",
    "sub.paypal.com",
    "a-b-c.d-e-f.g-h.example",
    "x.y",
    "localhost",
    "example",
    "corp",
    "aa.bb.cc.dd.ee.ff.gg.hh.ii.jj.kk.ll.mm.nn.oo.pp.example.com",
    "l0gin-paypa1.com",
    "paypal" * 10 + ".com",
    "vvellsfargo.com",
    "c1oudflare.com",
    "qooqle.com",
)


def _url(text: str) -> ParsedURL | None:
    """The URL of a corpus string (a URL or a host name), or None when it is neither."""
    text = text.strip()
    if not text or any(c.isspace() for c in text) or len(text) > 300:
        return None
    try:
        url = parse(text if "://" in text else f"https://{text}/")
    except InvalidURL:
        return None
    return url if url.host_kind is HostKind.DOMAIN and url.host else None


def _brand_lookalikes(domain: str) -> Iterator[str]:
    """Hosts that imitate ``domain`` in each way the techniques look for (and some that do not)."""
    label, _, suffix = domain.partition(".")
    yield from (
        f"{label}-login.com",
        f"secure-{label}.net",
        f"{label}secure.com",
        f"login{label}.io",
        f"my-{label}.co.uk",
        f"{label}-analytics.com",
        f"{label.replace('o', '0').replace('l', '1')}.{suffix}",
        f"{label}s.{suffix}",
        f"{label[1:]}.{suffix}",
        f"www{label}.com",
        f"{label[:2]}.{label[2:]}.{suffix}",
        f"{label}.{suffix}.evil.example",
        f"{label}-{suffix.replace('.', '-')}.evil.example",
        f"{label}.account-alerts.info",
        f"{label}.files.example.org",
        f"{label}.example.org",
        f"mail.{label}1234.com",
        f"{label}.github.io",
        f"{label}-refund.netlify.app",
    )


def _ordinary() -> Iterator[str]:
    for i, word in enumerate(WORDS * 3):
        for j, sub in enumerate(SUBDOMAINS):
            suffix = SUFFIXES[(i + j) % len(SUFFIXES)]
            yield f"{sub}{word}{i * 37 + j}.{suffix}"
            yield f"{sub}{word}-{WORDS[(i + j) % len(WORDS)]}.{suffix}"


@cache
def _hosts() -> tuple[ParsedURL, ...]:
    texts: list[str] = list(HOSTILE)
    for name in LOOKALIKE_CORPUS_FILES:
        texts.extend(strings_in(load(name)))
    for domain in default_protected_domains():
        texts.extend(_brand_lookalikes(domain))
    texts.extend(_ordinary())
    urls: dict[str, ParsedURL] = {}
    for text in texts:
        url = _url(text)
        if url is not None:
            urls.setdefault(url.host, url)
    return tuple(urls.values())


def _args(url: ParsedURL) -> tuple[str, str, str | None, str | None, bool]:
    return (
        url.host.rstrip(".").lower(),
        url.host_unicode.rstrip(".").lower(),
        url.registrable_domain,
        url.public_suffix,
        url.suffix_is_private,
    )


def _unscreened(index: LookalikeIndex, url: ParsedURL) -> LookalikeReport:
    """The analysis of ``url`` by every technique, as before the screen existed."""
    host, host_unicode, registrable, suffix, private = _args(url)
    protected = index.protected_parent(host)
    if protected is not None:
        return LookalikeReport(host=host, protected=protected)
    tables = index._compiled()
    return index._matches(tables, host, host_unicode, registrable, suffix, private, None)


def _screened(index: LookalikeIndex, url: ParsedURL) -> bool:
    host, host_unicode, registrable, suffix, _private = _args(url)
    index._compiled()
    screen = index._screen
    assert screen is not None
    return screen.screened_out(host, host_unicode, registrable, suffix)


def test_the_corpora_hold_enough_hosts_of_every_kind() -> None:
    urls = _hosts()
    reports = [_unscreened(default_index(), url) for url in urls]
    assert len(urls) > 15_000
    assert sum(1 for r in reports if r.matches) > 5_000
    assert sum(1 for url in urls if url.host != url.host_unicode) > 300


@pytest.mark.parametrize(
    "index",
    [
        pytest.param(default_index(), id="default"),
        # A short list whose brands are ordinary words, and keywords as short as one letter.
        pytest.param(
            build_index(
                ["shop.com", "cloud.de", "acme-corp.com", "mail.ru"], ("x", "id", *DEFAULT_KEYWORDS)
            ),
            id="policy-list",
        ),
    ],
)
def test_the_screen_never_hides_a_match(index: LookalikeIndex) -> None:
    index.cache_clear()
    wrong = []
    for url in _hosts():
        full = _unscreened(index, url)
        if index.analyze(url) != full or (full.matches and _screened(index, url)):
            wrong.append(url.host)
    assert wrong == []


def test_the_screen_lets_ordinary_names_through() -> None:
    # The screen must engage on the names a log is made of, or it only costs time.
    index = default_index()
    urls = [
        url
        for url in map(_url, _ordinary())
        if url is not None and index.protected_parent(url.host) is None
    ]
    screened = [url for url in urls if _screened(index, url)]
    assert len(screened) >= 0.85 * len(urls)
    assert all(not _unscreened(index, url).matches for url in screened)


@pytest.mark.parametrize(
    "host",
    ["münchen.de", "xn--mnchen-3ya.de", "paypal-login.com", "www.pay.pal.com", "shop_1.example"],
)
def test_hosts_the_screen_leaves_to_the_full_analysis(host: str) -> None:
    url = _url(host)
    assert url is not None
    assert not _screened(default_index(), url)


def test_a_server_domain_is_never_screened() -> None:
    # The server's own domain is protected for its call: the screen does not know it.
    url = parse("https://acmecorp-files.net/")
    report = default_index().analyze(url, "acmecorp.com")
    assert [m.target for m in report.matches] == ["acmecorp.com"]
