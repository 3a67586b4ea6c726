"""Redact secrets that URLs carry before a URL is written to a report.

Audit reports travel: SARIF goes to code scanning, annotations and text land in CI logs that
many people can read. A URL with ``?access_token=...`` or ``https://user:password@host/`` must
not carry its secret there. Redaction replaces the secret, never the structure: the parameter
name stays, so a reader still sees *that* the URL carries a token, and a secret that rotates
between runs does not change the URL's fingerprint.

What counts as a secret:
- the password of the userinfo (``user:REDACTED@host``);
- a user name that looks like an access token (``ghp_...@github.com``, long mixed-case
  strings with digits); a user name that merely looks like a host (``google.com@evil``) is
  the evidence of a deception and stays;
- the value of a query or fragment parameter whose name is a credential name: ``password``,
  ``token``, ``access_token``, ``id_token``, ``key``, ``secret``, ``client_secret``, ``code``,
  ``sig``, ``signature`` and names containing ``token``, ``secret``, ``passw``, ``signature``,
  ``credential``, ``api_key``, ``session``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from urlvet.memo import memo_size

REDACTED = "REDACTED"

_EXACT_NAMES = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "pass",
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "key",
        "apikey",
        "api_key",
        "secret",
        "client_secret",
        "code",
        "sig",
        "signature",
        "auth",
        "authorization",
        "jwt",
        "otp",
        "sas",
        "assertion",
        "client_assertion",
        "credential",
        "credentials",
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-security-token",
        "x-goog-signature",
        "x-goog-credential",
    }
)
# Names that contain a credential word but carry no secret.
_NOT_SECRET = frozenset({"token_type", "token_type_hint", "token_endpoint_auth_method"})
_NAME_PARTS = re.compile(
    r"token|secret|passw|signature|credential|api[-_]?key|private[-_]?key|session", re.IGNORECASE
)
# A parameter in a query or a fragment: the separator, the name, '=', the value. The value
# stops where a URL in running text would (quotes, angle brackets, whitespace).
_PARAM = re.compile(r"(?P<head>[?&#;](?P<name>[^=&#;?\s/\"'<>]{1,128})=)(?P<value>[^&#;\s\"'<>]*)")
# Every credential name, lower-cased, holds one of these (a test holds each of _EXACT_NAMES
# and _NAME_PARTS to it); a name with '%' may decode to one.
_WORDS = r"pass|pwd|tok|key|secr|code|sig|auth|jwt|otp|sas|assert|cred|sess|%"
_NAME_WORDS = re.compile(_WORDS)
# A parameter whose name holds one of them: where _PARAM can start a parameter, a name of the
# characters _PARAM allows in one and more (so that it matches wherever _PARAM does), '='.
_NAME_WITH_WORD = re.compile(rf"[?&#;][^=&#;?\s]*?(?:{_WORDS})[^=&#;?\s]*=")
# scheme:// user : password @ — the password runs to the last '@' before the path.
_PASSWORD = re.compile(
    r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*:[/\\]*[^/\\?#@\s:\"'<>]*:)(?P<value>[^/\\?#\s\"'<>]*)@"
)
_USERNAME = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*:[/\\]+)(?P<value>[^/\\?#@\s:\"'<>]+)@")
_TOKEN_PREFIXES = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "sk-")
_LITERAL_MIN = 4  # shorter secrets are redacted where they stand, not searched for in prose


@lru_cache(maxsize=memo_size(4096))
def is_secret_name(name: str) -> bool:
    """True when a parameter (or evidence key) of this name carries a credential."""
    n = (unquote(name) if "%" in name else name).strip().lower()
    if n in _NOT_SECRET:
        return False
    return n in _EXACT_NAMES or _NAME_PARTS.search(n) is not None


def looks_like_token(text: str) -> bool:
    """True for a user name that is an access token rather than a name or a host."""
    t = unquote(text)
    if t.startswith(_TOKEN_PREFIXES) and len(t) >= 12:
        return True
    return (
        len(t) >= 24
        and "." not in t
        and any(c.isdigit() for c in t)
        and any(c.isupper() for c in t)
        and any(c.islower() for c in t)
    )


def tail_may_hold_secrets(tail: str) -> bool:
    """False when no parameter of ``tail`` (the path, query and fragment of a URL with no
    user info) can have a credential name: a quick test that rules out most URLs before
    :func:`secrets_in` reads them. It looks for a parameter name (after '?', '&', '#' or ';'
    and before '=') that holds a part of a credential name, in lower case as
    :func:`is_secret_name` compares names, or a '%' that may encode one: it may say True of
    a URL without a secret, never False of one with a secret. A word in the path
    (``/oauth2/authorize``) or a '%' in a value (an encoded ``redirect_uri``) is no reason."""
    return "=" in tail and _NAME_WITH_WORD.search(tail.lower()) is not None


def secrets_in(text: str) -> set[str]:
    """The secret values ``text`` (a URL, or prose with URLs in it) carries, raw and decoded."""
    found: set[str] = set()
    if "=" in text:
        for m in _PARAM.finditer(text):
            if m.group("value") and is_secret_name(m.group("name")):
                found.add(m.group("value"))
    if "@" in text:
        for m in _PASSWORD.finditer(text):
            if m.group("value"):
                found.add(m.group("value"))
        for m in _USERNAME.finditer(text):
            if looks_like_token(m.group("value")):
                found.add(m.group("value"))
    found |= {unquote(s) for s in found}
    return found


def redact(text: str, secrets: set[str] | frozenset[str] = frozenset()) -> str:
    """``text`` with URL secrets replaced by ``REDACTED``.

    Structural matches (parameters, userinfo) are redacted wherever they appear; ``secrets``
    (from :func:`secrets_in` on the URL) are also replaced where a message quotes them
    without their URL context, as in ``'admin:hunter2'``.
    """
    out = text
    if "=" in out:
        out = _PARAM.sub(_param_sub, out)
    if "@" in out:
        out = _PASSWORD.sub(lambda m: f"{m.group('head')}{_mask(m.group('value'))}@", out)
        out = _USERNAME.sub(_username_sub, out)
    if secrets:
        for secret in sorted(secrets, key=len, reverse=True):
            if len(secret) >= _LITERAL_MIN and secret in out:
                out = out.replace(secret, REDACTED)
    return out


def redact_data(value: Any, secrets: set[str] | frozenset[str], key: str = "") -> Any:
    """A JSON-ready value (dicts, lists, strings) with every string redacted.

    Values under credential-named keys are redacted whole; a ``username`` or ``userinfo``
    that looks like a token is too.
    """
    if isinstance(value, str):
        if key and (
            is_secret_name(key) or (key in ("username", "userinfo") and looks_like_token(value))
        ):
            return REDACTED if value else value
        if not secrets and "=" not in value and "@" not in value:
            return value  # what redact() leaves as it is, found sooner
        return redact(value, secrets)
    if isinstance(value, list | tuple):
        return [redact_data(v, secrets, key) for v in value]
    if isinstance(value, dict) or (value is not None and isinstance(value, Mapping)):
        return {k: redact_data(v, secrets, str(k)) for k, v in value.items()}
    return value


def _mask(value: str) -> str:
    return REDACTED if value else value


def _param_sub(m: re.Match[str]) -> str:
    if m.group("value") and is_secret_name(m.group("name")):
        return f"{m.group('head')}{REDACTED}"
    return m.group(0)


def _username_sub(m: re.Match[str]) -> str:
    if looks_like_token(m.group("value")):
        return f"{m.group('head')}{REDACTED}@"
    return m.group(0)
