"""The sourced data behind UV308-UV311 and UV407: brands' other names, shared hosting,
identity providers, and the folding of lookalikes of several steps."""

from __future__ import annotations

from importlib import resources

import pytest

from urlvet.brands import brand_names, find_brand, words_of
from urlvet.hosting import parse_shared_hosting, shared_hosting
from urlvet.identity import authorization_endpoint, parse_identity_providers
from urlvet.lookalike import default_protected_domains
from urlvet.steps import StepIndex
from urlvet.url import parse


def _data_lines(name: str) -> list[str]:
    text = resources.files("urlvet.data").joinpath(name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize(
    "name", ["brand_names.txt", "shared_hosting.txt", "identity_providers.txt"]
)
def test_every_entry_names_its_source(name: str) -> None:
    for line in _data_lines(name):
        source = line.rsplit("|", 1)[-1].strip()
        assert source, f"{name}: {line!r} has no source"


@pytest.mark.parametrize(
    ("host", "brand"),
    [
        ("office365-mailbox-verify", "microsoft"),
        ("teamsmeeting-invite", "microsoft"),
        ("aws-billing-invoice", "amazon"),
        ("square-payment-dispute", "square"),
        ("gmail-storage-full", "google"),
    ],
)
def test_a_product_name_beside_a_lure_names_its_brand(host: str, brand: str) -> None:
    found = find_brand(words_of(host), brand_names(), need_lure=True)
    assert found is not None
    assert found.brand == brand


@pytest.mark.parametrize(
    "host",
    ["squarespace", "officedepot", "livenation", "applebees", "metacritic", "squaregift"],
)
def test_real_names_that_contain_a_product_word_name_no_brand(host: str) -> None:
    assert find_brand(words_of(host), brand_names(), need_lure=True) is None


@pytest.mark.parametrize(
    ("url", "platform", "kind"),
    [
        ("https://x.s3.amazonaws.com/a.html", "*.s3.amazonaws.com", "storage"),
        ("https://s3.us-east-2.amazonaws.com/b/a.html", "s3.*.amazonaws.com", "storage"),
        ("https://storage.googleapis.com/b/a.html", "storage.googleapis.com", "storage"),
        ("https://acct.z13.web.core.windows.net/", "*.web.core.windows.net", "storage"),
        ("https://pub-1.r2.dev/a", "*.r2.dev", "storage"),
        ("https://sites.google.com/view/a", "sites.google.com", "site"),
        ("https://someone.github.io/", "*.github.io", "site"),
        ("https://app.web.app/", "*.web.app", "site"),
    ],
)
def test_shared_hosting_is_found_with_its_kind(url: str, platform: str, kind: str) -> None:
    found = shared_hosting(parse(url))
    assert found is not None
    assert (found.platform, found.kind) == (platform, kind)


@pytest.mark.parametrize("url", ["https://www.amazon.com/", "https://docs.python.org/"])
def test_ordinary_sites_are_not_shared_hosting(url: str) -> None:
    assert shared_hosting(parse(url)) is None


def test_an_unknown_hosting_kind_is_an_error_naming_the_entry() -> None:
    with pytest.raises(ValueError, match=r"example\.net"):
        parse_shared_hosting("example.net | bucket | somewhere\n")


def test_identity_provider_endpoints_are_matched_by_host_and_path() -> None:
    table = parse_identity_providers("a.example | /oauth/authorize | src\n")
    assert table == {"a.example": ("/oauth/authorize",)}
    assert authorization_endpoint(parse("https://zoom.us/oauth/authorize?x=1")) is not None
    assert authorization_endpoint(parse("https://zoom.us/j/123")) is None
    assert authorization_endpoint(parse("https://dev-1.okta.com/oauth2/v1/authorize")) is not None


STEPS = StepIndex([d.split(".")[0] for d in default_protected_domains()])


@pytest.mark.parametrize(
    ("word", "name"),
    [
        ("nnicrosoft", "microsoft"),
        ("nn1crosoft", "microsoft"),
        ("rnicrosofft", "microsoft"),
        ("arnaz0n", "amazon"),
        ("vvelisfargo", "wellsfargo"),
        ("lnstagrarn", "instagram"),
    ],
)
def test_lookalikes_of_several_steps_are_matched(word: str, name: str) -> None:
    found = STEPS.match(word)
    assert found is not None
    assert found.name == name


@pytest.mark.parametrize(
    "word", ["cannon", "nikon", "gitlab", "circle", "anneli", "kirana", "microsoft", "revolt"]
)
def test_real_words_and_single_edits_are_not_several_steps(word: str) -> None:
    assert STEPS.match(word) is None


def test_a_slipped_letter_counts_only_in_a_subdomain() -> None:
    assert STEPS.match("gitlhub") is None
    assert STEPS.match("gitlhub", subdomain=True) is not None
