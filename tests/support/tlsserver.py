"""Real TLS servers for the probe's tests and benchmark, on loopback only.

- :class:`TlsServer` serves a certificate on 127.0.0.x at a free port, in one of three modes:
  ``tls`` (a real TLS server: Python's ssl, OpenSSL underneath), ``plain`` (speaks HTTP, not
  TLS) and ``silent`` (accepts the TCP connection and never says a word).
- Every server records what happened on each connection: that it was made, whether the
  handshake completed, the protocol version, and every byte received after the handshake (a
  probe must send none).
- :func:`self_signed` makes a self-signed certificate with ``cryptography``; ``trustme``
  makes the CA-issued ones.

Nothing here listens anywhere but 127.0.0.0/8.
"""

from __future__ import annotations

import datetime as dt
import socket
import ssl
import tempfile
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Mode = Literal["tls", "plain", "silent"]
_AFTER_HANDSHAKE_WAIT = 2.0  # seconds a server keeps reading after the handshake


@dataclass
class Connection:
    """What one connection to a server did."""

    handshake: bool = False
    version: str | None = None
    received_after_handshake: bytearray = field(default_factory=bytearray)
    error: str = ""
    closed: threading.Event = field(default_factory=threading.Event)


class TlsServer:
    """A TCP server on a loopback address; use as a context manager."""

    def __init__(
        self,
        address: str = "127.0.0.1",
        mode: Mode = "tls",
        cert_pem: bytes | None = None,
        key_pem: bytes | None = None,
        versions: tuple[ssl.TLSVersion, ssl.TLSVersion] | None = None,
    ) -> None:
        self.address = address
        self.mode = mode
        self.connections: list[Connection] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._ctx: ssl.SSLContext | None = None
        if mode == "tls":
            assert cert_pem is not None
            assert key_pem is not None
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            with tempfile.TemporaryDirectory(prefix="urlvet-tls-") as tmp:
                cert = Path(tmp) / "cert.pem"
                key = Path(tmp) / "key.pem"
                cert.write_bytes(cert_pem)
                key.write_bytes(key_pem)
                ctx.load_cert_chain(cert, key)
            if versions is not None:
                ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
                with warnings.catch_warnings():  # old versions, served on purpose
                    warnings.simplefilter("ignore", DeprecationWarning)
                    ctx.minimum_version, ctx.maximum_version = versions
            self._ctx = ctx
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((address, 0))
        self._sock.listen(512)
        self._sock.settimeout(0.1)
        self.port = int(self._sock.getsockname()[1])

    def __enter__(self) -> TlsServer:
        thread = threading.Thread(target=self._accept_loop, daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop accepting, end every connection, and wait for the threads."""
        self._stop.set()
        for thread in list(self._threads):
            thread.join(timeout=5)
        self._sock.close()

    @property
    def handshakes(self) -> int:
        """Connections whose TLS handshake completed."""
        with self._lock:
            return sum(1 for c in self.connections if c.handshake)

    def wait_closed(self, timeout: float = 5.0) -> None:
        """Wait until every connection so far has ended (its bytes are all recorded)."""
        with self._lock:
            conns = list(self.connections)
        for c in conns:
            c.closed.wait(timeout)

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            record = Connection()
            with self._lock:
                self.connections.append(record)
            thread = threading.Thread(target=self._serve, args=(conn, record), daemon=True)
            thread.start()
            with self._lock:
                self._threads.append(thread)

    def _serve(self, conn: socket.socket, record: Connection) -> None:
        try:
            if self.mode == "silent":
                self._stop.wait()
            elif self.mode == "plain":
                conn.settimeout(2)
                try:
                    conn.recv(4096)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass
            else:
                self._serve_tls(conn, record)
        finally:
            conn.close()
            record.closed.set()

    def _serve_tls(self, conn: socket.socket, record: Connection) -> None:
        assert self._ctx is not None
        conn.settimeout(5)
        try:
            tls = self._ctx.wrap_socket(conn, server_side=True)
        except (OSError, ssl.SSLError) as exc:
            record.error = str(exc)
            return
        record.handshake = True
        record.version = tls.version()
        tls.settimeout(_AFTER_HANDSHAKE_WAIT)
        try:
            while True:
                data = tls.recv(4096)
                if not data:
                    break
                record.received_after_handshake += data
        except (OSError, ssl.SSLError):
            pass  # a reset or the wait ran out: nothing more came
        finally:
            tls.close()


def self_signed(name: str) -> tuple[bytes, bytes]:
    """(certificate PEM, key PEM) of a self-signed certificate for ``name``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=30))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def legacy_tls_supported() -> str | None:
    """None when the local OpenSSL can still speak TLS 1.0 on both sides; else the reason."""
    import trustme

    ca = trustme.CA()
    leaf = ca.issue_cert("legacy.test")
    try:
        server = TlsServer(
            "127.0.0.1",
            "tls",
            leaf.cert_chain_pems[0].bytes(),
            leaf.private_key_pem.bytes(),
            versions=(ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1),
        )
    except (ssl.SSLError, ValueError) as exc:
        return f"the local OpenSSL ({ssl.OPENSSL_VERSION}) cannot serve TLS 1.0: {exc}"
    with server:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        try:
            ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                ctx.minimum_version = ssl.TLSVersion.TLSv1
            with (
                socket.create_connection(("127.0.0.1", server.port), timeout=3) as raw,
                ctx.wrap_socket(raw) as tls,
            ):
                version = tls.version()
        except (OSError, ssl.SSLError, ValueError) as exc:
            return f"the local OpenSSL ({ssl.OPENSSL_VERSION}) refuses TLS 1.0: {exc}"
    if version != "TLSv1":
        return f"the local OpenSSL ({ssl.OPENSSL_VERSION}) negotiated {version}, not TLSv1"
    return None
