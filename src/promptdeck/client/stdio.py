"""A server started as a subprocess, speaking newline-delimited JSON-RPC on its stdin and stdout."""

from __future__ import annotations

import asyncio
import collections
import os
from collections.abc import Mapping, Sequence

from ..protocol.errors import ConnectionFailed, ProtocolViolation
from .channel import Multiplexed, log

#: The longest line (one message) read from the server: a big prompts/list page fits many times over.
MAX_MESSAGE = 64 * 1024 * 1024
#: Buffered output past which sending waits for the server to read (backpressure).
HIGH_WATER = 256 * 1024
#: How long a server gets to exit after its stdin closes, and then after SIGTERM.
EXIT_GRACE = 2.0


class StdioChannel(Multiplexed):
    def __init__(self, process: asyncio.subprocess.Process, command: str) -> None:
        super().__init__()
        self.process = process
        self.command = command
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        self._stdin = process.stdin
        #: the server's last stderr lines, quoted when it dies
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self._reader = asyncio.ensure_future(self._read(process.stdout))
        self._errors = asyncio.ensure_future(self._read_stderr(process.stderr))

    @classmethod
    async def start(cls, argv: Sequence[str], env: Mapping[str, str] | None = None,
                    cwd: str | None = None) -> StdioChannel:
        if not argv:
            raise ConnectionFailed("empty server command")
        try:
            process = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, limit=MAX_MESSAGE, cwd=cwd,
                env=None if env is None else {**os.environ, **env})
        except OSError as exc:
            raise ConnectionFailed(f"could not start {argv[0]!r}: {exc.strerror or exc}") from None
        return cls(process, " ".join(argv))

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

    async def _read(self, stdout: asyncio.StreamReader) -> None:
        try:
            while line := await stdout.readline():
                if line.strip():
                    self.receive(line)
        except ValueError:  # a line longer than MAX_MESSAGE
            self.fail(ProtocolViolation(f"the server sent a message over {MAX_MESSAGE} bytes"))
            return
        except OSError:
            pass
        # stdout closed: the server exited (or is about to); say so with what it printed.
        try:
            await asyncio.wait_for(self.process.wait(), EXIT_GRACE)
        except TimeoutError:
            pass
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
            try:
                await asyncio.wait_for(self.process.wait(), EXIT_GRACE)
            except TimeoutError:
                continue
        await asyncio.gather(self._reader, self._errors, return_exceptions=True)
