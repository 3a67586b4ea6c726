"""The engine's host cache and batch API: per-host findings are computed once per (host,
server) and reused, and that changes no verdict.

The equivalence test vets every URL of corpus/ and of the external corpora in tests/data (WHATWG,
SSRF, IDN, lookalike, IANA...) with a cached and an uncached Vetter (``host_cache_size=0`` runs
every rule on every URL) and compares the whole verdicts: decision, findings, messages and
evidence. Each host also comes back under other schemes, user info, ports, paths and queries,
so that a rule wrongly declared per-host (one that reads more than the host) shows up.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from support import OFFLINE
from support.corpora import external_inputs
from urlvet import Policy, Verdict, Vetter
from urlvet.checks.registry import rules as all_rules
from urlvet.errors import InputError
from urlvet.evaluate import default_corpus_files, load_cases
from urlvet.findings import Finding
from urlvet.url import HostKind, InvalidURL, parse

SERVERS: tuple[str | None, ...] = (None, "stdio", "https://mcp.paypal.com/sse")

# Settings that make the per-host rules say more: allowed and blocked networks and domains,
# expected domains for a server, protected domains, a severity override.
RICH_POLICY: dict[str, Any] = {
    "dns": {"enabled": False},
    "networks": {"allowed": ["10.20.0.0/16"], "blocked": ["45.33.0.0/16", "2600:3c01::/32"]},
    "domains": {"allowed": ["wiki.corp"], "blocked": ["badcorp.com", "bücher.de"]},
    "servers": {"github": {"domains": ["github.com", "githubusercontent.com"]}},
    "protected_domains": ["acme-bank.com"],
    "severity": {"UV203": "critical", "UV305": "low"},
}


# The same host in every URL-level context the per-URL rules read: plain http, a port, user
# info, redirect parameters (UV210, UV406), an OAuth path (trusted third parties), a fragment,
# a non-web scheme, an opaque host, a backslash trick (UV104).
TEMPLATES = (
    "http://{h}/",
    "https://{h}/",
    "https://{h}:8443/login?redirect_uri=https%3A%2F%2Fevil.example%2Fcb&state=1",
    "https://{h}/o/oauth2/auth?redirect_uri=http://169.254.169.254/&next=http://10.0.0.1/",
    "https://admin:hunter2@{h}/",
    "https://paypal.com@{h}/",
    "ws://{h}:81/socket",
    "ftp://{h}/file",
    "git://{h}/repo#frag",
    "HTTPS://{h}\\\\@paypal.com/",
    "https://{h}/oauth2/v2/auth",
    # Authorities written so that the text up to the first "/", "?" or "#" (the link memo's
    # key for a plain authority) is not where the browser's authority ends: a backslash, a
    # tab, a line break, a slash after "//", a space after the host, a port, user info.
    "https://{h}\\@paypal.com/",
    "https://{h}\t/x",
    "https://{h}\n/x",
    "https://\t/{h}/",
    "https:///{h}/",
    "https://{h} ",
    "https://{h}:443/?a=1",
    "https://u@{h}#f",
    "http://{h}?next=https://{h}/",
    "https://{h}/a/b-c_d.e~f?x=1&y=z#top",
    "http://{h}:8080/static/app.js",
    "https://{h}/?q=1",
    "https://{h}//double/slash/",
)
# For the 28,000 strings of the external corpora, the contexts that differ most from each other.
FEW_TEMPLATES = (
    "http://admin:pw@{h}:8443/login?redirect_uri=http://169.254.169.254/&x=https%3A%2F%2Fa.b%2F#f",
    "HTTPS://{h}\\\\@paypal.com/",
    "http://u:p@{h}:81/a/b?c=d#e",
)


def host_variants(urls: Iterable[str], templates: Iterable[str] = TEMPLATES) -> list[str]:
    """Each parseable URL's host again in the URL-level contexts of ``templates``."""
    out: dict[str, None] = {}
    for url in urls:
        try:
            parsed = parse(url)
        except InvalidURL:
            continue
        if not parsed.host:
            continue
        host = f"[{parsed.host}]" if parsed.host_kind is HostKind.IPV6 else parsed.host
        for template in templates:
            out[template.format(h=host)] = None
    return list(out)


def _mismatches(
    cached: Vetter,
    uncached: Vetter,
    urls: list[str],
    servers: Iterable[str | None],
    *,
    backwards: bool = True,
) -> list[str]:
    bad: list[str] = []
    for server in servers:
        want = [uncached.vet_offline(url, server) for url in urls]
        # Forwards, then backwards: the cached findings then come from another URL of the
        # host than the one that filled the cache.
        rounds = (
            [range(len(urls)), range(len(urls) - 1, -1, -1)] if backwards else [range(len(urls))]
        )
        for order in rounds:
            for i in order:
                got = cached.vet_offline(urls[i], server)
                if got != want[i]:
                    bad.append(
                        f"{urls[i]!r} from {server}: {got.codes} cached, {want[i].codes} uncached"
                    )
    return bad


def _pair(policy: dict[str, Any]) -> tuple[Vetter, Vetter]:
    return Vetter(Policy.model_validate(policy)), Vetter(
        Policy.model_validate(policy), host_cache_size=0
    )


def test_corpus_verdicts_are_the_same_with_and_without_the_host_cache() -> None:
    cases = load_cases(default_corpus_files())
    assert len(cases) > 800
    vetters: dict[str, tuple[Vetter, Vetter]] = {}
    bad: list[str] = []
    for case in cases:
        policy = {"dns": {"enabled": False}, **(case.policy or {})}
        key = json.dumps(policy, sort_keys=True)
        cached, uncached = vetters.setdefault(key, _pair(policy))
        server = case.server
        name = case.server_name
        for asked in (server, None, "stdio"):
            got = cached.vet_offline(case.url, _as_server(asked, name), message=case.message)
            want = uncached.vet_offline(case.url, _as_server(asked, name), message=case.message)
            if got != want:
                bad.append(f"{case.source}: {got.codes} cached, {want.codes} uncached")
    assert not bad, "\n".join(bad[:20])


def _as_server(server: str | None, name: str | None) -> Any:
    from urlvet.server import as_server

    if server is None:
        return None
    return as_server(server, name=name)


def test_corpus_hosts_in_every_url_context_agree_under_every_corpus_policy() -> None:
    cases = load_cases(default_corpus_files())
    urls = [c.url for c in cases]
    variants = [*urls, *host_variants(urls)]
    policies = [{"dns": {"enabled": False}}, RICH_POLICY]
    policies += [{"dns": {"enabled": False}, **c.policy} for c in cases if c.policy]
    seen: set[str] = set()
    bad: list[str] = []
    for policy in policies:
        key = json.dumps(policy, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        cached, uncached = _pair(policy)
        if policy in ({"dns": {"enabled": False}}, RICH_POLICY):
            bad += _mismatches(cached, uncached, variants, SERVERS)
        else:  # the corpus's own policies: only what they change
            bad += _mismatches(cached, uncached, variants, (None,), backwards=False)
    assert not bad, "\n".join(bad[:20])


def test_external_corpora_verdicts_are_the_same_with_and_without_the_host_cache() -> None:
    inputs = external_inputs()
    assert len(inputs) > 10_000  # the corpora are there and were read
    urls = [*inputs, *host_variants(inputs, FEW_TEMPLATES)]
    # Each host comes back right after its first URL (its variants), served from the cache.
    # A remote server, so that the server rules run too.
    bad = _mismatches(
        *_pair({"dns": {"enabled": False}}),
        urls,
        ("https://mcp.example.com/mcp",),
        backwards=False,
    )
    assert not bad, "\n".join(bad[:20])


def test_a_small_host_cache_evicts_and_still_agrees() -> None:
    cases = load_cases(default_corpus_files())
    urls = [c.url for c in cases]
    small = Vetter(Policy(dns={"enabled": False}), host_cache_size=8)
    uncached = Vetter(Policy(dns={"enabled": False}), host_cache_size=0)
    assert _mismatches(small, uncached, urls, (None,)) == []
    assert all(len(memo) <= 8 for memo in small.memos.values())  # bounded
    assert len(small.memos["host"]) == 8


def test_every_raw_and_url_rule_declares_what_it_reads() -> None:
    from urlvet.checks.base import FACT_NAMES, HOST_FACTS

    offline = [r for r in all_rules().values() if r.kind in ("raw", "url")]
    assert offline
    assert all(r.reads and r.reads <= FACT_NAMES for r in offline)
    # The rules that read the scheme, user info, port, path, query or raw text are never
    # judged per host.
    for code in ("UV101", "UV102", "UV103", "UV104", "UV107", "UV206", "UV210", "UV401", "UV406"):
        assert not all_rules()[code].reads <= HOST_FACTS, code
    assert all_rules()["UV302"].host_only


def test_a_rule_reading_a_fact_it_did_not_declare_fails() -> None:
    from urlvet.checks.base import UndeclaredFact
    from urlvet.engine.facts import URLFacts

    settings = Policy().compiled.settings
    raw = "https://user@example.com/a?b=1"
    facts = URLFacts(raw, parse(raw), None, 0, settings)
    view = all_rules()["UV102"].view(facts)  # reads the scheme only
    assert view.scheme == "https"
    with pytest.raises(UndeclaredFact, match="UV102 reads the fact 'host'"):
        _ = view.host


GATED_HITS = {
    "UV211": "http://203.0.113.9/bins/x.sh",
    "UV215": "https://urldefense.com/v3/__https://paypal-account-verify.com/signin__;!!BhdT!kx1o$",
    "UV308": "https://microsoft-365-fileshare.s3.amazonaws.com/index.html",
    "UV407": "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=1"
    "&response_type=token&redirect_uri=https%3A%2F%2Ftoken-collector.net%2Fcb",
}
"""A URL each rule with a condition on its host (``Rule.when``) reports."""


def test_a_condition_on_the_host_sees_only_the_host_facts_its_rule_reads() -> None:
    from urlvet.checks.base import HOST_FACTS, UndeclaredFact
    from urlvet.engine.facts import URLFacts

    gated = {code: r for code, r in all_rules().items() if r.when is not None}
    assert set(GATED_HITS) <= set(gated)
    settings = Policy().compiled.settings
    raw = GATED_HITS["UV215"]
    facts = URLFacts(raw, parse(raw), None, 0, settings)
    for rule in gated.values():
        view = rule.when_viewer(facts)
        with pytest.raises(UndeclaredFact):
            _ = view.pathname
        for name in rule.reads & HOST_FACTS:
            assert getattr(view, name) == getattr(facts, name)


def test_rules_with_a_condition_run_where_it_passes_and_find_what_they_find_without_it() -> None:
    cached, uncached = _pair(
        {"dns": {"enabled": False}, "urls": {"blocked": [GATED_HITS["UV211"]]}}
    )
    for code, url in GATED_HITS.items():
        for server in (None, "stdio"):
            got = cached.vet_offline(url, server)
            assert code in got.codes, (code, got.codes)
            assert got == uncached.vet_offline(url, server)
    # In effect: a host that no condition passes keeps none of those rules to run.
    cached.vet_offline("https://www.example.com/a?next=data:text/html,x")
    entry = cached.memos["host"]._data[("www.example.com", HostKind.DOMAIN, None)]
    assert {r.code for r in entry[1]} == {"UV211"}  # the policy lists URLs: UV211 runs anywhere
    entry = cached.memos["host"]._data[("urldefense.com", HostKind.DOMAIN, None)]
    assert "UV215" in {r.code for r in entry[1]}


def _declared_cases() -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(the contexts of SERVERS, a URL's facts) for every URL of corpus/, of the external
    corpora and of the host variants that parses, under the default and a rich policy: where
    the engine's declarations (``needs``, ``needs_server``, a family's ``quiet``) are held to
    the rules' own answers."""
    from urlvet.engine.facts import facts_of
    from urlvet.server import as_server

    urls = [c.url for c in load_cases(default_corpus_files())]
    urls += host_variants(urls) + external_inputs()
    for policy in (Policy(dns={"enabled": False}), Policy.model_validate(RICH_POLICY)):
        vetter = Vetter(policy, host_cache_size=0)
        settings = policy.compiled.settings
        contexts = tuple(vetter._context_for(as_server(s)) for s in SERVERS)
        for url in urls:
            facts = facts_of(url, 0, settings)
            if facts.url is not None:
                yield contexts, facts


def test_a_rule_that_needs_a_fact_finds_nothing_without_it() -> None:
    # The engine skips a stage whose rules all need a fact on a URL without it: each
    # declaration is held to the rule's own answers, on every URL of corpus/, of the external
    # corpora and of the host variants where the fact is empty, from every kind of server,
    # under the default and a rich policy.
    needing = [r for r in all_rules().values() if r.needs is not None]
    assert {r.code for r in needing} >= {"UV210", "UV213", "UV214", "UV406"}
    checked = 0
    for contexts, facts in _declared_cases():
        for rule in needing:
            if getattr(facts, rule.needs):  # type: ignore[arg-type]
                continue
            for ctx in contexts:
                assert list(rule.check(rule.viewer(facts), ctx)) == [], (rule.code, facts.raw)
                checked += 1
    assert checked > 100_000


def test_a_rule_that_needs_a_server_finds_nothing_without_one() -> None:
    # The engine leaves the rules that compare a URL with its server out of the stages of a
    # URL no server asked for: each declaration is held to the rule's own answers with no
    # server, on every URL of corpus/, of the external corpora and of the host variants,
    # under the default and a rich policy (whose server domains and trusted third parties
    # the rules read).
    needing = [r for r in all_rules().values() if r.needs_server]
    assert {r.code for r in needing} == {"UV401", "UV402", "UV403", "UV404", "UV405", "UV406"}
    assert SERVERS[0] is None
    checked = 0
    for contexts, facts in _declared_cases():
        for rule in needing:
            assert list(rule.check(rule.viewer(facts), contexts[0])) == [], (rule.code, facts.raw)
            checked += 1
    assert checked > 50_000


def test_the_rules_that_need_a_server_run_only_for_a_server_and_only_with_memos_on() -> None:
    cached, uncached = _pair({"dns": {"enabled": False}})
    plan = cached._plan
    assert {r.code for r in plan.link} - {r.code for r in plan.link_serverless} == {
        "UV401",
        "UV402",
        "UV403",
        "UV404",
        "UV405",
    }
    assert {r.code for r in plan.query} - {r.code for r in plan.query_serverless} == {"UV406"}
    # A server's URL is judged by them, and the same URL with no server is judged the same
    # by the engine with every memo off, which runs every rule.
    url = "https://accounts.google.com/o/oauth2/auth?redirect_uri=https%3A%2F%2Fevil.example%2Fcb"
    for server in ("https://mcp.example.com/mcp", None):
        assert cached.vet_offline(url, server) == uncached.vet_offline(url, server)
    assert "UV406" in cached.vet_offline(url, "https://mcp.example.com/mcp").codes
    assert not uncached._gates


def test_the_members_of_a_family_find_nothing_with_a_quiet_analysis() -> None:
    # The engine runs no member of a family whose analysis it declares quiet (the lookalike
    # rules on a host that imitates nothing): the declaration is held to the members' own
    # answers on every URL of corpus/, of the external corpora and of the host variants, from
    # every kind of server, under the default and a rich policy; and both kinds of analysis
    # are met.
    members = [r for r in all_rules().values() if r.analysis is not None]
    families = {r.analysis.name: r.analysis for r in members if r.analysis is not None}
    assert set(families) == {"lookalike"}
    assert all(f.quiet is not None for f in families.values())
    quiet = loud = 0
    for contexts, facts in _declared_cases():
        for ctx in contexts:
            for fam in families.values():
                first = next(r for r in members if r.analysis is fam)
                analysis = fam.analysis(first.viewer(facts), ctx)
                assert fam.quiet is not None
                if not fam.quiet(analysis):
                    loud += 1
                    continue
                quiet += 1
                for rule in members:
                    if rule.analysis is fam:
                        assert rule.member is not None
                        found = list(rule.member(rule.viewer(facts), ctx, analysis))
                        assert found == [], (rule.code, facts.raw)
    assert quiet > 10_000
    assert loud > 500


def test_a_quiet_analysis_runs_no_member_and_only_with_memos_on() -> None:
    from dataclasses import replace

    from urlvet.checks.base import Rule

    cached, uncached = _pair({"dns": {"enabled": False}})
    calls: list[str] = []

    def counting(rule: Rule) -> Rule:
        inner = rule.member
        assert inner is not None

        def member(view: Any, ctx: Any, analysis: Any) -> Any:
            calls.append(rule.code)
            return inner(view, ctx, analysis)

        return replace(rule, member=member)

    for vetter in (cached, uncached):
        plan = vetter._plan
        counted = tuple(counting(r) if r.analysis is not None else r for r in plan.host)
        assert sum(r.analysis is not None for r in counted) == 6
        object.__setattr__(vetter, "_plan", plan._replace(host=counted))  # a test's spy
    cached.vet_offline("https://www.example.org/")  # imitates nothing
    assert calls == []
    uncached.vet_offline("https://www.example.org/")
    assert len(calls) == 6  # every memo off: every member runs
    calls.clear()
    assert "UV302" in cached.vet_offline("https://paypa1.com/").codes
    assert len(calls) == 6


def test_a_stage_whose_rules_need_a_missing_fact_is_skipped_and_only_with_memos_on() -> None:
    from urlvet.checks.base import rule as declare_rule
    from urlvet.findings import Severity

    cached, uncached = _pair({"dns": {"enabled": False}})
    assert cached._plan.query_needs == "carried"
    cached.vet_offline("https://www.example.com/a?utm_source=news%20letter")
    assert len(cached.memos["query"]) == 0  # nothing carried: the query rules never ran
    cached.vet_offline("https://www.example.com/a?next=https%3A%2F%2Fexample.net%2F")
    assert len(cached.memos["query"]) == 1
    assert uncached._query_needed is None  # every memo off: every stage runs
    with pytest.raises(ValueError, match="needs 'carried', which it does not declare"):
        declare_rule("UV999", "t", Severity.LOW, reads={"host"}, needs="carried")


def test_a_destination_is_vetted_once_for_links_that_carry_it_and_long_ones_each_time() -> None:
    cached, uncached = _pair({"dns": {"enabled": False}})
    memo = cached.memos["destination"]
    landing = "https%3A%2F%2Fpaypa1-login.com%2Fsignin"
    # Three sites (the query memo would answer for one site's links): one destination.
    for site in ("www.example.com", "www.example.org", "shop.example.net"):
        url = f"https://{site}/out?next={landing}&ref=1"
        assert cached.vet_offline(url) == uncached.vet_offline(url)
    assert (len(memo), memo.misses, memo.hits) == (1, 1, 2)
    long = "https://www.example.com/out?next=https%3A%2F%2Fa.example%2F" + "x" * 2000
    assert cached.vet_offline(long) == uncached.vet_offline(long)
    assert len(memo) == 1  # too long to keep
    assert len(uncached.memos["destination"]) == 0


def test_a_rule_view_of_a_family_member_holds_the_analysis_facts() -> None:
    member = all_rules()["UV303"]
    assert member.analysis is not None
    assert member.analysis.reads <= member.all_reads


def test_the_memo_counts_and_bounds() -> None:
    from urlvet.engine.memo import Memo

    memo: Memo[str, int] = Memo(2)
    assert memo.get("a", lambda: 1) == 1
    assert memo.get("a", lambda: 2) == 1
    memo.get("b", lambda: 3)
    memo.get("c", lambda: 4)
    assert (memo.hits, memo.misses, len(memo)) == (1, 3, 2)
    assert memo.get("a", lambda: 5) == 5  # the first in went first out


def test_vet_many_gives_the_verdicts_of_vet_in_order() -> None:
    urls = [
        "https://example.com/a",
        "http://10.0.0.1/",
        b"https://xn--pypal-4ve.com/",
        "not a url",
        "https://example.com/b?x=1",
    ]
    many = list(OFFLINE.vet_many(urls, server="https://mcp.example.com/mcp"))
    assert all(isinstance(v, Verdict) for v in many)
    assert many == [OFFLINE.vet(u, "https://mcp.example.com/mcp") for u in urls]
    assert [v.url for v in many] == [u if isinstance(u, str) else u.decode() for u in urls]


def test_vet_many_is_lazy_over_an_endless_input() -> None:
    def endless() -> Iterator[str]:
        i = 0
        while True:
            yield f"https://host{i % 3}.example.com/{i}"
            i += 1

    verdicts = OFFLINE.vet_many(endless())
    first = [next(verdicts) for _ in range(5)]
    assert [v.url for v in first] == [f"https://host{i % 3}.example.com/{i}" for i in range(5)]


def test_vet_many_refuses_a_malformed_server_at_once() -> None:
    with pytest.raises(InputError):
        OFFLINE.vet_many(["https://example.com/"], server="ftp://nope")


def test_a_negative_host_cache_size_is_refused() -> None:
    with pytest.raises(ValueError):
        Vetter(Policy(dns={"enabled": False}), host_cache_size=-1)


def test_verdicts_the_engine_builds_equal_validated_ones() -> None:
    # The engine builds a verdict from its own values without pydantic's validation: the
    # result must be the model that validation gives, for every kind of URL and finding.
    urls = [case.url for case in load_cases(default_corpus_files())]
    urls += host_variants(urls[:300])
    urls += [b"https://example.com/\xff", "", "https://a.com/\ud800"]  # type: ignore[list-item]
    for vetter in (OFFLINE, Vetter(Policy.model_validate(RICH_POLICY))):
        for url in urls:
            for server in SERVERS:
                got = vetter.vet_offline(url, server)
                rebuilt = Verdict.model_validate(got.model_dump())
                assert rebuilt == got, url
                assert rebuilt.model_dump() == got.model_dump(), url
                assert rebuilt.model_fields_set == got.model_fields_set, url
                assert type(got.decision) is type(rebuilt.decision), url
                assert all(type(f) is Finding for f in got.findings), url
                for f, r in zip(got.findings, rebuilt.findings, strict=True):
                    assert f.model_fields_set == r.model_fields_set, url
                    assert type(f.severity) is type(r.severity), url


def test_the_engine_builds_the_context_a_check_context_would_be() -> None:
    from dataclasses import fields

    from urlvet.checks.base import CheckContext, url_context

    settings = Policy().compiled.settings
    vetter = Vetter(Policy(dns={"enabled": False}))
    built = url_context(settings, None, "https://a.com/", "why", "hello", vetter, 2)
    plain = CheckContext(
        settings=settings,
        server=None,
        raw="https://a.com/",
        parse_error="why",
        message="hello",
        destinations=vetter,
        hops=2,
    )
    for f in fields(CheckContext):
        assert getattr(built, f.name) == getattr(plain, f.name), f.name
    assert built == plain


def test_findings_the_engine_builds_share_no_state_through_their_field_set() -> None:
    # The engine gives every finding it builds one set of field names: copying one with an
    # update must leave the others as they were, and each must still equal a validated one.
    from urlvet.findings import Finding

    first, second = (
        OFFLINE.vet_offline(url).findings[0]
        for url in ("http://127.0.0.1:8080/a", "http://10.0.0.1/b")
    )
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__
    before = set(second.model_fields_set)
    changed = first.model_copy(update={"message": "changed"})
    assert changed.message == "changed"
    assert second.model_fields_set == before
    assert changed.__pydantic_fields_set__ is not first.__pydantic_fields_set__
    assert Finding.model_validate(second.model_dump()) == second
