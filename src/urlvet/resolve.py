"""DNS answers for the host of a URL: A and AAAA at once, CNAMEs followed, a hard deadline.

This module owns every DNS query urlvet makes and is the only one that imports dnspython.
It is a stub resolver: it asks the configured recursive nameservers, never the roots, and
applies no search list (a single-label name is asked as it is, absolute).

What a lookup does (the same for :meth:`Resolver.resolve` and :meth:`Resolver.aresolve`):

- It sends the A and the AAAA query at once, from one fresh UDP socket connected to the
  nameserver (a random source port per lookup, random query ids, and the kernel drops answers
  from any other address), and accepts only a well-formed response to the exact question.
- A truncated UDP answer is asked again over TCP. A CNAME chain is followed inside the answer;
  when the answer stops at a CNAME without data (a server that does not chase out of its
  zones), the target is asked for, up to :data:`MAX_CNAME_CHAIN` names, loops refused.
- Unanswered queries are sent again, to the next nameserver when there are several, until the
  deadline: the whole lookup ends by ``timeout`` seconds even if no server ever answers. A
  SERVFAIL or REFUSED is asked of the next nameserver at once. The deadline starts when the
  lookup gets one of the ``max_concurrency`` slots, so a queued lookup is not timed out unasked.
- Responses are read by a small parser of our own (header, question, answer and authority
  sections; compression pointers may only point backwards, so no packet can make it loop):
  dnspython's full parser cost ~100 us a message, most of a lookup's time at benchmark rates.
  dnspython still provides name syntax and text, and the system configuration.
- /etc/hosts is not read: urlvet asks what DNS says, and the name rules deal with
  ``localhost`` and other names that never reach DNS.

How the A and AAAA results combine into one :class:`Resolution`:

- ``addresses`` always holds every address either query returned, whatever the status:
  the address rules must see a private answer even when the other query failed.
- NXDOMAIN from either query means the name does not exist: status ``nxdomain``.
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
import contextlib
import ipaddress
import os
import re
import secrets
import select
import socket
import struct
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import dns.exception
import dns.name
import dns.rcode
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
_FAILURE_PRECEDENCE = ("servfail", "refused", "error", "timeout")
_QTYPE_TEXT = {1: "A", 28: "AAAA"}


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
# The lookup itself, without I/O: the drivers below move bytes and call these methods.


Labels = tuple[bytes, ...]
"""A domain name as its labels, lower-cased (ASCII only, as DNS compares), root label left out."""

_A, _AAAA, _CNAME, _SOA = 1, 28, 5, 6
_IN = 1
_QR, _TC, _RD = 0x8000, 0x0200, 0x0100
_NOERROR, _FORMERR, _SERVFAIL, _NXDOMAIN, _REFUSED = 0, 1, 2, 3, 5
_RCODE_STATUS = {_SERVFAIL: "servfail", _REFUSED: "refused"}


def _query_wire(qid: int, qname: Labels, rdtype: int, edns: bool) -> bytes:
    # Built by hand: the format is fixed and tiny, and dnspython's make_query + to_wire cost
    # ~70 us, a large share of a whole lookup at benchmark rates.
    header = struct.pack("!HHHHHH", qid, _RD, 1, 0, 0, 1 if edns else 0)
    name = b"".join(bytes((len(label),)) + label for label in qname) + b"\x00"
    question = name + struct.pack("!HH", rdtype, _IN)
    if not edns:
        return header + question
    # OPT pseudo-RR: root owner, type 41, class = payload size, TTL = 0 (no DO bit), no data.
    return header + question + b"\x00" + struct.pack("!HHIH", 41, _EDNS_PAYLOAD, 0, 0)


def _labels_text(labels: Labels) -> str:
    # dnspython writes unusual bytes as DNS escapes (\\. \\032), so a label holding a dot
    # cannot pass for two labels in the text.
    return str(dns.name.Name((*labels, b"")).to_text(omit_final_dot=True))


@dataclass(slots=True)
class _Reply:
    """The parts of a DNS response a lookup uses."""

    qid: int
    flags: int
    question: tuple[Labels, int, int] | None
    answer: dict[tuple[Labels, int], tuple[int, list[str | Labels]]]
    """(owner, type) -> (TTL, data): addresses as text for A/AAAA, the target for CNAME."""
    negative_ttl: int | None
    """From an SOA in the authority section (RFC 2308: the smaller of its TTL and MINIMUM)."""

    @property
    def rcode(self) -> int:
        return self.flags & 0x000F


def _read_name(data: bytes, pos: int) -> tuple[Labels, int]:
    """Read a possibly compressed name at ``pos``; returns it and the position after it."""
    labels: list[bytes] = []
    after = -1
    size = 0
    while True:
        length = data[pos]
        if length >= 0xC0:
            target = ((length & 0x3F) << 8) | data[pos + 1]
            if after < 0:
                after = pos + 2
            # Only backward pointers: every jump lands earlier, so a loop cannot be built.
            if target >= pos:
                raise ValueError("forward compression pointer")
            pos = target
            continue
        if length > 63:
            raise ValueError("unknown label type")
        pos += 1
        if length == 0:
            return tuple(labels), (after if after >= 0 else pos)
        label = data[pos : pos + length]
        size += length + 1
        if len(label) != length or size > 255:
            raise ValueError("label past the end or name too long")
        labels.append(label.lower())
        pos += length


def _parse_reply(data: bytes) -> _Reply:
    """Parse a response; raises ValueError, IndexError or struct.error on a malformed one.

    Written for speed (dnspython's full parser took ~100 us a message here) and for what a
    lookup needs: the question, the A/AAAA/CNAME answers, the negative TTL. The additional
    section is not read.
    """
    qid, flags, qdcount, ancount, nscount, _ = struct.unpack_from("!HHHHHH", data)
    reply = _Reply(qid, flags, None, {}, None)
    pos = 12
    if qdcount != 1:
        return reply  # not an answer to our one question; the caller rejects it
    qname, pos = _read_name(data, pos)
    qtype, qclass = struct.unpack_from("!HH", data, pos)
    pos += 4
    reply.question = (qname, qtype, qclass)
    if flags & _TC:
        return reply  # a truncated answer is only a signal to ask over TCP
    for section, count in ((0, ancount), (1, nscount)):
        for _ in range(count):
            owner, pos = _read_name(data, pos)
            rtype, rclass, ttl, rdlength = struct.unpack_from("!HHIH", data, pos)
            pos += 10
            end = pos + rdlength
            if end > len(data):
                raise ValueError("record data past the end")
            ttl = 0 if ttl > 0x7FFFFFFF else ttl  # RFC 2181 section 8
            if rclass == _IN and section == 0 and rtype in (_A, _AAAA, _CNAME):
                value: str | Labels
                if rtype == _A:
                    value = str(ipaddress.IPv4Address(data[pos:end]))
                elif rtype == _AAAA:
                    value = str(ipaddress.IPv6Address(data[pos:end]))
                else:
                    value, _ = _read_name(data, pos)
                old_ttl, values = reply.answer.setdefault((owner, rtype), (ttl, []))
                values.append(value)
                if ttl < old_ttl:
                    reply.answer[(owner, rtype)] = (ttl, values)
            elif section == 1 and rtype == _SOA and rdlength >= 22:
                (minimum,) = struct.unpack_from("!I", data, end - 4)
                reply.negative_ttl = min(ttl, minimum)
            pos = end
    return reply


class _Track:
    """One query type (A or AAAA) of one lookup, following CNAMEs."""

    __slots__ = (
        "addresses",
        "chain",
        "detail",
        "edns",
        "failed_servers",
        "failure",
        "negative_ttl",
        "qid",
        "qname",
        "rdtype",
        "seen",
        "sent_to",
        "status",
        "tcp_pending",
        "ttls",
        "wire",
    )

    def __init__(self, rdtype: int, qname: Labels) -> None:
        self.rdtype = rdtype
        self.chain: list[str] = []
        self.seen: set[Labels] = {qname}
        self.addresses: list[str] = []
        self.ttls: list[int] = []
        self.status: str | None = None
        self.detail = ""
        self.failure: tuple[str, str] | None = None
        self.negative_ttl: int | None = None
        self.edns = True
        self.tcp_pending = False
        self.failed_servers: set[int] = set()
        self.sent_to: set[int] = set()
        self.qname = qname
        self.qid = 0
        self.wire = b""
        self.new_query(qname)

    def new_query(self, qname: Labels) -> None:
        self.qname = qname
        self.qid = secrets.randbits(16)
        self.wire = _query_wire(self.qid, qname, self.rdtype, self.edns)
        self.sent_to = set()
        self.failed_servers = set()
        self.failure = None

    def finish(self, status: str, detail: str = "") -> None:
        self.status = status
        self.detail = detail


class _Lookup:
    """The state of one name's lookup. Not thread-safe: one driver call owns it."""

    def __init__(
        self,
        name: str,
        qname: Labels,
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
        self.tracks = [_Track(rdtype, qname) for rdtype in (_A, _AAAA)]
        self.next_send = start
        self.attempt = 0
        self.unreachable: dict[int, str] = {}
        self.tcp_wanted: list[tuple[_Track, int]] = []

    @property
    def done(self) -> bool:
        return all(t.status is not None for t in self.tracks)

    def _open(self) -> list[_Track]:
        return [t for t in self.tracks if t.status is None and not t.tcp_pending]

    def _server_for(self, track: _Track, attempt: int) -> int | None:
        n = len(self.servers)
        for i in range(n):
            idx = (attempt + i) % n
            if idx not in self.unreachable and idx not in track.failed_servers:
                return idx
        return None

    def due_sends(self, now: float) -> list[tuple[int, bytes]]:
        """The datagrams to send now: first queries, resends, chases."""
        sends: list[tuple[int, bytes]] = []
        resend = now >= self.next_send
        for track in self._open():
            if track.sent_to and not resend:
                continue
            idx = self._server_for(track, self.attempt)
            if idx is None:
                self._give_up(track)
                continue
            track.sent_to.add(idx)
            sends.append((idx, track.wire))
        if resend:
            self.attempt += 1
            self.next_send = now + self.retry
        return sends

    def wake_at(self) -> float:
        """When the driver must call :meth:`due_sends` or :meth:`expire` next."""
        if self._open():
            return min(self.next_send, self.deadline)
        return self.deadline

    def expire(self, now: float) -> None:
        """End every unfinished query once the deadline has passed."""
        if now < self.deadline:
            return
        for track in self.tracks:
            if track.status is None:
                if track.failure is not None:
                    track.finish(*track.failure)
                else:
                    track.finish(
                        "timeout",
                        f"no answer from {self._server_list()} within "
                        f"{self.deadline - self.start:g} s",
                    )

    def on_unreachable(self, idx: int, error: BaseException) -> None:
        """A nameserver's port is closed (ICMP) or its address unusable."""
        host, port = self.servers[idx]
        self.unreachable[idx] = f"{_fmt_server(host, port)}: {_os_error_text(error)}"
        # Whatever was sent there will never be answered: move it to another server now.
        for track in self._open():
            track.sent_to.discard(idx)
            if self._server_for(track, self.attempt) is None and not track.sent_to:
                self._give_up(track)

    def _give_up(self, track: _Track) -> None:
        if track.failure is not None:
            track.finish(*track.failure)
        elif self.unreachable:
            track.finish(
                "error", "no nameserver could be reached: " + "; ".join(self.unreachable.values())
            )
        else:
            track.finish("error", "no nameserver is configured")

    def on_datagram(self, idx: int, data: bytes) -> None:
        """A UDP datagram from server ``idx``: a response to one of the tracks, or noise."""
        try:
            reply = _parse_reply(data)
        except (ValueError, IndexError, struct.error):
            reply = None
        for track in self.tracks:
            if track.status is not None or idx not in track.sent_to:
                continue
            if reply is None:
                # Unparsable: only a packet whose header matches our query id is taken as the
                # server's broken answer; anything else is noise (or a forgery) to ignore.
                if len(data) >= 2 and int.from_bytes(data[:2], "big") == track.qid:
                    self._server_failed(track, idx, "error", "sent a malformed answer")
                    return
                continue
            if self._answers(track, reply):
                if reply.flags & _TC:
                    if not track.tcp_pending:
                        track.tcp_pending = True
                        self.tcp_wanted.append((track, idx))
                    return
                self.on_response(track, idx, reply)
                return

    @staticmethod
    def _answers(track: _Track, reply: _Reply) -> bool:
        return (
            reply.qid == track.qid
            and bool(reply.flags & _QR)
            and (reply.flags >> 11) & 0xF == 0  # opcode QUERY
            and reply.question == (track.qname, track.rdtype, _IN)
        )

    def on_tcp_result(self, track: _Track, idx: int, result: bytes | BaseException) -> None:
        """The outcome of the TCP retry of a truncated answer: the response, or the error."""
        track.tcp_pending = False
        if track.status is not None:
            return  # already ended by the deadline
        if isinstance(result, TimeoutError):
            self._server_failed(track, idx, "timeout", "did not answer over TCP in time")
            return
        if isinstance(result, BaseException):
            self._server_failed(
                track,
                idx,
                "error",
                "sent an answer too large for UDP and the TCP retry failed: "
                + _os_error_text(result),
            )
            return
        try:
            reply = _parse_reply(result)
        except (ValueError, IndexError, struct.error):
            self._server_failed(track, idx, "error", "sent a malformed answer over TCP")
            return
        if not self._answers(track, reply):
            self._server_failed(track, idx, "error", "answered another question over TCP")
            return
        self.on_response(track, idx, reply)

    def _server_failed(self, track: _Track, idx: int, status: str, what: str) -> None:
        """Server ``idx`` gave no usable answer for ``track``: try another, or give up."""
        host, port = self.servers[idx]
        target = ""
        if track.chain:
            target = f" for {_labels_text(track.qname)}, the CNAME target"
        track.failure = (status, f"{_fmt_server(host, port)} {what}{target}")
        track.failed_servers.add(idx)
        track.sent_to.discard(idx)
        # Another server may know better: due_sends asks it at once. With none left, done.
        if self._server_for(track, self.attempt) is None:
            track.finish(*track.failure)

    def on_response(self, track: _Track, idx: int, reply: _Reply) -> None:
        """A validated response for ``track`` from server ``idx``."""
        rcode = reply.rcode
        if rcode == _FORMERR and track.edns:
            # A server too old for EDNS: ask it again without.
            track.edns = False
            track.new_query(track.qname)
            return
        if rcode not in (_NOERROR, _NXDOMAIN):
            status = _RCODE_STATUS.get(rcode, "error")
            self._server_failed(track, idx, status, f"answered {dns.rcode.Rcode.to_text(rcode)}")
            return
        self._read_answer(track, reply)

    def _read_answer(self, track: _Track, reply: _Reply) -> None:
        name = track.qname
        while True:
            data = reply.answer.get((name, track.rdtype))
            if data is not None:
                ttl, addresses = data
                track.ttls.append(ttl)
                track.addresses.extend(a for a in addresses if isinstance(a, str))
                track.finish("ok")
                return
            cname = reply.answer.get((name, _CNAME))
            if cname is None:
                break
            ttl, (target, *_) = cname
            assert isinstance(target, tuple)
            track.ttls.append(ttl)
            track.chain.append(_labels_text(target))
            if target in track.seen:
                track.finish("error", f"the CNAME chain loops back to {track.chain[-1]}")
                return
            if len(track.chain) > MAX_CNAME_CHAIN:
                track.finish("error", f"the CNAME chain is longer than {MAX_CNAME_CHAIN} names")
                return
            track.seen.add(target)
            name = target
        track.negative_ttl = reply.negative_ttl
        if reply.rcode == _NXDOMAIN:
            where = f" ({_labels_text(name)}, the end of the CNAME chain)"
            track.finish("nxdomain", "the name does not exist" + (where if track.chain else ""))
        elif name != track.qname and reply.negative_ttl is None:
            # The server stopped at a CNAME whose target it does not serve: ask for the target.
            track.new_query(name)
        else:
            track.finish("ok")

    def result(self, now: float) -> tuple[Resolution, float]:
        """The combined resolution and how long it may be cached (0 = not at all)."""
        a, aaaa = self.tracks
        addresses = list(dict.fromkeys(a.addresses + aaaa.addresses))
        cnames = list(dict.fromkeys(a.chain + aaaa.chain))
        ttls = a.ttls + aaaa.ttls
        min_ttl = min(ttls) if ttls else None
        statuses = {t.status for t in self.tracks}
        detail = ""
        if "nxdomain" in statuses:
            status = "nxdomain"
            detail = next(t.detail for t in self.tracks if t.status == "nxdomain")
        elif statuses == {"ok"}:
            status = "ok" if addresses else "no-answer"
            if not addresses:
                detail = "the name exists but has no IPv4 or IPv6 address"
        else:
            status = next(s for s in _FAILURE_PRECEDENCE if s in statuses)
            failed = [t for t in self.tracks if t.status in _FAILURE_PRECEDENCE]
            if len(failed) == 2 and failed[0].detail == failed[1].detail:
                detail = failed[0].detail
            else:
                detail = "; ".join(f"{_QTYPE_TEXT[t.rdtype]}: {t.detail}" for t in failed)
            if len(failed) == 1:
                other = _QTYPE_TEXT[(a if failed[0] is aaaa else aaaa).rdtype]
                detail += f"; the {other} query was answered" + (
                    f" ({', '.join(addresses)})" if addresses else " (no address)"
                )
        resolution = Resolution(
            name=self.name,
            status=status,
            addresses=tuple(addresses),
            cnames=tuple(cnames),
            min_ttl=min_ttl,
            detail=detail,
            elapsed=now - self.start,
        )
        if status == "ok":
            ttl = float(min(min_ttl or 0, MAX_POSITIVE_TTL))
        elif status in ("nxdomain", "no-answer"):
            negative = [t.negative_ttl for t in self.tracks if t.negative_ttl is not None]
            ttl = float(min(min(negative, default=_DEFAULT_NEGATIVE_TTL), MAX_NEGATIVE_TTL))
        else:
            ttl = FAILURE_TTL
        return resolution, ttl

    def _server_list(self) -> str:
        return ", ".join(_fmt_server(h, p) for h, p in self.servers)


def _fmt_server(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _os_error_text(error: BaseException) -> str:
    if isinstance(error, ConnectionRefusedError):
        return "connection refused (nothing listens on that port)"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror.lower()
    return str(error) or type(error).__name__


def _udp_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        sock.setblocking(False)
        # Connected: the kernel delivers only datagrams from the server, and reports ICMP
        # port-unreachable as ConnectionRefusedError, so a dead port fails fast.
        sock.connect((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


# --------------------------------------------------------------------------------------------


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
            self._drive_sync(lookup)
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
        self, key: str, qname: Labels, deadline: float, loop: asyncio.AbstractEventLoop
    ) -> Resolution:
        async with self._slots(loop):
            lookup = _Lookup(key, qname, self.nameservers, time.monotonic(), deadline)
            await self._drive_async(lookup, loop)
            return self._finish(lookup)

    # -- shared steps ------------------------------------------------------------------------

    def _deadline(self, timeout: float | None) -> float:
        """The lookup's deadline in seconds: the call's timeout, or the resolver's default."""
        value = self.timeout if timeout is None else float(timeout)
        if value <= 0:
            raise InputError(f"DNS timeout must be positive, got {value}")
        return value

    def _prepare(self, name: str, start: float) -> Resolution | tuple[str, Labels]:
        """A ready answer (invalid name, or cached), or the cache key and the name to ask."""
        key = name[:-1] if name.endswith(".") else name
        key = key.lower()
        problem = _name_problem(key)
        if problem is not None:
            return Resolution(key, "error", (), (), None, problem)
        cached = self._cache.get(key, start)
        if cached is not None:
            return replace(cached, elapsed=time.monotonic() - start)
        if len(key) <= 253 and _PLAIN_NAME.fullmatch(key):
            # The usual host name: split it here, 15 us faster than dnspython's text parser.
            return key, tuple(key.encode().split(b"."))
        try:
            qname = dns.name.from_text(key, origin=dns.name.root)
        except dns.exception.DNSException as exc:
            return Resolution(key, "error", (), (), None, f"not a valid DNS name: {exc}")
        return key, tuple(label.lower() for label in qname.labels[:-1])

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

    # -- drivers -----------------------------------------------------------------------------

    def _drive_sync(self, lookup: _Lookup) -> None:
        socks: dict[int, socket.socket] = {}
        try:
            while True:
                self._send_all(lookup, socks, time.monotonic())
                for track, idx in lookup.tcp_wanted:
                    lookup.on_tcp_result(track, idx, self._tcp_sync(lookup, track, idx))
                if lookup.tcp_wanted:
                    lookup.tcp_wanted.clear()
                    continue
                now = time.monotonic()
                lookup.expire(now)
                if lookup.done:
                    return
                wait = max(0.0, lookup.wake_at() - now)
                live = [s for i, s in socks.items() if i not in lookup.unreachable]
                if not live:
                    time.sleep(wait)
                    continue
                readable, _, _ = select.select(live, [], [], wait)
                for sock in readable:
                    idx = next(i for i, s in socks.items() if s is sock)
                    self._read_all(lookup, idx, sock)
        finally:
            for sock in socks.values():
                sock.close()

    def _send_all(self, lookup: _Lookup, socks: dict[int, socket.socket], now: float) -> None:
        for idx, wire in lookup.due_sends(now):
            try:
                sock = socks.get(idx)
                if sock is None:
                    sock = socks[idx] = _udp_socket(*lookup.servers[idx])
                sock.send(wire)
            except BlockingIOError:
                pass  # the send buffer is full: the next resend goes out later
            except OSError as exc:
                lookup.on_unreachable(idx, exc)

    @staticmethod
    def _read_all(lookup: _Lookup, idx: int, sock: socket.socket) -> None:
        while True:
            try:
                data = sock.recv(65535)
            except BlockingIOError:
                return
            except OSError as exc:
                lookup.on_unreachable(idx, exc)
                return
            lookup.on_datagram(idx, data)

    @staticmethod
    def _tcp_sync(lookup: _Lookup, track: _Track, idx: int) -> bytes | BaseException:
        host, port = lookup.servers[idx]
        try:
            with socket.create_connection((host, port), timeout=_remaining(lookup)) as sock:
                # RFC 1035 4.2.2: each message is preceded by its length in two bytes.
                sock.sendall(len(track.wire).to_bytes(2, "big") + track.wire)
                size = int.from_bytes(_recv_exactly(sock, 2, lookup), "big")
                return _recv_exactly(sock, size, lookup)
        except (OSError, EOFError) as exc:  # socket.timeout is TimeoutError, an OSError
            return exc

    async def _drive_async(self, lookup: _Lookup, loop: asyncio.AbstractEventLoop) -> None:
        wake: asyncio.Future[None] = loop.create_future()

        def poke() -> None:
            if not wake.done():
                wake.set_result(None)

        socks: dict[int, socket.socket] = {}
        transports: dict[int, asyncio.DatagramTransport] = {}
        tcp_tasks: set[asyncio.Task[None]] = set()
        try:
            while True:
                for idx, wire in lookup.due_sends(time.monotonic()):
                    await self._send_async(lookup, idx, wire, loop, poke, socks, transports)
                for track, idx in lookup.tcp_wanted:
                    task = loop.create_task(self._tcp_async(lookup, track, idx, poke))
                    tcp_tasks.add(task)
                    task.add_done_callback(tcp_tasks.discard)
                lookup.tcp_wanted.clear()
                now = time.monotonic()
                lookup.expire(now)
                if lookup.done:
                    return
                if wake.done():
                    wake = loop.create_future()
                    continue
                # The loop's clock may differ from time.monotonic(): convert to a delay.
                timer = loop.call_later(max(0.0, lookup.wake_at() - now), poke)
                try:
                    await wake
                finally:
                    timer.cancel()
                wake = loop.create_future()
        finally:
            for sock in socks.values():
                loop.remove_reader(sock.fileno())
                sock.close()
            for transport in transports.values():
                transport.close()
            for task in tcp_tasks:
                task.cancel()

    async def _send_async(
        self,
        lookup: _Lookup,
        idx: int,
        wire: bytes,
        loop: asyncio.AbstractEventLoop,
        poke: Callable[[], None],
        socks: dict[int, socket.socket],
        transports: dict[int, asyncio.DatagramTransport],
    ) -> None:
        try:
            transport = transports.get(idx)
            if transport is not None:
                transport.sendto(wire)
                return
            sock = socks.get(idx)
            if sock is None:
                sock = _udp_socket(*lookup.servers[idx])
                try:
                    # Watching the socket directly costs a fraction of a datagram transport
                    # (measured: ~60 us a lookup), which matters at thousands of names a second.
                    loop.add_reader(sock.fileno(), self._on_readable, lookup, idx, sock, poke)
                    socks[idx] = sock
                except NotImplementedError:
                    # Windows' proactor event loop cannot watch sockets: use a transport there.
                    transport = await self._open_transport(sock, lookup, idx, loop, poke)
                    transports[idx] = transport
                    transport.sendto(wire)
                    return
            sock.send(wire)
        except BlockingIOError:
            pass  # the send buffer is full: the next resend goes out later
        except OSError as exc:
            lookup.on_unreachable(idx, exc)

    def _on_readable(
        self, lookup: _Lookup, idx: int, sock: socket.socket, poke: Callable[[], None]
    ) -> None:
        self._read_all(lookup, idx, sock)
        poke()

    @staticmethod
    async def _open_transport(
        sock: socket.socket,
        lookup: _Lookup,
        idx: int,
        loop: asyncio.AbstractEventLoop,
        poke: Callable[[], None],
    ) -> asyncio.DatagramTransport:
        try:
            transport, _ = await loop.create_datagram_endpoint(
                lambda: _Protocol(lookup, idx, poke), sock=sock
            )
        except BaseException:
            sock.close()
            raise
        return transport

    @staticmethod
    async def _tcp_async(
        lookup: _Lookup, track: _Track, idx: int, poke: Callable[[], None]
    ) -> None:
        host, port = lookup.servers[idx]
        result: bytes | BaseException
        try:
            async with asyncio.timeout(_remaining(lookup)):
                reader, writer = await asyncio.open_connection(host, port)
                try:
                    writer.write(len(track.wire).to_bytes(2, "big") + track.wire)
                    size = int.from_bytes(await reader.readexactly(2), "big")
                    result = await reader.readexactly(size)
                finally:
                    writer.close()
        except (OSError, EOFError, TimeoutError) as exc:  # IncompleteReadError is an EOFError
            result = exc
        lookup.on_tcp_result(track, idx, result)
        poke()


def _remaining(lookup: _Lookup) -> float:
    """Seconds left before the lookup's deadline; raises TimeoutError when none are."""
    remaining = lookup.deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    return remaining


def _recv_exactly(sock: socket.socket, size: int, lookup: _Lookup) -> bytes:
    data = b""
    while len(data) < size:
        sock.settimeout(_remaining(lookup))
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise EOFError("the server closed the TCP connection early")
        data += chunk
    return data


class _Protocol(asyncio.DatagramProtocol):
    """Hands the datagrams of one lookup's socket to the lookup and wakes its driver."""

    def __init__(self, lookup: _Lookup, idx: int, poke: Callable[[], None]) -> None:
        self.lookup = lookup
        self.idx = idx
        self.poke = poke

    def datagram_received(self, data: bytes, addr: tuple[str | Any, int]) -> None:
        self.lookup.on_datagram(self.idx, data)
        self.poke()

    def error_received(self, exc: Exception) -> None:
        self.lookup.on_unreachable(self.idx, exc)
        self.poke()


_PLAIN_NAME = re.compile(r"[a-z0-9_-]{1,63}(?:\.[a-z0-9_-]{1,63})*")
"""Lower-case letters, digits, hyphens and underscores in labels of 1 to 63: no escapes."""
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
