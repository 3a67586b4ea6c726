"""The stdio proxy: the server runs as a child process; JSON-RPC lines are relayed both ways.

The client talks to the proxy on the proxy's stdin and stdout; the proxy talks to the child on
the child's. The child's stderr is the proxy's. Lines from the client go to the child unchanged
and in order. Lines from the child are judged by the :class:`~.core.Relay` concurrently but
written to the client in the order they came, so a slow DNS lookup for one URL delays what
follows it and nothing else.

Shutdown follows the MCP stdio transport: when the client closes the proxy's stdin, the child's
stdin is closed; a child still running after a grace period gets SIGTERM, then SIGKILL. The child
runs in its own process group, and the whole group is signalled, so that a launcher such as
``npx`` leaves no server behind. When the child exits, what it wrote is flushed to the client and
the proxy exits with the child's status.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import sys
import threading
from collections.abc import Awaitable, Sequence
from typing import IO

from urlvet.errors import UrlvetError
from urlvet.mcp.proxy.core import MAX_MESSAGE, Relay, Step

GRACE = 2.0
"""Seconds the child gets after its stdin closes, and again after SIGTERM."""
PIPELINE = 1024
"""How many messages from the server may be in judgement at once (then the reader waits)."""
_CHUNK = 1 << 16


class ProxyError(UrlvetError):
    """The proxy cannot start (the command is missing, the options are wrong)."""


class _Oversized:
    """A line longer than MAX_MESSAGE: discarded."""


OVERSIZED = _Oversized()


async def read_line(reader: asyncio.StreamReader) -> bytes | _Oversized | None:
    """The next line with its newline (the last may lack one), OVERSIZED, or None at EOF."""
    try:
        return await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial or None
    except asyncio.LimitOverrunError as exc:
        # Discard up to and including the next newline, a chunk at a time.
        await reader.readexactly(exc.consumed)
        while True:
            try:
                await reader.readuntil(b"\n")
                return OVERSIZED
            except asyncio.LimitOverrunError as more:
                await reader.readexactly(more.consumed)
            except asyncio.IncompleteReadError:
                return OVERSIZED


class _Out:
    """The client's side of the proxy's stdout: an asyncio pipe, or plain writes to a file."""

    def __init__(self, writer: asyncio.StreamWriter | None, fd: int) -> None:
        self.writer = writer
        self.fd = fd

    def write(self, data: bytes) -> None:
        if self.writer is not None:
            self.writer.write(data)
            return
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]

    async def drain(self) -> None:
        if self.writer is not None:
            await self.writer.drain()


def _is_stream(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


async def _client_streams(stdin: IO[bytes], stdout: IO[bytes]) -> tuple[asyncio.StreamReader, _Out]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_MESSAGE + 1)
    in_fd = stdin.fileno()
    if _is_stream(in_fd) and not os.isatty(in_fd):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    else:
        # A regular file or a terminal: read it in a thread.
        def pump() -> None:
            while chunk := os.read(in_fd, _CHUNK):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
            loop.call_soon_threadsafe(reader.feed_eof)

        threading.Thread(target=pump, name="urlvet-proxy-stdin", daemon=True).start()
    out_fd = stdout.fileno()
    if _is_stream(out_fd) and not os.isatty(out_fd):
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(), stdout
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        return reader, _Out(writer, out_fd)
    return reader, _Out(None, out_fd)


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def exit_status(returncode: int) -> int:
    """The proxy's exit status for the child's return code (128 + N for signal N)."""
    return returncode if returncode >= 0 else 128 - returncode


class StdioProxy:
    """One child process and one client, relayed through ``relay``."""

    def __init__(self, command: Sequence[str], relay: Relay, *, grace: float = GRACE) -> None:
        if not command:
            raise ProxyError("no server command: give it after '--', as in urlvet proxy -- CMD")
        self.command = list(command)
        self.relay = relay
        self.grace = grace
        self.child: asyncio.subprocess.Process | None = None
        self._stopping: asyncio.Task[None] | None = None

    async def _start(self) -> asyncio.subprocess.Process:
        try:
            return await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=MAX_MESSAGE + 1,
                start_new_session=True,
            )
        except OSError as exc:
            raise ProxyError(f"cannot start {self.command[0]!r}: {exc.strerror or exc}") from None

    async def run(self, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> int:
        """Relay until the child exits; return the proxy's exit status."""
        child = self.child = await self._start()
        assert child.stdin is not None
        assert child.stdout is not None
        reader, out = await _client_streams(stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.stop)
        queue: asyncio.Queue[Step | Awaitable[Step] | None] = asyncio.Queue(PIPELINE)
        to_client = asyncio.create_task(self._client_to_server(reader, child))
        from_server = asyncio.create_task(self._server_reader(child, queue))
        try:
            await self._server_writer(queue, out, child)
            await from_server
            if child.returncode is None:
                # The child closed its stdout but lives on: stop it.
                self.stop()
            status = await child.wait()
        finally:
            to_client.cancel()
            from_server.cancel()
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)
            if self._stopping is not None:
                await self._stopping
            # Whatever the child left in its group (a launcher's server) goes with it.
            _kill_group(child.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                await out.drain()
        return exit_status(status)

    def stop(self) -> None:
        """Ask the child to stop: close its stdin, then SIGTERM, then SIGKILL (the group)."""
        if self._stopping is None and self.child is not None:
            self._stopping = asyncio.ensure_future(self._stop(self.child))

    async def _stop(self, child: asyncio.subprocess.Process) -> None:
        if child.stdin is not None:
            with contextlib.suppress(Exception):
                child.stdin.close()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                await asyncio.wait_for(child.wait(), self.grace)
                return
            except TimeoutError:
                _kill_group(child.pid, sig)
        await child.wait()

    async def _client_to_server(
        self, reader: asyncio.StreamReader, child: asyncio.subprocess.Process
    ) -> None:
        assert child.stdin is not None
        try:
            while True:
                line = await read_line(reader)
                if line is None:
                    break
                if isinstance(line, _Oversized):
                    self.relay.diagnostic(
                        f"dropped a message from the client longer than {MAX_MESSAGE:,} bytes"
                    )
                    continue
                self.relay.from_client(line)
                child.stdin.write(line)
                await child.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the child is gone; its exit ends the proxy
        self.stop()

    async def _server_reader(
        self,
        child: asyncio.subprocess.Process,
        queue: asyncio.Queue[Step | Awaitable[Step] | None],
    ) -> None:
        assert child.stdout is not None
        relay = self.relay
        try:
            while True:
                line = await read_line(child.stdout)
                if line is None:
                    break
                if isinstance(line, _Oversized):
                    relay.diagnostic(
                        f"dropped a message from the server longer than {MAX_MESSAGE:,} bytes"
                    )
                    continue
                quick = relay.quick(line)
                await queue.put(
                    quick if quick is not None else asyncio.ensure_future(relay.from_server(line))
                )
        finally:
            await queue.put(None)

    async def _server_writer(
        self,
        queue: asyncio.Queue[Step | Awaitable[Step] | None],
        out: _Out,
        child: asyncio.subprocess.Process,
    ) -> None:
        assert child.stdin is not None
        while True:
            item = await queue.get()
            if item is None:
                break
            step = item if isinstance(item, Step) else await item
            for message in (*step.notices, *step.to_client):
                out.write(message if message.endswith(b"\n") else message + b"\n")
            to_server = [*step.to_server, *([step.retry] if step.retry is not None else [])]
            for message in to_server:
                with contextlib.suppress(Exception):
                    child.stdin.write(message + b"\n")
            if step.to_client or step.notices:
                try:
                    await out.drain()
                except (BrokenPipeError, ConnectionResetError):
                    # The client is gone: nobody reads what the server says any more.
                    self.stop()
            if to_server:
                with contextlib.suppress(Exception):
                    await child.stdin.drain()


def run_stdio(command: Sequence[str], relay: Relay, *, grace: float = GRACE) -> int:
    """Run the stdio proxy on this process's stdin and stdout; return its exit status."""
    proxy = StdioProxy(command, relay, grace=grace)
    return asyncio.run(proxy.run())


__all__ = ["GRACE", "ProxyError", "StdioProxy", "exit_status", "read_line", "run_stdio"]
