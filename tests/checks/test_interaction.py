"""UV701-UV706: the form rules, on tables of forms that ask for secrets and forms that do not.

Every case is a ``requestedSchema`` (and message) as a server sends it in a form-mode
elicitation, vetted through the public :func:`urlvet.mcp.vet_form`. The secret forms are the
shapes phishing servers and careless integrations write (a login form, a token box, a checkout);
the innocent ones carry the same words about something else (a password hint, a token budget).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import OFFLINE, offline
from urlvet.checks.interaction import read_form, secret_words, words
from urlvet.findings import Decision, Severity
from urlvet.mcp import vet_form


def _schema(**props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props)}


S = {"type": "string"}

SECRET_FORMS: list[tuple[str, dict[str, Any], str | None, set[str]]] = [
    ("login", _schema(username=S, password={**S, "format": "password"}), "Sign in", {"UV701"}),
    ("camel-case new password", _schema(newPassword=S, confirmPassword=S), None, {"UV701"}),
    ("title only", _schema(f1={**S, "title": "Password"}), None, {"UV701"}),
    ("cyrillic a in title", _schema(f1={**S, "title": "Pаssword"}), None, {"UV701"}),
    ("spaced out letters", _schema(p_a_s_s_w_o_r_d=S), None, {"UV701"}),
    ("german", _schema(kennwort={**S, "title": "Passwort"}), None, {"UV701"}),
    ("spanish", _schema(clave={**S, "title": "Contraseña"}), None, {"UV701"}),
    ("pin as a number", _schema(pin={"type": "integer", "minimum": 0}), None, {"UV701"}),
    (
        "one-time code in the description",
        _schema(code={**S, "description": "Enter the 6-digit code from your authenticator app"}),
        None,
        {"UV701"},  # a "6-digit code" is a one-time code; "code" alone names no secret
    ),
    ("zip code", _schema(code={**S, "title": "Postal code"}), None, set()),
    (
        "verification code",
        _schema(code={**S, "description": "Enter the verification code we sent you"}),
        None,
        {"UV701"},
    ),
    ("2fa", _schema(twoFactorCode=S, mfa_code=S), None, {"UV701"}),
    ("abbreviations", _schema(db_pass=S, smtpPw=S, user_pwd=S), None, {"UV701"}),
    ("api key snake", _schema(api_key=S), None, {"UV702"}),
    ("api key camel", _schema(apiKey={**S, "title": "OpenAI API key"}), None, {"UV702"}),
    ("API Key title", _schema(key={**S, "title": "API Key"}), None, {"UV702"}),
    ("x-api-key header", _schema(**{"x-api-key": S}), None, {"UV702"}),
    ("glued upper case", _schema(APIKEY=S), None, {"UV702"}),
    ("bare token", _schema(token=S), None, {"UV702"}),
    ("password titled otherwise", _schema(password={**S, "title": "Choose one"}), None, {"UV701"}),
    (
        "github token",
        _schema(token={**S, "title": "GitHub personal access token"}),
        None,
        {"UV702"},
    ),
    ("oauth client", _schema(client_id=S, client_secret=S), None, {"UV702"}),
    ("aws", _schema(aws_access_key_id=S, aws_secret_access_key=S), None, {"UV702"}),
    ("private key", _schema(privateKey={**S, "title": "SSH private key"}), None, {"UV702"}),
    ("wallet", _schema(seed={**S, "title": "Wallet recovery phrase (12 words)"}), None, {"UV702"}),
    (
        "checkout",
        _schema(cardNumber=S, expiry=S, cvc=S, name_on_card=S),
        "Complete your purchase",
        {"UV703"},
    ),
    ("credit card title", _schema(cc={**S, "title": "Credit card number"}), None, {"UV703"}),
    ("iban", _schema(IBAN=S), None, {"UV703"}),
    ("ssn", _schema(ssn={**S, "title": "Social Security Number"}), None, {"UV704"}),
    ("passport", _schema(passport_number=S), None, {"UV704"}),
    (
        "everything at once",
        _schema(email=S, password=S, api_token=S, card_number=S, ssn=S),
        None,
        {"UV701", "UV702", "UV703", "UV704"},
    ),
    ("message asks", _schema(value=S), "Enter your GitHub password to continue", {"UV705"}),
    (
        "nested field",
        {"type": "object", "properties": {"account": _schema(password=S)}},
        None,
        {"UV701"},
    ),
    ("schema not an object", "password", None, {"UV706"}),  # type: ignore[list-item]
    ("properties a list", {"type": "object", "properties": [S]}, None, {"UV706"}),
    ("field not an object", _schema(a="string"), None, {"UV706"}),  # type: ignore[arg-type]
    ("title not text", _schema(a={**S, "title": ["Password"]}), None, {"UV706"}),
]

INNOCENT_FORMS: list[tuple[str, dict[str, Any], str | None]] = [
    ("the spec's example", _schema(name=S, email={**S, "format": "email"}), "Your details"),
    ("password hint", _schema(password_hint=S, passwordHint=S), None),
    ("reset email", _schema(password_reset_email={**S, "format": "email"}), None),
    (
        "token budget",
        _schema(max_tokens={"type": "integer"}, token_count={"type": "integer"}),
        None,
    ),
    ("token limit title", _schema(limit={"type": "integer", "title": "Max tokens"}), None),
    ("api key id", _schema(api_key_id=S, key_name=S), None),
    ("token expiry", _schema(token_expiry={**S, "format": "date-time"}), None),
    ("pin length", _schema(pin_length={"type": "integer"}), None),
    ("map pin", _schema(map_pin=S), None),
    ("working directory and a pass", _schema(pwd=S, pass_={**S, "title": "Boarding pass"}), None),
    ("otp switch", _schema(otp_enabled={"type": "boolean", "title": "Use a one-time code"}), None),
    (
        "password policy choice",
        _schema(
            policy={**S, "title": "Password policy", "enum": ["strict", "relaxed"]},
            rotate={"type": "boolean", "title": "Rotate access token"},
        ),
        None,
    ),
    (
        "phone for a code",
        _schema(phone={**S, "description": "We will send a verification code to this number"}),
        None,
    ),
    ("issue key", _schema(issue_key={**S, "title": "Jira issue key"}), None),
    ("random seed", _schema(seed={"type": "integer", "title": "Random seed"}), None),
    ("secret question", _schema(secret_question=S), None),
    ("a token that is a ticker", _schema(token={**S, "title": "Token symbol"}), None),
    ("secret santa", _schema(gift={**S, "title": "Secret Santa name"}, secret_scanning=S), None),
    ("secret manager", _schema(secret_name=S, secret_version=S, secret_path=S), None),
    (
        "card holder",
        _schema(card_holder_name=S, card_brand=S, payment_amount={"type": "number"}),
        None,
    ),
    (
        "message names a password it does not ask for",
        _schema(name=S),
        "We never ask for your password.",
    ),
    ("no schema at all", None, "Confirm"),  # type: ignore[list-item]
    ("only choices", _schema(color={**S, "enum": ["red", "green"]}), "Enter your password"),
]


@pytest.mark.parametrize(
    ("schema", "message", "expected"),
    [pytest.param(s, m, e, id=i) for i, s, m, e in SECRET_FORMS],
)
def test_forms_that_ask_for_secrets_are_flagged(
    schema: Any, message: str | None, expected: set[str]
) -> None:
    verdict = vet_form(OFFLINE, schema, message, "stdio")
    assert set(verdict.codes) == expected
    if expected & {"UV701", "UV702", "UV703", "UV706"}:
        assert verdict.decision is Decision.BLOCK  # high: the default policy blocks
    elif expected:
        assert verdict.decision is Decision.WARN
    assert verdict.href is None
    assert verdict.host is None


@pytest.mark.parametrize(
    ("schema", "message"), [pytest.param(s, m, id=i) for i, s, m in INNOCENT_FORMS]
)
def test_innocent_forms_pass(schema: Any, message: str | None) -> None:
    verdict = vet_form(OFFLINE, schema, message)
    assert verdict.codes == ()
    assert verdict.decision is Decision.ALLOW


def test_a_finding_names_every_field_and_where_the_secret_was_read() -> None:
    schema = _schema(user=S, pw={**S, "title": "Password"}, confirm_password=S)
    (finding,) = vet_form(OFFLINE, schema).findings
    assert finding.code == "UV701"
    assert finding.severity is Severity.HIGH
    assert finding.cwe == 522
    fields = finding.evidence["fields"]
    assert [(f["field"], f["where"]) for f in fields] == [
        ("pw", "title"),
        ("confirm_password", "name"),
    ]
    assert "'pw'" in finding.message


def test_the_verdict_url_is_the_schema_as_vetted() -> None:
    schema = _schema(password=S)
    verdict = vet_form(OFFLINE, schema, server="https://mcp.example.com/mcp")
    assert json.loads(verdict.url) == schema
    assert verdict.server is not None
    assert "mcp.example.com" in verdict.server


def test_the_policy_decides_warn_or_block() -> None:
    schema = _schema(password=S, ssn=S)
    assert vet_form(offline(severity={"UV701": "medium"}), _schema(password=S)).decision is (
        Decision.WARN
    )
    strict = offline(thresholds={"warn": "low", "block": "medium"})
    assert vet_form(strict, _schema(ssn=S)).decision is Decision.BLOCK
    ignoring = offline(ignore=["UV7"])
    assert vet_form(ignoring, schema).findings == ()
    by_name = offline(ignore=["password-in-form"])
    assert vet_form(by_name, schema).codes == ("UV704",)


def test_secret_words_read_names_in_every_spelling() -> None:
    for spelling in ("api_key", "apiKey", "API Key", "x-api-key", "APIKEY", "ApiKey", "API-KEY"):
        assert [w.code for w in secret_words(spelling, prose=False)] == ["UV702"], spelling
    assert words("APIKey2") == ["api", "key", "2"]


def test_prose_counts_a_secret_only_when_it_is_asked_for() -> None:
    assert secret_words("Paste your API key here", prose=True)
    assert not secret_words("We will email you a password reset link", prose=True)
    assert not secret_words("Never share your password", prose=True)
    assert secret_words("Your password", prose=False)  # a label names what it asks for
    assert not secret_words("Phone (we text you a one-time code)", prose=False)


def test_an_oversized_or_deep_form_is_unreadable() -> None:
    wide = _schema(**{f"f{n}": S for n in range(300)})
    assert vet_form(OFFLINE, wide).codes == ("UV706",)
    deep: dict[str, Any] = S
    for n in range(12):
        deep = _schema(**{f"l{n}": deep})
    assert vet_form(OFFLINE, deep).codes == ("UV706",)
    assert read_form(wide).problem == "the form has more than 256 fields"


def test_a_lone_surrogate_in_a_form_is_judged_not_raised() -> None:
    verdict = vet_form(OFFLINE, _schema(**{"pass\udfffword": S}), "x\udfff")
    assert verdict.decision in (Decision.ALLOW, Decision.BLOCK, Decision.WARN)
    verdict.model_dump_json()  # the verdict can be written out


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)
_FIELD_NAMES = st.sampled_from(
    ["password", "api_key", "name", "cvv", "token_count", "x", "Pass word", "ssn", "hint"]
)
_FIELDS = st.dictionaries(
    _FIELD_NAMES | st.text(max_size=12),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["string", "integer", "boolean"])},
        optional={"title": st.text(max_size=30), "description": st.text(max_size=60)},
    ),
    max_size=6,
)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(
    schema=_JSON | _FIELDS.map(lambda p: {"type": "object", "properties": p}),
    message=st.none() | st.text(max_size=80) | _JSON,
)
def test_vet_form_never_raises_and_is_deterministic(schema: Any, message: Any) -> None:
    first = vet_form(OFFLINE, schema, message)
    assert first == vet_form(OFFLINE, schema, message)
    assert first.decision is OFFLINE.compiled.decide([f.severity for f in first.findings])
    first.model_dump_json()


def test_the_strict_policy_blocks_what_the_default_only_warns_about() -> None:
    from urlvet import Vetter
    from urlvet.policy import load_policy

    strict = Vetter(load_policy("strict").with_changes(dns={"enabled": False}))
    ssn = _schema(ssn=S)
    asked = (_schema(value=S), "Enter your bank password")
    assert vet_form(OFFLINE, ssn).decision is Decision.WARN
    assert vet_form(strict, ssn).decision is Decision.BLOCK
    assert vet_form(OFFLINE, *asked).decision is Decision.WARN
    assert vet_form(strict, *asked).decision is Decision.BLOCK
