"""Plain URLs: judged once per (head, shape, server) and the verdict reused.

A plain URL (``urlvet.url.plain_split``) is ``http(s)://`` + an authority + a tail of
unreserved characters that the URL parser copies as it is and from which no URL can be read.
Where every rule that can fire is blind to such a tail (``Rule.plain_tail``), the engine vets
the head with a representative tail (``/`` or ``/x``) once and gives every plain URL of that
head and shape the same verdict with its own URL and href. These tests hold that to the
ordinary path (``host_cache_size=0``), on random tails over every host of the corpus, and
show that the comparison catches a rule wrongly declared blind.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from support.heads import corpus_heads
from urlvet import Policy, Verdict, Vetter
from urlvet.checks.registry import rules as all_rules
from urlvet.url import PLAIN_PATH, PLAIN_ROOT, InvalidURL, parse, plain_split

OFFLINE = {"dns": {"enabled": False}}

# The rules that declare themselves blind to a plain tail. Adding a rule to this set is a
# claim about what it reads: the equivalence tests below must then still pass.
BLIND = {
    "UV100",  # the parse error: a plain tail cannot make a parseable head fail, nor the reverse
    "UV101",  # scheme and host
    "UV102",  # scheme
    "UV103",  # user info (in the head)
    "UV104",  # user info and host; the raw text only when it holds a backslash (never plain)
    "UV105",  # the length: a URL over the policy's limit is never taken as plain
    "UV106",  # hidden characters: a plain tail holds none, the head is the same text
    "UV107",  # port and host
    "UV206",  # the host as written (in the head)
    "UV210",  # URLs carried in the query: a plain tail carries none
    "UV211",  # the whole href, but only when the policy lists URLs (a callable decides)
    "UV212",  # whether the path is the root: the shape keeps that
    "UV213",  # URLs carried in the query
    "UV214",  # URLs carried in the query
    "UV404",  # scheme, host and port, and whether the server is local
    "UV406",  # redirect_uri parameters: URLs carried in the query
}

# The rules blind to a plain tail except on hosts that a trusted-third-party entry with a
# path names (Rule.reads_plain_tail_on): trust in github.com/login/oauth depends on the path.
BLIND_ON_SOME_HOSTS = {"UV401", "UV402", "UV403", "UV405"}


def test_the_blind_rules_are_the_ones_reviewed() -> None:
    declared = {code for code, r in all_rules().items() if r.plain_tail and not r.per_host}
    assert declared == BLIND
    some = {code for code, r in all_rules().items() if r.reads_plain_tail_on is not None}
    assert some == BLIND_ON_SOME_HOSTS
    assert not some & declared


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/", ("https://example.com", "/", PLAIN_ROOT)),
        (
            "https://example.com/a/b?x=1&y=2#top",
            ("https://example.com", "/a/b?x=1&y=2#top", PLAIN_PATH),
        ),
        ("http://u:p@example.com:8080/?q", ("http://u:p@example.com:8080", "/?q", PLAIN_ROOT)),
        ("https://example.com/#frag", ("https://example.com", "/#frag", PLAIN_ROOT)),
        ("https://bücher.de/x", ("https://bücher.de", "/x", PLAIN_PATH)),
        ("https://example.com", None),  # no path as written
        ("HTTPS://example.com/a", None),  # the scheme as written is not lower case
        ("ftp://example.com/a", None),
        ("https://example.com/a/../b", None),  # dot segments are rewritten
        ("https://example.com/./a", None),
        ("https://example.com/a/.", None),
        ("https://example.com/a%2Fb", None),  # escapes
        ("https://example.com/a b", None),  # encoded by the parser
        ("https://example.com/a?u=https://evil.example/", None),  # a URL in the query
        ("https://example.com/a?u=aHR0cHM6Ly9ldmlsLmV4YW1wbGUv", None),  # base64 of "https://"
        ("https://example.com\\@evil.example/a", None),  # a backslash in the authority
        ("https://example.com/a\\b", None),
        ("https://example.com/a?b#c?d", None),
        ("https://example.com/a\tb", None),  # tabs are removed by the parser
        ("https://example.com/?a'b", None),  # encoded in special queries
        ("https://example.com?x/y", None),  # the query starts before any '/'
        ("https://example.com#x/y", None),
    ],
)
def test_plain_split(url: str, expected: tuple[str, str, str] | None) -> None:
    assert plain_split(url) == expected


TAIL_CHARS = "abcXYZ019-._~"


def _random_tail(rng: random.Random) -> str:
    def run(alphabet: str, n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    path = "/" + "/".join(run(TAIL_CHARS, rng.randrange(0, 6)) for _ in range(rng.randrange(1, 4)))
    tail = path
    if rng.random() < 0.6:
        tail += "?" + run(TAIL_CHARS + "=&", rng.randrange(0, 12))
    if rng.random() < 0.3:
        tail += "#" + run(TAIL_CHARS + "=&/", rng.randrange(0, 8))
    return tail


def _heads() -> list[str]:
    return corpus_heads()


def test_the_parser_copies_a_plain_tail_into_the_href() -> None:
    rng = random.Random(7)
    checked = 0
    for head in _heads():
        try:
            root = parse(head + PLAIN_ROOT).href
        except InvalidURL:
            continue
        for _ in range(5):
            tail = _random_tail(rng)
            if plain_split(head + tail) is None:
                continue  # a dot segment drawn at random: not plain
            assert parse(head + tail).href == root[:-1] + tail, head + tail
            checked += 1
    assert checked > 3000


def _mismatches(
    policy: dict[str, object], urls: list[str], servers: tuple[str | None, ...]
) -> list[str]:
    fast = Vetter(Policy.model_validate(policy))
    slow = Vetter(Policy.model_validate(policy), host_cache_size=0)
    bad = []
    for server in servers:
        for url in urls:
            got, want = fast.vet_offline(url, server), slow.vet_offline(url, server)
            if got != want:
                bad.append(f"{url!r} from {server}: {got.codes} plain, {want.codes} ordinary")
    return bad


def _plain_urls(count_per_head: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [h + _random_tail(rng) for h in _heads() for _ in range(count_per_head)]


def test_plain_urls_get_the_verdicts_of_the_ordinary_path() -> None:
    urls = _plain_urls(4, seed=1)
    assert len(urls) > 4000
    assert sum(plain_split(u) is not None for u in urls) > 0.8 * len(urls)
    bad = _mismatches(OFFLINE, urls, (None, "stdio", "https://mcp.example.com/mcp"))
    assert not bad, "\n".join(bad[:20])


def test_plain_urls_agree_under_a_policy_that_lists_urls_and_domains() -> None:
    policy = {
        **OFFLINE,
        "urls": {"blocked": ["https://shop.example.com/pay/now?x=1"]},
        "domains": {"allowed": ["wiki.corp"], "blocked": ["badcorp.com"]},
        "limits": {"max_url_length": 40},
    }
    urls = [
        "https://shop.example.com/pay/later",
        "https://shop.example.com/pay/now?x=1",  # listed: same head and shape as the one before
        "https://shop.example.com/pay/now?x=1#part",  # listed too (the fragment is ignored)
        "https://shop.example.com/" + "a" * 60,  # over the policy's limit
        *_plain_urls(1, seed=2),
    ]
    bad = _mismatches(policy, urls, (None,))
    assert not bad, "\n".join(bad[:20])
    vetter = Vetter(Policy.model_validate(policy))
    assert vetter.vet_offline(urls[0]).codes == ()
    assert vetter.vet_offline(urls[1]).codes == ("UV211",)
    assert "UV105" in vetter.vet_offline(urls[3]).codes


def test_a_plain_url_gets_its_own_url_and_href() -> None:
    vetter = Vetter(Policy.model_validate(OFFLINE))
    first = vetter.vet_offline("https://Bücher.DE:443/a?b=c")
    second = vetter.vet_offline("https://Bücher.DE:443/other/path#x")
    assert (first.url, first.href) == (
        "https://Bücher.DE:443/a?b=c",
        "https://xn--bcher-kva.de/a?b=c",
    )
    assert (second.url, second.href) == (
        "https://Bücher.DE:443/other/path#x",
        "https://xn--bcher-kva.de/other/path#x",
    )
    # The derived verdict is a proper model: equal to one built and validated from its values.
    rebuilt = Verdict.model_validate(second.model_dump())
    assert rebuilt == second
    assert rebuilt.model_dump() == second.model_dump()
    assert second.model_fields_set == rebuilt.model_fields_set
    assert second.to_json_dict()["href"] == "https://xn--bcher-kva.de/other/path#x"


def test_plain_urls_are_judged_once_per_head_and_shape() -> None:
    vetter = Vetter(Policy.model_validate(OFFLINE))
    for i in range(100):
        vetter.vet_offline(f"https://example.com/item/{i}?page={i}")
        vetter.vet_offline(f"https://example.com/?page={i}")
    assert set(vetter._plain_cache) == {
        ("https://example.com", PLAIN_PATH, None),
        ("https://example.com", PLAIN_ROOT, None),
    }


def test_messages_and_dns_keep_the_ordinary_path() -> None:
    vetter = Vetter(Policy.model_validate(OFFLINE))
    # The message rules read the message: a URL with one is vetted in full.
    got = vetter.vet_offline("https://example.com/a", message="Sign in to paypal.com to continue")
    assert "UV502" in got.codes
    assert not vetter._plain_cache


@contextmanager
def _declared_blind(code: str) -> Iterator[None]:
    rule = all_rules()[code]
    before = rule.plain_tail
    object.__setattr__(rule, "plain_tail", True)
    try:
        yield
    finally:
        object.__setattr__(rule, "plain_tail", before)


def test_a_rule_wrongly_declared_blind_is_caught() -> None:
    # UV211 reads the href when the policy lists URLs; declared blind regardless, the listed
    # URL inherits the verdict of the first URL of its shape, and the comparison shows it.
    policy = {**OFFLINE, "urls": {"blocked": ["https://shop.example.com/pay/now"]}}
    urls = ["https://shop.example.com/pay/later", "https://shop.example.com/pay/now"]
    assert not _mismatches(policy, urls, (None,))
    with _declared_blind("UV211"):
        assert _mismatches(policy, urls, (None,))


REMOTE = "https://mcp.example.com/mcp"
TRUSTED_POLICY = {
    **OFFLINE,
    "trusted_third_parties": [
        "github.com/login/oauth",
        "accounts.google.com",
        "*.okta.com/oauth2",
        "*.auth0.com",
    ],
}
TRUSTED_URLS = [
    # a path-prefixed entry: the path decides, so these keep the ordinary path
    "https://github.com/login/oauth/authorize?client_id=abc&state=xyz",
    "https://github.com/login/oauthx",
    "https://github.com/login/oauth",
    "https://github.com/acme/tool/releases",
    "https://github.com/",
    "https://acme.okta.com/oauth2/v1/authorize?client_id=1",
    "https://acme.okta.com/app/acme/sso",
    # entries for the whole host: shared shapes
    "https://accounts.google.com/o/oauth2/v2/auth?client_id=1&scope=email",
    "https://accounts.google.com/signin",
    "https://tenant.auth0.com/authorize?client_id=1",
    "https://tenant.auth0.com/u/login",
    # http: no entry applies
    "http://github.com/login/oauth/authorize",
    "http://github.com/acme",
    # the server's own site, and another
    "https://mcp.example.com/oauth/authorize?client_id=1",
    "https://example-billing.net/pay/now",
]


def test_server_rules_agree_on_trusted_third_parties_with_and_without_paths() -> None:
    bad = _mismatches(TRUSTED_POLICY, TRUSTED_URLS, (None, "stdio", REMOTE))
    assert not bad, "\n".join(bad)
    vetter = Vetter(Policy.model_validate(TRUSTED_POLICY))
    codes = {u: set(vetter.vet_offline(u, REMOTE).codes) for u in TRUSTED_URLS}
    assert "UV403" in codes["https://github.com/login/oauth/authorize?client_id=abc&state=xyz"]
    assert "UV401" in codes["https://github.com/acme/tool/releases"]
    assert "UV403" in codes["https://acme.okta.com/oauth2/v1/authorize?client_id=1"]
    assert "UV401" in codes["https://acme.okta.com/app/acme/sso"]
    assert "UV403" in codes["https://accounts.google.com/signin"]
    assert "UV401" in codes["https://example-billing.net/pay/now"]
    # Where a path decides trust, the head's shape is not shared; elsewhere it is.
    shapes = {}
    for (head, _, server), shape in vetter._plain_cache.items():
        if server is not None:
            shapes.setdefault(head, set()).add(shape is not None)
    assert shapes["https://github.com"] == {False}
    assert shapes["https://acme.okta.com"] == {False}
    assert shapes["https://accounts.google.com"] == {True}
    assert shapes["https://tenant.auth0.com"] == {True}
    assert shapes["http://github.com"] == {True}


def test_a_host_where_the_path_decides_trust_is_caught_if_shared() -> None:
    # Without the condition, github.com's URLs would share the verdict of the first one
    # seen: the comparison shows it.
    urls = ["https://github.com/acme/tool", "https://github.com/login/oauth/authorize"]
    assert not _mismatches(TRUSTED_POLICY, urls, (REMOTE,))
    rules = [all_rules()[code] for code in sorted(BLIND_ON_SOME_HOSTS)]
    before = [r.reads_plain_tail_on for r in rules]
    for r in rules:
        object.__setattr__(r, "reads_plain_tail_on", lambda url, settings: False)
    try:
        assert _mismatches(TRUSTED_POLICY, urls, (REMOTE,))
    finally:
        for r, b in zip(rules, before, strict=True):
            object.__setattr__(r, "reads_plain_tail_on", b)


# --- the audit's records --------------------------------------------------------------------


def test_audit_records_of_plain_urls_are_those_of_their_verdicts() -> None:
    from urlvet.audit.pipeline import RecordVetter

    rng = random.Random(3)
    heads = _heads()[:400]
    urls = [h + _random_tail(rng) for h in heads]
    # Secrets in the tail, in the head, and names that only look like secrets.
    urls += [
        f"{h}{tail}"
        for h in heads[:60]
        for tail in (
            "/cb?code=abc123&state=1",
            "/x?token=t0ps3cr3t",
            "/x#access_token=eyJhbGci0iJ",
            "/x?token_type=bearer",
            "/x?id=1&session=9f8e7d",
        )
    ]
    urls += [
        "https://admin:hunter2@example.com/a/b",
        "https://ghp_abcdefghijklmnop1234@github.com/x",
        "https://google.com@evil.example/login",
        "https://user@example.com/a?b=c",
    ]
    policy = Policy.model_validate(OFFLINE)
    for redact in (True, False):
        for with_json in (True, False):
            fast = RecordVetter(Vetter(policy), None, redact, with_json)
            slow = RecordVetter(Vetter(policy, host_cache_size=0), None, redact, with_json)
            for server in (None, "stdio"):
                for url in urls:
                    key = (url, server, None)
                    assert fast(key) == slow(key), (url, server, redact, with_json)


def test_the_quick_secret_test_never_misses_a_secret_the_redactor_finds() -> None:
    from urlvet.audit.output.redact import _EXACT_NAMES, secrets_in, tail_may_hold_secrets

    rng = random.Random(5)
    names = [*sorted(_EXACT_NAMES), "my_token", "X-Session-Id", "apiKey", "private-key", "id"]
    checked = 0
    for _ in range(3000):
        params = [
            f"{rng.choice([*names, 'page', 'q', 'ref'])}={rng.choice(['', 'v', 'abc123'])}"
            for _ in range(rng.randrange(1, 4))
        ]
        sep = rng.choice(["?", "#", "?a=1#", "/x;"])
        tail = "/p" + sep + "&".join(params)
        if secrets_in("https://example.com" + tail):
            assert tail_may_hold_secrets(tail), tail
            checked += 1
    assert checked > 500
