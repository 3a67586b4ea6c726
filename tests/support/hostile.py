"""A hostile nameserver on loopback: raw UDP and TCP sockets on one port of 127.0.0.1 (or ::1).

NSD answers correctly; this server answers what a test scripts, down to the bytes: truncated
answers over UDP and over TCP, late answers after a truncated one, compression-pointer chains
and loops, names longer than DNS allows, NXDOMAIN with addresses, floods of answers with the
wrong id, silence. Packets that dnspython refuses to build are written here by hand
(:func:`header`, :func:`question`, :func:`record`).

``udp(query)`` returns the datagrams to send back, each with the delay before it; ``tcp(query)``
returns the raw bytes to write on the connection (length prefixes included, see :func:`framed`),
or None to keep the connection open without a word. Nothing here sends a packet anywhere but
loopback.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable

import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset

from support.dnsserver import free_port

UdpScript = Callable[[bytes], list[tuple[float, bytes]]]
"""query -> [(seconds to wait first, datagram), ...], sent in order."""
TcpScript = Callable[[bytes], bytes | None]
"""query -> the bytes to write on the connection, or None to stay silent."""

QR_AA = 0x8400
"""Flags of an authoritative response (QR, AA), rcode NOERROR."""
TC = 0x0200
NXDOMAIN = 3
A, AAAA, CNAME = 1, 28, 5


def query_id(query: bytes) -> int:
    """The id of a query (its first two bytes)."""
    return int.from_bytes(query[:2], "big")


def query_type(query: bytes) -> str:
    """The type asked for, as text (``A``, ``AAAA``)."""
    return str(dns.rdatatype.to_text(dns.message.from_wire(query).question[0].rdtype))


def question_of(query: bytes) -> bytes:
    """The question section of a query (it follows the 12-byte header; no EDNS after it)."""
    msg = dns.message.from_wire(query)
    q = msg.question[0]
    return bytes(q.name.to_wire()) + struct.pack("!HH", q.rdtype, q.rdclass)


def header(qid: int, flags: int = QR_AA, qd: int = 1, an: int = 0, ns: int = 0) -> bytes:
    """A DNS header (RFC 1035 4.1.1), no additional records."""
    return struct.pack("!HHHHHH", qid, flags, qd, an, ns, 0)


def record(owner: bytes, rtype: int, data: bytes, ttl: int = 300) -> bytes:
    """A resource record in class IN; ``owner`` is wire format (``b"\\xc0\\x0c"`` = the
    question's name)."""
    return owner + struct.pack("!HHIH", rtype, 1, ttl, len(data)) + data


def wire_name(*labels: bytes) -> bytes:
    """Labels as an uncompressed wire name, without any length check (so it may be too long)."""
    return b"".join(bytes((len(label),)) + label for label in labels) + b"\x00"


def response(
    query: bytes,
    answers: str = "",
    *,
    rcode: int = 0,
    truncated: bool = False,
    qid: int | None = None,
) -> bytes:
    """A response built with dnspython; ``answers`` in zone-file text, one record per line."""
    q = dns.message.from_wire(query)
    r = dns.message.make_response(q)
    r.set_rcode(dns.rcode.Rcode(rcode))
    for line in filter(None, answers.splitlines()):
        r.answer.append(dns.rrset.from_text(*line.split(maxsplit=4)))
    if truncated:
        r.flags |= TC
    if qid is not None:
        r.id = qid
    return bytes(r.to_wire())


def framed(*messages: bytes) -> bytes:
    """Messages as sent over TCP: each after its length in two bytes (RFC 1035 4.2.2)."""
    return b"".join(len(m).to_bytes(2, "big") + m for m in messages)


def pointer_chain(query: bytes, size: int = 65_000) -> bytes:
    """A response of about ``size`` bytes whose answers' owners are long chains of backward
    compression pointers: each pointer points at the one before, the first at the question.

    The chain is the data of a first record of a private-use type (65280), so the packet is
    otherwise well formed; every later answer's owner is the chain's last link. A reader
    without a limit on pointer hops walks the whole chain for every answer: the cost grows with
    the square of the packet's size.
    """
    qid = query_id(query)
    q = question_of(query)
    start = 12 + len(q) + 2 + 10  # where the first record's data begins
    # A pointer holds 14 bits of offset: the chain fills what one can reach (16 KB).
    chain = bytearray(b"\xc0\x0c")  # points at the question's name
    while start + len(chain) < min(size // 2, 0x3FFF - 1):
        chain += struct.pack("!H", 0xC000 | (start + len(chain) - 2))
    body = bytearray(header(qid) + q + record(b"\xc0\x0c", 65280, bytes(chain)))
    owner = struct.pack("!H", 0xC000 | (start + len(chain) - 2))
    answers = 1
    while len(body) + 16 <= size:
        body += record(owner, A, bytes((10, 0, 0, 5)))
        answers += 1
    body[6:8] = answers.to_bytes(2, "big")
    return bytes(body)


def pointer_loop(query: bytes) -> bytes:
    """A response whose only answer's owner is a compression pointer to itself."""
    qid = query_id(query)
    q = question_of(query)
    at = 12 + len(q)
    owner = struct.pack("!H", 0xC000 | at)
    return header(qid, an=1) + q + record(owner, A, bytes((10, 0, 0, 5)))


def reserved_label_type(query: bytes) -> bytes:
    """A response whose answer's owner starts with a label of the reserved type 0b01 (a
    length byte of 0x40: neither a label of at most 63 bytes nor a pointer)."""
    qid = query_id(query)
    q = question_of(query)
    return header(qid, an=1) + q + record(b"\x40" + b"a" * 64 + b"\x00", A, bytes((10, 0, 0, 5)))


def big_answer(qid: int, query: bytes, size: int = 65_000) -> bytes:
    """A well-formed response of about ``size`` bytes to ``query`` under the id ``qid``: A
    records for the question's name, each owner a pointer to it (as many as fit)."""
    q = question_of(query)
    body = bytearray(header(qid) + q)
    answers = 0
    while len(body) + 16 <= size:
        body += record(b"\xc0\x0c", A, bytes((10, 0, answers // 256 % 256, answers % 256)))
        answers += 1
    body[6:8] = answers.to_bytes(2, "big")
    return bytes(body)


def long_cname(query: bytes, length: int = 256) -> bytes:
    """A response whose CNAME target is ``length`` bytes of wire name (DNS allows 255)."""
    qid = query_id(query)
    q = question_of(query)
    labels: list[bytes] = []
    size = 1  # the root label
    while size < length:
        take = min(63, length - size - 1)
        labels.append(b"a" * take)
        size += take + 1
    target = wire_name(*labels)
    assert len(target) == length, len(target)
    return header(qid, an=1) + q + record(b"\xc0\x0c", CNAME, target)


class HostileServer:
    """UDP and TCP on one port of ``host`` (127.0.0.1 or ::1), answering as ``udp`` and ``tcp``
    say.

    Queries are kept (``udp_queries``, ``tcp_queries``) so a test can see what the resolver
    asked. Use as a context manager.
    """

    def __init__(
        self, udp: UdpScript, tcp: TcpScript | None = None, host: str = "127.0.0.1"
    ) -> None:
        self.udp_script = udp
        self.tcp_script = tcp
        self.udp_queries: list[bytes] = []
        self.tcp_queries: list[bytes] = []
        self._stop = threading.Event()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        for _ in range(5):
            self._udp = socket.socket(family, socket.SOCK_DGRAM)
            self._tcp = socket.socket(family, socket.SOCK_STREAM)
            try:
                # A port the kernel picks for UDP, then the same for TCP (taken: try again).
                self._udp.bind((host, free_port() if family == socket.AF_INET else 0))
                port = int(self._udp.getsockname()[1])
                self._tcp.bind((host, port))
                break
            except OSError:
                self._udp.close()
                self._tcp.close()
        else:
            raise RuntimeError(f"no port free for both UDP and TCP on {host}")
        self._tcp.listen(16)
        self._udp.settimeout(0.05)
        self._tcp.settimeout(0.05)
        self.address: tuple[str, int] = (host, port)
        self._threads = [
            threading.Thread(target=self._serve_udp, name="hostile-udp", daemon=True),
            threading.Thread(target=self._serve_tcp, name="hostile-tcp", daemon=True),
        ]

    @property
    def nameserver(self) -> str:
        """``host:port`` (``[v6]:port``), as the CLI's ``--nameserver`` and the policy take it."""
        host, port = self.address
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def __enter__(self) -> HostileServer:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(5)
        self._udp.close()
        self._tcp.close()

    def _serve_udp(self) -> None:
        while not self._stop.is_set():
            try:
                data, client = self._udp.recvfrom(65535)
            except TimeoutError:
                continue
            self.udp_queries.append(data)
            # Each query's datagrams go out from a thread of their own, so that a delayed
            # answer does not hold back the answers to other queries.
            threading.Thread(
                target=self._send_udp, args=(self.udp_script(data), client), daemon=True
            ).start()

    def _send_udp(self, datagrams: list[tuple[float, bytes]], client: tuple[str, int]) -> None:
        for delay, datagram in datagrams:
            if delay:
                time.sleep(delay)
            if self._stop.is_set():
                return
            try:
                self._udp.sendto(datagram, client)
            except OSError:
                return  # the socket was closed at the end of the test

    def _serve_tcp(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._tcp.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._answer_tcp, args=(conn,), daemon=True).start()

    def _answer_tcp(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                size = int.from_bytes(_recv_exactly(conn, 2), "big")
                query = _recv_exactly(conn, size)
            except (OSError, EOFError):
                return
            self.tcp_queries.append(query)
            reply = self.tcp_script(query) if self.tcp_script is not None else None
            if reply is None:
                # Stay silent with the connection open until the test ends.
                self._stop.wait(10)
                return
            try:
                conn.sendall(reply)
            except OSError:
                return


def _recv_exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data
