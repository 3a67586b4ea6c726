"""The stdio proxy: the server runs as a child process; JSON-RPC lines are relayed both ways.

The client talks to the proxy on the proxy's stdin and stdout; the proxy talks to the child on
the child's. The child's stderr is the proxy's. Lines from the client go to the child unchanged
and in order. Lines from the child are judged by the :class:`~.core.Relay` concurrently but
written to the client in the order they came, so a slow DNS lookup for one URL delays what
follows it and nothing else. A batch is judged item by item, and the items urlvet leaves alone
keep their bytes (:func:`urlvet.mcp.spans.array_items`).

Memory is bounded whatever either side sends: each pipe is read a chunk at a time and reading
stops while what was read is not yet taken by the other side (at most :data:`PIPELINE`
messages or :data:`PIPELINE_BYTES` bytes between the server and a client that does not read,
plus the one message being read, at most :data:`~.core.MAX_MESSAGE`). The side that is not
read from then blocks on its own pipe, as it would talking to the other side directly.

Shutdown follows the MCP stdio transport: when the client closes the proxy's stdin (or its
stdin is at end of file from the start, as with ``< /dev/null``), or the client stops reading
the proxy's stdout, the child's stdin is closed; a child still running after a grace period
gets SIGTERM, then SIGKILL. The child runs in its own process group, and the whole group is
signalled, so that a launcher such as ``npx`` leaves no server behind. When the child exits,
what it wrote is relayed to the client and the proxy exits with the child's status, even if a
process the child started elsewhere (in a session of its own) still holds the child's stdout.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import fcntl
import os
import signal
import stat
import subprocess
import sys
import termios
import threading
from collections import deque
from collections.abc import Sequence
from typing import IO, Protocol

from urlvet.errors import UrlvetError
from urlvet.mcp.proxy.core import MAX_MESSAGE, Relay, Step
from urlvet.mcp.spans import array_items, skip_whitespace

GRACE = 2.0
"""Seconds the child gets after its stdin closes, and again after SIGTERM."""
FLUSH = 2.0
"""Once the child has exited and the client is leaving (its input ended, or the proxy was
signalled), how long the proxy waits for a client that takes none of the child's last output
before it ends without it. A client that has not left is waited for."""
PIPELINE = 1024
"""How many messages from the server may be between reading and the client at once."""
PIPELINE_BYTES = 8 << 20
"""How many bytes of the server's messages may be between reading and the client at once
(the proxy reads on while fewer are; one message may take it past this)."""
FLUSH_POLL = 0.005
"""Seconds between looks at what the client has still to take, once the server is done."""
CHUNK = 1 << 16
"""Bytes read from, or written to, a pipe at a time."""
BUFFER = 4 * CHUNK
"""Bytes a pipe reader holds before it stops reading (its writer then waits on the pipe)."""


class ProxyError(UrlvetError):
    """The proxy cannot start (the command is missing, the options are wrong)."""


class _Oversized:
    """A line longer than MAX_MESSAGE: discarded."""


OVERSIZED = _Oversized()


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


class ByteSource(Protocol):
    """Where a :class:`LineReader` gets its bytes: a chunk at a time, ``b""`` at the end."""

    async def read(self) -> bytes:
        """The next chunk, or ``b""`` at the end."""
        ...


class PipeSource(asyncio.Protocol):
    """The read side of a pipe or socket, read only while at most :data:`BUFFER` bytes wait.

    :meth:`finish` makes it end as soon as nothing is left to read right now: the writer has
    exited, and what is still in the pipe is all it wrote.
    """

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._held = 0
        self._eof = False
        self._paused = False
        self._finishing = False
        self._waiter: asyncio.Future[None] | None = None
        self._transport: asyncio.ReadTransport | None = None
        self._fd = -1

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self._transport = transport
        pipe = transport.get_extra_info("pipe")
        self._fd = pipe.fileno() if pipe is not None else -1

    def data_received(self, data: bytes) -> None:
        self._chunks.append(data)
        self._held += len(data)
        if self._held >= BUFFER and self._transport is not None and not self._paused:
            self._paused = True
            self._transport.pause_reading()
        _wake(self._waiter)

    def eof_received(self) -> bool | None:
        self._eof = True
        _wake(self._waiter)
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        _wake(self._waiter)

    async def read(self) -> bytes:
        """The next chunk, or ``b""`` at the end."""
        while not self._chunks:
            if self._eof:
                return b""
            if self._finishing and _waiting_in_pipe(self._fd) == 0:
                self.close()
                return b""
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        chunk = self._chunks.popleft()
        self._held -= len(chunk)
        if self._paused and self._held < BUFFER and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        return chunk

    def finish(self) -> None:
        """End once everything the pipe holds now has been read."""
        self._finishing = True
        _wake(self._waiter)

    def close(self) -> None:
        """Stop reading."""
        self._eof = True
        if self._transport is not None:
            self._transport.close()
        _wake(self._waiter)


def _waiting_in_pipe(fd: int) -> int:
    """Bytes waiting in the pipe ``fd`` (0 when it cannot be asked)."""
    if fd < 0:
        return 0
    try:
        buf = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
    except OSError:
        return 0
    return int.from_bytes(buf, sys.byteorder)


class ThreadSource:
    """A file descriptor the event loop cannot poll (a file, ``/dev/null``, a terminal).

    A thread reads it a chunk at a time and hands over at most two chunks ahead.
    """

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        self._queue: asyncio.Queue[bytes] = asyncio.Queue(2)
        self._ended = False
        threading.Thread(
            target=self._pump, args=(fd, loop), name="urlvet-proxy-stdin", daemon=True
        ).start()

    def _pump(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            try:
                chunk = os.read(fd, CHUNK)
            except OSError:
                chunk = b""
            try:
                asyncio.run_coroutine_threadsafe(self._queue.put(chunk), loop).result()
            except (RuntimeError, asyncio.CancelledError, concurrent.futures.CancelledError):
                return  # the loop is gone: nobody reads any more
            if not chunk:
                return

    async def read(self) -> bytes:
        """The next chunk, or ``b""`` at the end."""
        if self._ended:
            return b""
        chunk = await self._queue.get()
        self._ended = not chunk
        return chunk


class LineReader:
    """Lines from a :class:`ByteSource`, each at most ``limit`` bytes; longer ones are skipped.

    It holds at most one line and one chunk, however long the line. A long line grows in
    one buffer, which the C library grows in place (``mremap``) and gives back whole once
    the line is taken; pieces kept apart would stay in the heap after they are joined.
    """

    def __init__(self, source: ByteSource, limit: int = MAX_MESSAGE) -> None:
        self.source = source
        self.limit = limit
        self._buf = bytearray()
        self._searched = 0

    async def next(self) -> bytes | _Oversized | None:
        """The next line with its newline (the last may lack one), OVERSIZED, or None at EOF.

        A line is over-long when it holds more than ``limit`` bytes besides its newline.
        """
        buf = self._buf
        while True:
            end = buf.find(b"\n", self._searched) + 1
            if end > self.limit + 1:
                del buf[:end]
                self._searched = 0
                return OVERSIZED
            if end:
                return self._take(end)
            if len(buf) > self.limit:
                return await self._skip()
            self._searched = len(buf)
            chunk = await self.source.read()
            if not chunk:
                return self._take(len(buf)) if buf else None
            if not buf and len(chunk) <= self.limit + 1 and chunk.find(b"\n") == len(chunk) - 1:
                return chunk  # one whole line, the usual case: no copy
            buf += chunk

    def _take(self, end: int) -> bytes:
        buf = self._buf
        line = bytes(buf) if end == len(buf) else bytes(memoryview(buf)[:end])
        del buf[:end]
        self._searched = 0
        return line

    async def _skip(self) -> _Oversized:
        """Drop the rest of an over-long line, a chunk at a time."""
        self._buf.clear()
        self._searched = 0
        while chunk := await self.source.read():
            end = chunk.find(b"\n") + 1
            if end:
                self._buf += chunk[end:]
                break
        return OVERSIZED


class Sink(Protocol):
    """Where messages are written: False once the reader is gone."""

    moved: float
    """When the reader last took something (the event loop's clock)."""

    @property
    def waiting(self) -> bool:
        """True while a write waits for the reader to take what was written."""
        ...

    async def write(self, data: bytes) -> bool:
        """Write all of ``data``; False when the other end is closed."""
        ...

    async def flush(self) -> None:
        """Wait until the reader has taken everything written (or is gone)."""
        ...


class PipeSink(asyncio.BaseProtocol):
    """The write side of a pipe or socket: at most :data:`CHUNK` bytes wait in the proxy."""

    def __init__(self) -> None:
        self.gone = False
        self.moved = 0.0
        self._paused = False
        self._waiter: asyncio.Future[None] | None = None
        self._transport: asyncio.WriteTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        self._transport = transport
        transport.set_write_buffer_limits(high=CHUNK)

    @property
    def waiting(self) -> bool:
        """True while what was written waits for the reader to take it."""
        transport = self._transport
        return not self.gone and transport is not None and transport.get_write_buffer_size() > 0

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        self.moved = asyncio.get_running_loop().time()
        _wake(self._waiter)

    def connection_lost(self, exc: Exception | None) -> None:
        self.gone = True
        _wake(self._waiter)

    async def write(self, data: bytes) -> bool:
        """Write all of ``data``, a chunk at a time; False when the reader is gone."""
        transport = self._transport
        view = memoryview(data)
        for start in range(0, len(view), CHUNK):
            if self.gone or transport is None or transport.is_closing():
                return False
            transport.write(view[start : start + CHUNK])
            self.moved = asyncio.get_running_loop().time()
            while self._paused and not self.gone:
                self._waiter = asyncio.get_running_loop().create_future()
                try:
                    await self._waiter
                finally:
                    self._waiter = None
        return not self.gone

    async def flush(self) -> None:
        """Wait until the reader has taken everything written (or is gone)."""
        transport = self._transport
        if transport is None:
            return
        left = transport.get_write_buffer_size()
        while left and not self.gone and not transport.is_closing():
            await asyncio.sleep(FLUSH_POLL)
            now = transport.get_write_buffer_size()
            if now < left:
                self.moved = asyncio.get_running_loop().time()
            left = now

    def close(self) -> None:
        """Close the pipe once what waits in it is written."""
        if self._transport is not None:
            self._transport.close()


class FileSink:
    """A file descriptor the event loop cannot poll: written directly."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.moved = 0.0
        self.waiting = False
        """Never: a write here blocks until it is done."""

    async def write(self, data: bytes) -> bool:
        """Write all of ``data``; False when the reader is gone."""
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view) :]
        except OSError:
            return False
        self.moved = asyncio.get_running_loop().time()
        return True

    async def flush(self) -> None:
        """Nothing waits: a write here is done when it returns."""


def _pollable(fd: int) -> bool:
    """True for a pipe or socket (the event loop can wait on it; not on files or devices)."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def _client_streams(stdin: IO[bytes], stdout: IO[bytes]) -> tuple[ByteSource, Sink]:
    loop = asyncio.get_running_loop()
    source: ByteSource
    if _pollable(stdin.fileno()):
        pipe = PipeSource()
        await loop.connect_read_pipe(lambda: pipe, stdin)
        source = pipe
    else:
        source = ThreadSource(stdin.fileno(), loop)
    if _pollable(stdout.fileno()):
        sink = PipeSink()
        await loop.connect_write_pipe(lambda: sink, stdout)
        return source, sink
    return source, FileSink(stdout.fileno())


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def exit_status(returncode: int) -> int:
    """The proxy's exit status for the child's return code (128 + N for signal N)."""
    return returncode if returncode >= 0 else 128 - returncode


Judged = Step | asyncio.Future[Step]


class Pipeline:
    """The server's messages between reading and the client, in order, bounded.

    The reader waits for :meth:`room` before it reads a message; a message's bytes count
    until the writer says it is :meth:`done` with it (written to the client).
    """

    def __init__(self, items: int = PIPELINE, size: int = PIPELINE_BYTES) -> None:
        self.items = items
        self.size = size
        self._queue: deque[tuple[Judged, int]] = deque()
        self._bytes = 0
        self._closed = False
        self._room: asyncio.Future[None] | None = None
        self._ready: asyncio.Future[None] | None = None

    async def room(self) -> None:
        """Wait until another message may be read."""
        while len(self._queue) >= self.items or self._bytes >= self.size:
            self._room = asyncio.get_running_loop().create_future()
            try:
                await self._room
            finally:
                self._room = None

    def put(self, item: Judged, size: int) -> None:
        """Add a message of ``size`` bytes (its step, or the step to come)."""
        self._queue.append((item, size))
        self._bytes += size
        _wake(self._ready)

    def close(self) -> None:
        """No more messages: :meth:`get` returns None once the queue is empty."""
        self._closed = True
        _wake(self._ready)

    async def get(self) -> tuple[Judged, int] | None:
        """The next message and its size, or None once closed and empty."""
        while not self._queue:
            if self._closed:
                return None
            self._ready = asyncio.get_running_loop().create_future()
            try:
                await self._ready
            finally:
                self._ready = None
        item = self._queue.popleft()
        _wake(self._room)
        return item

    def done(self, size: int) -> None:
        """The writer is done with a message of ``size`` bytes."""
        self._bytes -= size
        _wake(self._room)


class StdioProxy:
    """One child process and one client, relayed through ``relay``."""

    def __init__(
        self, command: Sequence[str], relay: Relay, *, grace: float = GRACE, flush: float = FLUSH
    ) -> None:
        if not command:
            raise ProxyError("no server command: give it after '--', as in urlvet proxy -- CMD")
        self.command = list(command)
        self.relay = relay
        self.grace = grace
        self.flush = flush
        self.child: subprocess.Popen[bytes] | None = None
        self._exited: asyncio.Future[int] | None = None
        self._server_in: PipeSink | None = None
        self._server_lock = asyncio.Lock()
        self._stopping: asyncio.Task[None] | None = None
        self._client_gone = False
        self._leaving = False

    def _start(self) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(  # noqa: S603 (the command is the operator's own)
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
            )
        except OSError as exc:
            raise ProxyError(f"cannot start {self.command[0]!r}: {exc.strerror or exc}") from None

    def _watch(self, child: subprocess.Popen[bytes]) -> asyncio.Future[int]:
        """A future for the child's return code, set by a thread that waits for it."""
        loop = asyncio.get_running_loop()
        exited: asyncio.Future[int] = loop.create_future()

        def done(code: int) -> None:
            if not exited.done():
                exited.set_result(code)

        def wait() -> None:
            code = child.wait()
            with contextlib.suppress(RuntimeError):  # the loop has ended
                loop.call_soon_threadsafe(done, code)

        threading.Thread(target=wait, name="urlvet-proxy-child", daemon=True).start()
        return exited

    async def run(self, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> int:
        """Relay until the child exits; return the proxy's exit status."""
        loop = asyncio.get_running_loop()
        child = self.child = self._start()
        assert child.stdin is not None
        assert child.stdout is not None
        exited = self._exited = self._watch(child)
        server_out, server_in = PipeSource(), PipeSink()
        await loop.connect_read_pipe(lambda: server_out, child.stdout)
        await loop.connect_write_pipe(lambda: server_in, child.stdin)
        self._server_in = server_in
        client_in, client_out = await _client_streams(
            stdin or sys.stdin.buffer, stdout or sys.stdout.buffer
        )
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._signalled)
        pipeline = Pipeline()
        tasks = [
            asyncio.create_task(self._client_to_server(LineReader(client_in))),
            asyncio.create_task(self._server_reader(LineReader(server_out), pipeline)),
        ]
        writer = asyncio.create_task(self._server_writer(pipeline, client_out))
        try:
            ended: set[asyncio.Future[None] | asyncio.Future[int]] = {writer, exited}
            await asyncio.wait(ended, return_when=asyncio.FIRST_COMPLETED)
            if writer.done() and not writer.cancelled() and writer.exception() is not None:
                # Nothing more is relayed (never what was not judged): say why, and stop.
                self.relay.diagnostic(f"stopped relaying: {writer.exception()!r}")
            if not exited.done():
                # The child closed its stdout but lives on, or the client is gone: stop it.
                self.stop()
            status = await exited
            # What the child wrote before it exited is relayed; a process it started in a
            # session of its own may hold its stdout open for ever, so do not wait for EOF.
            server_out.finish()
            await self._flushed(writer, client_out)
        finally:
            for task in (*tasks, writer):
                task.cancel()
            await asyncio.gather(*tasks, writer, return_exceptions=True)
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)
            if self._stopping is not None:
                await self._stopping
            # Whatever the child left in its group (a launcher's server) goes with it.
            _kill_group(child.pid, signal.SIGKILL)
            server_out.close()
            server_in.close()
        return exit_status(status)

    async def _flushed(self, writer: asyncio.Task[None], out: Sink) -> None:
        """Wait for the writer to relay the exited child's last output; a leaving client
        that takes nothing for :attr:`flush` seconds is not waited for."""
        loop = asyncio.get_running_loop()
        out.moved = loop.time()
        while not writer.done():
            await asyncio.wait({writer}, timeout=self.flush / 4)
            if self._leaving and out.waiting and loop.time() - out.moved > self.flush:
                return

    def _signalled(self) -> None:
        self._leaving = True
        self.stop()

    def stop(self) -> None:
        """Ask the child to stop: close its stdin, then SIGTERM, then SIGKILL (the group)."""
        if self._stopping is None and self.child is not None and self._exited is not None:
            self._stopping = asyncio.ensure_future(self._stop(self.child, self._exited))

    async def _stop(self, child: subprocess.Popen[bytes], exited: asyncio.Future[int]) -> None:
        if self._server_in is not None:
            self._server_in.close()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                await asyncio.wait_for(asyncio.shield(exited), self.grace)
                return
            except TimeoutError:
                _kill_group(child.pid, sig)
        await exited

    async def _to_server(self, data: bytes) -> bool:
        """Write ``data`` to the child's stdin, whole (two writers share it); False when closed."""
        if self._server_in is None:
            return False
        async with self._server_lock:
            return await self._server_in.write(data)

    async def _client_to_server(self, lines: LineReader) -> None:
        while (line := await lines.next()) is not None:
            if isinstance(line, _Oversized):
                self.relay.diagnostic(
                    f"dropped a message from the client longer than {MAX_MESSAGE:,} bytes"
                )
                continue
            self.relay.from_client(line)
            if not await self._to_server(line):
                self.stop()  # the child no longer reads: its exit ends the proxy
                return
        # The client's input ended: the MCP stdio shutdown begins.
        self._leaving = True
        self.stop()

    def _judged(self, line: bytes) -> Judged:
        quick = self.relay.quick(line)
        if quick is not None:
            return quick
        start = skip_whitespace(line, 0)
        if start < len(line) and line[start] == ord("["):
            return asyncio.ensure_future(self._batch(line))
        return asyncio.ensure_future(self.relay.from_server(line))

    async def _batch(self, line: bytes) -> Step:
        """A batch judged item by item: the items passed on unchanged keep their bytes."""
        spans = array_items(line)
        if not spans:
            return await self.relay.from_server(line)  # not an array urlvet can split
        parts: list[bytes] = []
        to_server: list[bytes] = []
        retries: list[bytes] = []
        changed = False
        for start, end in spans:
            item = line[start:end]
            step = await self.relay.from_server(item)
            changed = changed or step.to_client != (item,)
            parts.extend(step.to_client)
            to_server.extend(step.to_server)
            retries.extend([step.retry] if step.retry is not None else [])
        retry = retries[0] if retries else None
        if not changed:
            return Step((line,), tuple(to_server), retry)
        batch = (b"[" + b",".join(parts) + b"]",) if parts else ()
        return Step(batch, (*to_server, *retries[1:]), retry)

    async def _server_reader(self, lines: LineReader, pipeline: Pipeline) -> None:
        try:
            while True:
                await pipeline.room()
                line = await lines.next()
                if line is None:
                    break
                if isinstance(line, _Oversized):
                    self.relay.diagnostic(
                        f"dropped a message from the server longer than {MAX_MESSAGE:,} bytes"
                    )
                    continue
                pipeline.put(self._judged(line), len(line))
                del line  # held only by the pipeline, which lets it go once it is written
        finally:
            pipeline.close()

    async def _server_writer(self, pipeline: Pipeline, out: Sink) -> None:
        while (entry := await pipeline.get()) is not None:
            item, size = entry
            step = item if isinstance(item, Step) else await item
            # Nothing here may hold the message while the next one is read.
            del entry, item
            if not self._client_gone:
                await self._carry_out(step, out)
            # Once the client is gone the server's output is read and dropped, so that a
            # server blocked on its stdout sees its stdin end and exits on its own.
            del step
            pipeline.done(size)
        if not self._client_gone:
            await out.flush()  # the proxy may end next: nothing may be left in its buffer

    async def _carry_out(self, step: Step, out: Sink) -> None:
        for message in (*step.notices, *step.to_client):
            written = await out.write(message)
            if written and not message.endswith(b"\n"):
                written = await out.write(b"\n")
            if not written:
                self._client_left()
                return
        for message in (*step.to_server, *([step.retry] if step.retry is not None else [])):
            await self._to_server(message + b"\n")

    def _client_left(self) -> None:
        """The client no longer reads: say so once, and stop the child."""
        if not self._client_gone:
            self._client_gone = True
            self._leaving = True
            self.relay.diagnostic("the client closed its end of the pipe: stopping the server")
        self.stop()


def run_stdio(command: Sequence[str], relay: Relay, *, grace: float = GRACE) -> int:
    """Run the stdio proxy on this process's stdin and stdout; return its exit status."""
    proxy = StdioProxy(command, relay, grace=grace)
    return asyncio.run(proxy.run())


__all__ = [
    "BUFFER",
    "CHUNK",
    "FLUSH",
    "FLUSH_POLL",
    "GRACE",
    "OVERSIZED",
    "PIPELINE",
    "PIPELINE_BYTES",
    "ByteSource",
    "LineReader",
    "PipeSink",
    "PipeSource",
    "Pipeline",
    "ProxyError",
    "Sink",
    "StdioProxy",
    "ThreadSource",
    "exit_status",
    "run_stdio",
]
