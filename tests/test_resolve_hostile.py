"""urlvet.resolve against a hostile nameserver on loopback (tests/support/hostile.py).

Each test scripts what the server sends, down to the bytes: truncation over UDP and TCP, a
late UDP answer after a truncated one, compression-pointer chains and loops, a CNAME target
longer than DNS allows, NXDOMAIN with addresses, floods of answers with the wrong id, silence.
What must hold: every address of the answer that counts is judged, an answer that cannot be
read is a finding and never an allow, and the deadline holds while packets keep coming.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

import dns.message
import dns.name
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.hostile import (
    NXDOMAIN,
    HostileServer,
    TcpScript,
    UdpScript,
    big_answer,
    framed,
    header,
    long_cname,
    pointer_chain,
    pointer_loop,
    query_id,
    query_type,
    question_of,
    reserved_label_type,
    response,
)
from urlvet import Decision, Policy, Vetter
from urlvet.resolve import STATUSES, Resolution, Resolver

NAME = "victim.test"
PUBLIC4 = "93.184.215.14"
PRIVATE4 = "10.0.0.5"
DEADLINE = 0.6
SLACK = 0.25  # scheduling jitter of a loaded 2-core box (load averages of 10 seen)

Mode = Callable[[Resolver, str], Resolution]


def sync(resolver: Resolver, name: str) -> Resolution:
    return resolver.resolve(name)


def via_asyncio(resolver: Resolver, name: str) -> Resolution:
    return asyncio.run(resolver.aresolve(name))


MODES = pytest.mark.parametrize("lookup", [sync, via_asyncio], ids=["sync", "async"])


def a_only(script: Callable[[bytes], list[tuple[float, bytes]]]) -> UdpScript:
    """``script`` for A queries; AAAA queries get an empty, honest answer at once."""

    def udp(query: bytes) -> list[tuple[float, bytes]]:
        if query_type(query) == "AAAA":
            return [(0.0, response(query))]
        return script(query)

    return udp


def a_record(address: str) -> str:
    return f"{NAME}. 300 IN A {address}"


def truncated(query: bytes) -> list[tuple[float, bytes]]:
    return [(0.0, response(query, truncated=True))]


def tcp_answer(address: str, delay: float = 0.0) -> TcpScript:
    def tcp(query: bytes) -> bytes:
        time.sleep(delay)
        return framed(response(query, a_record(address)))

    return tcp


def verdict_of(server: HostileServer, timeout: float = 2.0) -> Decision:
    vetter = Vetter(Policy(dns={"nameservers": [server.nameserver], "timeout": timeout}))
    return vetter.vet(f"https://{NAME}/").decision


def resolver_for(server: HostileServer, timeout: float = 2.0) -> Resolver:
    return Resolver([server.address], timeout=timeout)


# -- truncation ---------------------------------------------------------------------------------


@MODES
def test_truncated_udp_answer_is_asked_over_tcp_and_its_private_address_blocks(
    lookup: Mode,
) -> None:
    with HostileServer(a_only(truncated), tcp_answer(PRIVATE4)) as server:
        res = lookup(resolver_for(server), NAME)
        assert res.status == "ok", res.detail
        assert res.addresses == (PRIVATE4,)
        assert len(server.tcp_queries) == 1
        assert verdict_of(server) is Decision.BLOCK


@MODES
def test_late_udp_answer_after_a_truncated_one_does_not_replace_the_tcp_answer(
    lookup: Mode,
) -> None:
    # The public UDP answer arrives 50 ms after the truncated one and 150 ms before the TCP
    # answer: the TCP answer is the one that counts, as for dnspython and glibc.
    def udp(query: bytes) -> list[tuple[float, bytes]]:
        return [
            (0.0, response(query, truncated=True)),
            (0.05, response(query, a_record(PUBLIC4))),
        ]

    with HostileServer(a_only(udp), tcp_answer(PRIVATE4, delay=0.2)) as server:
        res = lookup(resolver_for(server), NAME)
        assert res.status == "ok", res.detail
        assert res.addresses == (PRIVATE4,)
        assert verdict_of(server) is Decision.BLOCK


@MODES
def test_truncated_tcp_answer_is_an_error_not_an_empty_answer(lookup: Mode) -> None:
    def tcp(query: bytes) -> bytes:
        return framed(response(query, a_record(PRIVATE4), truncated=True))

    with HostileServer(a_only(truncated), tcp) as server:
        res = lookup(resolver_for(server), NAME)
        assert res.status == "error"
        assert "truncated answer over TCP" in res.detail
        assert verdict_of(server) is not Decision.ALLOW


@MODES
def test_silent_tcp_retry_ends_at_the_deadline(lookup: Mode) -> None:
    with HostileServer(a_only(truncated), lambda query: None) as server:
        t0 = time.monotonic()
        res = lookup(resolver_for(server, timeout=DEADLINE), NAME)
        took = time.monotonic() - t0
    assert res.status == "timeout"
    assert "over TCP" in res.detail
    assert DEADLINE * 0.95 <= took <= DEADLINE + SLACK


@MODES
def test_nameserver_on_ipv6_loopback_answers_over_udp_and_tcp(lookup: Mode) -> None:
    with HostileServer(a_only(truncated), tcp_answer(PRIVATE4), host="::1") as server:
        res = lookup(resolver_for(server), NAME)
        assert res.status == "ok", res.detail
        assert res.addresses == (PRIVATE4,)
        assert verdict_of(server) is Decision.BLOCK


# -- compression pointers and names --------------------------------------------------------------


@MODES
def test_pointer_chain_is_refused_long_before_the_deadline(lookup: Mode) -> None:
    # 65 KB: a chain of 8,000 backward pointers, then 3,000 answers whose owner is its last
    # link. dnspython stops after 16 hops; a reader without a limit walks 8,000 per answer.
    with HostileServer(a_only(lambda q: [(0.0, pointer_chain(q))])) as server:
        t0 = time.monotonic()
        res = lookup(resolver_for(server, timeout=2.0), NAME)
        took = time.monotonic() - t0
        assert res.status == "error"
        assert "malformed" in res.detail
        assert took < 2.0
        assert verdict_of(server) is not Decision.ALLOW


@MODES
@pytest.mark.parametrize("packet", [pointer_loop, reserved_label_type], ids=["loop", "label-64"])
def test_unreadable_owner_name_is_refused(lookup: Mode, packet: Callable[[bytes], bytes]) -> None:
    with HostileServer(a_only(lambda q: [(0.0, packet(q))])) as server:
        res = lookup(resolver_for(server), NAME)
        assert res.status == "error"
        assert "malformed" in res.detail
        assert res.addresses == ()
        assert verdict_of(server) is not Decision.ALLOW


@MODES
def test_stream_of_pointer_chains_with_the_wrong_id_is_ignored(lookup: Mode) -> None:
    def udp(query: bytes) -> list[tuple[float, bytes]]:
        wrong = (query_id(query) + 1) % 65536
        forged = pointer_chain(wrong.to_bytes(2, "big") + query[2:])
        return [(0.0, forged)] * 40 + [(0.0, response(query, a_record(PUBLIC4)))]

    with HostileServer(a_only(udp)) as server:
        t0 = time.monotonic()
        res = lookup(resolver_for(server, timeout=2.0), NAME)
        took = time.monotonic() - t0
    assert res.status == "ok", res.detail
    assert res.addresses == (PUBLIC4,)
    assert took < 2.0


def test_event_loop_keeps_running_while_pointer_chains_arrive() -> None:
    # The proxy vets on its event loop: packets being read must not stall the other tasks.
    def udp(query: bytes) -> list[tuple[float, bytes]]:
        wrong = (query_id(query) + 1) % 65536
        forged = pointer_chain(wrong.to_bytes(2, "big") + query[2:])
        return [(0.005, forged)] * 60

    async def run(resolver: Resolver) -> tuple[Resolution, float]:
        gaps: list[float] = []

        async def tick() -> None:
            last = time.monotonic()
            while True:
                await asyncio.sleep(0.005)
                now = time.monotonic()
                gaps.append(now - last)
                last = now

        ticker = asyncio.create_task(tick())
        res = await resolver.aresolve(NAME)
        ticker.cancel()
        return res, max(gaps)

    with HostileServer(a_only(udp)) as server:
        res, worst_gap = asyncio.run(run(resolver_for(server, timeout=DEADLINE)))
    assert res.status == "timeout"
    assert worst_gap < 0.5  # a reader that parses every packet stalls for seconds


@MODES
def test_cname_target_longer_than_255_bytes_is_a_clear_error(lookup: Mode) -> None:
    with HostileServer(a_only(lambda q: [(0.0, long_cname(q, 256))])) as server:
        res = lookup(resolver_for(server), NAME)
        assert res.status == "error"
        assert "malformed" in res.detail
        assert verdict_of(server) is not Decision.ALLOW


def test_cname_target_longer_than_255_bytes_is_a_finding_of_urlvet_check() -> None:
    with HostileServer(a_only(lambda q: [(0.0, long_cname(q, 256))])) as server:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "urlvet",
                "check",
                "--nameserver",
                server.nameserver,
                "--format",
                "json",
                f"https://{NAME}/",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "NO_COLOR": "1"},
        )
    assert "Traceback" not in out.stderr
    assert out.returncode in (0, 1), out.stderr
    report = json.loads(out.stdout)
    text = json.dumps(report)
    assert "UV223" in text
    assert "malformed" in text


# -- contradictions and floods -----------------------------------------------------------------


@MODES
def test_nxdomain_with_a_private_address_is_an_error_and_blocks(lookup: Mode) -> None:
    def udp(query: bytes) -> list[tuple[float, bytes]]:
        answers = a_record(PRIVATE4) if query_type(query) == "A" else ""
        return [(0.0, response(query, answers, rcode=NXDOMAIN))]

    with HostileServer(udp) as server:
        res = lookup(resolver_for(server), NAME)
        assert res.status == "error"
        assert "NXDOMAIN" in res.detail
        assert res.addresses == (PRIVATE4,)
        assert verdict_of(server) is Decision.BLOCK


def test_nxdomain_with_a_public_address_is_not_allowed() -> None:
    def udp(query: bytes) -> list[tuple[float, bytes]]:
        answers = a_record(PUBLIC4) if query_type(query) == "A" else ""
        return [(0.0, response(query, answers, rcode=NXDOMAIN))]

    with HostileServer(udp) as server:
        assert resolver_for(server).resolve(NAME).status == "error"
        assert verdict_of(server) is not Decision.ALLOW


@MODES
def test_flood_of_wrong_id_answers_is_ignored_and_the_right_answer_used(lookup: Mode) -> None:
    def udp(query: bytes) -> list[tuple[float, bytes]]:
        qid = query_id(query)
        # Paced a little: an unpaced burst overflows the socket's receive buffer in the kernel,
        # which then drops the right answer before any reader sees it.
        flood = [
            (0.0002, response(query, a_record("10.0.0.1"), qid=(qid + i) % 65536))
            for i in range(1, 301)
        ]
        return [*flood, (0.0, response(query, a_record(PUBLIC4)))]

    with HostileServer(a_only(udp)) as server:
        res = lookup(resolver_for(server), NAME)
        assert res.status == "ok", res.detail
        assert res.addresses == (PUBLIC4,)
        assert verdict_of(server) is Decision.ALLOW


@MODES
def test_endless_flood_of_wrong_id_answers_ends_at_the_deadline(lookup: Mode) -> None:
    def udp(query: bytes) -> list[tuple[float, bytes]]:
        wrong = (query_id(query) + 1) % 65536
        return [(0.002, response(query, a_record("10.0.0.1"), qid=wrong))] * 1000

    with HostileServer(udp) as server:
        t0 = time.monotonic()
        res = lookup(resolver_for(server, timeout=DEADLINE), NAME)
        took = time.monotonic() - t0
    assert res.status == "timeout"
    assert res.addresses == ()
    assert DEADLINE * 0.95 <= took <= DEADLINE + SLACK


@MODES
def test_server_that_never_answers_ends_at_the_deadline(lookup: Mode) -> None:
    with HostileServer(lambda query: []) as server:
        t0 = time.monotonic()
        res = lookup(resolver_for(server, timeout=DEADLINE), NAME)
        took = time.monotonic() - t0
        assert res.status == "timeout"
        assert DEADLINE * 0.95 <= took <= DEADLINE + SLACK
        assert len(server.udp_queries) >= 2  # A and AAAA, sent again within the deadline


@MODES
def test_garbage_with_the_right_id_is_an_error_never_an_exception(lookup: Mode) -> None:
    # Bytes that only look like a response: the header of one, then noise.
    def udp(query: bytes) -> list[tuple[float, bytes]]:
        good = response(query, a_record(PUBLIC4))
        return [(0.0, good[:40] + bytes(range(256)) * 4)]

    with HostileServer(a_only(udp)) as server:
        res = lookup(resolver_for(server), NAME)
    assert res.status == "error"
    assert "malformed" in res.detail


# -- any bytes after a valid header and question (a law: a status, never an exception) -----------


@given(records=st.integers(min_value=0, max_value=5), tail=st.binary(max_size=300))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_answer_bytes_give_a_status_never_an_exception(records: int, tail: bytes) -> None:
    def udp(query: bytes) -> list[tuple[float, bytes]]:
        return [(0.0, header(query_id(query), an=records) + question_of(query) + tail)]

    with HostileServer(a_only(udp)) as server:
        res = resolver_for(server, timeout=1.0).resolve(NAME)
    assert res.status in STATUSES
    assert res.status != "timeout"  # the answer carried our id and question: it was read
    assert (res.status == "ok") == (res.detail == "")


def test_answers_to_another_question_under_our_id_give_the_server_up() -> None:
    # 65 KB of valid records each, so every one costs a full parse: a few are read, then the
    # server counts as failed, well before the deadline.
    def udp(query: bytes) -> list[tuple[float, bytes]]:
        other = dns.message.from_wire(query)
        other.question[0].name = dns.name.from_text("other.test.")
        # Paced: 65 KB datagrams all at once would overflow the socket's buffer in the kernel.
        return [(0.02, big_answer(query_id(query), bytes(other.to_wire())))] * 30

    with HostileServer(a_only(udp)) as server:
        t0 = time.monotonic()
        res = asyncio.run(resolver_for(server, timeout=5.0).aresolve(NAME))
        took = time.monotonic() - t0
    assert res.status == "error", res.detail
    assert "answers to another question" in res.detail
    assert took < 5.0
