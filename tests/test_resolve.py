"""urlvet.resolve against a real NSD on loopback: answers, failures, deadline, cache, limits.

Every query goes to a server these tests started on 127.0.0.1 (NSD, a silent socket, or a
counting relay in front of NSD). The relay is how the cache tests see what was really sent.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import dns.message
import dns.rdatatype
import dns.rrset
import pytest

from support.dnsserver import Blackhole, CountingRelay, ScriptedServer, reply_to
from urlvet.errors import InputError
from urlvet.resolve import FAILURE_TTL, Resolution, Resolver, parse_nameservers

pytestmark = pytest.mark.dns

Z = "urlvet.test"
PUBLIC4 = "93.184.215.14"
PUBLIC6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c"

# name -> (status, addresses, cnames, min_ttl); None for "don't care".
CASES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], int | None]] = {
    "public": ("ok", (PUBLIC4, PUBLIC6), (), 300),
    "v4only": ("ok", (PUBLIC4,), (), 300),
    "private-10": ("ok", ("10.1.2.3",), (), 300),
    "private-192": ("ok", ("192.168.1.10",), (), 300),
    "loopback": ("ok", ("127.0.0.1",), (), 300),
    "metadata": ("ok", ("169.254.169.254",), (), 300),
    "loopback6": ("ok", ("::1",), (), 300),
    "mapped-loopback": ("ok", ("::ffff:7f00:1",), (), 300),
    "mapped-private": ("ok", ("::ffff:a00:1",), (), 300),
    "mixed": ("ok", (PUBLIC4, "10.0.0.5"), (), 300),
    "mixed-family": ("ok", (PUBLIC4, "fd00::5"), (), 300),
    "to-corp": ("ok", ("10.20.30.40",), ("db.corp",), 300),
    "to-public-elsewhere": ("ok", (PUBLIC4,), ("public.other.test",), 300),
    # NSD holds internal., where intranet.internal does not exist: NXDOMAIN at the chain's end.
    "to-internal": ("nxdomain", (), ("intranet.internal",), 300),
    # NSD stops at a CNAME whose target is outside all its zones; the resolver asks for the
    # target, which NSD (authoritative only, no recursion) refuses.
    "to-single-label": ("refused", (), ("fileserver",), 300),
    "to-localhost": ("refused", (), ("app.localhost",), 300),
    "ttl0": ("ok", (PUBLIC4,), (), 0),
    "short": ("ok", (PUBLIC4,), (), 10),
    "chain": ("ok", (PUBLIC4,), (*[f"hop{i}.{Z}" for i in range(1, 8)], f"end.{Z}"), 300),
    "chain-private": (
        "ok",
        ("10.9.8.7",),
        (*[f"p-hop{i}.{Z}" for i in range(1, 8)], f"p-end.{Z}"),
        300,
    ),
    "loop-a": ("error", (), (f"loop-b.{Z}", f"loop-a.{Z}"), 300),
    "dangling": ("nxdomain", (), (f"gone.{Z}",), 300),
    "txt-only": ("no-answer", (), (), None),
    "does-not-exist": ("nxdomain", (), (), None),
    "big": ("ok", tuple(f"93.184.216.{i}" for i in range(1, 101)), (), 300),
}


def check_case(res: Resolution, name: str) -> None:
    status, addresses, cnames, min_ttl = CASES[name]
    assert res.name == f"{name}.{Z}"
    assert res.status == status, res.detail
    assert res.addresses == addresses
    assert res.cnames == cnames
    assert res.min_ttl == min_ttl
    assert (res.detail == "") == (status == "ok")


@pytest.mark.parametrize("name", sorted(CASES))
def test_zone_case_sync(nsd: tuple[str, int], name: str) -> None:
    check_case(Resolver([nsd], timeout=2.0).resolve(f"{name}.{Z}"), name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_zone_case_async(nsd: tuple[str, int], name: str) -> None:
    res = asyncio.run(Resolver([nsd], timeout=2.0).aresolve(f"{name}.{Z}"))
    check_case(res, name)


def test_cname_loop_is_an_error_that_says_so(nsd: tuple[str, int]) -> None:
    res = Resolver([nsd]).resolve(f"loop-a.{Z}")
    assert res.status == "error"
    assert "loops back" in res.detail


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_answer_too_large_for_udp_is_retried_over_tcp(nsd: tuple[str, int], mode: str) -> None:
    # 100 A records (1,600 bytes) do not fit the 1,232-byte EDNS payload: NSD truncates the UDP
    # answer, so all 100 can only have come over TCP.
    resolver = Resolver([nsd], timeout=2.0)
    if mode == "sync":
        res = resolver.resolve(f"big.{Z}")
    else:
        res = asyncio.run(resolver.aresolve(f"big.{Z}"))
    assert res.status == "ok"
    assert len(res.addresses) == 100


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_failed_tcp_retry_is_explained(nsd: tuple[str, int], mode: str) -> None:
    # The relay speaks UDP only: the truncated answer comes back, the TCP retry is refused.
    with CountingRelay(nsd) as relay:
        resolver = Resolver([relay.address], timeout=2.0)
        if mode == "sync":
            res = resolver.resolve(f"big.{Z}")
        else:
            res = asyncio.run(resolver.aresolve(f"big.{Z}"))
    assert res.status == "error"
    assert "too large for UDP" in res.detail
    assert relay.total(f"big.{Z}") == 2


def test_name_is_lowercased_and_trailing_dot_dropped(nsd: tuple[str, int]) -> None:
    res = Resolver([nsd]).resolve(f"PUBLIC.{Z.upper()}.")
    assert res.name == f"public.{Z}"
    assert res.addresses == (PUBLIC4, PUBLIC6)


@pytest.mark.parametrize(
    "literal",
    ["127.0.0.1", "::1", "[::1]", "10.0.0.1", "::ffff:7f00:1", "fe80::1%eth0", "1.2.3", "0x7f.1"],
)
def test_ip_literal_is_never_sent_to_dns(nsd: tuple[str, int], literal: str) -> None:
    with CountingRelay(nsd) as relay:
        resolver = Resolver([relay.address])
        res = resolver.resolve(literal)
        ares = asyncio.run(resolver.aresolve(literal))
    assert res.status == ares.status == "error"
    assert "IP" in res.detail
    assert relay.total() == 0


@pytest.mark.parametrize("bad", ["", "ünïcode.test", "a" * 64 + ".test", "x" * 250 + ".ab.cd"])
def test_unusable_names_are_errors_without_a_query(nsd: tuple[str, int], bad: str) -> None:
    with CountingRelay(nsd) as relay:
        res = Resolver([relay.address]).resolve(bad)
    assert res.status == "error"
    assert res.detail
    assert relay.total() == 0


# -- deadline ----------------------------------------------------------------------------------


DEADLINE = 0.5
SLACK = 0.05  # scheduling jitter of a loaded 2-core box


def test_deadline_holds_when_the_nameserver_never_answers(blackhole_ns: tuple[str, int]) -> None:
    resolver = Resolver([blackhole_ns], timeout=DEADLINE)
    t0 = time.monotonic()
    res = resolver.resolve(f"public.{Z}")
    took = time.monotonic() - t0
    assert res.status == "timeout"
    assert "no answer" in res.detail
    assert DEADLINE * 0.95 <= took <= DEADLINE * 1.1 + SLACK


def test_deadline_holds_async(blackhole_ns: tuple[str, int]) -> None:
    resolver = Resolver([blackhole_ns], timeout=DEADLINE)
    t0 = time.monotonic()
    res = asyncio.run(resolver.aresolve(f"public.{Z}"))
    took = time.monotonic() - t0
    assert res.status == "timeout"
    assert DEADLINE * 0.95 <= took <= DEADLINE * 1.1 + SLACK


def test_per_call_timeout_overrides_the_default(blackhole_ns: tuple[str, int]) -> None:
    resolver = Resolver([blackhole_ns], timeout=5.0)
    t0 = time.monotonic()
    assert resolver.resolve(f"v4only.{Z}", timeout=0.3).status == "timeout"
    assert time.monotonic() - t0 <= 0.3 * 1.1 + SLACK


def test_silent_server_queries_are_sent_again_within_the_deadline() -> None:
    hole = Blackhole()
    try:
        Resolver([hole.address], timeout=DEADLINE).resolve(f"public.{Z}")
        # A and AAAA, sent at once, then sent again every 0.2 s (a quarter of the deadline,
        # at least 0.2 s): 0 s, 0.2 s, 0.4 s.
        assert hole.received() == 6
    finally:
        hole.close()


def test_second_nameserver_answers_when_the_first_is_silent(
    nsd: tuple[str, int], blackhole_ns: tuple[str, int]
) -> None:
    resolver = Resolver([blackhole_ns, nsd], timeout=2.0)
    res = resolver.resolve(f"public.{Z}")
    assert res.status == "ok"
    assert res.addresses == (PUBLIC4, PUBLIC6)
    assert res.elapsed < 1.0  # the resend to the next server comes after 0.5 s


def test_closed_port_fails_fast_with_a_reason() -> None:
    # conftest points URLVET_NAMESERVERS at 127.0.0.1:1, where nothing listens.
    resolver = Resolver()
    assert resolver.nameservers == (("127.0.0.1", 1),)
    t0 = time.monotonic()
    res = resolver.resolve(f"public.{Z}")
    assert res.status == "error"
    assert "refused" in res.detail
    assert time.monotonic() - t0 < 0.5
    ares = asyncio.run(Resolver().aresolve(f"public.{Z}"))
    assert ares.status == "error"


def test_one_query_unanswered_reports_the_answer_and_the_timeout(nsd: tuple[str, int]) -> None:
    # A nameserver that ignores AAAA queries (they exist): the A answer is kept, so the address
    # rules still see it, but the status says the lookup is incomplete.
    with CountingRelay(nsd, drop=frozenset({"AAAA"})) as relay:
        res = Resolver([relay.address], timeout=0.4).resolve(f"mixed.{Z}")
    assert res.status == "timeout"
    assert res.addresses == (PUBLIC4, "10.0.0.5")
    assert res.detail.startswith("AAAA: no answer")
    assert "the A query was answered" in res.detail


# -- cache -------------------------------------------------------------------------------------


def test_cached_answer_sends_nothing_the_second_time(nsd: tuple[str, int]) -> None:
    with CountingRelay(nsd) as relay:
        resolver = Resolver([relay.address])
        first = resolver.resolve(f"public.{Z}")
        second = resolver.resolve(f"public.{Z}")
        third = asyncio.run(resolver.aresolve(f"public.{Z}"))
    assert relay.total(f"public.{Z}") == 2  # one A and one AAAA query, once
    assert first.addresses == second.addresses == third.addresses
    assert second.elapsed < first.elapsed


def test_ttl_zero_is_never_cached(nsd: tuple[str, int]) -> None:
    with CountingRelay(nsd) as relay:
        resolver = Resolver([relay.address])
        resolver.resolve(f"ttl0.{Z}")
        resolver.resolve(f"ttl0.{Z}")
    assert relay.total(f"ttl0.{Z}") == 4


def test_cached_answer_expires_with_its_ttl(nsd: tuple[str, int]) -> None:
    with CountingRelay(nsd) as relay:
        resolver = Resolver([relay.address])
        resolver.resolve(f"ttl1.{Z}")
        resolver.resolve(f"ttl1.{Z}")
        assert relay.total(f"ttl1.{Z}") == 2
        time.sleep(1.05)
        resolver.resolve(f"ttl1.{Z}")
    assert relay.total(f"ttl1.{Z}") == 4


def test_negative_answer_is_cached(nsd: tuple[str, int]) -> None:
    with CountingRelay(nsd) as relay:
        resolver = Resolver([relay.address])
        assert resolver.resolve(f"does-not-exist.{Z}").status == "nxdomain"
        assert resolver.resolve(f"does-not-exist.{Z}").status == "nxdomain"
        assert resolver.resolve(f"txt-only.{Z}").status == "no-answer"
        assert resolver.resolve(f"txt-only.{Z}").status == "no-answer"
    assert relay.total(f"does-not-exist.{Z}") == 2
    assert relay.total(f"txt-only.{Z}") == 2


def test_timeout_is_cached_only_briefly() -> None:
    hole = Blackhole()
    try:
        resolver = Resolver([hole.address], timeout=0.2)
        assert resolver.resolve(f"public.{Z}").status == "timeout"
        assert hole.received() > 0
        assert resolver.resolve(f"public.{Z}").status == "timeout"
        assert hole.received() == 0  # answered from the cache: nothing sent
        time.sleep(FAILURE_TTL)
        assert resolver.resolve(f"public.{Z}").status == "timeout"
        # Asked again once the failure expired. (How many datagrams a timed-out lookup sends
        # depends on where its resends fall before the deadline, so only "some" is asserted.)
        assert hole.received() > 0
    finally:
        hole.close()


def test_cache_is_bounded_and_evicts_the_least_recent(nsd: tuple[str, int]) -> None:
    with CountingRelay(nsd) as relay:
        resolver = Resolver([relay.address], cache_size=2)
        for name in ("public", "v4only", "mixed"):
            resolver.resolve(f"{name}.{Z}")
        resolver.resolve(f"mixed.{Z}")  # still cached
        resolver.resolve(f"public.{Z}")  # evicted by mixed: asked again
    assert relay.total(f"mixed.{Z}") == 2
    assert relay.total(f"public.{Z}") == 4


def test_each_resolver_has_its_own_cache(nsd: tuple[str, int]) -> None:
    with CountingRelay(nsd) as relay:
        Resolver([relay.address]).resolve(f"public.{Z}")
        Resolver([relay.address]).resolve(f"public.{Z}")
    assert relay.total(f"public.{Z}") == 4


# -- concurrency -------------------------------------------------------------------------------


def test_async_lookups_are_bounded_by_max_concurrency(nsd: tuple[str, int]) -> None:
    names = [f"n{i}.{Z}" for i in range(20)]
    with CountingRelay(nsd, delay=0.05) as relay:
        resolver = Resolver([relay.address], max_concurrency=4)

        async def run() -> list[Resolution]:
            return await asyncio.gather(*(resolver.aresolve(n) for n in names))

        results = asyncio.run(run())
    assert all(r.status == "nxdomain" for r in results)
    assert relay.total() == 40
    # Two queries (A and AAAA) per lookup in flight, four lookups at a time.
    assert relay.max_in_flight == 8


def test_threaded_lookups_are_bounded_by_max_concurrency(nsd: tuple[str, int]) -> None:
    names = [f"t{i}.{Z}" for i in range(20)]
    with CountingRelay(nsd, delay=0.05) as relay:
        resolver = Resolver([relay.address], max_concurrency=3)
        with ThreadPoolExecutor(max_workers=20) as pool:
            results = list(pool.map(resolver.resolve, names))
    assert all(r.status == "nxdomain" for r in results)
    assert relay.max_in_flight == 6


def test_concurrent_lookups_of_one_name_share_one_query(nsd: tuple[str, int]) -> None:
    with CountingRelay(nsd, delay=0.05) as relay:
        resolver = Resolver([relay.address])

        async def run() -> list[Resolution]:
            return await asyncio.gather(*(resolver.aresolve(f"mixed.{Z}") for _ in range(10)))

        results = asyncio.run(run())
    assert {r.addresses for r in results} == {(PUBLIC4, "10.0.0.5")}
    assert relay.total(f"mixed.{Z}") == 2


def test_a_cancelled_caller_does_not_cancel_the_shared_lookup(nsd: tuple[str, int]) -> None:
    with CountingRelay(nsd, delay=0.1) as relay:
        resolver = Resolver([relay.address])

        async def run() -> Resolution:
            impatient = asyncio.create_task(resolver.aresolve(f"public.{Z}"))
            patient = asyncio.create_task(resolver.aresolve(f"public.{Z}"))
            await asyncio.sleep(0.02)
            impatient.cancel()
            return await patient

        assert asyncio.run(run()).status == "ok"
    assert relay.total(f"public.{Z}") == 2


def test_one_resolver_is_shared_by_threads_and_event_loops(nsd: tuple[str, int]) -> None:
    resolver = Resolver([nsd])
    names = ["public", "mixed", "to-corp", "ttl0", "big", "does-not-exist"]
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            for name in names:
                expected = CASES[name]
                if i % 2:
                    res = asyncio.run(resolver.aresolve(f"{name}.{Z}"))
                else:
                    res = resolver.resolve(f"{name}.{Z}")
                assert (res.status, res.addresses) == expected[:2]
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# -- configuration -----------------------------------------------------------------------------


def test_nameservers_env_syntax() -> None:
    assert parse_nameservers("127.0.0.1:5353, [::1]:53,10.0.0.1") == (
        ("127.0.0.1", 5353),
        ("::1", 53),
        ("10.0.0.1", 53),
    )
    for bad in ["", "dns.example:53", "127.0.0.1:0", "[::1", "127.0.0.1:x"]:
        with pytest.raises(InputError):
            parse_nameservers(bad)


def test_env_replaces_the_system_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("URLVET_NAMESERVERS", "[::1]:5300,127.0.0.2:53")
    assert Resolver().nameservers == (("::1", 5300), ("127.0.0.2", 53))
    # Explicit nameservers win over the environment.
    assert Resolver([("127.0.0.3", 53)]).nameservers == (("127.0.0.3", 53),)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(InputError):
        Resolver([("127.0.0.1", 53)], timeout=0)
    with pytest.raises(InputError):
        Resolver([("127.0.0.1", 53)], max_concurrency=0)
    with pytest.raises(InputError):
        Resolver([("localhost", 53)])


IMPORT_AUDIT = """
import importlib.util, sys, sysconfig
spec = importlib.util.find_spec("urlvet")  # locates the package without running it
# Python's library, installed packages' code and metadata, and urlvet's own source: reading
# those is what importing is. Anything else (resolv.conf, hosts) or any socket is I/O.
code_dirs = tuple({sys.prefix, sys.base_prefix, *sysconfig.get_paths().values(),
                   *spec.submodule_search_locations})
seen = []
def hook(event, args):
    if event.startswith("socket."):
        seen.append(event)
    elif event == "open" and isinstance(args[0], str) and not args[0].startswith(code_dirs):
        seen.append(f"open {args[0]}")
sys.addaudithook(hook)
import urlvet.resolve
print(seen if "urlvet.resolve" in sys.modules else "not imported")
"""


def test_import_does_no_io() -> None:
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_AUDIT], check=True, capture_output=True, text=True
    )
    assert out.stdout.strip() == "[]"


# -- misbehaving servers (scripted, on loopback) -----------------------------------------------


def qinfo(query: bytes) -> tuple[int, str, str, bool]:
    """(id, name, type, has EDNS) of a query."""
    q = dns.message.from_wire(query)
    return (
        q.id,
        q.question[0].name.to_text(),
        dns.rdatatype.to_text(q.question[0].rdtype),
        q.edns >= 0,
    )


def test_forged_and_garbled_packets_are_ignored() -> None:
    def handler(query: bytes) -> list[bytes]:
        qid, name, rtype, _ = qinfo(query)
        other = dns.message.make_query("evil.test.", rtype)
        other.id = qid
        forged_question = dns.message.make_response(other)
        forged_question.answer.append(dns.rrset.from_text("evil.test.", 300, "IN", "A", "10.0.0.1"))
        good = "" if rtype == "AAAA" else f"{name} 300 IN A {PUBLIC4}"
        return [
            b"\xff",  # too short for a header
            query,  # an echo of the query (QR bit clear)
            reply_to(query, answers=f"{name} 300 IN A 10.0.0.2", qid=(qid + 1) % 65536),
            bytes(forged_question.to_wire()),
            reply_to(query, answers=good),
        ]

    with ScriptedServer(handler) as server:
        res = Resolver([server.address], timeout=1.0).resolve(f"public.{Z}")
    assert res.status == "ok"
    assert res.addresses == (PUBLIC4,)


def test_servfail_from_one_server_is_asked_of_the_next(nsd: tuple[str, int]) -> None:
    with ScriptedServer(lambda q: [reply_to(q, rcode=2)]) as failing:
        res = Resolver([failing.address, nsd], timeout=1.0).resolve(f"public.{Z}")
        alone = Resolver([failing.address], timeout=1.0).resolve(f"public.{Z}")
    assert res.status == "ok"
    assert res.addresses == (PUBLIC4, PUBLIC6)
    assert res.elapsed < 0.2  # at once, not after a resend interval
    assert alone.status == "servfail"
    assert "answered SERVFAIL" in alone.detail


def test_malformed_answer_from_the_server_is_an_error() -> None:
    def handler(query: bytes) -> list[bytes]:
        good = reply_to(query, answers=f"{qinfo(query)[1]} 300 IN A {PUBLIC4}")
        # Drop the OPT record (11 bytes) and 3 bytes of the address: the A record runs past the end.
        return [good[:-14]]

    with ScriptedServer(handler) as server:
        res = Resolver([server.address], timeout=1.0).resolve(f"public.{Z}")
    assert res.status == "error"
    assert "malformed" in res.detail


def test_server_without_edns_is_asked_again_without_it() -> None:
    def handler(query: bytes) -> list[bytes]:
        _, name, rtype, edns = qinfo(query)
        if edns:
            return [reply_to(query, rcode=1)]  # FORMERR, as pre-EDNS servers answer
        return [
            reply_to(query, answers=f"{name} 300 IN {rtype} {PUBLIC4 if rtype == 'A' else PUBLIC6}")
        ]

    with ScriptedServer(handler) as server:
        res = Resolver([server.address], timeout=1.0).resolve(f"public.{Z}")
    assert res.status == "ok"
    assert res.addresses == (PUBLIC4, PUBLIC6)
    assert [qinfo(q)[3] for q in server.queries].count(False) == 2


def test_event_loop_without_add_reader_still_resolves(nsd: tuple[str, int]) -> None:
    # Windows' proactor loop cannot watch sockets; stand one in by refusing add_reader: the
    # lookup uses the loop's datagram and stream transports only.
    loop = asyncio.new_event_loop()

    def no_add_reader(*args: object) -> None:
        raise NotImplementedError

    loop.add_reader = no_add_reader  # type: ignore[method-assign]
    try:
        res = loop.run_until_complete(Resolver([nsd]).aresolve(f"mixed.{Z}"))
    finally:
        loop.close()
    assert res.addresses == (PUBLIC4, "10.0.0.5")


def test_blocking_lookup_works_inside_a_running_event_loop(nsd: tuple[str, int]) -> None:
    # A synchronous caller inside async code (a sync vet() in a coroutine) blocks its own loop,
    # as any blocking call does, but still gets the answer: the lookup runs on the resolver's
    # own loop, not on the caller's.
    resolver = Resolver([nsd], timeout=2.0)

    async def inside() -> Resolution:
        return resolver.resolve(f"mixed.{Z}")

    res = asyncio.run(inside())
    assert res.status == "ok"
    assert res.addresses == (PUBLIC4, "10.0.0.5")


def test_forked_child_resolves_with_a_loop_of_its_own(nsd: tuple[str, int]) -> None:
    # An audit's pool workers are forked from a process whose resolver may already have run
    # (and so started its thread, which the child does not inherit).
    import multiprocessing

    resolver = Resolver([nsd], timeout=2.0)
    assert resolver.resolve(f"public.{Z}").status == "ok"
    ctx = multiprocessing.get_context("fork")
    results: multiprocessing.Queue[str] = ctx.Queue()
    # Forked, not spawned: the child gets this very resolver, thread-less, as a worker would.
    child = ctx.Process(target=lambda: results.put(resolver.resolve(f"v4only.{Z}").status))
    child.start()
    try:
        assert results.get(timeout=10) == "ok"
    finally:
        child.join(10)
    assert child.exitcode == 0
