"""The TLS handshake probe: what a browser would find on arrival, without fetching anything.

This module owns every connection urlvet opens to a vetted host (DNS aside: resolve.py owns
that). What a probe does, the same for :meth:`Prober.probe` and :meth:`Prober.aprobe`:

- It connects to one IP address the engine has already approved (never to a name: a second
  lookup could answer differently), sending the URL's host as SNI.
- It performs a TLS handshake and nothing more: no HTTP request, no application data. Then it
  closes the connection.
- The whole of it, TCP connect and handshake together, ends by the deadline whatever the
  server does: a server that accepts the connection and never answers, or answers one byte
  at a time, is a timeout, not a hang.
- The chain is verified by OpenSSL against the system trust store, or against the anchors of
  ``ca_file`` alone when one is given. The certificate's names and validity dates are checked
  here, from the verified certificate, so that one handshake tells everything that is wrong
  with it (OpenSSL stops at its first error).
- A server that only speaks TLS 1.0 or 1.1 refuses the first handshake (TLS 1.2 is the
  client's floor); it is asked once more with the old versions allowed, only to learn which
  version it speaks. Where the local OpenSSL cannot speak them at all, such a server is a
  handshake failure.

Which addresses may be probed at all is decided here too (:func:`probe_address`): only
globally reachable ones, never a private, loopback or blocked address, unless the policy
names the network in ``tls.probe_networks`` (a test bed, a private PKI's hosts).

Results are cached per (address, port, host) for :data:`CACHE_TTL` seconds. A
:class:`Prober` may be shared by any number of threads, tasks and event loops; probes in
flight are bounded (sync calls together, each event loop apart), and concurrent async probes
of the same target share one handshake. Importing this module does no I/O.
"""

from __future__ import annotations

import ipaddress
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from urlvet.addresses import classify, in_networks
from urlvet.errors import InputError

if TYPE_CHECKING:
    # Imported where they are used: the rules import this module for its data types, and
    # asyncio and ssl would add tens of milliseconds to every start of the command line.
    import asyncio
    import selectors
    import socket
    import ssl

__all__ = [
    "CACHE_TTL",
    "DEFAULT_TIMEOUT",
    "MAX_CONCURRENCY",
    "Certificate",
    "Probe",
    "ProbeStatus",
    "Prober",
    "certificate_covers",
    "probe_address",
]

ProbeStatus = Literal["ok", "untrusted", "failed", "timeout"]
"""``ok``: the handshake completed and the chain verified (the name, dates and version are
then judged by the rules); ``untrusted``: the chain does not verify to a trust anchor;
``failed``: no TLS on that port, a protocol error, a refused or reset connection;
``timeout``: no handshake before the deadline."""

DEFAULT_TIMEOUT = 3.0
"""Seconds one probe (connect and handshake) may take."""
MAX_CONCURRENCY = 32
"""Probes in flight at once (sync calls together; each event loop apart)."""
CACHE_TTL = 600.0
"""Seconds a probe's result is reused for the same (address, port, host)."""
CACHE_SIZE = 4096
"""Probe results kept at most."""

# OpenSSL's X509_V_FLAG_NO_CHECK_TIME (1.1.0+): verify the chain but leave the dates to us,
# so an expired certificate still yields its facts and a trusted chain is still reported.
_NO_CHECK_TIME = 0x200000
# Reasons OpenSSL gives when the two sides share no protocol version.
_VERSION_REASONS = frozenset(
    {
        "UNSUPPORTED_PROTOCOL",
        "TLSV1_ALERT_PROTOCOL_VERSION",
        "NO_PROTOCOLS_AVAILABLE",
        "WRONG_SSL_VERSION",
        "VERSION_TOO_LOW",
    }
)


@dataclass(frozen=True, slots=True)
class Certificate:
    """The facts of a verified server certificate that a person can use."""

    subject: str | None
    """The subject's common name, when it has one."""
    issuer: str | None
    """Who issued it: the issuer's organisation, or its common name."""
    not_before: datetime
    """Valid from (UTC)."""
    not_after: datetime
    """Valid to (UTC)."""
    names: tuple[str, ...]
    """The DNS names and IP addresses it covers (subjectAltName), as written."""


@dataclass(frozen=True, slots=True)
class Probe:
    """What one TLS handshake with one address found."""

    host: str
    """The host the certificate must cover (sent as SNI when it is a name)."""
    address: str
    """The IP address connected to."""
    port: int
    status: ProbeStatus
    version: str | None = None
    """The negotiated protocol (``TLSv1.3``...), when the handshake completed."""
    certificate: Certificate | None = None
    """The server's certificate, when its chain verified."""
    detail: str = ""
    """Plain-language detail for failures (OpenSSL's reason, the OS error)."""
    verify_code: int | None = None
    """OpenSSL's verification error code for ``untrusted``."""
    elapsed: float = 0.0
    """Seconds the probe took (near zero when answered from the cache)."""


# -- which addresses may be probed ----------------------------------------------------------


def probe_address(
    candidates: Sequence[str],
    blocked_networks: Iterable[ipaddress.IPv4Network | ipaddress.IPv6Network] = (),
    probe_networks: Iterable[ipaddress.IPv4Network | ipaddress.IPv6Network] = (),
) -> str | None:
    """The address to probe among a host's ``candidates``, or None when none may be.

    Every candidate must be probe-able, not just the one chosen: a host with one private
    answer among public ones did not pass the address checks, and is not probed at all. An
    address may be probed when it is globally reachable and not in ``blocked_networks``, or
    when it lies in ``probe_networks`` (the policy's explicit opt-in for non-public hosts).
    An IPv6 address that embeds an IPv4 address is judged by both forms.
    """
    if not candidates:
        return None
    blocked = tuple(blocked_networks)
    allowed = tuple(probe_networks)
    for text in candidates:
        try:
            cls = classify(text)
        except ValueError:
            return None
        forms = {
            ipaddress.ip_address(text.strip("[]")),
            ipaddress.ip_address(cls.effective.address),
        }
        if any(in_networks(a, blocked) is not None for a in forms):
            return None
        if cls.globally_reachable and cls.effective.globally_reachable:
            continue
        if allowed and all(in_networks(a, allowed) is not None for a in forms):
            continue
        return None
    return candidates[0].strip("[]")


# -- names ----------------------------------------------------------------------------------


def certificate_covers(names: Iterable[str], host: str) -> bool:
    """True when a certificate for ``names`` (subjectAltName entries) covers ``host``.

    As browsers match (RFC 6125, CA/Browser Forum): only subjectAltName counts, never the
    common name; a wildcard stands for exactly one whole left-most label and never matches a
    bare public suffix's child through more labels; IP addresses match IP entries only.
    """
    wanted = host.rstrip(".").lower()
    try:
        ip = ipaddress.ip_address(wanted.strip("[]"))
    except ValueError:
        ip = None
    for raw in names:
        name = raw.rstrip(".").lower()
        if ip is not None:
            try:
                if ipaddress.ip_address(name) == ip:
                    return True
            except ValueError:
                pass
            continue
        if name == wanted:
            return True
        if name.startswith("*.") and "*" not in name[2:] and name.count(".") >= 2:
            head, dot, rest = wanted.partition(".")
            if dot and head and rest == name[2:]:
                return True
    return False


# -- the prober -----------------------------------------------------------------------------


class _Timeout(Exception):
    pass


class Prober:
    """Runs TLS handshake probes with a deadline, a cache and a concurrency bound."""

    def __init__(
        self,
        timeout: float = DEFAULT_TIMEOUT,
        ca_file: str | None = None,
        max_concurrency: int = MAX_CONCURRENCY,
        cache_ttl: float = CACHE_TTL,
    ) -> None:
        """Create a prober. Raises :class:`InputError` when ``ca_file`` cannot be used."""
        if timeout <= 0:
            raise InputError(f"TLS timeout must be positive, got {timeout}")
        if max_concurrency < 1:
            raise InputError(f"max_concurrency must be at least 1, got {max_concurrency}")
        self.timeout = float(timeout)
        """The deadline of one probe, in seconds."""
        self.ca_file = ca_file
        """The trust anchors used instead of the system's, when given."""
        self.max_concurrency = max_concurrency
        self._cache_ttl = cache_ttl
        self._context = _verifying_context(ca_file)
        self._legacy = _legacy_context(ca_file)
        self._cache: OrderedDict[tuple[str, int, str], tuple[float, Probe]] = OrderedDict()
        self._lock = threading.Lock()
        self._sync_slots = threading.BoundedSemaphore(max_concurrency)
        self._loop_slots: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, asyncio.Semaphore
        ] = weakref.WeakKeyDictionary()
        self._inflight: dict[
            tuple[asyncio.AbstractEventLoop, str, int, str], asyncio.Task[Probe]
        ] = {}

    def __repr__(self) -> str:
        anchors = repr(self.ca_file) if self.ca_file else "system"
        return f"Prober(timeout={self.timeout:g}, anchors={anchors})"

    # -- entry points ------------------------------------------------------------------------

    def probe(self, address: str, port: int, host: str) -> Probe:
        """Handshake with ``address``:``port`` for ``host``, blocking at most the timeout."""
        start = time.monotonic()
        cached = self._cached((address, port, host), start)
        if cached is not None:
            return cached
        with self._sync_slots:
            result = self._probe_sync(address, port, host)
        self._store(result)
        return result

    async def aprobe(self, address: str, port: int, host: str) -> Probe:
        """The asyncio twin of :meth:`probe`; concurrent probes of one target share one."""
        import asyncio

        start = time.monotonic()
        key = (address, port, host)
        cached = self._cached(key, start)
        if cached is not None:
            return cached
        loop = asyncio.get_running_loop()
        flight = (loop, *key)
        with self._lock:
            task = self._inflight.get(flight)
            if task is None:
                task = loop.create_task(self._probe_async(address, port, host, loop))
                self._inflight[flight] = task
                task.add_done_callback(lambda _: self._forget(flight))
        return await asyncio.shield(task)

    # -- cache -------------------------------------------------------------------------------

    def _cached(self, key: tuple[str, int, str], now: float) -> Probe | None:
        with self._lock:
            entry = self._cache.get(key)
            if entry is None:
                return None
            stored, result = entry
            if now - stored > self._cache_ttl:
                del self._cache[key]
                return None
            self._cache.move_to_end(key)
        return Probe(
            result.host,
            result.address,
            result.port,
            result.status,
            result.version,
            result.certificate,
            result.detail,
            result.verify_code,
            time.monotonic() - now,
        )

    def _store(self, result: Probe) -> None:
        with self._lock:
            self._cache[result.address, result.port, result.host] = (time.monotonic(), result)
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)

    def _forget(self, flight: tuple[asyncio.AbstractEventLoop, str, int, str]) -> None:
        with self._lock:
            self._inflight.pop(flight, None)

    def _slots(self, loop: asyncio.AbstractEventLoop) -> asyncio.Semaphore:
        # An asyncio.Semaphore belongs to one event loop, so each loop gets its own.
        import asyncio

        with self._lock:
            slots = self._loop_slots.get(loop)
            if slots is None:
                slots = asyncio.Semaphore(self.max_concurrency)
                self._loop_slots[loop] = slots
            return slots

    # -- one probe ---------------------------------------------------------------------------

    def _probe_sync(self, address: str, port: int, host: str) -> Probe:
        import ssl

        start = time.monotonic()
        deadline = start + self.timeout
        try:
            try:
                version, cert = _handshake_sync(address, port, host, self._context, deadline)
            except ssl.SSLError as exc:
                if self._legacy is None or _reason(exc) not in _VERSION_REASONS:
                    raise
                version, cert = _handshake_sync(address, port, host, self._legacy, deadline)
        except Exception as exc:  # every failure becomes a result
            return _failure(address, port, host, exc, time.monotonic() - start)
        return _success(address, port, host, version, cert, time.monotonic() - start)

    async def _probe_async(
        self, address: str, port: int, host: str, loop: asyncio.AbstractEventLoop
    ) -> Probe:
        import asyncio
        import ssl

        async with self._slots(loop):
            start = time.monotonic()
            try:
                async with asyncio.timeout(self.timeout):
                    try:
                        version, cert = await _handshake_async(address, port, host, self._context)
                    except ssl.SSLError as exc:
                        if self._legacy is None or _reason(exc) not in _VERSION_REASONS:
                            raise
                        version, cert = await _handshake_async(address, port, host, self._legacy)
            except Exception as exc:  # every failure becomes a result
                result = _failure(address, port, host, exc, time.monotonic() - start)
            else:
                result = _success(address, port, host, version, cert, time.monotonic() - start)
        self._store(result)
        return result


def _verifying_context(ca_file: str | None) -> ssl.SSLContext:
    import ssl

    try:
        ctx = ssl.create_default_context(cafile=ca_file)
    except (OSError, ssl.SSLError) as exc:
        raise InputError(
            f"{ca_file}: cannot load trust anchors (a PEM file of CA certificates is "
            f"expected): {getattr(exc, 'strerror', None) or exc}"
        ) from None
    # The name is matched here, as browsers do (subjectAltName only); the dates too, so that
    # one handshake yields every fact (see the module documentation).
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.verify_flags |= _NO_CHECK_TIME
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx


def _legacy_context(ca_file: str | None) -> ssl.SSLContext | None:
    """A context that also speaks TLS 1.0 and 1.1, or None when the local OpenSSL cannot."""
    import ssl
    import warnings

    ctx = _verifying_context(ca_file)
    try:
        with warnings.catch_warnings():
            # Deprecated versions, asked for on purpose: only to name the one a server speaks.
            warnings.simplefilter("ignore", DeprecationWarning)
            ctx.minimum_version = ssl.TLSVersion.TLSv1
            ctx.maximum_version = ssl.TLSVersion.TLSv1_1
        # OpenSSL 3 refuses TLS 1.0/1.1 above security level 0 (SHA-1 in the handshake).
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    except (ValueError, ssl.SSLError):
        return None
    return ctx


def _reason(exc: ssl.SSLError) -> str:
    return str(getattr(exc, "reason", "") or "").upper()


def _handshake_sync(
    address: str, port: int, host: str, ctx: ssl.SSLContext, deadline: float
) -> tuple[str | None, dict[str, Any]]:
    import selectors
    import socket
    import ssl

    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    raw = socket.socket(family, socket.SOCK_STREAM)
    selector = selectors.DefaultSelector()
    try:
        raw.setblocking(False)
        try:
            raw.connect((address, port))
        except BlockingIOError:
            _wait(selector, raw, selectors.EVENT_WRITE, deadline)
            err = raw.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                raise OSError(err, _os_message(err)) from None
        tls = ctx.wrap_socket(raw, server_hostname=_sni(host), do_handshake_on_connect=False)
        raw = tls
        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                _wait(selector, tls, selectors.EVENT_READ, deadline)
            except ssl.SSLWantWriteError:
                _wait(selector, tls, selectors.EVENT_WRITE, deadline)
        return tls.version(), tls.getpeercert() or {}
    finally:
        selector.close()
        raw.close()


def _wait(
    selector: selectors.BaseSelector, sock: socket.socket, event: int, deadline: float
) -> None:

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise _Timeout
    selector.register(sock, event)
    try:
        if not selector.select(remaining):
            raise _Timeout
    finally:
        selector.unregister(sock)


async def _handshake_async(
    address: str, port: int, host: str, ctx: ssl.SSLContext
) -> tuple[str | None, dict[str, Any]]:
    import asyncio

    sni = _sni(host)
    _, writer = await asyncio.open_connection(
        address, port, ssl=ctx, server_hostname=sni if sni is not None else ""
    )
    try:
        tls = writer.get_extra_info("ssl_object")
        version = tls.version() if tls is not None else None
        cert = writer.get_extra_info("peercert") or {}
        return version, cert
    finally:
        # Closed at once: a graceful TLS shutdown would wait on the server for nothing.
        writer.transport.abort()


def _sni(host: str) -> str | None:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host.rstrip(".")
    return None


def _os_message(err: int) -> str:
    import os

    return os.strerror(err)


def _success(
    address: str, port: int, host: str, version: str | None, cert: dict[str, Any], elapsed: float
) -> Probe:
    return Probe(host, address, port, "ok", version, _certificate(cert), "", None, elapsed)


def _failure(address: str, port: int, host: str, exc: Exception, elapsed: float) -> Probe:
    import ssl

    if isinstance(exc, _Timeout | TimeoutError):
        return Probe(
            host,
            address,
            port,
            "timeout",
            detail="no TLS handshake before the deadline",
            elapsed=elapsed,
        )
    if isinstance(exc, ssl.SSLCertVerificationError):
        return Probe(
            host,
            address,
            port,
            "untrusted",
            detail=str(exc.verify_message or exc.reason or exc),
            verify_code=exc.verify_code,
            elapsed=elapsed,
        )
    return Probe(host, address, port, "failed", detail=_describe(exc), elapsed=elapsed)


def _describe(exc: Exception) -> str:
    import ssl

    if isinstance(exc, ssl.SSLError):
        reason = _reason(exc)
        if reason in ("WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG"):
            return f"the server does not speak TLS on this port ({reason.lower()})"
        if reason in _VERSION_REASONS:
            return f"no TLS version in common with the server ({reason.lower()})"
        if isinstance(exc, ssl.SSLEOFError | ssl.SSLZeroReturnError):
            return "the server closed the connection during the handshake"
        return f"TLS error: {reason.lower() or exc}"
    if isinstance(exc, ConnectionRefusedError):
        return "the connection was refused (nothing listens on that port)"
    if isinstance(exc, ConnectionResetError):
        return "the server reset the connection during the handshake"
    if isinstance(exc, OSError):
        return f"connection error: {exc.strerror or exc}"
    return f"error: {exc}"


def _certificate(cert: dict[str, Any]) -> Certificate | None:
    if not cert:
        return None

    def field(rdns: Any, key: str) -> str | None:
        for rdn in rdns or ():
            for k, v in rdn:
                if k == key:
                    return str(v)
        return None

    issuer = cert.get("issuer")
    names = tuple(
        str(value)
        for kind, value in cert.get("subjectAltName", ())
        if kind in ("DNS", "IP Address")
    )
    return Certificate(
        subject=field(cert.get("subject"), "commonName"),
        issuer=field(issuer, "organizationName") or field(issuer, "commonName"),
        not_before=_cert_time(cert.get("notBefore")),
        not_after=_cert_time(cert.get("notAfter")),
        names=names,
    )


def _cert_time(text: Any) -> datetime:
    import ssl

    if not isinstance(text, str):
        return datetime.fromtimestamp(0, UTC)
    return datetime.fromtimestamp(ssl.cert_time_to_seconds(text), UTC)
