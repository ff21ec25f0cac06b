"""``promptdeck ls URL`` against a hostile server (issue 13, item 13).

Each server here is a real socket that answers the client's first request with
something endless: headers, a reason phrase, one event-stream line, one event,
or a trickle. The real ``promptdeck`` command runs held to 1 GiB of address
space; it must end with one clear line on stderr, not grow until it is killed.
"""

from __future__ import annotations

import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

LIMIT_BYTES = 1024**3
SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"
CHUNK = b"x" * 65536

Talk = Callable[[socket.socket], None]


def _endless(prefix: bytes, unit: bytes) -> Talk:
    def talk(conn: socket.socket) -> None:
        conn.sendall(prefix)
        while True:
            conn.sendall(unit)

    return talk


def _trickle(conn: socket.socket) -> None:
    conn.sendall(SSE_HEAD + b": keep reading\n")
    while True:
        conn.sendall(b"\n")  # an empty line: a valid, empty event stream that never ends
        time.sleep(0.2)


ATTACKS: dict[str, Talk] = {
    "endless headers": _endless(b"HTTP/1.1 200 OK\r\n", b"x-filler: " + CHUNK[:1000] + b"\r\n"),
    "one endless header": _endless(b"HTTP/1.1 200 OK\r\nx-filler: ", CHUNK),
    "endless reason phrase": _endless(b"HTTP/1.1 200 ", CHUNK),
    "endless event-stream line": _endless(SSE_HEAD + b"data: ", CHUNK),
    "endless event": _endless(SSE_HEAD, b"data: " + CHUNK[:1000] + b"\n"),
    "endless comment": _endless(SSE_HEAD + b": ", CHUNK),
    "a trickle": _trickle,
}


@contextmanager
def hostile(talk: Talk) -> Iterator[str]:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            threading.Thread(target=_answer, args=(conn, talk), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/mcp"
    finally:
        stop.set()
        thread.join(5)
        server.close()


def _answer(conn: socket.socket, talk: Talk) -> None:
    with conn:
        try:
            conn.recv(65536)  # the request: whatever it is, the answer is the attack
            talk(conn)
        except OSError:
            pass  # the client hung up: that is the point


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_the_client_ends_with_one_clear_line(attack: str) -> None:
    with hostile(ATTACKS[attack]) as url:
        done = subprocess.run([sys.executable, "-m", "promptdeck", "ls", url, "--timeout", "3"],
                              capture_output=True, text=True, timeout=120, preexec_fn=_limited)
    assert done.returncode == 1, (done.returncode, done.stderr[-1000:])
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("promptdeck: "), done.stderr[-2000:]
    assert done.stdout == ""
