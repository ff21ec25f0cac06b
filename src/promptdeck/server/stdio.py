"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout, logs on stderr.

It runs without asyncio: the main thread reads stdin with blocking reads and
answers every complete line of a chunk in one write, which is both the fastest
way to serve one client and keeps start-up light (asyncio alone costs ~25 ms
and ~10 MiB). Work that has to wait runs elsewhere and writes under the same
lock: async Python prompts on an event loop started on first use, file
watching on a thread of its own. ``sys.stdout`` is pointed at stderr while
serving, so a stray ``print`` in a Python prompt cannot corrupt the protocol.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Awaitable, Coroutine
from typing import IO, TYPE_CHECKING, Any, Protocol

from ..protocol import jsonrpc
from ..protocol.errors import InvalidRequest
from .legacy import LegacySession
from .outcome import Answer, assemble
from .watch import WatchThread, watch_folders

if TYPE_CHECKING:
    import asyncio
    import concurrent.futures

    from .legacy import LegacyServed
    from .served import Watched

    class StdioServed(LegacyServed, Watched, Protocol):
        """A server as stdio serves it: its sessions' needs, and its folders' watcher's."""

__all__ = ["StdioConnection", "serve_stdio", "watch_folders"]

log = logging.getLogger("promptdeck.stdio")

#: How long stdin must stay quiet for the file watcher to start (see ``serve_stdio``), and the longest its
#: start waits for such a pause once the library has loaded.
IDLE_SECONDS = 0.05
WATCH_START_SECONDS = 1.0
#: Longest line accepted; a longer one is answered with an error and skipped.
MAX_LINE_BYTES = 16 * 1024 * 1024
_READ_SIZE = 256 * 1024


class _Output:
    """stdout as a file descriptor, written whole under a lock shared by every thread."""

    def __init__(self, fd: int, lock: threading.RLock) -> None:
        self.fd = fd
        self.lock = lock
        self.broken = False

    def write(self, data: bytes) -> None:
        with self.lock:
            self.write_locked(data)

    def write_locked(self, data: bytes) -> None:
        if self.broken:
            return
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view):]
        except (BrokenPipeError, OSError):
            self.broken = True  # the client went away; reading stdin will end too


class _AsyncRunner:
    """An asyncio loop on a background thread, started the first time an async prompt runs."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.pending: set[concurrent.futures.Future[None]] = set()

    def submit(self, coro: Coroutine[Any, Any, None]) -> None:
        import asyncio

        if self.loop is None:
            self.loop = asyncio.new_event_loop()
            threading.Thread(target=self.loop.run_forever, name="promptdeck-async", daemon=True).start()
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        self.pending.add(future)
        future.add_done_callback(self.pending.discard)

    def drain(self, timeout: float) -> None:
        if self.pending:
            import concurrent.futures

            concurrent.futures.wait(list(self.pending), timeout=timeout)
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.loop.stop)


def _idle(fd: int) -> bool:
    """Whether nothing arrives on ``fd`` for ``IDLE_SECONDS`` (True where that cannot be told)."""
    import select  # a C module, imported once the library has loaded

    try:
        return not select.select([fd], [], [], IDLE_SECONDS)[0]
    except (OSError, ValueError):  # pragma: no cover - a descriptor select cannot wait on (Windows pipes)
        return True


class StdioConnection:
    """One client on a byte stream: feed it chunks, it writes answers to ``output``."""

    def __init__(self, server: StdioServed, output: _Output) -> None:
        self.output = output
        self.session = LegacySession(server, self.notify)
        self.runner = _AsyncRunner()
        self.buffer = bytearray()
        self.skipping = False

    def notify(self, message: bytes) -> None:
        self.output.write(message + b"\n")

    def feed(self, data: bytes) -> None:
        if self.skipping:
            # The rest of an over-long line is dropped as it arrives, not buffered again: one error per line.
            end = data.find(b"\n")
            if end < 0:
                return
            data = data[end + 1:]
            self.skipping = False
        buffer = self.buffer
        scanned = len(buffer)  # held no newline: search only what arrived, or a long line costs quadratic time
        buffer += data
        out: list[bytes] = []
        start = 0
        with self.output.lock:
            while True:
                end = buffer.find(b"\n", max(start, scanned))
                if end < 0:
                    break
                line = bytes(buffer[start:end])
                start = end + 1
                if line.strip():
                    self._line(line, out)
            del buffer[:start]
            if len(buffer) > MAX_LINE_BYTES:
                buffer.clear()
                self.skipping = True
                out.append(jsonrpc.encode_error(None, InvalidRequest(f"message longer than {MAX_LINE_BYTES} bytes")))
            if out:
                self.output.write_locked(b"\n".join(out) + b"\n")
                out.clear()  # a related message sent later (by an async render) must not send these again

    def finish(self) -> None:
        """End of input: answer a last line without a newline, then wait for async work (a request waiting for
        the client to fill in a form fails at once: no answer can come now)."""
        if self.buffer.strip() and not self.skipping:
            self.feed(b"\n")
        self.session.hung_up()
        self.runner.drain(timeout=5)
        self.session.close()

    def _line(self, line: bytes, out: list[bytes]) -> None:
        # Progress notifications must leave before the response they belong to: flush what is queued. An
        # async render sends them from the runner's thread, after ``feed`` has written ``out``: under the lock.
        def related(message: bytes) -> None:
            with self.output.lock:
                if out:
                    self.output.write_locked(b"\n".join(out) + b"\n")
                    out.clear()
                self.output.write_locked(message + b"\n")

        response = assemble(self.session.handle_bytes(line, related))
        if isinstance(response, Answer):
            out.append(response.data)
        elif response is not None:
            self.runner.submit(self._later(response))

    async def _later(self, pending: Awaitable[Answer | None]) -> None:
        answer = await pending
        if answer is not None:
            self.output.write(answer.data + b"\n")


class _ClientLogHandler(logging.Handler):
    """Forwards promptdeck's log records to the client, once it asked for them with logging/setLevel."""

    def __init__(self, session: LegacySession) -> None:
        super().__init__()
        self.session = session

    def emit(self, record: logging.LogRecord) -> None:
        if self.session.log_level is None:
            return
        try:
            text = record.getMessage()
        except Exception:  # a bad format string must not take the server down
            return
        self.session.log_to_client(record.levelno, record.name, text)


def serve_stdio(server: StdioServed, *, watch: bool = True,
                stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """Serve one client on stdin/stdout until stdin closes."""
    in_fd = (stdin or sys.stdin.buffer).fileno()
    out_fd = (stdout or sys.stdout.buffer).fileno()
    sys.stdout.flush()
    # From here on only the protocol may use the real stdout.
    saved_stdout = sys.stdout
    sys.stdout = sys.stderr
    # Re-entrant: a reload holds it while it notifies, and notifying writes.
    lock = threading.RLock()
    connection = StdioConnection(server, _Output(out_fd, lock))
    handler = _ClientLogHandler(connection.session)
    logging.getLogger("promptdeck").addHandler(handler)
    # The watcher starts once the library has loaded (the first request that reads the catalog, a
    # prompts/list or get, normally), its answer is out and the client has paused (``_idle``), or at
    # the latest ``WATCH_START_SECONDS`` after the load. Importing watchfiles takes ~20 ms of CPU and
    # ~2.5 MiB (anyio, multiprocessing): on a thread of its own it still holds the GIL while it imports.
    # Begun after the handshake it delayed the first get by ~18 ms, and begun with the first requests
    # it slowed them (issue 29). Files changed while the library loaded or the watcher started are
    # found by its catch-up (``catch_up``). It shares the lock, so a reload never interleaves with a
    # load or a response.
    watcher = WatchThread(server, lock) if watch and server.watch_roots() else None
    loaded_at: float | None = None  # when the library was found loaded, the watcher not started yet
    try:
        while True:
            if loaded_at is not None and (_idle(in_fd) or time.monotonic() - loaded_at > WATCH_START_SECONDS):
                assert watcher is not None
                watcher.start()
                loaded_at = None
            try:
                chunk = os.read(in_fd, _READ_SIZE)
            except InterruptedError:  # pragma: no cover - retried by Python since 3.5
                continue
            if not chunk:
                break
            connection.feed(chunk)
            if watcher is not None and loaded_at is None and not watcher.stopped and server.loaded:
                loaded_at = time.monotonic()
        connection.finish()
    finally:
        if watcher is not None:
            watcher.stop()
        logging.getLogger("promptdeck").removeHandler(handler)
        sys.stdout = saved_stdout
