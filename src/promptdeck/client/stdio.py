"""A server started as a subprocess, speaking newline-delimited JSON-RPC on its stdin and stdout."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
from collections.abc import Callable, Mapping, Sequence

from ..protocol.errors import ConnectionFailed, ProtocolViolation
from .channel import Multiplexed, log

#: The longest line (one message) read from the server: a big prompts/list page fits many times over.
MAX_MESSAGE = 64 * 1024 * 1024
#: Buffered output past which sending waits for the server to read (backpressure).
HIGH_WATER = 256 * 1024
#: How long a server gets to exit after its stdin closes, and then after SIGTERM.
EXIT_GRACE = 2.0


class _Pipes(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's protocol for a child process, except that stdout lines go straight to ``on_line``.

    A StreamReader and a task that reads lines from it would cost every message an extra event-loop
    pass and a task switch (~15% of a stdio round trip); here a line is decoded, and the request it
    answers woken, in the callback that received it.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=MAX_MESSAGE, loop=loop)
        self.on_line: Callable[[bytes], None] = lambda line: None
        self.on_overflow: Callable[[], None] = lambda: None
        #: resolved when the server's stdout closes
        self.stdout_closed: asyncio.Future[None] = loop.create_future()
        self._partial: list[bytes] = []  # the start of a line still arriving, in pieces
        self._partial_size = 0

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if fd != 1:
            super().pipe_data_received(fd, data)
        elif not self.stdout_closed.done():
            self._lines(data if isinstance(data, bytes) else data.encode())  # pipes carry bytes

    def _lines(self, data: bytes) -> None:
        end = data.find(b"\n")
        if end < 0:
            self._partial.append(data)
            self._partial_size += len(data)
            if self._partial_size > MAX_MESSAGE:
                self._partial.clear()
                self.stdout_closed.set_result(None)
                self.on_overflow()
            return
        if self._partial:
            self._partial.append(data[:end])
            line = b"".join(self._partial)
            self._partial.clear()
            self._partial_size = 0
        else:
            line = data[:end]
        while True:
            if line.strip():
                try:
                    self.on_line(line)
                except Exception:  # one bad message must not lose the rest of the stream
                    log.exception("a message from the server could not be handled")
            start = end + 1
            end = data.find(b"\n", start)
            if end < 0:
                break
            line = data[start:end]
        if start < len(data):
            self._partial.append(data[start:])
            self._partial_size = len(data) - start

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1 and not self.stdout_closed.done():
            self.stdout_closed.set_result(None)
        super().pipe_connection_lost(fd, exc)


class StdioChannel(Multiplexed):
    def __init__(self, process: asyncio.subprocess.Process, pipes: _Pipes, command: str) -> None:
        super().__init__()
        self.process = process
        self.command = command
        assert process.stdin is not None and process.stderr is not None
        self._stdin = process.stdin
        #: the server's last stderr lines, quoted when it dies
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        pipes.on_line = self.receive
        pipes.on_overflow = self._overflow
        self._reader = asyncio.ensure_future(self._until_stdout_closes(pipes.stdout_closed))
        self._errors = asyncio.ensure_future(self._read_stderr(process.stderr))

    @classmethod
    async def start(cls, argv: Sequence[str], env: Mapping[str, str] | None = None,
                    cwd: str | None = None) -> StdioChannel:
        if not argv:
            raise ConnectionFailed("empty server command")
        loop = asyncio.get_running_loop()
        try:
            # What asyncio.create_subprocess_exec does, with our protocol.
            transport, pipes = await loop.subprocess_exec(
                lambda: _Pipes(loop), *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=cwd, env=None if env is None else {**os.environ, **env})
        except OSError as exc:
            raise ConnectionFailed(f"could not start {argv[0]!r}: {exc.strerror or exc}") from None
        return cls(asyncio.subprocess.Process(transport, pipes, loop), pipes, " ".join(argv))

    async def send(self, data: bytes) -> None:
        if self._stdin.is_closing():
            raise self.failure or ConnectionFailed(f"the server {self.command!r} is gone")
        self._stdin.write(data + b"\n")
        transport = self._stdin.transport
        if isinstance(transport, asyncio.WriteTransport) and transport.get_write_buffer_size() > HIGH_WATER:
            try:
                await self._stdin.drain()
            except (ConnectionError, BrokenPipeError):
                raise self._gone() from None

    def _overflow(self) -> None:
        self.fail(ProtocolViolation(f"the server sent a message over {MAX_MESSAGE} bytes"))

    async def _until_stdout_closes(self, closed: asyncio.Future[None]) -> None:
        await closed
        if self.failure is not None:
            return
        # stdout closed: the server exited (or is about to); say so with what it printed.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(EXIT_GRACE):
                await self.process.wait()
        self.fail(self._gone())

    async def _read_stderr(self, stderr: asyncio.StreamReader) -> None:
        try:
            while line := await stderr.readline():
                text = line.decode(errors="replace").rstrip()
                self.stderr_tail.append(text)
                log.debug("server: %s", text)
        except (ValueError, OSError):
            pass

    async def wait_closed(self) -> None:
        await asyncio.shield(self._reader)

    def _gone(self) -> ConnectionFailed:
        code = self.process.returncode
        status = "exited" if code is None else f"exited with code {code}"
        tail = "; ".join(line for line in self.stderr_tail if line.strip())[-600:]
        return ConnectionFailed(f"the server {self.command!r} {status}" + (f": {tail}" if tail else ""))

    async def aclose(self) -> None:
        self.fail(ConnectionFailed("the client is closed"))
        await super().aclose()
        # The spec's shutdown: close stdin, wait, then SIGTERM, then SIGKILL.
        if not self._stdin.is_closing():
            self._stdin.close()
        for signal_it in (None, self.process.terminate, self.process.kill):
            if self.process.returncode is not None:
                break
            if signal_it is not None:
                try:
                    signal_it()
                except ProcessLookupError:
                    break
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(EXIT_GRACE):
                    await self.process.wait()
        await asyncio.gather(self._reader, self._errors, return_exceptions=True)
