"""URLs that carry a URL in their query: the rules that read the query run on the URL itself,
every other rule's findings come from the plain shape of its head and path.

A URL of ``urlvet.url.query_split`` is a plain head and path, then a query (and fragment) of
characters that the URL parser copies as they are. The rules that declare that they ignore
such a query (``Rule.plain_query``) have the same hits on it as on head + path, a plain URL
whose shape the engine already shares; the rules that read it (``Rule.reads_query``: UV210,
UV213, UV214, UV406) run on the URL, built from its head's parse. These tests hold that to
the ordinary path (``host_cache_size=0``) on hostile carried URLs over every host of the
corpus, and show that the comparison catches a rule wrongly declared.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from support.heads import corpus_heads
from urlvet import Policy, Vetter
from urlvet.audit.pipeline import RecordVetter
from urlvet.checks.registry import rules as all_rules
from urlvet.evaluate import default_corpus_files, load_cases
from urlvet.server import Server, as_server
from urlvet.url import InvalidURL, carried_urls, parse, parse_plain, plain_split, query_split

OFFLINE = {"dns": {"enabled": False}}
REMOTE = "https://mcp.example.com/mcp"
SERVERS = (None, "stdio", REMOTE)

# The rules that declare that they ignore a query of URL characters, and the ones that read
# it. Adding a rule to either set is a claim about what it reads: the equivalence tests
# below must then still pass.
IGNORE_QUERY = {
    "UV100",  # the parse error: such a query never makes a parseable head and path fail
    "UV101",  # scheme and host
    "UV102",  # scheme
    "UV103",  # user info (in the head)
    "UV104",  # user info and host; the raw text only when it holds a backslash (never here)
    "UV105",  # the length: a URL over the policy's limit keeps the ordinary path
    "UV106",  # hidden characters: the query and fragment hold only printable ASCII
    "UV107",  # port and host
    "UV206",  # the host as written (in the head)
    "UV211",  # the whole href, but only when the policy lists URLs (a callable decides)
    "UV212",  # whether the path is the root
    "UV401",  # host and path (trusted third parties), server
    "UV402",
    "UV403",
    "UV404",
    "UV405",
}
READ_QUERY = {"UV210", "UV213", "UV214", "UV406"}


def test_the_rules_that_ignore_or_read_the_query_are_the_ones_reviewed() -> None:
    declared = {code for code, r in all_rules().items() if r.plain_query and not r.per_host}
    assert declared == IGNORE_QUERY
    assert {code for code, r in all_rules().items() if r.reads_query} == READ_QUERY
    # Every url and raw rule is one or the other, or per host: a rule added without a
    # declaration sends URLs with a query on the ordinary path, and this says so.
    undeclared = {
        code
        for code, r in all_rules().items()
        if r.kind in ("url", "raw") and not (r.plain_query or r.reads_query or r.per_host)
    }
    assert undeclared == set()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://h.example/cb?u=https://evil.example/x#f",
            ("https://h.example", "/cb", "?u=https://evil.example/x", "#f"),
        ),
        (
            "https://h.example/?r=https%3A%2F%2Fa.example%2F&s=1",
            ("https://h.example", "/", "?r=https%3A%2F%2Fa.example%2F&s=1", ""),
        ),
        ("https://h.example/a?", ("https://h.example", "/a", "", "")),  # a bare '?'
        ("http://u:p@h.example:81/a#x:y", ("http://u:p@h.example:81", "/a", "", "#x:y")),
        ("https://h.example", None),  # no path as written
        ("HTTPS://h.example/a?u=http://x/", None),
        ("https://h.example/a/../b?u=http://x/", None),  # a dot segment in the path
        ("https://h.example/a%2Fb?u=http://x/", None),  # an escape in the path
        ("https://h.example/aHR0cHM?u=1", None),
        ("https://h.example/a?u=http://x/#y#z", None),  # a '#' in the fragment
        ("https://h.example/a?u='x'", None),  # encoded in special queries
        ("https://h.example/a?u=<x>", None),
        ("https://h.example/a?u=a b", None),
        ("https://h.example/a?u=a\\b", None),
        ("https://h.example/a?u=a\tb", None),  # removed by the parser
        ("https://h.example/a?u=ü", None),
        ("https://h.example\\@evil.example/a?u=1", None),
        ("https://h.example?u=http://x/", None),  # the query starts before any '/'
    ],
)
def test_query_split(url: str, expected: tuple[str, str, str, str] | None) -> None:
    assert query_split(url) == expected


# Values of a query parameter, as written in the link: URLs carried plainly, percent-encoded
# once and more, in base64, nested in redirectors, with user info, escapes, dot segments,
# IP literals in every spelling, internal and loopback names, lookalikes, shorteners, script.
CARRIED = [
    "https://app.example.com/callback",
    "https%3A%2F%2Fapp.example.com%2Fcallback",
    "https://other.example.net/landing/17",
    "http://169.254.169.254/latest/meta-data/",
    "http%253A%252F%252F10.0.0.1%252Fadmin",
    "http%25253A%25252F%25252F192.168.0.1%25252F",
    "http://localhost:8080/cb",
    "http://127.0.0.1:3000/cb",
    "http://0x7f.1/",
    "http://2130706433/",
    "http://10.0.0.1.nip.io/",
    "http://wiki.corp/page",
    "http://intranet/",
    "javascript:alert(document.cookie)",
    "javascript%3Aalert(1)",
    "vbscript:msgbox(1)",
    "data:text/html,hi",
    "a1aHR0cHM6Ly9ldmlsLmV4YW1wbGUv",
    "a1aHR0cDovLzEwLjAuMC4xLw",
    "https://xn--pypal-4ve.com/signin",
    "https://paypa1-login.com/verify",
    "https://bit.ly/3Kx9TqZ",
    "https://www.google.com/url?q=https://xn--pypal-4ve.com/",
    "https%3A%2F%2Fwww.google.com%2Furl%3Fq%3Dhttp%253A%252F%252F10.0.0.1%252F",
    "https://www.google.com/url?q=https%3A%2F%2Fwww.google.com%2Furl%3Fq%3Dhttp%253A%252F%252Flocalhost%252F",
    "https://l.facebook.com/l.php?u=http%3A%2F%2F192.168.1.1%2F",
    "https://user:pw@evil.example/",
    "https://google.com@evil.example/login",
    "https://evil.example%5C@good.example/",
    "https://good.example/a/../../evil",
    "https://good.example/./%2e%2e/x",
    "http://[::1]/",
    "https://m%C3%BCnchen.de/",
    "https://xn--mnchen-3ya.de/x",
    "https://mcp.example.com/cb",
    "https://github.com/login/oauth/authorize?client_id=1",
    "http://shop.example.com/pay/now",
    "https://shop.example.com/pay/now",
    "https://wiki.corp/pay/now",
    "https://localhost:8443/pay/now",
    "https://192.168.1.20/pay/now",
    "https://203.0.113.9/pay/now",
    "https://%65vil.example/",
    "https://evil.example:8443/x",
    "https://evil.example/" + "a" * 1200,
    "",
    "plain-value",
    "aHR0cHM",
]
NAMES = [
    "redirect_uri",
    "redirect%5Furi",
    "next",
    "url",
    "u",
    "q",
    "dest",
    "continue",
    "return_to",
    "foo",
    "token",
    "code",
]
PATHS = ["/", "/oauth2/authorize", "/url", "/redirect", "/login/oauth/authorize", "/l.php", "/a/b"]
EXTRA = ["client_id=42", "state=9f8e7d6c", "token=t0ps3cr3t", "code=abc123", "x", "", "a=b:c"]


def _tail(rng: random.Random) -> str:
    params = [f"{rng.choice(NAMES)}={rng.choice(CARRIED)}"]
    for _ in range(rng.randrange(0, 3)):
        params.insert(rng.randrange(0, len(params) + 1), rng.choice(EXTRA))
    if rng.random() < 0.2:
        params.append(f"{rng.choice(NAMES)}={rng.choice(CARRIED)}")
    tail = rng.choice(PATHS) + "?" + "&".join(params)
    if rng.random() < 0.15:
        tail += "#" + rng.choice(["top", "access_token=abc12345", "x:y", "u=http://10.0.0.1/"])
    return tail


EXTRA_HEADS = [
    "https://www.google.com",
    "https://accounts.google.com",
    "https://github.com",
    "https://acme.okta.com",
    "https://l.facebook.com",
    "https://login.microsoftonline.com",
    "https://mcp.example.com",
    "https://app.example.com",
    "http://localhost:3000",
    "http://127.0.0.1:33418",
    "https://10.0.0.1",
    "https://bit.ly",
    "https://user:hunter2@example.com",
]


def _urls(count_per_head: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    heads = [*EXTRA_HEADS, *corpus_heads()]
    return [h + _tail(rng) for h in heads for _ in range(count_per_head)]


def _corpus_urls() -> list[str]:
    return [case.url for case in load_cases(default_corpus_files()) if "?" in case.url]


def _mismatches(
    policy: dict[str, Any], urls: list[str], servers: tuple[Server | str | None, ...]
) -> list[str]:
    fast = Vetter(Policy.model_validate(policy))
    slow = Vetter(Policy.model_validate(policy), host_cache_size=0)
    bad = []
    for server in servers:
        for url in urls:
            got, want = fast.vet_offline(url, server), slow.vet_offline(url, server)
            if got != want:
                bad.append(f"{url!r} from {server}: {got.codes} shared, {want.codes} ordinary")
    return bad


def _taken(policy: dict[str, Any], urls: list[str], server: str | None) -> int:
    """How many of ``urls`` take the query path."""
    vetter = Vetter(Policy.model_validate(policy))
    asked = as_server(server)
    return sum(vetter.query_shape(u, asked) is not None for u in urls)


def test_urls_that_carry_urls_get_the_verdicts_of_the_ordinary_path() -> None:
    urls = _urls(3, seed=1)
    assert len(urls) > 3000
    # Most take the new path (the others: a character the parser rewrites, a long URL).
    assert _taken(OFFLINE, urls, None) > 0.6 * len(urls)
    bad = _mismatches(OFFLINE, urls, SERVERS)
    assert not bad, "\n".join(bad[:20])


def test_corpus_urls_with_a_query_get_the_verdicts_of_the_ordinary_path() -> None:
    urls = _corpus_urls()
    assert len(urls) > 100
    assert _taken(OFFLINE, urls, None) > 30
    bad = _mismatches(OFFLINE, urls, SERVERS)
    assert not bad, "\n".join(bad[:20])


POLICIES: list[dict[str, Any]] = [
    {  # trusted third parties, some on a path; expected domains; allowed and blocked names
        **OFFLINE,
        "trusted_third_parties": [
            "github.com/login/oauth",
            "accounts.google.com",
            "*.okta.com/oauth2",
        ],
        "servers": {"github": {"domains": ["github.com", "app.example.com"]}},
        "domains": {"allowed": ["wiki.corp"], "blocked": ["paypa1-login.com"]},
        "redirectors": ["*.example.com/redirect?url,next", "*.google.com/url?q,url"],
    },
    {  # a URL listed: UV211 reads the href, and the query path is off
        **OFFLINE,
        "urls": {"blocked": ["https://www.google.com/url?q=https://xn--pypal-4ve.com/"]},
    },
    {**OFFLINE, "limits": {"max_url_length": 120}},
    {**OFFLINE, "severity": {"UV214": "critical", "UV210": "info"}},
    {  # a destination's own address, name and scheme findings off, the query rules on: a
        # plain internal or loopback destination then has a clean shape, like a public one,
        # and only what the query rules read of its host tells the two apart
        **OFFLINE,
        "ignore": ["UV101", "UV107", "UV201", "UV202", "UV203", "UV204", "UV205", "UV206"],
    },
]


@pytest.mark.parametrize("policy", POLICIES)
def test_urls_that_carry_urls_agree_under_other_policies(policy: dict[str, Any]) -> None:
    urls = _urls(1, seed=2) + _corpus_urls()
    bad = _mismatches(policy, urls, (None, as_server("stdio", name="github"), REMOTE))
    assert not bad, "\n".join(bad[:20])


def test_the_query_path_keeps_urls_off_it_where_the_href_is_read() -> None:
    vetter = Vetter(Policy.model_validate(POLICIES[1]))
    assert (
        vetter.query_shape("https://www.google.com/url?q=https://xn--pypal-4ve.com/", None) is None
    )
    listed = vetter.vet_offline("https://www.google.com/url?q=https://xn--pypal-4ve.com/")
    assert "UV211" in listed.codes


def test_the_parser_copies_the_query_into_the_href() -> None:
    # What the engine builds the URL from: head + path parsed, the rest as written.
    rng = random.Random(4)
    checked = 0
    for head in [*EXTRA_HEADS, *corpus_heads()]:
        for _ in range(3):
            raw = head + _tail(rng)
            split = query_split(raw)
            if split is None:
                continue
            _, path, search, fragment = split
            try:
                root = parse(head + "/")  # as the engine reads the head (its _head_url)
            except InvalidURL:
                continue
            whole, plain = parse(raw), parse(head + path)
            assert plain_split(head + path) is not None
            assert whole.href == root.href[:-1] + raw[len(head) :], raw
            assert plain.href == root.href[:-1] + path
            assert (whole.pathname, whole.search, whole.hash) == (path, search, fragment), raw
            assert (whole.host, whole.port, whole.username, whole.password) == (
                plain.host,
                plain.port,
                plain.username,
                plain.password,
            )
            checked += 1
    assert checked > 2000


def test_a_plain_url_built_from_its_head_is_what_parse_gives() -> None:
    # How carried plain URLs are read (urlvet.url.parse_plain): from their head's parse.
    rng = random.Random(6)
    tails = ["/", "/a", "/a/b/", "/?", "/#", "/a?b=c", "/a?b#", "/a?#x", "/x#y=z/w", "/?q=1&r"]
    checked = 0
    for head in [*EXTRA_HEADS, *corpus_heads()]:
        for tail in rng.sample(tails, 4):
            raw = head + tail
            built = parse_plain(raw)
            if built is None:
                continue
            assert built == parse(raw), raw
            checked += 1
    assert checked > 2000
    assert parse_plain("https://h.example/a?u=http://x/") is None
    assert parse_plain("https:///x") is None  # no host before the path: not its head's


def test_carried_items_of_the_link_are_those_read_anew() -> None:
    rng = random.Random(8)
    for _ in range(300):
        url = parse("https://h.example" + _tail(rng))
        first, again = carried_urls(url), carried_urls(url)
        assert first == again
        for item in first:
            assert item.depth == len(item.path)
            assert item.target == parse(item.value.strip()), item


def test_the_mix_of_an_audit_takes_the_query_path() -> None:
    vetter = Vetter(Policy.model_validate(OFFLINE))
    oauth = (
        "https://cdn.river5178.dev/oauth2/authorize?client_id=1&state=1f"
        "&redirect_uri=https%3A%2F%2Fapp.alpha.com%2Fcallback"
    )
    found = vetter.query_shape(oauth, None)
    assert found is not None
    assert found.findings == ()
    hop = vetter.query_shape("https://a.example/redirect?url=http://10.0.0.1/x", None)
    assert hop is not None
    assert [f.code for f in hop.findings] == ["UV210"]
    # The verdict is a proper one: its own URL and href.
    verdict = vetter.vet_offline(oauth)
    assert verdict.url == oauth
    assert verdict.href == oauth


# --- wrong declarations are caught ----------------------------------------------------------


@contextmanager
def _declared(code: str, **values: object) -> Iterator[None]:
    rule = all_rules()[code]
    before = {name: getattr(rule, name) for name in values}
    for name, value in values.items():
        object.__setattr__(rule, name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            object.__setattr__(rule, name, value)


def test_a_rule_wrongly_declared_to_ignore_the_query_is_caught() -> None:
    # UV211 reads the href when the policy lists URLs: declared to ignore the query
    # regardless, a listed URL with a query takes the verdict of its head and path.
    policy = POLICIES[1]
    urls = [
        "https://www.google.com/url?q=https://xn--pypal-4ve.com/",
        "https://www.google.com/url?q=https://example.org/",
    ]
    assert not _mismatches(policy, urls, (None,))
    # (Declared blind to a plain tail too, or no URL of the policy has a shared shape.)
    with _declared("UV211", plain_tail=True, plain_query=True):
        assert _mismatches(policy, urls, (None,))


def test_a_rule_that_reads_the_query_wrongly_declared_to_ignore_it_is_caught() -> None:
    urls = [
        "https://shop.example.com/login?next=https%3A%2F%2Fxn--pypal-4ve.com%2F",
        "https://shop.example.com/go?dest=javascript%3Aalert(1)",
    ]
    assert not _mismatches(OFFLINE, urls, (None,))
    with _declared("UV214", plain_query=True, reads_query=False):
        assert _mismatches(OFFLINE, urls, (None,))


def test_a_rule_declared_to_read_the_query_that_reads_other_parameters_is_caught() -> None:
    # The findings of the rules that read the query are kept by the parameters that may
    # carry a URL: a rule that also read a client's state would get the first link's answer
    # for every other state.
    rule = all_rules()["UV214"]
    honest = rule.check

    def reads_state(url: Any, ctx: Any) -> Iterator[Any]:
        yield from honest(url, ctx)
        if url is not None and "state=7" in url.search:
            yield from honest(parse("https://x.example/?next=javascript%3Aalert(1)"), ctx)

    urls = [
        f"https://shop.example.com/login?state={n}&next=https%3A%2F%2Fapp.example.org%2F"
        for n in range(5, 10)
    ]
    assert not _mismatches(OFFLINE, urls, (None,))
    with _declared("UV214", check=reads_state):
        assert _mismatches(OFFLINE, urls, (None,))


def test_the_query_findings_are_computed_once_per_carried_parameters() -> None:
    calls: list[str] = []
    rule = all_rules()["UV406"]
    honest = rule.check

    def counted(url: Any, ctx: Any) -> Iterator[Any]:
        if url is not None and url.search:  # not the shape of the head and path
            calls.append(url.search)
        yield from honest(url, ctx)

    vetter = Vetter(Policy.model_validate(OFFLINE))
    callback = "redirect_uri=https%3A%2F%2Fevil.example%2Fcb"
    with _declared("UV406", check=counted):
        verdicts = [
            vetter.vet_offline(
                f"https://login.idp.example/authorize?client_id={n}&state={n:x}&{callback}",
                REMOTE,
            )
            for n in range(200)
        ]
        assert len(calls) == 1
        # Another carried value, or another head, is another entry.
        vetter.vet_offline(
            "https://login.idp.example/authorize?client_id=1&redirect_uri=https%3A%2F%2Fa.example%2F",
            REMOTE,
        )
        vetter.vet_offline(f"https://login.idp2.example/authorize?client_id=1&{callback}", REMOTE)
        assert len(calls) == 3
    assert all("UV406" in v.codes for v in verdicts)
    assert {v.url for v in verdicts} == {v.href for v in verdicts}
    assert len({v.url for v in verdicts}) == 200
    # No parameter's value can carry a URL (a name may hold a colon): the rules are not run.
    with _declared("UV406", check=counted):
        odd = "https://login.idp.example/authorize?client_id=1&x:y=1"
        assert vetter.query_shape(odd, as_server(REMOTE)) is not None
        assert "UV406" not in vetter.vet_offline(odd, REMOTE).codes
    assert len(calls) == 3


def _counting(code: str, calls: list[str]) -> Any:
    honest = all_rules()[code].check

    def counted(url: Any, ctx: Any) -> Iterator[Any]:
        if url is not None and url.search:  # not the shape of the head and path
            calls.append(url.host)
        yield from honest(url, ctx)

    return counted


def test_links_on_other_hosts_that_carry_a_clean_callback_run_the_rules_once() -> None:
    # Sign-in links on a thousand sites of their own, with one callback (percent-encoded, or
    # written as it is with a path of its own): nothing found for one, nothing for the rest.
    vetter = Vetter(Policy.model_validate(OFFLINE))
    encoded = "redirect_uri=https%3A%2F%2Fapp.example.org%2Fcallback"
    calls: list[str] = []
    with _declared("UV214", check=_counting("UV214", calls)):
        for n in range(300):
            link = f"https://idp{n}.example/authorize?client_id={n}&{encoded}"
            assert vetter.vet_offline(link).codes == ()
        assert len(calls) == 1
        for n in range(300):
            link = f"https://idp{n}.example/sso?next=https://app.example.org/landing/{n}"
            assert vetter.vet_offline(link).codes == ()
        assert len(calls) == 2
        # A link on the callback's own site is of another class.
        vetter.vet_offline(f"https://login.example.org/authorize?{encoded}")
        assert len(calls) == 3


def test_what_the_query_rules_find_is_found_for_each_link_and_names_its_host() -> None:
    vetter = Vetter(Policy.model_validate(OFFLINE))
    calls: list[str] = []
    with _declared("UV210", check=_counting("UV210", calls)):
        verdicts = [
            vetter.vet_offline(f"https://site{n}.example/go?next=http%3A%2F%2F10.0.0.1%2Fadmin")
            for n in range(50)
        ]
    assert len(calls) == 50
    for n, verdict in enumerate(verdicts):
        (finding,) = [f for f in verdict.findings if f.code == "UV210"]
        assert f"site{n}.example forwards you" in finding.message


def test_a_rule_that_reads_the_links_host_beyond_its_site_is_caught() -> None:
    # Links of one class share the rules' empty answer: a rule that read the link's host
    # name itself (here, one host out of ten) would get the first link's answer for it.
    rule = all_rules()["UV214"]
    honest = rule.check

    def reads_host(url: Any, ctx: Any) -> Iterator[Any]:
        yield from honest(url, ctx)
        if url is not None and url.search and url.host == "idp7.example":
            yield from honest(parse("https://x.example/?next=javascript%3Aalert(1)"), ctx)

    urls = [
        f"https://idp{n}.example/authorize?redirect_uri=https%3A%2F%2Fapp.example.org%2F"
        for n in range(10)
    ]
    assert not _mismatches(OFFLINE, urls, (None,))
    with _declared("UV214", check=reads_host):
        assert _mismatches(OFFLINE, urls, (None,))


# --- the audit's records --------------------------------------------------------------------


def test_audit_records_of_urls_that_carry_urls_are_those_of_their_verdicts() -> None:
    rng = random.Random(3)
    heads = [*EXTRA_HEADS, *corpus_heads()[:300]]
    urls = [h + _tail(rng) for h in heads]
    urls += [
        "https://example.com/cb?redirect_uri=https%3A%2F%2Fapp.example.com%2F&code=abc123",
        "https://example.com/x?u=https://user:hunter22@evil.example/&a=1",
        "https://example.com/x?u=https://ghp_abcdefghijklmnop1234@github.com/",
        "https://example.com/x?next=https://app.example.com/#access_token=eyJhbGci0iJ",
        "https://example.com/x?next=https://app.example.com/?token=t0ps3cr3t",
        "https://example.com/x?token_type=bearer&u=https://a.example/",
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
