"""UV7xx: the interaction around a URL. Does the server ask for what the protocol forbids?

Two questions, neither about a URL:

- a form-mode elicitation (2025-11-25 ``elicitation/create``, or one inside a 2026-07-28
  ``input_required`` result) that asks for a secret: the protocol says "Servers MUST NOT use form
  mode elicitation to request sensitive information such as passwords, API keys, access tokens,
  or payment credentials" (UV701-UV706);
- a URL request of a kind the client never declared it supports (UV710).

The form rules share one analysis, :func:`form_hits`, of a :class:`FormRequest` (the
elicitation's message and the fields of its ``requestedSchema``); each rule below is registered
for its code, name, severity and documentation, and finds nothing in a URL. UV710 is decided by
the MCP layer, which alone sees the client's capabilities (:mod:`urlvet.mcp.capabilities`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from urlvet.checks.base import CheckContext, Hit, clip, rule
from urlvet.findings import Severity
from urlvet.url import ParsedURL

FormCode = Literal["UV701", "UV702", "UV703", "UV704", "UV705", "UV706"]
"""The codes the form analysis reports."""

UNDECLARED_URL_REQUEST = "UV710"
"""The code of a URL request the client did not declare it supports."""

MAX_FORM_FIELDS = 256
"""More fields than this (nested ones included) make a form unreadable: urlvet does not pass on
what it did not read, and no person fills in such a form."""
MAX_FORM_DEPTH = 8
"""Deeper nesting than this makes a form unreadable (the protocol allows flat forms only)."""
TEXT_SCAN_LIMIT = 4096
"""Characters of one name, title, description or message that are read; longer text is read
up to here (the words that ask for a secret come first in any text a person reads)."""


def _no_url_hits(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
    # A form rule has nothing to say about a URL: the analysis is form_hits().
    return iter(())


DocOnly = Callable[[], None]
"""A form rule as written: its docstring is the documentation, :func:`form_hits` its check."""


def _form_rule(code: str, name: str, severity: Severity, cwe: int) -> Callable[[DocOnly], DocOnly]:
    """Register a form rule: the decorated function's docstring is its documentation."""

    def register(fn: DocOnly) -> DocOnly:
        def check(url: ParsedURL | None, ctx: CheckContext) -> Iterator[Hit]:
            return _no_url_hits(url, ctx)

        check.__doc__ = fn.__doc__
        check.__name__ = fn.__name__
        rule(code, name, severity, kind="interaction", cwe=cwe)(check)
        return fn

    return register


@_form_rule("UV701", "password-in-form", Severity.HIGH, cwe=522)
def password_in_form() -> None:
    """A form elicitation that asks for a password, PIN or one-time code.

    ## What it does
    Reads each field of a form-mode elicitation's `requestedSchema` (its property name, `title`,
    `description` and `format`) and flags one that asks for a password, passphrase, passcode,
    PIN, a one-time or verification code (OTP, 2FA, MFA, SMS code) or the answer to a security
    question. Names are read in every spelling (`new_password`, `newPassword`, `NEW-PASSWORD`,
    `Pass word`, a Cyrillic `а` in `Pаssword`) and in a few languages (`Passwort`, `contraseña`,
    `mot de passe`, `senha`), and the abbreviations `pass`, `pw` and `pwd` after what they open
    (`db_pass`, `smtp_pw`, `user_pwd`; a bare `pwd` is a working directory). Only a field whose
    subject is the secret counts:
    `password_hint`, `password_reset_email`, `pin_length` and `otp_enabled` ask for something
    else. A `format` of `password` (as OpenAPI writes it) counts too.

    ## Why is this bad?
    The protocol forbids it: "Servers MUST NOT use form mode elicitation to request sensitive
    information such as passwords". A form's answers pass through the client, its logs and
    often the model's context; a password belongs on the site's own page, opened with URL mode.
    A server that asks for one in a form is broken or phishing.

    ## Example
    `{"type": "object", "properties": {"password": {"type": "string", "title": "Password"}}}`;
    `{"properties": {"code": {"type": "string", "title": "6-digit code from your
    authenticator app"}}}`.

    ## References
    - MCP 2025-11-25, Elicitation: form mode security
    """


@_form_rule("UV702", "access-secret-in-form", Severity.HIGH, cwe=522)
def access_secret_in_form() -> None:
    """A form elicitation that asks for an API key, an access token, a private key or a secret.

    ## What it does
    Flags a form field that asks for an API key, an access, refresh, bearer, session or
    personal access token, a client secret or any field that is a `secret`, a private,
    secret, signing or SSH key, credentials, a session cookie, a connection string, or a
    wallet's seed or recovery phrase, in every spelling (`api_key`, `apiKey`, `API Key`,
    `x-api-key`, `APIKEY`). Fields about a secret that are not one are left alone:
    `token_count`, `max_tokens`, `api_key_id`, `token_expiry`, `secret_question`.

    ## Why is this bad?
    The protocol names "API keys, access tokens" as what a form must never ask for. A token
    typed into a form lands in the client's logs and the model's context and can be replayed;
    the server should send the person to the service's own page (URL mode) and obtain the
    token there itself.

    ## Example
    `{"properties": {"apiKey": {"type": "string", "title": "OpenAI API key"}}}`.

    ## References
    - MCP 2025-11-25, Elicitation: form mode security; URL mode elicitation for sensitive data
    """


@_form_rule("UV703", "payment-credential-in-form", Severity.HIGH, cwe=522)
def payment_credential_in_form() -> None:
    """A form elicitation that asks for a card number, its security code or a bank account.

    ## What it does
    Flags a form field that asks for a payment card number (`card_number`, `ccnum`,
    `Credit card`), its verification code (`cvv`, `cvc`, `csc`, `card security code`), an IBAN, a
    bank account or routing number, or a sort code. `card_holder_name`, `card_brand` and
    `payment_amount` are left alone.

    ## Why is this bad?
    The protocol names "payment credentials" among what a form must never ask for: payment
    details belong on the payment provider's page, which URL mode opens, where the client and
    the model never see them.

    ## Example
    `{"properties": {"number": {"type": "string", "title": "Card number"}, "cvc":
    {"type": "string"}}}`.

    ## References
    - MCP 2025-11-25, Elicitation: form mode security
    - PCI DSS: card data outside the payment page widens its scope
    """


@_form_rule("UV704", "government-id-in-form", Severity.MEDIUM, cwe=359)
def government_id_in_form() -> None:
    """A form elicitation that asks for a social security or other national identity number.

    ## What it does
    Flags a form field that asks for a social security number (`ssn`), a social or national
    insurance number, a national identity number, a taxpayer identification number or a
    passport number.

    ## Why is this bad?
    Such a number is not a password, but it opens accounts and credit in the person's name,
    and in a form it passes through the client, its logs and the model's context. The default
    policy warns; the strict policy blocks.

    ## Example
    `{"properties": {"ssn": {"type": "string", "title": "Social Security Number"}}}`.

    ## References
    - MCP 2025-11-25, Elicitation: "Sensitive information" and form mode security
    """


@_form_rule("UV705", "secret-named-in-form-message", Severity.MEDIUM, cwe=522)
def secret_named_in_form_message() -> None:
    """A form whose message asks for a secret, although no field is named for one.

    ## What it does
    Reads the elicitation's `message` with the vocabulary of UV701-UV704 and flags a form
    whose message asks for a password, token, key, card or identity number while it has a
    free-text field that no field rule flagged (a field named `value` under the message
    `Enter your GitHub password`). Text that names a secret only to describe something else
    (`We will email you a password reset link`) is left alone.

    ## Why is this bad?
    A person fills in the field the message tells them to: a server that keeps the secret out
    of its field names still asks for it. The message alone can also mention a password
    innocently, so this warns under the default policy rather than blocking.

    ## Example
    Message `Enter your bank password to continue`, schema
    `{"properties": {"value": {"type": "string"}}}`.
    """


@_form_rule("UV706", "unreadable-form", Severity.HIGH, cwe=20)
def unreadable_form() -> None:
    """A form elicitation whose requested schema cannot be read.

    ## What it does
    Flags a form-mode elicitation whose `requestedSchema` is not an object with an object of
    `properties`, whose fields are not objects, that nests fields deeper than 8 levels or has
    more than 256 of them, or whose texts are not strings.

    ## Why is this bad?
    urlvet cannot show that such a form asks for no secret, and a lenient client may still
    show parts of it. What urlvet cannot read it does not pass on.

    ## Example
    `{"requestedSchema": "password"}`, `{"requestedSchema": {"properties": [...]}}`.
    """


@_form_rule(UNDECLARED_URL_REQUEST, "undeclared-url-request", Severity.CRITICAL, cwe=940)
def undeclared_url_request() -> None:
    """A URL request of a kind the client did not declare it supports.

    ## What it does
    Compares each URL request from the server with the capabilities the client declared:
    a 2025-11-25 URL-mode `elicitation/create` or `-32042` error needs `elicitation.url` in
    the `initialize` request (an empty `elicitation: {}` means form mode only); a draft
    `interaction/create` or `-32003` error of type `ua` needs `ua` in
    `userInteraction.types`; a URL elicitation inside a 2026-07-28 `input_required` result
    needs `elicitation.url` in the capabilities the client sent with the request it answers
    (`_meta["io.modelcontextprotocol/clientCapabilities"]`). `urlvet proxy` declines such a
    request on the client's behalf and says so on stderr. When the proxy saw no declaration
    at all (it started after the client's `initialize`), it does not guess.

    ## Why is this bad?
    The protocol says "Servers MUST NOT send elicitation requests with modes that are not
    supported by the client" and, in the draft, "MUST NOT send an interaction request to the
    client of a type that is not explicitly declared". A client that never meant to open
    links may still show one it was not built to vet; a server that sends one anyway is
    broken or probing for such a client.

    ## Example
    A client that sent `"capabilities": {"elicitation": {}}` receives
    `{"method": "elicitation/create", "params": {"mode": "url", "url": "https://..."}}`.

    ## References
    - MCP 2025-11-25, Elicitation: Capabilities; draft User Interaction: Capabilities
    """


# -- what a form asks for ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of a form's ``requestedSchema``, as a person sees it."""

    path: str
    """Where it is: the property name, or names joined by dots for nested fields."""
    name: str
    """The property name."""
    title: str | None = None
    description: str | None = None
    format: str | None = None
    free_text: bool = True
    """True when a person types the answer: a string or a number (a PIN, a card number)
    without ``enum``/``oneOf``/``anyOf`` choices. A boolean or a choice holds no secret."""


@dataclass(frozen=True, slots=True)
class FormRequest:
    """A form-mode elicitation, read for what it asks: its message and its fields."""

    message: str | None
    fields: tuple[FormField, ...]
    problem: str | None = None
    """Why the requested schema could not be read (then ``fields`` may be incomplete)."""


class FormText(str):
    """A form's ``requestedSchema`` as compact JSON text (:func:`form_text`), where an audit
    keeps a URL: in its keys, beside URLs, and sent to its workers.

    Never equal to a plain string, so that a URL spelt like a form (or a form like a URL)
    never shares a verdict with it."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is FormText and str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((FormText, str(self)))

    def __reduce__(self) -> tuple[type[FormText], tuple[str]]:
        return FormText, (str(self),)


class _Unreadable(Exception):
    pass


def read_form(requested_schema: Any, message: Any = None) -> FormRequest:
    """The fields of a ``requestedSchema`` and the message beside it. Never raises.

    Nested ``properties`` and ``items`` are read too: the protocol allows flat forms only, but
    a client may show more, and a secret must not hide one level down.
    """
    text = message if isinstance(message, str) else None
    problem = None if message is None or isinstance(message, str) else "the message is not text"
    fields: list[FormField] = []
    if requested_schema is None:  # no schema: a form with nothing to type in
        return FormRequest(text, (), problem)
    try:
        if not isinstance(requested_schema, dict):
            raise _Unreadable("the requestedSchema is not an object")
        _walk(requested_schema, "", 0, fields)
    except _Unreadable as exc:
        problem = str(exc)
    return FormRequest(text, tuple(fields), problem)


def _walk(schema: Mapping[str, Any], prefix: str, depth: int, out: list[FormField]) -> None:
    if depth > MAX_FORM_DEPTH:
        raise _Unreadable(f"the form nests fields deeper than {MAX_FORM_DEPTH} levels")
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise _Unreadable("the properties of the requestedSchema are not an object")
    for name, field_schema in props.items():
        path = f"{prefix}{name}"
        if not isinstance(field_schema, dict):
            raise _Unreadable(f"field {clip(path, 60)!r} is not an object")
        if len(out) >= MAX_FORM_FIELDS:
            raise _Unreadable(f"the form has more than {MAX_FORM_FIELDS} fields")
        texts = [field_schema.get(k) for k in ("title", "description", "format")]
        if any(t is not None and not isinstance(t, str) for t in texts):
            raise _Unreadable(
                f"field {clip(path, 60)!r} has a title, description or format that is not text"
            )
        title, description, fmt = texts
        out.append(FormField(path, name, title, description, fmt, _typed_in(field_schema)))
        if "properties" in field_schema:
            _walk(field_schema, f"{path}.", depth + 1, out)
        items = field_schema.get("items")
        if isinstance(items, dict) and "properties" in items:
            _walk(items, f"{path}[].", depth + 1, out)


_NOT_TYPED = frozenset({"boolean", "object", "null"})


def _typed_in(field_schema: Mapping[str, Any]) -> bool:
    if any(k in field_schema for k in ("enum", "oneOf", "anyOf", "const")):
        return False
    kind = field_schema.get("type", "string")
    kinds = kind if isinstance(kind, list) else [kind]
    if kinds == ["array"]:
        items = field_schema.get("items")
        return isinstance(items, dict) and _typed_in(items)
    # A missing or unknown type is read as text: a client may well show a text box.
    return not kinds or any(not isinstance(k, str) or k not in _NOT_TYPED for k in kinds)


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _phrase_list(text: str) -> tuple[str, ...]:
    return tuple(" ".join(p.split()) for p in text.split(","))


# -- the vocabulary of secrets -------------------------------------------------------------------

_VOCABULARY: dict[FormCode, tuple[str, ...]] = {
    "UV701": _phrase_list(
        """password, passwd, passphrase, pass phrase, passcode, pass code, pin, pin code, pin
        number, otp, totp, hotp, one time code, one time password, one time pin, one time
        passcode, verification code, security code, 2fa, 2fa code, mfa, mfa code, two factor
        code, authenticator code, auth code, authorization code, sms code, login code, digit
        code, access code, security answer, secret answer, passwort, kennwort, contrasena, mot
        de passe, senha, wachtwoord, pass, pw, pwd"""
    ),
    "UV702": _phrase_list(
        """api key, access key, secret key, private key, signing key, ssh key, encryption key,
        master key, auth key, secret, client secret, app secret, token, access token, api token,
        refresh token, bearer token, auth token, id token, session token, personal access token,
        pat token, bearer, credential, credentials, session cookie, auth cookie, connection
        string, seed phrase, seed words, recovery phrase, recovery words, secret phrase,
        mnemonic, mnemonic phrase, wallet seed"""
    ),
    "UV703": _phrase_list(
        """card number, credit card, credit card number, debit card, debit card number, cc number,
        cc num, ccnum, cvv, cvc, csc, cvn, card verification, card verification code, card
        verification value, card security code, card code, iban, bank account, bank account
        number, routing number, sort code, aba number"""
    ),
    "UV704": _phrase_list(
        """ssn, social security, social security number, social insurance number, national
        insurance number, nino, national id, national id number, national identity number,
        taxpayer id, taxpayer identification number, tax id, itin, passport number"""
    ),
}

# What a field is about when a secret's name is only its first part: `password_hint`,
# `token_count`, `api_key_id`, `pin_length` ask for no secret.
_CONTINUATIONS = _word_set(
    """hint hints reset length len count counts policy strength rule rules requirement
    requirements manager expiry expiration expires expired expire age change changed updated
    last link links url uri email mail page type format name label id ids hash hashed salt
    question questions enabled disabled required exists protected limit limits usage used
    budget price cost balance amount symbol address contract standard decimals supply ticker
    holder brand issuer network method methods provider status scope scopes permission
    permissions description title help tip tips visible visibility display prompt prompts
    rotation created lifetime ttl issued prefix suffix santa scanning scan scanner detection
    sharing store storage version versions path paths engine mount backend service services
    level levels group groups reference ref arn location names list"""
)
# Words before a secret's name that make it something else: a `map_pin`, `max_tokens`.
# Abbreviations that name a password only after what it opens: `db_pass`, `smtp_pw`, `user_pwd`
# (a bare `pass` is a boarding pass or a verdict, `pwd` a working directory).
_ONLY_AFTER_QUALIFIER = frozenset({("pass",), ("pw",), ("pwd",)})
_QUALIFIERS = _word_set(
    """db database smtp imap pop ftp sftp ssh user admin root login account wifi email mail vpn
    proxy redis mysql postgres pg ldap app master my"""
)
_NOT_AFTER: dict[str, frozenset[str]] = {
    "pin": frozenset({"map", "location", "drop", "gps", "board"}),
    "token": _word_set(
        """max min num number total input output prompt completion context stop special eos
        bos pad unk cls sep mask design nft erc erc20 game"""
    ),
    "secret": frozenset({"top"}),
}
# In prose, a secret counts only when the text asks for it, and not when it says what the
# server will do with one or warns about one.
_ASKING = _word_set(
    """enter type paste provide input give supply submit confirm reenter re your current new
    add insert fill put need needs require requires requested required"""
)
_NOT_ASKING = _word_set(
    """send sent sends email emailed text texted receive received reset forgot forgotten
    never not don t dont no share shared"""
)
PROSE_WINDOW = 4
"""How many words before a secret's name are read for whether the text asks for it."""
LABEL_WORDS = 8
"""A title of more words than this is read as prose, a shorter one as a label."""

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def words(text: str) -> list[str]:
    """The words of a name, a title or prose, lower case: ``apiKey``, ``API_KEY``, ``Api Key``
    and ``x-api-key`` give ``api``, ``key``. Accents are dropped and letters that look Latin
    (a Cyrillic ``а``) read as Latin; single letters spaced out (``p a s s``) are joined."""
    text = unicodedata.normalize("NFKC", text[:TEXT_SCAN_LIMIT])
    if not text.isascii():
        text = _latin_lookalikes(text)
    out: list[str] = []
    letters: list[str] = []
    for w in _WORD.findall(text):
        if len(w) == 1 and w.isalpha():
            letters.append(w.lower())
            continue
        if letters:
            out.extend(["".join(letters)] if len(letters) >= 3 else letters)
            letters = []
        out.append(w.lower())
    if letters:
        out.extend(["".join(letters)] if len(letters) >= 3 else letters)
    return out


def _latin_lookalikes(text: str) -> str:
    from urlvet.confusables import remove_diacritics, skeleton

    out = []
    for c in remove_diacritics(text):
        if c.isascii() or not c.isalpha():
            out.append(c)
            continue
        s = skeleton(c)
        out.append(s if s.isascii() and s.isalpha() else c)
    return "".join(out)


def _phrases() -> dict[tuple[str, ...], FormCode]:
    table: dict[tuple[str, ...], FormCode] = {}
    for code, phrases in _VOCABULARY.items():
        for phrase in phrases:
            tokens = tuple(words(phrase))
            variants = {tokens, ("".join(tokens),)}
            if tokens[-1] not in ("token", "pin", "secret", "bearer", "cvv", "cvc", "csc"):
                variants.add((*tokens[:-1], tokens[-1] + "s"))  # plurals: api_keys
            for v in variants:
                table.setdefault(v, code)
    return table


_PHRASES = _phrases()
_LONGEST = max(len(p) for p in _PHRASES)


@dataclass(frozen=True, slots=True)
class SecretWord:
    """A name of a secret found in a text."""

    code: FormCode
    """The rule it falls under (UV701-UV704)."""
    phrase: str
    """The words found, as the text spells them once split (``api key``)."""


def secret_words(text: str, prose: bool) -> list[SecretWord]:
    """The names of secrets that ``text`` asks for, read as a label (a field's name or short
    title) or as ``prose`` (a description, a message)."""
    tokens = words(text)
    found: list[SecretWord] = []
    i = 0
    while i < len(tokens):
        match = _match_at(tokens, i, prose)
        if match is None:
            i += 1
            continue
        found.append(match[0])
        i += match[1]
    return found


def _match_at(tokens: list[str], i: int, prose: bool) -> tuple[SecretWord, int] | None:
    for size in range(min(_LONGEST, len(tokens) - i), 0, -1):
        phrase = tuple(tokens[i : i + size])
        code = _PHRASES.get(phrase)
        if code is None:
            continue
        following = tokens[i + size] if i + size < len(tokens) else None
        before = tokens[i - 1] if i else None
        if following in _CONTINUATIONS or before in _NOT_AFTER.get(phrase[-1], ()):
            return None
        if phrase in _ONLY_AFTER_QUALIFIER and before not in _QUALIFIERS:
            return None
        before_words = tokens[max(0, i - PROSE_WINDOW) : i]
        if any(w in _NOT_ASKING for w in before_words):
            return None  # "we will send a verification code", "never share your password"
        if prose and not any(w in _ASKING for w in before_words):
            return None
        return SecretWord(code, " ".join(phrase)), size
    return None


# -- the one analysis of a form ------------------------------------------------------------------

_WHAT: dict[FormCode, str] = {
    "UV701": "a password, PIN or one-time code",
    "UV702": "an API key, access token or other secret",
    "UV703": "payment card or bank account details",
    "UV704": "a social security or other national identity number",
}


# Words that name a secret only when nothing says otherwise: a field named `token` titled
# `Token symbol` asks for a ticker, and a person types what the title asks for.
_AMBIGUOUS_NAMES = frozenset({"token", "secret", "pin", "bearer", "credential", "credentials"})


def _field_secrets(f: FormField) -> list[tuple[str, SecretWord]]:
    """(where, word) for each name of a secret a field asks for."""
    out = [("name", w) for w in secret_words(f.name, prose=False)]
    if f.title:
        prose = len(words(f.title)) > LABEL_WORDS
        titled = [("title", w) for w in secret_words(f.title, prose=prose)]
        if not titled:
            out = [(where, w) for where, w in out if w.phrase not in _AMBIGUOUS_NAMES]
        out += titled
    if f.description:
        out += [("description", w) for w in secret_words(f.description, prose=True)]
    if f.format and f.format.strip().lower() == "password":
        out.append(("format", SecretWord("UV701", "password")))
    return out


def form_hits(form: FormRequest) -> Iterator[tuple[FormCode, Hit]]:
    """Every (code, hit) of the form rules on one form: one hit per code, naming its fields."""
    if form.problem is not None:
        yield (
            "UV706",
            Hit(
                f"urlvet cannot read this form ({form.problem}), so it cannot show that the form "
                "asks for no secret.",
                {"problem": form.problem},
            ),
        )
    by_code: dict[FormCode, list[dict[str, str]]] = {}
    for f in form.fields:
        if not f.free_text:
            continue
        seen: set[FormCode] = set()
        for where, word in _field_secrets(f):
            if word.code in seen:
                continue
            seen.add(word.code)
            by_code.setdefault(word.code, []).append(
                {"field": clip(f.path, 80), "where": where, "words": word.phrase}
            )
    for code in sorted(by_code):
        fields = by_code[code]
        named = ", ".join(repr(f["field"]) for f in fields[:5])
        more = f" and {len(fields) - 5} more" if len(fields) > 5 else ""
        yield (
            code,
            Hit(
                f"The form asks for {_WHAT[code]} (field {named}{more}): a server must never ask "
                "for secrets in a form; they belong on the service's own page (URL mode).",
                {"fields": fields[:32], "count": len(fields)},
            ),
        )
    if by_code or not form.message or not any(f.free_text for f in form.fields):
        return
    named_in_message = secret_words(form.message, prose=True)
    if named_in_message:
        word = named_in_message[0]
        yield (
            "UV705",
            Hit(
                f"The form's message asks for {_WHAT[word.code]} ({word.phrase!r}), and the form "
                "has a field to type it in.",
                {"words": word.phrase, "as": word.code},
            ),
        )
