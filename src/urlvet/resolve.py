"""DNS answers for the host of a URL: A and AAAA at once, CNAMEs followed, a hard deadline.

This module owns every DNS query urlvet makes and is the only one that imports dnspython.
It is a stub resolver: it asks the configured recursive nameservers, never the roots, and
applies no search list (a single-label name is asked as it is, absolute).

The DNS wire format, the transport and the response parser are dnspython's (``dns.message``
builds and reads every packet, ``dns.asyncquery`` and the asyncio backend move them): packets
from the network are hostile input, and dnspython bounds what one costs (at most 16
compression pointers a name, names of at most 255 bytes, no record past the end). This module
owns only the lookup around them: which server is asked when, what counts as an answer, and how
the answers combine.

What a lookup does (the same for :meth:`Resolver.resolve` and :meth:`Resolver.aresolve`):

- It sends the A and the AAAA query at once, each from a fresh UDP socket connected to the
  nameserver (a random source port per query, random query ids, and the kernel drops answers
  from any other address), and accepts only a well-formed response to the exact question.
  A datagram under another id is dropped unread, so a flood of forgeries costs a comparison
  each and changes nothing; one under the query's id is read by dnspython, and a server that
  sends :data:`_MAX_OTHER_ANSWERS` of them answering another question is given up. The event
  loop runs between two datagrams read.
- A truncated UDP answer is asked again over TCP, and the TCP answer is the one used: UDP is no
  longer listened to for that query. A truncated TCP answer is an error, never an empty answer.
- A CNAME chain is followed inside the answer; when the answer stops at a CNAME without data
  (a server that does not chase out of its zones), the target is asked for, up to
  :data:`MAX_CNAME_CHAIN` names, loops refused.
- Unanswered queries are sent again, to the next nameserver when there are several, until the
  deadline: the whole lookup ends by ``timeout`` seconds even if no server ever answers, and
  every read stops at the deadline too. A SERVFAIL, REFUSED or malformed answer is asked of
  the next nameserver at once. The deadline starts when the lookup gets one of the
  ``max_concurrency`` slots, so a queued lookup is not timed out unasked.
- The synchronous :meth:`Resolver.resolve` runs the same lookup on an event loop of the
  resolver's own, in a thread of its own, started on first use.
- /etc/hosts is not read: urlvet asks what DNS says, and the name rules deal with
  ``localhost`` and other names that never reach DNS.

How the A and AAAA results combine into one :class:`Resolution`:

- ``addresses`` always holds every address either query returned, whatever the status:
  the address rules must see a private answer even when the other query failed.
- NXDOMAIN from either query means the name does not exist: status ``nxdomain``, unless the
  other query's answer could not be used (``error``), which then wins. An NXDOMAIN answer that
  carries addresses contradicts itself: status ``error``, addresses kept.
- Otherwise, if either query failed, the status is that failure (``servfail``, ``refused``,
  ``error``, then ``timeout``, in that order of precedence), even when the other query
  answered: what the failed query would have returned is unknown, and an AAAA query that is
  never answered can hide a private address as well as an A query can. ``detail`` says which
  query failed and that the other answered.
- Both answered: ``ok`` with addresses, or ``no-answer`` when neither had any.

Answers are cached per :class:`Resolver`, bounded in size and keyed by name: positive answers
for their smallest TTL (at most :data:`MAX_POSITIVE_TTL`; TTL 0 is never cached), negative
answers for the zone's negative TTL (at most :data:`MAX_NEGATIVE_TTL`), failures and timeouts
for :data:`FAILURE_TTL` only. Importing this module does no I/O and it keeps no global state.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ipaddress
import os
import re
import socket
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, replace
from typing import Any

import dns.asyncbackend
import dns.asyncquery
import dns.exception
import dns.flags
import dns.inet
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.resolver

from urlvet.errors import InputError

__all__ = [
    "FAILURE_TTL",
    "MAX_CNAME_CHAIN",
    "MAX_NEGATIVE_TTL",
    "MAX_POSITIVE_TTL",
    "NAMESERVERS_ENV",
    "STATUSES",
    "Resolution",
    "Resolver",
    "parse_nameservers",
]

NAMESERVERS_ENV = "URLVET_NAMESERVERS"
"""Environment variable that replaces the system's nameservers: ``host:port,[v6]:port``."""
STATUSES = ("ok", "nxdomain", "servfail", "refused", "timeout", "no-answer", "error")
"""Every value :attr:`Resolution.status` takes."""
MAX_CNAME_CHAIN = 16
"""The most CNAMEs followed for one name; a longer chain is an error, as in common resolvers."""
MAX_POSITIVE_TTL = 3600
"""Seconds an answer stays cached at most, whatever its TTL."""
MAX_NEGATIVE_TTL = 60
"""Seconds a 'does not exist' or 'no address' answer stays cached at most."""
FAILURE_TTL = 1.0
"""Seconds a failure or timeout stays cached: enough to spare a burst of URLs on a dead host
the full deadline each, short enough that a lost packet is not remembered."""

_EDNS_PAYLOAD = 1232
"""The UDP payload size advertised (EDNS0): the 2020 DNS flag day's value, which avoids IP
fragmentation; larger answers come over TCP."""
_DEFAULT_NEGATIVE_TTL = 10
"""For a negative answer without an SOA record to take the negative TTL from."""
_MAX_TTL = 0x7FFFFFFF
"""RFC 2181 section 8: a TTL with the top bit set is read as 0."""
_MAX_OTHER_ANSWERS = 4
"""Datagrams from one server carrying a query's id but answering another question (or echoing
it) read before that server is given up for the query: each is read in full, which a hostile
server can make cost a large packet's parse."""
_SYNC_GRACE = 1.0
"""Seconds a synchronous caller waits past the deadline for the resolver's own event loop
before it reports a timeout itself (that loop only overruns when the process is starved)."""
_FAILURE_PRECEDENCE = ("servfail", "refused", "error", "timeout")
_QTYPE_TEXT = {dns.rdatatype.A: "A", dns.rdatatype.AAAA: "AAAA"}
_RCODE_STATUS = {dns.rcode.SERVFAIL: "servfail", dns.rcode.REFUSED: "refused"}


@dataclass(frozen=True, slots=True)
class Resolution:
    """What DNS said about one name: the addresses a browser may be sent to, and how it went."""

    name: str
    """The name asked, in A-label form, lower case, without a trailing dot."""
    status: str
    """``ok``, ``nxdomain``, ``servfail``, ``refused``, ``timeout``, ``no-answer`` or ``error``
    (see the module documentation for how the A and AAAA results combine)."""
    addresses: tuple[str, ...]
    """Every A and AAAA answer (A first), canonical text, after following CNAMEs. Filled even
    when the status is a failure of the other query."""
    cnames: tuple[str, ...]
    """The CNAME targets followed, in order, without trailing dots."""
    min_ttl: int | None
    """The smallest TTL of the answer records (CNAMEs included), as published; None without
    answer records."""
    detail: str = ""
    """Plain-language detail for failures (which query failed, and how)."""
    elapsed: float = 0.0
    """Seconds the lookup took (near zero when answered from the cache)."""

    @property
    def ok(self) -> bool:
        """True when both queries were answered and at least one address came back."""
        return self.status == "ok"


def parse_nameservers(text: str) -> tuple[tuple[str, int], ...]:
    """Parse ``host:port,host:port`` (IPv6 as ``[::1]:53``; the port defaults to 53).

    Hosts must be IP addresses: a nameserver's name would itself need DNS to find.
    """
    servers: list[tuple[str, int]] = []
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            continue
        host, port_text = item, "53"
        if item.startswith("["):
            host, sep, rest = item[1:].partition("]")
            if not sep or (rest and not rest.startswith(":")):
                raise InputError(f"{NAMESERVERS_ENV}: {item!r} is not [IPv6]:port")
            port_text = rest[1:] or "53"
        elif item.count(":") == 1:
            host, port_text = item.split(":")
        servers.append(_checked_server(host, port_text, item))
    if not servers:
        raise InputError(f"{NAMESERVERS_ENV}: no nameserver in {text!r}")
    return tuple(servers)


def _checked_server(host: str, port: int | str, item: object) -> tuple[str, int]:
    try:
        address = ipaddress.ip_address(host)
        port_number = int(port)
    except ValueError:
        raise InputError(
            f"nameserver {item!r} is not an IP address and port (IPv6 as [::1]:53)"
        ) from None
    if not 0 < port_number < 65536:
        raise InputError(f"nameserver {item!r}: port {port_number} is out of range")
    return (str(address), port_number)


def _system_nameservers() -> tuple[tuple[str, int], ...]:
    """The nameservers of the system configuration (/etc/resolv.conf, or the registry)."""
    try:
        system = dns.resolver.Resolver(configure=True)
    except dns.resolver.NoResolverConfiguration:
        return ()
    servers = []
    for ns in system.nameservers:
        # dnspython gives plain addresses for resolv.conf entries; skip DoH/DoT objects.
        if isinstance(ns, str):
            servers.append((str(ipaddress.ip_address(ns)), int(system.port)))
    return tuple(servers)


# --------------------------------------------------------------------------------------------
# One lookup: two queries (A and AAAA) and the CNAMEs they lead to, over dnspython.


class _Track:
    """One query type (A or AAAA) of one lookup, following CNAMEs."""

    __slots__ = (
        "addresses",
        "attempt",
        "chain",
        "detail",
        "edns",
        "failed_servers",
        "failure",
        "negative_ttl",
        "other_answers",
        "qname",
        "query",
        "rdtype",
        "seen",
        "status",
        "ttls",
        "wire",
    )

    def __init__(self, rdtype: dns.rdatatype.RdataType, qname: dns.name.Name) -> None:
        self.rdtype = rdtype
        self.chain: list[str] = []
        self.seen: set[dns.name.Name] = {qname}
        self.addresses: list[str] = []
        self.ttls: list[int] = []
        self.status: str | None = None
        self.detail = ""
        self.failure: tuple[str, str] | None = None
        self.negative_ttl: int | None = None
        self.edns = True
        self.attempt = 0
        self.other_answers: dict[int, int] = {}
        """Server -> datagrams under the query's id that answered something else."""
        self.failed_servers: set[int] = set()
        self.qname = qname
        self.query = self.new_query(qname)

    def new_query(self, qname: dns.name.Name) -> dns.message.QueryMessage:
        """A fresh query for ``qname`` (a new random id), with no server asked yet."""
        self.qname = qname
        self.query = dns.message.make_query(
            qname,
            self.rdtype,
            use_edns=0 if self.edns else False,
            payload=_EDNS_PAYLOAD,
        )
        self.wire: bytes = self.query.to_wire()  # sent again as is on every resend
        self.failed_servers = set()
        self.failure = None
        return self.query

    def finish(self, status: str, detail: str = "") -> None:
        """End the query with ``status`` (the first end wins)."""
        if self.status is None:
            self.status = status
            self.detail = detail


class _Failure:
    """Why one UDP exchange with one server gave no usable answer."""

    __slots__ = ("error", "unreachable")

    def __init__(self, error: str, *, unreachable: bool = False) -> None:
        self.error = error
        self.unreachable = unreachable


_Received = dns.message.Message | _Failure
"""What one UDP exchange ends with: a response to the question (perhaps truncated), or why not."""


def _read_response(query: dns.message.Message, wire: bytes) -> _Received | None:
    """The response ``wire`` carries for ``query``; None for a packet that is not one.

    A truncated response is returned as far as dnspython could read it: it is a signal to ask
    over TCP, never an answer.
    """
    try:
        response = dns.message.from_wire(wire, raise_on_truncation=True)
    except dns.message.Truncated as exc:
        response = exc.message()  # type: ignore[no-untyped-call]
    except Exception as exc:  # the answer to our id is broken: fail, never guess
        return _Failure(f"sent a malformed answer ({_exception_text(exc)})")
    if not query.is_response(response):
        return None  # an echo, or an answer to another question
    return response


def _address_text(rdata: Any) -> str:
    # ipaddress's canonical text (dnspython writes ::ffff:7f00:1 as ::ffff:127.0.0.1).
    return str(ipaddress.ip_address(rdata.address))


def _name_text(name: dns.name.Name) -> str:
    # dnspython writes unusual bytes as DNS escapes (\\. \\032), so a label holding a dot
    # cannot pass for two labels in the text.
    return str(name.to_text(omit_final_dot=True)).lower()


def _ttl(value: int) -> int:
    return 0 if value > _MAX_TTL else int(value)


class _Lookup:
    """The state of one name's lookup: two tracks, the servers, the deadline.

    Runs on one event loop; the two tracks run as tasks of their own and share only the
    servers found unreachable.
    """

    def __init__(
        self,
        name: str,
        qname: dns.name.Name,
        servers: Sequence[tuple[str, int]],
        start: float,
        timeout: float,
    ) -> None:
        self.name = name
        self.servers = servers
        self.start = start
        self.deadline = start + timeout
        # Resend an unanswered query this often (to the next server if there are several):
        # a quarter of the deadline, within [0.2 s, 1 s].
        self.retry = min(1.0, max(0.2, timeout / 4))
        self.tracks = [_Track(rdtype, qname) for rdtype in _QTYPE_TEXT]
        self.unreachable: dict[int, str] = {}

    def remaining(self) -> float:
        """Seconds left before the deadline (0 once it has passed)."""
        return max(0.0, self.deadline - time.monotonic())

    async def run(self) -> None:
        """Run both queries to their end, or to the deadline."""
        tasks = {asyncio.ensure_future(self._ask(track)): track for track in self.tracks}
        try:
            done, _ = await asyncio.wait(tasks, timeout=self.remaining())
        finally:
            await _cancel(tasks)
        for task in done:
            exc = task.exception()
            if exc is not None:
                # Fail closed: whatever went wrong, the name is not vouched for.
                tasks[task].finish("error", f"the lookup failed: {_exception_text(exc)}")
        self.expire()

    def expire(self) -> None:
        """End every unfinished query: the deadline has passed."""
        for track in self.tracks:
            self._expire(track)

    def _expire(self, track: _Track) -> None:
        # The last failure seen, if any, says more than "no answer".
        if track.failure is not None:
            track.finish(*track.failure)
        track.finish(
            "timeout",
            f"no answer from {self._server_list()} within {self.deadline - self.start:g} s",
        )

    async def _ask(self, track: _Track) -> None:
        """Ask ``track``'s question, follow its CNAMEs, until it has an end."""
        while track.status is None:
            got = await self._exchange(track)
            if got is None:
                return
            idx, response = got
            rcode = response.rcode()
            if rcode == dns.rcode.FORMERR and track.edns:
                # A server too old for EDNS: ask it again without.
                track.edns = False
                track.new_query(track.qname)
                continue
            if rcode not in (dns.rcode.NOERROR, dns.rcode.NXDOMAIN):
                status = _RCODE_STATUS.get(rcode, "error")
                self._server_failed(track, idx, status, f"answered {dns.rcode.to_text(rcode)}")
                continue
            target = self._read_answer(track, response)
            if target is not None:
                track.new_query(target)

    async def _exchange(self, track: _Track) -> tuple[int, dns.message.Message] | None:
        """One answer to the track's query, over UDP or, when truncated, TCP; None at its end."""
        while track.status is None:
            got = await self._udp(track)
            if got is None:
                return None
            idx, response = got
            if not response.flags & dns.flags.TC:
                return got
            # Truncated: the TCP answer is the one used, whatever else arrives over UDP.
            answer = await self._tcp(track, idx)
            if answer is not None:
                return idx, answer
        return None

    async def _udp(self, track: _Track) -> tuple[int, dns.message.Message] | None:
        """The first response over UDP, sending again every ``retry`` seconds, or None."""
        tasks: dict[asyncio.Future[_Received | None], int] = {}
        try:
            while track.status is None:
                idx = self._server_for(track)
                if idx is not None:
                    tasks[asyncio.ensure_future(self._udp_exchange(track, idx))] = idx
                    track.attempt += 1
                elif not tasks:
                    self._give_up(track)
                    return None
                wait = min(self.retry, self.remaining())
                if wait <= 0:
                    self._expire(track)
                    return None
                done, _ = await asyncio.wait(
                    tasks, timeout=wait, return_when=asyncio.FIRST_COMPLETED
                )
                for finished in done:
                    idx = tasks.pop(finished)
                    received = finished.result()
                    if isinstance(received, dns.message.Message):
                        return idx, received
                    if received is None:
                        continue
                    if received.unreachable:
                        self.unreachable[idx] = f"{self._server_text(idx)}: {received.error}"
                    else:
                        self._server_failed(track, idx, "error", received.error)
            return None
        finally:
            await _cancel(tasks)

    async def _udp_exchange(self, track: _Track, idx: int) -> _Received | None:
        """Send the track's query to server ``idx`` once and read until a response arrives.

        Ends with a response, a failure, or None once the deadline has passed (each datagram
        read is followed by a look at the clock); the caller cancels it at the deadline or when
        another exchange answered first.
        """
        host, port = self.servers[idx]
        af = dns.inet.af_for_address(host)
        # Named, not sniffed: urlvet's lookups always run on asyncio.
        backend = dns.asyncbackend.get_backend("asyncio")
        try:
            # Connected: the kernel delivers only datagrams from the server, and reports ICMP
            # port-unreachable as ConnectionRefusedError, so a dead port fails fast.
            sock = await backend.make_socket(  # type: ignore[no-untyped-call]
                af, socket.SOCK_DGRAM, 0, None, (host, port)
            )
        except OSError as exc:
            return _Failure(_exception_text(exc), unreachable=True)
        async with sock:
            try:
                query = track.query
                # The socket's own form of the address: (host, port, flow, scope) for IPv6.
                destination = dns.inet.low_level_address_tuple((host, port), af)
                await dns.asyncquery.send_udp(sock, track.wire, destination)
                qid = track.wire[:2]
                while self.remaining() > 0:
                    wire, _ = await sock.recvfrom(65535, None)
                    # Another id: noise or a forgery, dropped unread (a flood costs a compare
                    # each). Our id: read by dnspython.
                    if wire[:2] == qid:
                        received = _read_response(query, wire)
                        if received is not None:
                            return received
                        others = track.other_answers[idx] = track.other_answers.get(idx, 0) + 1
                        if others >= _MAX_OTHER_ANSWERS:
                            return _Failure(f"sent {others} answers to another question")
                    # Queued datagrams are read without a pause otherwise: let the event
                    # loop's other tasks run between two.
                    await asyncio.sleep(0)
            except OSError as exc:
                return _Failure(_exception_text(exc), unreachable=True)
            except EOFError:
                return _Failure("closed the socket", unreachable=True)
        return None  # past the deadline: the waiting caller reports the timeout

    async def _tcp(self, track: _Track, idx: int) -> dns.message.Message | None:
        """The TCP answer of server ``idx`` to the track's query, or None (failure recorded)."""
        host, port = self.servers[idx]
        remaining = self.remaining()
        what = "sent an answer too large for UDP and the TCP retry failed: "
        # What the deadline reports if it comes first (the lookup is then cancelled here).
        before = track.failure
        track.failure = ("timeout", f"{self._server_text(idx)} did not answer over TCP in time")
        try:
            async with asyncio.timeout(remaining):
                answer = await dns.asyncquery.tcp(
                    track.query,
                    host,
                    remaining,
                    port,
                    backend=dns.asyncbackend.get_backend("asyncio"),
                )
        except (TimeoutError, dns.exception.Timeout):
            self._server_failed(track, idx, "timeout", "did not answer over TCP in time")
            return None
        except (OSError, EOFError) as exc:
            self._server_failed(track, idx, "error", what + _exception_text(exc))
            return None
        except dns.query.BadResponse:
            self._server_failed(track, idx, "error", "answered another question over TCP")
            return None
        except Exception as exc:  # dnspython refused the packet: a broken answer, fail closed
            detail = f"sent a malformed answer over TCP ({_exception_text(exc)})"
            self._server_failed(track, idx, "error", detail)
            return None
        if answer.flags & dns.flags.TC:
            # Nothing may be cut short over TCP: a truncated answer there hides the rest.
            self._server_failed(track, idx, "error", "sent a truncated answer over TCP")
            return None
        track.failure = before
        return answer

    def _server_for(self, track: _Track) -> int | None:
        n = len(self.servers)
        for i in range(n):
            idx = (track.attempt + i) % n
            if idx not in self.unreachable and idx not in track.failed_servers:
                return idx
        return None

    def _give_up(self, track: _Track) -> None:
        if track.failure is not None:
            track.finish(*track.failure)
        elif self.unreachable:
            track.finish(
                "error", "no nameserver could be reached: " + "; ".join(self.unreachable.values())
            )
        else:
            track.finish("error", "no nameserver is configured")

    def _server_failed(self, track: _Track, idx: int, status: str, what: str) -> None:
        """Server ``idx`` gave no usable answer for ``track``: another is asked, if any."""
        target = ""
        if track.chain:
            target = f" for {_name_text(track.qname)}, the CNAME target"
        track.failure = (status, f"{self._server_text(idx)} {what}{target}")
        track.failed_servers.add(idx)
        if self._server_for(track) is None:
            track.finish(*track.failure)

    def _read_answer(self, track: _Track, response: dns.message.Message) -> dns.name.Name | None:
        """Take the addresses from ``response``; returns a CNAME target still to ask, or None."""
        name = track.qname
        nxdomain = response.rcode() == dns.rcode.NXDOMAIN
        while True:
            rrset = response.get_rrset(response.answer, name, dns.rdataclass.IN, track.rdtype)
            if rrset is not None:
                track.ttls.append(_ttl(rrset.ttl))
                track.addresses.extend(_address_text(rdata) for rdata in rrset)
                if nxdomain:
                    # The addresses stay, for the address rules; the answer is not trusted.
                    track.finish("error", "answered NXDOMAIN and gave addresses at once")
                else:
                    track.finish("ok")
                return None
            cname = response.get_rrset(
                response.answer, name, dns.rdataclass.IN, dns.rdatatype.CNAME
            )
            if cname is None:
                break
            target: dns.name.Name = next(iter(cname)).target
            track.ttls.append(_ttl(cname.ttl))
            track.chain.append(_name_text(target))
            if target in track.seen:
                track.finish("error", f"the CNAME chain loops back to {track.chain[-1]}")
                return None
            if len(track.chain) > MAX_CNAME_CHAIN:
                track.finish("error", f"the CNAME chain is longer than {MAX_CNAME_CHAIN} names")
                return None
            track.seen.add(target)
            name = target
        track.negative_ttl = _negative_ttl(response)
        if nxdomain:
            where = f" ({_name_text(name)}, the end of the CNAME chain)"
            track.finish("nxdomain", "the name does not exist" + (where if track.chain else ""))
        elif name != track.qname and track.negative_ttl is None:
            # The server stopped at a CNAME whose target it does not serve: ask for the target.
            return name
        else:
            track.finish("ok")
        return None

    def result(self, now: float) -> tuple[Resolution, float]:
        """The combined resolution and how long it may be cached (0 = not at all)."""
        a, aaaa = self.tracks
        addresses = list(dict.fromkeys(a.addresses + aaaa.addresses))
        ttls = a.ttls + aaaa.ttls
        status, detail = self._status(addresses)
        resolution = Resolution(
            name=self.name,
            status=status,
            addresses=tuple(addresses),
            cnames=tuple(dict.fromkeys(a.chain + aaaa.chain)),
            min_ttl=min(ttls) if ttls else None,
            detail=detail,
            elapsed=now - self.start,
        )
        if status == "ok":
            ttl = float(min(resolution.min_ttl or 0, MAX_POSITIVE_TTL))
        elif status in ("nxdomain", "no-answer"):
            negative = [t.negative_ttl for t in self.tracks if t.negative_ttl is not None]
            ttl = float(min(min(negative, default=_DEFAULT_NEGATIVE_TTL), MAX_NEGATIVE_TTL))
        else:
            ttl = FAILURE_TTL
        return resolution, ttl

    def _status(self, addresses: list[str]) -> tuple[str, str]:
        """The combined status and its detail (see the module documentation)."""
        statuses = {t.status for t in self.tracks}
        if "nxdomain" in statuses and "error" not in statuses:
            return "nxdomain", next(t.detail for t in self.tracks if t.status == "nxdomain")
        if statuses == {"ok"}:
            if addresses:
                return "ok", ""
            return "no-answer", "the name exists but has no IPv4 or IPv6 address"
        status = next(s for s in _FAILURE_PRECEDENCE if s in statuses)
        failed = [t for t in self.tracks if t.status in _FAILURE_PRECEDENCE]
        if len(failed) == 2 and failed[0].detail == failed[1].detail:
            detail = failed[0].detail
        else:
            detail = "; ".join(f"{_QTYPE_TEXT[t.rdtype]}: {t.detail}" for t in failed)
        if len(failed) == 1:
            other = next(t for t in self.tracks if t is not failed[0])
            detail += f"; the {_QTYPE_TEXT[other.rdtype]} query was answered" + (
                f" ({', '.join(addresses)})" if addresses else " (no address)"
            )
        return status, detail

    def _server_text(self, idx: int) -> str:
        return _fmt_server(*self.servers[idx])

    def _server_list(self) -> str:
        return ", ".join(_fmt_server(h, p) for h, p in self.servers)


def _negative_ttl(response: dns.message.Message) -> int | None:
    """RFC 2308: the smaller of the authority SOA's TTL and its MINIMUM field, or None."""
    for rrset in response.authority:
        if rrset.rdtype == dns.rdatatype.SOA and rrset.rdclass == dns.rdataclass.IN:
            return min(_ttl(rrset.ttl), _ttl(next(iter(rrset)).minimum))
    return None


async def _cancel(tasks: dict[Any, Any]) -> None:
    """Cancel the unfinished ``tasks`` and wait for them to end (their sockets close)."""
    pending = [t for t in tasks if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending)


def _fmt_server(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _exception_text(error: BaseException) -> str:
    if isinstance(error, ConnectionRefusedError):
        return "connection refused (nothing listens on that port)"
    if isinstance(error, OSError) and error.strerror:
        return str(error.strerror).lower()
    return str(error) or type(error).__name__


class _LoopThread:
    """An event loop in a daemon thread of its own: where :meth:`Resolver.resolve` runs."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="urlvet-dns", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    def run(self, lookup: Coroutine[Any, Any, Resolution], wait: float) -> Resolution | None:
        """Run ``lookup`` on the loop; None when it has not ended within ``wait`` seconds."""
        future = asyncio.run_coroutine_threadsafe(lookup, self.loop)
        try:
            return future.result(wait)
        except concurrent.futures.TimeoutError:
            return None
        finally:
            future.cancel()

    def stop(self) -> None:
        """Stop the loop (its thread then ends)."""
        with contextlib.suppress(RuntimeError):  # already closed
            self.loop.call_soon_threadsafe(self.loop.stop)


class _Cache:
    """A bounded LRU of resolutions with expiry times; one lock, no I/O under it."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._data: OrderedDict[str, tuple[float, Resolution]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, name: str, now: float) -> Resolution | None:
        with self._lock:
            entry = self._data.get(name)
            if entry is None:
                return None
            expires, resolution = entry
            if expires <= now:
                del self._data[name]
                return None
            self._data.move_to_end(name)
            return resolution

    def put(self, resolution: Resolution, ttl: float, now: float) -> None:
        if ttl <= 0 or self._size <= 0:
            return
        with self._lock:
            self._data[resolution.name] = (now + ttl, resolution)
            self._data.move_to_end(resolution.name)
            while len(self._data) > self._size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)


class Resolver:
    """Looks up A and AAAA records with a deadline, a cache and a concurrency bound.

    One instance may be shared by any number of threads and asyncio tasks (and event loops):
    its cache is locked, and it limits lookups in flight to ``max_concurrency`` for the
    synchronous calls together and, separately, for each event loop. The deadline of a lookup
    starts when it gets its turn, so a queued lookup is not timed out unasked.
    """

    def __init__(
        self,
        nameservers: Sequence[tuple[str, int]] | None = None,
        timeout: float = 2.0,
        cache_size: int = 10000,
        max_concurrency: int = 64,
    ) -> None:
        """Create a resolver.

        ``nameservers``: (IP address, port) pairs, tried in order. None means the system's
        configuration (/etc/resolv.conf), unless the environment variable
        ``URLVET_NAMESERVERS`` is set (``host:port,host:port``, IPv6 as ``[::1]:53``): it then
        replaces the system's nameservers, for containers whose resolv.conf points somewhere
        unusable. ``timeout``: the default deadline of one lookup, in seconds.
        """
        if timeout <= 0:
            raise InputError(f"DNS timeout must be positive, got {timeout}")
        if max_concurrency < 1:
            raise InputError(f"max_concurrency must be at least 1, got {max_concurrency}")
        if nameservers is None:
            env = os.environ.get(NAMESERVERS_ENV, "").strip()
            servers = parse_nameservers(env) if env else _system_nameservers()
        else:
            servers = tuple(_checked_server(h, p, (h, p)) for h, p in nameservers)
        self.nameservers: tuple[tuple[str, int], ...] = servers
        """The nameservers asked, in order."""
        self.timeout = float(timeout)
        """The default deadline of one lookup, in seconds."""
        self.max_concurrency = max_concurrency
        """The most lookups in flight at once (sync calls together; each event loop apart)."""
        self._cache = _Cache(cache_size)
        self._sync_slots = threading.BoundedSemaphore(max_concurrency)
        self._lock = threading.Lock()
        self._loop_slots: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, asyncio.Semaphore
        ] = weakref.WeakKeyDictionary()
        self._inflight: dict[
            tuple[asyncio.AbstractEventLoop, str, float], asyncio.Task[Resolution]
        ] = {}
        self._runner: _LoopThread | None = None

    def __repr__(self) -> str:
        servers = ", ".join(_fmt_server(h, p) for h, p in self.nameservers)
        return f"Resolver(nameservers=[{servers}], timeout={self.timeout:g})"

    def clear_cache(self) -> None:
        """Forget every cached answer."""
        self._cache.clear()

    # -- entry points ------------------------------------------------------------------------

    def resolve(self, name: str, timeout: float | None = None) -> Resolution:
        """Look ``name`` (A-label form) up, blocking for at most ``timeout`` seconds."""
        start = time.monotonic()
        deadline = self._deadline(timeout)
        prepared = self._prepare(name, start)
        if isinstance(prepared, Resolution):
            return prepared
        key, qname = prepared
        with self._sync_slots:
            lookup = _Lookup(key, qname, self.nameservers, time.monotonic(), deadline)
            done = self._loop_thread().run(self._run(lookup), deadline + _SYNC_GRACE)
            if done is not None:
                return done
            lookup.expire()
            return self._finish(lookup)

    async def aresolve(self, name: str, timeout: float | None = None) -> Resolution:
        """Look ``name`` (A-label form) up without blocking the event loop.

        Concurrent calls for the same name and timeout on the same event loop share one
        lookup.
        """
        start = time.monotonic()
        deadline = self._deadline(timeout)
        prepared = self._prepare(name, start)
        if isinstance(prepared, Resolution):
            return prepared
        key, qname = prepared
        loop = asyncio.get_running_loop()
        # The timeout is part of the key: a caller must never wait longer than it asked.
        flight = (loop, key, deadline)
        with self._lock:
            task = self._inflight.get(flight)
            if task is None:
                # The lookup runs as its own task, so that a caller being cancelled does not
                # cancel it for the others waiting on the same name.
                task = loop.create_task(self._lookup_async(key, qname, deadline, loop))
                self._inflight[flight] = task
                task.add_done_callback(lambda _: self._forget(flight))
        return await asyncio.shield(task)

    def _forget(self, flight: tuple[asyncio.AbstractEventLoop, str, float]) -> None:
        with self._lock:
            self._inflight.pop(flight, None)

    async def _lookup_async(
        self, key: str, qname: dns.name.Name, deadline: float, loop: asyncio.AbstractEventLoop
    ) -> Resolution:
        async with self._slots(loop):
            lookup = _Lookup(key, qname, self.nameservers, time.monotonic(), deadline)
            return await self._run(lookup)

    async def _run(self, lookup: _Lookup) -> Resolution:
        await lookup.run()
        return self._finish(lookup)

    # -- shared steps ------------------------------------------------------------------------

    def _deadline(self, timeout: float | None) -> float:
        """The lookup's deadline in seconds: the call's timeout, or the resolver's default."""
        value = self.timeout if timeout is None else float(timeout)
        if value <= 0:
            raise InputError(f"DNS timeout must be positive, got {value}")
        return value

    def _prepare(self, name: str, start: float) -> Resolution | tuple[str, dns.name.Name]:
        """A ready answer (invalid name, or cached), or the cache key and the name to ask."""
        key = name[:-1] if name.endswith(".") else name
        key = key.lower()
        problem = _name_problem(key)
        if problem is not None:
            return Resolution(key, "error", (), (), None, problem)
        cached = self._cache.get(key, start)
        if cached is not None:
            return replace(cached, elapsed=time.monotonic() - start)
        try:
            qname = dns.name.from_text(key, origin=dns.name.root)
        except dns.exception.DNSException as exc:
            return Resolution(key, "error", (), (), None, f"not a valid DNS name: {exc}")
        return key, qname

    def _finish(self, lookup: _Lookup) -> Resolution:
        now = time.monotonic()
        resolution, ttl = lookup.result(now)
        self._cache.put(resolution, ttl, now)
        return resolution

    def _slots(self, loop: asyncio.AbstractEventLoop) -> asyncio.Semaphore:
        # An asyncio.Semaphore belongs to one event loop, so each loop gets its own.
        with self._lock:
            slots = self._loop_slots.get(loop)
            if slots is None:
                slots = asyncio.Semaphore(self.max_concurrency)
                self._loop_slots[loop] = slots
            return slots

    def _loop_thread(self) -> _LoopThread:
        """The event loop the synchronous lookups run on, started on first use.

        A forked child (an audit's worker) gets a loop of its own: the parent's thread did not
        survive the fork.
        """
        with self._lock:
            runner = self._runner
            if runner is None or runner.pid != os.getpid():
                runner = self._runner = _LoopThread()
                weakref.finalize(self, runner.stop)
            return runner


_DOTTED_DECIMAL = frozenset("0123456789.")
_ENDS_IN_A_NUMBER = re.compile(r"(?:^|\.)(?:[0-9]+|0x[0-9a-f]*)\.?$")


def _name_problem(name: str) -> str | None:
    """Why ``name`` must not be sent to DNS, or None."""
    if not name:
        return "the host is empty"
    if not name.isascii():
        return "the name is not in A-label (punycode) form"
    # Only IPv6 text has a colon and only IPv4 text is all digits and dots: other names skip
    # the costly try (an exception each).
    if ":" in name or _DOTTED_DECIMAL.issuperset(name):
        with contextlib.suppress(ValueError):
            ipaddress.ip_address(name.strip("[]"))
            return "the host is an IP address, not a name: there is nothing to look up"
    if ":" in name:
        return "a host name cannot contain ':'"
    if _ENDS_IN_A_NUMBER.search(name):
        # WHATWG URL "ends in a number": a browser parses such a host as IPv4 (1.2.3, 0x7f.1),
        # never as a name, so its DNS answer would say nothing about where the link leads.
        return "the host ends in a number, so browsers read it as an IPv4 address, not a name"
    return None
