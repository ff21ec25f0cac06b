"""A server as a subprocess (client/stdio.py): requests answered over real pipes, lines split anywhere, and a
server that cannot start, exits or ignores its closed stdin reported or stopped, naming the command."""

from __future__ import annotations

import asyncio
import sys

import msgspec
import pytest

from promptdeck.client import stdio
from promptdeck.client.stdio import StdioChannel
from promptdeck.protocol.errors import ConnectionFailed
from tests.support.client_servers import run

#: A server that answers each request with its own params, sending the answer in two writes split inside the
#: JSON, with a blank line first; it exits on the method "exit" after a line on stderr.
ECHO = r"""
import json, sys, time
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "exit":
        print("bye from the server", file=sys.stderr, flush=True)
        sys.exit(3)
    answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": message.get("params") or {}})
    sys.stdout.write("\n" + answer[:7]); sys.stdout.flush()
    time.sleep(0.01)
    sys.stdout.write(answer[7:] + "\n"); sys.stdout.flush()
"""



def test_requests_are_answered_over_the_pipes() -> None:
    async def main() -> list[object]:
        channel = await StdioChannel.start([sys.executable, "-c", ECHO])
        try:
            answers = await asyncio.gather(*(channel.request("echo", {"n": n}, timeout=30) for n in range(5)))
            return [msgspec.json.decode(answer) for answer in answers]
        finally:
            await channel.aclose()

    assert run(main()) == [{"n": n} for n in range(5)]


def test_a_server_that_exits_is_reported_with_its_code_and_last_words() -> None:
    async def main() -> None:
        channel = await StdioChannel.start([sys.executable, "-c", ECHO])
        try:
            with pytest.raises(ConnectionFailed) as gone:
                await channel.request("exit", None, timeout=30)
            message = str(gone.value)
            assert message.startswith(f"the server '{sys.executable} -c ") and "exited with code 3" in message
            assert message.endswith(": bye from the server")
            with pytest.raises(ConnectionFailed):  # and every later request
                await channel.request("echo", None, timeout=30)
        finally:
            await channel.aclose()

    run(main())


def test_a_command_that_cannot_start_is_refused_naming_it() -> None:
    async def main() -> None:
        with pytest.raises(ConnectionFailed, match=r"could not start '/no/such/server'"):
            await StdioChannel.start(["/no/such/server"])
        with pytest.raises(ConnectionFailed, match="empty server command"):
            await StdioChannel.start([])

    run(main())


def test_closing_stops_a_server_that_ignores_its_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stdio, "EXIT_GRACE", 0.2)

    async def main() -> int | None:
        stubborn = ("import signal, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                    "print('ready', file=sys.stderr, flush=True)\ntime.sleep(600)\n")
        channel = await StdioChannel.start([sys.executable, "-c", stubborn])
        while "ready" not in channel.stderr_tail:  # SIGTERM is ignored from here on
            await asyncio.sleep(0.01)
        await channel.aclose()
        with pytest.raises(ConnectionFailed, match="the client is closed"):
            await channel.request("echo", None, timeout=30)
        return channel.process.returncode

    assert run(main()) == -9  # stdin closed, SIGTERM ignored: SIGKILL
