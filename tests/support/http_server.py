"""Start ``promptdeck serve --http`` or ``promptdeck ui`` as a real process on a free loopback port."""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx

#: How long a server may take to answer /healthz before it is taken to hang (see ``promptdeck_http``).
START_DEADLINE = 90


#: Where ``free_port`` looks: below the kernel's ephemeral range (32768 and up), which ``bind(0)`` and every outgoing
#: connection draw from. A port picked from there, or by chance by two processes, can be handed to another
#: worker's server (or a second suite's) in the second before this one's binds it: issue 39's CI runs saw both
#: another's /healthz answering for a server that never started and "the port is already in use". So each test
#: process claims a block of this range for as long as it lives (a lock that ends with it, however it ends) and
#: hands out only that block's ports, in turn: no two live processes share a port.
PORTS = range(20000, 32000)
BLOCK = 400
_LOCKS = Path(tempfile.gettempdir()) / "promptdeck-test-ports"
_claimed: list[tuple[range, IO[str]]] = []
_cursor = 0


def _block() -> range:
    """This process's block of ports, claimed on first use."""
    if not _claimed:
        _LOCKS.mkdir(exist_ok=True)
        for start in range(PORTS.start, PORTS.stop, BLOCK):
            handle = (_LOCKS / str(start)).open("a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            _claimed.append((range(start, start + BLOCK), handle))  # the handle holds the lock until exit
            break
        else:
            raise RuntimeError(f"every block of ports in {PORTS} is claimed by another test process")
    return _claimed[0][0]


def free_port() -> int:
    """A loopback port nothing listens on, from this process's own block, never the same twice in a row."""
    global _cursor
    ports = _block()
    for _ in range(len(ports)):
        port = ports[_cursor % len(ports)]
        _cursor += 1
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:  # a server of this process's still holds it
                continue
            return port
    raise RuntimeError(f"no free loopback port in {ports}")


def listens(pid: int, port: int) -> bool:
    """Does process ``pid`` (or a child of it: a server's workers) hold the socket listening on ``port``?
    Read from /proc, so that an answer from another process on that port is told apart from this one's."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(f"socket:[{fields[9]}]")
    pids, seen = [pid], set()
    while pids:
        current = pids.pop()
        seen.add(current)
        try:
            held = {os.readlink(f"/proc/{current}/fd/{fd}") for fd in os.listdir(f"/proc/{current}/fd")}
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:  # it exited, or an fd closed while being read
            continue
        if held & inodes:
            return True
        pids += [int(child) for child in children if int(child) not in seen]
    return False


def stop(proc: subprocess.Popen[bytes], grace: float = 10) -> None:
    """SIGTERM (the server's graceful stop), then SIGKILL if it has not exited within ``grace`` seconds."""
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def http_server(folder: str, *options: str, log: Path | None = None, port: int | None = None) -> Iterator[str]:
    """Yields the MCP endpoint URL; the server is stopped on exit. With ``log``, stderr goes to that file;
    with ``port``, it listens there (a server started again where clients knew it)."""
    # An empty ``folder``: the options say what to serve (``--store URL``).
    with promptdeck_http("serve", *([folder] if folder else []), "--http", "{host}:{port}", *options,
                         log=log, port=port) as endpoint:
        yield endpoint


#: The page token ``ui_server`` gives ``promptdeck ui`` (through $PROMPTDECK_UI_TOKEN).
UI_TOKEN = "ui-test-token-0123456789"


@contextmanager
def ui_server(target: str, *options: str, log: Path | None = None) -> Iterator[str]:
    """``promptdeck ui TARGET --no-open`` on a free port; yields its MCP endpoint URL (the page is beside it)."""
    with promptdeck_http("ui", target, "--no-open", "--port", "{port}", *options, log=log,
                         env={"PROMPTDECK_UI_TOKEN": UI_TOKEN}) as endpoint:
        yield endpoint


@contextmanager
def promptdeck_http(*arguments: str, log: Path | None = None, env: dict[str, str] | None = None,
                    port: int | None = None, started: list[subprocess.Popen[bytes]] | None = None) -> Iterator[str]:
    """``promptdeck ARGUMENTS`` (``{host}`` and ``{port}`` filled in) as a process, once its /healthz answers;
    the process is appended to ``started`` (for a test that signals it itself)."""
    port = port or free_port()
    sink = log.open("wb") if log is not None else subprocess.PIPE
    command = [argument.replace("{host}", "127.0.0.1").replace("{port}", str(port)) for argument in arguments]
    proc = subprocess.Popen([sys.executable, "-m", "promptdeck", *command], stdout=subprocess.DEVNULL, stderr=sink,
                            env={**os.environ, **(env or {})})
    if started is not None:
        started.append(proc)
    try:
        # Waits for /healthz or the process's exit, whichever comes first. The deadline only guards against a
        # hang: it is past the client's own request timeout (30 s), after which a `ui` whose TARGET never
        # answers exits by itself, so a server slow to start on a loaded machine (the SDK's takes over 10 s
        # there) is waited for rather than declared dead (issue 38).
        deadline = time.monotonic() + START_DEADLINE
        while True:
            try:
                if (httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
                        and listens(proc.pid, port)):
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()  # a server stuck while starting would otherwise keep stderr open forever
                proc.wait()
                stderr = proc.stderr.read().decode() if proc.stderr else log.read_text() if log else ""
                raise RuntimeError(f"promptdeck {arguments[0]} did not start: {stderr}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)
        if proc.stderr is not None:
            proc.stderr.close()
        if log is not None:
            sink.close()  # type: ignore[union-attr]
