"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout, logs on stderr.

Input is read by an asyncio protocol, not a stream reader: every complete line
in a chunk is handled right away and all their answers leave in one write.
``sys.stdout`` is pointed at stderr while serving, so a stray ``print`` in a
Python prompt can never corrupt the protocol stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Coroutine
from typing import IO, TYPE_CHECKING, Any

from ..protocol import jsonrpc
from ..protocol.errors import InvalidRequest
from .session import LegacySession

if TYPE_CHECKING:
    from .app import PromptServer

log = logging.getLogger("promptdeck.stdio")

#: Longest line accepted; a longer one is answered with an error and skipped.
MAX_LINE_BYTES = 16 * 1024 * 1024


class _Writer:
    def __init__(self, transport: asyncio.WriteTransport | None, stream: IO[bytes]) -> None:
        self.transport = transport
        self.stream = stream

    def write(self, data: bytes) -> None:
        if self.transport is not None:
            if not self.transport.is_closing():
                self.transport.write(data)
        else:
            self.stream.write(data)
            self.stream.flush()


class _WriteEnd(asyncio.Protocol):
    def __init__(self, closed: asyncio.Future[None]) -> None:
        self.closed = closed

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


class StdioConnection(asyncio.Protocol):
    def __init__(self, server: PromptServer, writer: _Writer, done: asyncio.Future[None]) -> None:
        self.writer = writer
        self.session = LegacySession(server, self.send)
        self.done = done
        self.buffer = bytearray()
        self.skipping = False
        self.tasks: set[asyncio.Task[None]] = set()

    def send(self, message: bytes) -> None:
        self.writer.write(message + b"\n")

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        out: list[bytes] = []
        start = 0
        while True:
            end = buffer.find(b"\n", start)
            if end < 0:
                break
            line = bytes(buffer[start:end])
            start = end + 1
            if self.skipping:
                self.skipping = False
                continue
            if line.strip():
                self._line(line, out)
        del buffer[:start]
        if len(buffer) > MAX_LINE_BYTES:
            buffer.clear()
            self.skipping = True
            out.append(jsonrpc.encode_error(None, InvalidRequest(f"message longer than {MAX_LINE_BYTES} bytes")))
        if out:
            self.writer.write(b"\n".join(out) + b"\n")

    def _line(self, line: bytes, out: list[bytes]) -> None:
        # Progress notifications must leave before the response they belong to: flush what is queued.
        def related(message: bytes) -> None:
            if out:
                self.writer.write(b"\n".join(out) + b"\n")
                out.clear()
            self.send(message)

        outcome = self.session.handle_bytes(line, related)
        if isinstance(outcome, list):
            answers: list[bytes] = []
            pending: list[Coroutine[Any, Any, bytes | None]] = []
            for item in outcome:
                if isinstance(item, bytes):
                    answers.append(item)
                elif item is not None:
                    pending.append(item)
            if pending:
                self._spawn(self._batch(answers, pending))
            elif answers:
                out.append(b"[" + b",".join(answers) + b"]")
        elif isinstance(outcome, bytes):
            out.append(outcome)
        elif outcome is not None:
            self._spawn(self._single(outcome))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _single(self, pending: Coroutine[Any, Any, bytes | None]) -> None:
        answer = await pending
        if answer is not None:
            self.send(answer)

    async def _batch(self, answers: list[bytes], pending: list[Coroutine[Any, Any, bytes | None]]) -> None:
        for answer in await asyncio.gather(*pending):
            if answer is not None:
                answers.append(answer)
        if answers:
            self.send(b"[" + b",".join(answers) + b"]")

    def eof_received(self) -> bool:
        if self.buffer.strip() and not self.skipping:
            out: list[bytes] = []
            self._line(bytes(self.buffer), out)
            if out:
                self.writer.write(b"\n".join(out) + b"\n")
        self.buffer.clear()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.session.close()
        if not self.done.done():
            self.done.set_result(None)


class _ClientLogHandler(logging.Handler):
    """Forwards promptdeck's log records to clients that asked for them with logging/setLevel."""

    def __init__(self, server: PromptServer) -> None:
        super().__init__()
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        if not self.server.sessions:
            return
        try:
            text = record.getMessage()
        except Exception:  # a bad format string must not take the server down
            return
        for session in list(self.server.sessions):
            session.log_to_client(record.levelno, record.name, text)


async def watch_folders(server: PromptServer, stop: asyncio.Event) -> None:
    """Reload changed prompt files until ``stop`` is set."""
    roots = [str(f.root) for f in server.folders]
    if not roots:
        return
    from watchfiles import awatch

    async for changes in awatch(*roots, stop_event=stop, debounce=100, step=20, recursive=True):
        try:
            server.reload_paths(sorted({path for _, path in changes}))
        except Exception:
            log.exception("reloading the library failed; still serving the previous catalog")


async def serve_stdio(server: PromptServer, *, watch: bool = True,
                      stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """Serve one client on stdin/stdout until stdin closes."""
    loop = asyncio.get_running_loop()
    in_stream = stdin or sys.stdin.buffer
    out_stream = stdout or sys.stdout.buffer
    # From here on only the protocol may use the real stdout.
    saved_stdout = sys.stdout
    sys.stdout = sys.stderr
    transport: asyncio.WriteTransport | None = None
    closed: asyncio.Future[None] = loop.create_future()
    if _pollable(out_stream):
        transport, _ = await loop.connect_write_pipe(lambda: _WriteEnd(closed), out_stream)
    else:
        transport = None  # a regular file or /dev/null: plain blocking writes
    writer = _Writer(transport, out_stream)
    done: asyncio.Future[None] = loop.create_future()
    connection = StdioConnection(server, writer, done)
    handler = _ClientLogHandler(server)
    logging.getLogger("promptdeck").addHandler(handler)
    stop = asyncio.Event()
    watcher: asyncio.Future[None] | None = None

    def start_watcher() -> None:
        nonlocal watcher
        if watch and watcher is None:
            watcher = asyncio.ensure_future(watch_folders(server, stop))

    # Watching imports watchfiles (and anyio): start it once the library is loaded, not before
    # the first response.
    if server.folders and not server._pending:
        start_watcher()
    else:
        server.on_loaded.append(start_watcher)
    read_transport: asyncio.ReadTransport | None = None
    try:
        if _pollable(in_stream):
            read_transport, _ = await loop.connect_read_pipe(lambda: connection, in_stream)
        else:
            _read_in_thread(loop, connection, in_stream)
        await done
        if connection.tasks:
            await asyncio.wait(connection.tasks, timeout=5)
    finally:
        stop.set()
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watcher
        logging.getLogger("promptdeck").removeHandler(handler)
        if read_transport is not None:
            read_transport.close()
        if transport is not None:
            # close() flushes what is still buffered; wait for it, or the last answers are lost.
            transport.close()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(closed), 10)
        sys.stdout = saved_stdout


def _pollable(stream: IO[bytes]) -> bool:
    """Whether epoll can watch this stream (pipes, sockets, ttys: yes; files and /dev/null: no)."""
    import select

    if not hasattr(select, "epoll"):  # pragma: no cover - not Linux
        return True
    poller = select.epoll()
    try:
        poller.register(stream.fileno(), select.EPOLLIN)
        return True
    except OSError:
        return False
    finally:
        poller.close()


def _read_in_thread(loop: asyncio.AbstractEventLoop, connection: StdioConnection, stream: IO[bytes]) -> None:
    """Fallback for stdin that epoll cannot watch (a regular file)."""
    import threading

    fd = stream.fileno()

    def pump() -> None:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                loop.call_soon_threadsafe(connection.eof_received)
                loop.call_soon_threadsafe(connection.connection_lost, None)
                return
            loop.call_soon_threadsafe(connection.data_received, chunk)

    threading.Thread(target=pump, name="promptdeck-stdin", daemon=True).start()
