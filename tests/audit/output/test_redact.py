"""Redaction of secrets in URLs and in text that quotes them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from urlvet.audit.output.redact import (
    REDACTED,
    is_secret_name,
    redact,
    redact_data,
    secrets_in,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://a.example/cb?code=abc&state=xyz", "https://a.example/cb?code=REDACTED&state=xyz"),
        (
            "https://a.example/#access_token=t1&token_type=bearer&id_token=t2",
            "https://a.example/#access_token=REDACTED&token_type=bearer&id_token=REDACTED",
        ),
        (
            "https://a.example/?client_secret=s&client_id=c",
            "https://a.example/?client_secret=REDACTED&client_id=c",
        ),
        ("https://a.example/?API-Key=k&monkey=1", "https://a.example/?API-Key=REDACTED&monkey=1"),
        (
            "https://s3.example/o?X-Amz-Signature=ab&X-Amz-Credential=AK%2F1",
            "https://s3.example/o?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED",
        ),
        ("https://a.example/?sig=1&se=2", "https://a.example/?sig=REDACTED&se=2"),
        ("https://a.example/?password=&x=1", "https://a.example/?password=&x=1"),
        ("https://a.example/?access%5Ftoken=zz", "https://a.example/?access%5Ftoken=REDACTED"),
        ("https://admin:hunter2@a.example/", "https://admin:REDACTED@a.example/"),
        ("https://a:b@c@evil.example/", "https://a:REDACTED@evil.example/"),
        ("https://ghp_abcdefghijklmnopqrstu123@github.com/o/r", "https://REDACTED@github.com/o/r"),
        ("https://google.com@evil.example/", "https://google.com@evil.example/"),
        (
            "https://accounts-google-com-signin-page@evil.example/",
            "https://accounts-google-com-signin-page@evil.example/",
        ),
        ("https://a.example/path?q=search", "https://a.example/path?q=search"),
    ],
)
def test_redact_url(url: str, expected: str) -> None:
    assert redact(url, secrets_in(url)) == expected


def test_secrets_quoted_in_a_message_are_redacted_too() -> None:
    url = "https://paypal.com:letmein99@evil.example/"
    secrets = secrets_in(url)
    message = "The link starts with 'paypal.com:letmein99', which looks like a site name"
    assert redact(message, secrets) == message.replace("letmein99", REDACTED)


def test_redact_data_masks_credential_keys_and_token_usernames() -> None:
    data = {
        "username": "ghp_abcdefghijklmnopqrstu123",
        "userinfo": "google.com",
        "token": "abc",
        "nested": [{"password": "x"}, "https://a.example/?code=1"],
        "count": 3,
    }
    assert redact_data(data, set()) == {
        "username": REDACTED,
        "userinfo": "google.com",
        "token": REDACTED,
        "nested": [{"password": REDACTED}, "https://a.example/?code=REDACTED"],
        "count": 3,
    }


@given(st.text(max_size=200))
def test_redact_never_raises_and_is_idempotent(text: str) -> None:
    once = redact(text, secrets_in(text))
    assert redact(once, secrets_in(once)) == once


def test_every_credential_name_is_a_secret_name() -> None:
    from urlvet.audit.output.redact import _EXACT_NAMES

    parts = ["token", "secret", "passw", "signature", "credential", "apikey", "api-key"]
    parts += ["api_key", "privatekey", "private-key", "private_key", "session"]
    for name in [*_EXACT_NAMES, *parts, "My_Session_Id", "X-API-KEY", "\u212aey", "t%6Fken"]:
        assert is_secret_name(name), name
    # A credential word in the path, or a '%' in a value, makes no parameter a secret's.
    sign_in = "/oauth2/authorize?client_id=1&state=2&redirect_uri=https%3A%2F%2Fa.example%2Fcb"
    assert not secrets_in("https://idp.example" + sign_in)
    assert not secrets_in("https://example.com/api/keys/session?page=2")
    assert secrets_in("https://example.com/p;jsessionid=1") == {"1"}
    assert secrets_in("https://example.com/p?a=1#access_token=x") == {"x"}
