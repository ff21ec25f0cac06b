"""Starting real servers for the client's tests, and waiting on them without timing assertions."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from promptdeck.client import Client, connect
from promptdeck.client.http import HttpChannel
from tests.support.http_server import free_port

HERE = Path(__file__).resolve().parent
#: The small servers the client's tests run (scripts, each started as a process).
SERVERS = HERE.parent / "client" / "servers"
REPO = HERE.parents[1]
PEERS = REPO / "tests" / "peers"
EVERYTHING = PEERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
RECORDER = REPO / "tests" / "support" / "recorder.py"
PYTHON = sys.executable
#: How long anything may take before a test gives up: generous, CI machines are shared and slow.
DEADLINE = 30.0

T = TypeVar("T")
E = TypeVar("E", bound=BaseException)


def run(work: Awaitable[T], deadline: float = 60.0) -> T:
    """Run a test's coroutine; a hang fails the test instead of the whole run."""

    async def bounded() -> T:
        return await asyncio.wait_for(work, deadline)

    return asyncio.run(bounded())


async def eventually(check: Callable[[], bool], what: str, deadline: float = DEADLINE) -> None:
    """Poll ``check`` until it holds; fail with ``what`` if it never does."""
    end = time.monotonic() + deadline
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting: {what}")
        await asyncio.sleep(0.02)


async def refused(kind: type[E], match: str, target: str | Sequence[str], **options: Any) -> E:
    """Connecting to ``target`` fails with ``kind``, its message matching ``match``; returns the error.

    ``timeout`` defaults to DEADLINE: an error other than RequestTimeout then also proves no hang."""
    options.setdefault("timeout", DEADLINE)
    with pytest.raises(kind, match=match) as raised:
        async with connect(target, **options):
            pass
    return raised.value


async def forget_session(client: Client) -> str:
    """End the client's legacy HTTP session behind its back (a DELETE of our own), as a server restart
    or a session timeout would; returns the old session id."""
    channel = client._channel
    assert isinstance(channel, HttpChannel) and channel.session_id is not None
    session = channel.session_id
    async with httpx.AsyncClient() as http:
        response = await http.delete(channel.url, headers={"mcp-session-id": session,
                                                           "mcp-protocol-version": client.protocol_version})
    assert response.status_code in (200, 202, 204), response
    return session


async def check_new_session(client: Client, expired: str, requests: int = 5) -> None:
    """Requests after the server forgot the session all succeed, on one new session."""
    listings = await asyncio.gather(*(client.list_prompts(refresh=True) for _ in range(requests)))
    assert all(listing == listings[0] and listing for listing in listings)
    channel = client._channel
    assert isinstance(channel, HttpChannel) and channel.session_id not in (None, expired)


def serve(folder: Path | str, *options: str) -> list[str]:
    """The command line of a stdio ``promptdeck serve``."""
    return [PYTHON, "-m", "promptdeck", "serve", str(folder), *options]


def recorded(log: Path, argv: Sequence[str]) -> list[str]:
    """``argv`` behind the recorder, which appends every line both ways to ``log`` (``> `` ours, ``< `` its)."""
    return [PYTHON, str(RECORDER), str(log), "--", *argv]


def script(name: str, *args: str) -> list[str]:
    """A server script of ``tests/client/servers``, run by this Python."""
    return [PYTHON, str(SERVERS / name), *args]


def node() -> str:
    """The node binary for the reference server, or skip (fail in CI) without it."""
    binary = shutil.which("node")
    if binary is None or not EVERYTHING.exists():
        reason = f"needs node and {EVERYTHING} (run `make node`)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return binary


def _accepting(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@contextmanager
def listening(argv: Sequence[str], port: int, *,
              env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """Run a server process until it accepts connections on 127.0.0.1:``port``; stop it on exit."""
    process = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=None if env is None else {**os.environ, **env},
                               start_new_session=True)
    try:
        end = time.monotonic() + DEADLINE
        while not _accepting(port):
            if process.poll() is not None or time.monotonic() > end:
                process.kill()
                _, stderr = process.communicate()
                raise RuntimeError(f"{argv[:3]} did not listen on {port}: {stderr.decode(errors='replace')[-2000:]}")
            time.sleep(0.05)
        yield process
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group (a server may have children), then SIGKILL if it lingers."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        except ProcessLookupError:
            pass
    if process.stderr is not None:
        process.stderr.close()


@contextmanager
def http_peer(argv_for: Callable[[int], Sequence[str]], path: str = "/mcp",
              env_for: Callable[[int], dict[str, str]] | None = None) -> Iterator[str]:
    """A server that takes its port on the command line (or in its environment); yields its URL."""
    port = free_port()
    with listening(argv_for(port), port, env=None if env_for is None else env_for(port)):
        yield f"http://127.0.0.1:{port}{path}"
