"""Real DNS servers for the tests and the benchmark, on loopback only.

- :class:`NsdServer` runs NSD (Debian package ``nsd``) as a subprocess with a generated
  ``nsd.conf`` in a temporary directory, serving the zone files of ``tests/dns/zone/`` (and any
  the caller adds) on ``127.0.0.1`` at a free port, over UDP and TCP.
- :class:`Blackhole` is a UDP socket bound on loopback that never answers: the timeout path.
- :class:`CountingRelay` forwards UDP queries to a real server and counts them per name, so a
  test can see what the resolver really sends (the cache tests) and how many queries are in
  flight at once (the concurrency tests). It can hold each query back for a while.

Nothing here sends a packet anywhere but 127.0.0.1.
"""

from __future__ import annotations

import heapq
import os
import select
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import dns.exception
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import dns.rrset

ZONE_DIR = Path(__file__).resolve().parents[1] / "dns" / "zone"
NSD_INSTALL_HINT = (
    "NSD is needed for the DNS tests (a real authoritative server on loopback): "
    "install the Debian package with `apt-get install nsd` (binary /usr/sbin/nsd)."
)


def find_nsd() -> str | None:
    """The NSD binary, or None. NSD lives in /usr/sbin, which a non-root PATH may lack."""
    return shutil.which("nsd") or shutil.which("nsd", path="/usr/sbin:/usr/local/sbin")


def free_port() -> int:
    """A port free on 127.0.0.1 for both UDP and TCP at the time of asking."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.bind(("127.0.0.1", 0))
            port = int(udp.getsockname()[1])
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
                try:
                    tcp.bind(("127.0.0.1", port))
                except OSError:
                    continue
            return port
    raise RuntimeError("no port free for both UDP and TCP on 127.0.0.1")


def zone_files(directory: Path = ZONE_DIR) -> dict[str, Path]:
    """Zone name -> file, for every ``<zone>.zone`` file of ``directory``."""
    return {p.name.removesuffix(".zone"): p for p in sorted(directory.glob("*.zone"))}


def query(host: str, port: int, name: str, rdtype: str = "SOA", timeout: float = 0.5) -> int:
    """One UDP query to a loopback server; returns the rcode. For readiness checks."""
    q = dns.message.make_query(name, dns.rdatatype.from_text(rdtype))
    r = dns.query.udp(q, host, timeout=timeout, port=port)
    return int(r.rcode())


class NsdServer:
    """NSD serving zone files on 127.0.0.1 at a free port. Use as a context manager."""

    def __init__(self, zones: dict[str, Path] | None = None, startup_timeout: float = 30.0):
        self.zones = dict(zone_files() if zones is None else zones)
        self.host = "127.0.0.1"
        self.port = 0
        self.startup_timeout = startup_timeout
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> tuple[str, int]:
        """(host, port) where the server answers."""
        return (self.host, self.port)

    def start(self) -> tuple[str, int]:
        """Start NSD and wait until it answers a query; returns (host, port)."""
        nsd = find_nsd()
        if nsd is None:
            raise FileNotFoundError(NSD_INSTALL_HINT)
        last_error = ""
        # A port found free can be taken before NSD binds it: try a few.
        for _ in range(3):
            self._tmp = tempfile.TemporaryDirectory(prefix="urlvet-nsd-")
            self.port = free_port()
            conf = self._write_config(Path(self._tmp.name))
            # -d: stay in the foreground, so the process we hold is the server and stopping it
            # needs no pidfile reading.
            self._proc = subprocess.Popen(
                [nsd, "-d", "-c", str(conf)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            try:
                self._wait_ready()
                return self.address
            except RuntimeError as exc:
                last_error = str(exc)
                self.stop()
        raise RuntimeError(f"NSD did not start: {last_error}")

    def _write_config(self, tmp: Path) -> Path:
        zones = "".join(
            f'zone:\n\tname: "{name}"\n\tzonefile: "{path.resolve()}"\n\n'
            for name, path in self.zones.items()
        )
        conf = tmp / "nsd.conf"
        conf.write_text(
            "server:\n"
            f"\tip-address: {self.host}@{self.port}\n"
            f"\tport: {self.port}\n"
            "\tdo-ip4: yes\n"
            # Only 127.0.0.1 is configured; IPv6 stays off so a box without ::1 works too.
            "\tdo-ip6: no\n"
            '\tusername: ""\n'
            '\tchroot: ""\n'
            f'\tzonesdir: "{tmp}"\n'
            f'\tpidfile: "{tmp / "nsd.pid"}"\n'
            f'\tzonelistfile: "{tmp / "zone.list"}"\n'
            f'\txfrdfile: "{tmp / "xfrd.state"}"\n'
            f'\txfrdir: "{tmp}"\n'
            f'\tlogfile: "{tmp / "nsd.log"}"\n'
            # NSD 4.x before 4.7 keeps a database file unless told not to.
            '\tdatabase: ""\n'
            "\tverbosity: 0\n"
            "\thide-version: yes\n"
            "\tserver-count: 1\n"
            "\tround-robin: no\n"
            "\tminimal-responses: no\n"
            "\trefuse-any: yes\n"
            # Response rate limiting is on by default (200 answers/s per /24): it would drop
            # answers to the tests' and the benchmark's bursts from 127.0.0.1.
            "\trrl-ratelimit: 0\n"
            "\trrl-whitelist-ratelimit: 0\n"
            "\n"
            "remote-control:\n"
            "\tcontrol-enable: no\n"
            "\n" + zones
        )
        return conf

    def _wait_ready(self) -> None:
        assert self._proc is not None
        first_zone = next(iter(self.zones))
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                log = self._log_text()
                raise RuntimeError(f"nsd exited with {self._proc.returncode}: {err}{log}".strip())
            try:
                if query(self.host, self.port, first_zone) == dns.rcode.NOERROR:
                    return
            except (OSError, dns.exception.DNSException):
                pass
            time.sleep(0.05)
        raise RuntimeError(
            f"nsd did not answer within {self.startup_timeout} s. {self._log_text()}"
        )

    def _log_text(self) -> str:
        if self._tmp is None:
            return ""
        log = Path(self._tmp.name) / "nsd.log"
        return log.read_text(errors="replace") if log.exists() else ""

    def stop(self) -> None:
        """Stop NSD (SIGTERM, then SIGKILL) and remove its directory."""
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            if self._proc.stderr:
                self._proc.stderr.close()
            self._proc = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> NsdServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Blackhole:
    """A UDP socket on 127.0.0.1 that receives queries and never answers.

    Bound (not merely an unused port) so the kernel sends no ICMP port-unreachable: a
    resolver pointed here sees silence, exactly like a dead nameserver behind a firewall.
    """

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.address: tuple[str, int] = ("127.0.0.1", int(self.sock.getsockname()[1]))

    def received(self) -> int:
        """How many datagrams arrived (drains the socket)."""
        n = 0
        self.sock.setblocking(False)
        try:
            while True:
                self.sock.recv(65535)
                n += 1
        except BlockingIOError:
            return n

    def close(self) -> None:
        """Close the socket."""
        self.sock.close()


class CountingRelay:
    """A UDP relay in front of a real server that counts queries and can delay them.

    Each query is forwarded from its own upstream socket, so answers find their way back
    without parsing; every query is parsed only to count it. Queries of a type in ``drop``
    are swallowed, as by a broken nameserver that ignores AAAA queries.
    """

    def __init__(
        self, upstream: tuple[str, int], delay: float = 0.0, drop: frozenset[str] = frozenset()
    ) -> None:
        self.upstream = upstream
        self.delay = delay
        self.drop = drop
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.address: tuple[str, int] = ("127.0.0.1", int(self.sock.getsockname()[1]))
        self.counts: Counter[tuple[str, str]] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="counting-relay", daemon=True)

    def __enter__(self) -> CountingRelay:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()

    def total(self, name: str | None = None) -> int:
        """Queries seen in all, or for one name (any type)."""
        with self._lock:
            if name is None:
                return sum(self.counts.values())
            return sum(n for (qname, _), n in self.counts.items() if qname == name)

    def reset(self) -> None:
        """Forget the counts."""
        with self._lock:
            self.counts.clear()
            self.max_in_flight = 0

    def _run(self) -> None:
        # (release time, seq, data, client) waiting to go upstream; upstream socket -> client.
        held: list[tuple[float, int, bytes, tuple[str, int]]] = []
        upstreams: dict[socket.socket, tuple[tuple[str, int], float]] = {}
        seq = 0
        while not self._stop.is_set():
            now = time.monotonic()
            while held and held[0][0] <= now:
                _, _, data, client = heapq.heappop(held)
                up = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                up.connect(self.upstream)
                up.send(data)
                upstreams[up] = (client, now + 5.0)
            for up, (_, expires) in list(upstreams.items()):
                if expires < now:  # the server never answered: give up on it
                    up.close()
                    del upstreams[up]
                    self._finished()
            wait = 0.05 if not held else max(0.0, min(0.05, held[0][0] - now))
            readable, _, _ = select.select([self.sock, *upstreams], [], [], wait)
            for s in readable:
                if s is self.sock:
                    data, client = self.sock.recvfrom(65535)
                    if self._count(data) in self.drop:
                        self._finished()
                        continue
                    seq += 1
                    heapq.heappush(held, (time.monotonic() + self.delay, seq, data, client))
                else:
                    data = s.recv(65535)
                    client, _ = upstreams.pop(s)
                    s.close()
                    self._finished()
                    self.sock.sendto(data, client)
        for up in upstreams:
            up.close()

    def _count(self, data: bytes) -> str:
        try:
            msg = dns.message.from_wire(data)
            q = msg.question[0]
            key = (q.name.to_text(omit_final_dot=True).lower(), dns.rdatatype.to_text(q.rdtype))
        except Exception:
            key = ("<malformed>", "")
        with self._lock:
            self.counts[key] += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return key[1]

    def _finished(self) -> None:
        with self._lock:
            self.in_flight -= 1


def in_ci() -> bool:
    """True under CI (the CI variable set to anything but empty/false/0)."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


class ScriptedServer:
    """A UDP server on 127.0.0.1 whose answers a test writes: for the misbehaviours (spoofed
    or garbled packets, SERVFAIL, servers without EDNS) that NSD cannot be made to show.

    ``handler(query_wire)`` returns the datagrams to send back, in order.
    """

    def __init__(self, handler: Callable[[bytes], list[bytes]]) -> None:
        self.handler = handler
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.05)
        self.address: tuple[str, int] = ("127.0.0.1", int(self.sock.getsockname()[1]))
        self.queries: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="scripted-dns", daemon=True)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data, client = self.sock.recvfrom(65535)
            except TimeoutError:
                continue
            self.queries.append(data)
            for reply in self.handler(data):
                self.sock.sendto(reply, client)


def reply_to(query: bytes, rcode: int = 0, answers: str = "", qid: int | None = None) -> bytes:
    """A response to ``query`` built with dnspython; ``answers`` in zone-file text, one per line."""
    q = dns.message.from_wire(query)
    r = dns.message.make_response(q)
    r.set_rcode(dns.rcode.Rcode(rcode))
    for line in filter(None, answers.splitlines()):
        r.answer.append(dns.rrset.from_text(*line.split(maxsplit=4)))
    if qid is not None:
        r.id = qid
    return bytes(r.to_wire())
