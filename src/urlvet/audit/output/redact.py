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
from bisect import bisect_left
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
_NAME = r"[^=&#;?\s/\"'<>]{1,128}"
_VALUE = r"[^&#;\s\"'<>]*"
_PARAM = re.compile(rf"(?P<head>[?&#;](?P<name>{_NAME})=)(?P<value>{_VALUE})")
# The same matches, as (name, value) pairs: what secrets_in reads of each, in one call.
_NAME_VALUE = re.compile(rf"[?&#;]({_NAME})=({_VALUE})")
# Every pattern below that reads a scheme starts only where a run of scheme characters starts
# (its digits and signs before the first letter are taken with it): from any later letter
# of the run the match would go on the same way and fail the same way, and trying each of
# them made a long run of letters and digits cost its length squared.
_SCHEME_HEAD = r"(?<![A-Za-z0-9+.\-])[0-9+.\-]*+[A-Za-z][A-Za-z0-9+.\-]*+:"
# scheme:// user : — the head of a password (see _password_spans for the value).
_PASSWORD_HEAD = re.compile(_SCHEME_HEAD + r"[/\\]*+[^/\\?#@\s:\"'<>]*+:")
# Where a password stops: it runs to the last '@' before one of these.
_PASSWORD_STOP = re.compile(r"[/\\?#\s\"'<>]")
_USERNAME = re.compile(r"(?P<head>" + _SCHEME_HEAD + r"[/\\]++)(?P<value>[^/\\?#@\s:\"'<>]++)@")
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


def _password_spans(text: str) -> list[tuple[int, int, int]]:
    """(start, value start, value end) of each password in ``text``, in order: after a head
    ``scheme:`` ``//`` ``user:``, the value runs to the last '@' before a character that
    ends it (:data:`_PASSWORD_STOP`). What the pattern
    ``scheme:[/]*user:(?P<value>[^/?#...]*)@`` finds, in time linear in the text: the last
    '@' and the stop after a head are looked up among positions found in one pass each,
    where the pattern scanned the rest of the run again from every head that failed."""
    ats = [m.start() for m in re.finditer("@", text)]
    if not ats:
        return []
    stops = [m.start() for m in _PASSWORD_STOP.finditer(text)]
    spans: list[tuple[int, int, int]] = []
    pos = 0
    while (m := _PASSWORD_HEAD.search(text, pos)) is not None:
        begin = m.end()
        i = bisect_left(stops, begin)
        end = stops[i] if i < len(stops) else len(text)
        j = bisect_left(ats, end) - 1
        if j >= 0 and ats[j] >= begin:
            spans.append((m.start(), begin, ats[j]))
            pos = ats[j] + 1
        else:
            pos = m.start() + 1
    return spans


def secrets_in(text: str) -> set[str]:
    """The secret values ``text`` (a URL, or prose with URLs in it) carries, raw and decoded."""
    found: set[str] = set()
    if "=" in text:
        for name, value in _NAME_VALUE.findall(text):
            if value and is_secret_name(name):
                found.add(value)
    if "@" in text:
        for _, begin, end in _password_spans(text):
            if end > begin:
                found.add(text[begin:end])
        for m in _USERNAME.finditer(text):
            if looks_like_token(m.group("value")):
                found.add(m.group("value"))
    if found:
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
        out = _masked_passwords(out)
        out = _USERNAME.sub(_username_sub, out)
    if secrets:
        literal = [secret for secret in secrets if len(secret) >= _LITERAL_MIN]
        if len(literal) <= FEW_SECRETS:
            for secret in sorted(literal, key=len, reverse=True):
                if secret in out:
                    out = out.replace(secret, REDACTED)
        else:
            out = _mask_many(out, literal)
    return out


FEW_SECRETS = 8
"""Up to this many secrets, each is replaced in turn (a pass over the text each); more are
found in one pass (:func:`_mask_many`): a URL of thousands of credential parameters made one
pass each cost the text's length times their number."""
LITERAL_SEARCH_BUDGET = 32
"""Characters compared per character of the text while :func:`_mask_many` looks for many
secrets; past it the whole text is masked (hostile input: it never leaks a secret)."""


def _mask_many(text: str, secrets: list[str]) -> str:
    """``text`` with every place any of ``secrets`` covers masked, each stretch of covered
    text once with :data:`REDACTED`, in one pass: the secrets are looked up by their first
    :data:`_LITERAL_MIN` characters, longest first. Masking the union rather than one
    secret after another keeps two overlapping secrets from leaving part of one readable."""
    buckets: dict[str, list[str]] = {}
    for secret in sorted(secrets, key=len, reverse=True):
        buckets.setdefault(secret[:_LITERAL_MIN], []).append(secret)
    budget = LITERAL_SEARCH_BUDGET * len(text) + 4096
    covered: list[list[int]] = []  # stretches [start, end), merged where they touch
    get = buckets.get
    for i in range(len(text) - _LITERAL_MIN + 1):
        bucket = get(text[i : i + _LITERAL_MIN])
        if bucket is None:
            continue
        for secret in bucket:
            budget -= len(secret)
            if text.startswith(secret, i):
                end = i + len(secret)
                if covered and i <= covered[-1][1]:
                    covered[-1][1] = max(covered[-1][1], end)
                else:
                    covered.append([i, end])
                break
        if budget < 0:
            return REDACTED
    parts: list[str] = []
    done = 0
    for start, end in covered:
        parts += (text[done:start], REDACTED)
        done = end
    parts.append(text[done:])
    return "".join(parts)


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


def _masked_passwords(text: str) -> str:
    parts: list[str] = []
    done = 0
    for _, begin, end in _password_spans(text):
        parts.append(text[done:begin])
        parts.append(REDACTED if end > begin else "")
        done = end
    parts.append(text[done:])
    return "".join(parts)


def _param_sub(m: re.Match[str]) -> str:
    if m.group("value") and is_secret_name(m.group("name")):
        return f"{m.group('head')}{REDACTED}"
    return m.group(0)


def _username_sub(m: re.Match[str]) -> str:
    if looks_like_token(m.group("value")):
        return f"{m.group('head')}{REDACTED}@"
    return m.group(0)
