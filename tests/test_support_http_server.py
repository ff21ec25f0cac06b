"""The helpers that start servers for the tests must never mistake another process's server for theirs:
two workers (or two suites side by side) share the machine's ports."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from .support.http_server import BLOCK, PORTS, free_port, listens, promptdeck_http
from .support.remote_ui import library


def test_free_ports_are_bindable_outside_the_ephemeral_range_and_not_repeated() -> None:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = [free_port() for _ in range(20)]
    assert len(set(ports)) == 20 and all(port in PORTS and port < low for port in ports)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", ports[-1]))


def test_two_processes_never_hand_out_the_same_port() -> None:
    """Each claims a block of its own for as long as it lives: a second suite beside this one, or another
    worker, draws from elsewhere."""
    mine = free_port()
    code = "from tests.support.http_server import free_port; print(*(free_port() for _ in range(3)))"
    root = Path(__file__).parent.parent
    theirs = [int(port) for port in subprocess.run([sys.executable, "-c", code], cwd=root, check=True,
                                                    capture_output=True, text=True).stdout.split()]
    block = (mine - PORTS.start) // BLOCK
    assert len(theirs) == 3 and all((port - PORTS.start) // BLOCK != block for port in theirs), (mine, theirs)


def test_listens_tells_the_process_holding_a_port_from_any_other() -> None:
    port = free_port()
    code = ("import socket, sys; s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen();"
            "print('up', flush=True); sys.stdin.read()")
    child = subprocess.Popen([sys.executable, "-c", code, str(port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"up\n"
        assert listens(child.pid, port)
        assert not listens(child.pid, free_port())
        with socket.socket() as mine:
            mine.bind(("127.0.0.1", other := free_port()))
            mine.listen()
            assert not listens(child.pid, other)
    finally:
        child.communicate(b"")


class _Healthy(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
        pass


def test_another_servers_healthz_on_the_port_is_not_taken_for_ours(tmp_path: Path) -> None:
    """The CI failure behind this: another worker's server answered /healthz on the port picked for a `ui`
    that had not yet written a line. Ours cannot bind the port, so it must be reported as not started."""
    foreign = ThreadingHTTPServer(("127.0.0.1", free_port()), _Healthy)
    threading.Thread(target=foreign.serve_forever, daemon=True).start()
    try:
        with pytest.raises(RuntimeError, match="did not start.*already in use"):
            with promptdeck_http("serve", str(library(tmp_path / "prompts")), "--http", "{host}:{port}",
                                 port=foreign.server_address[1]):
                pass
    finally:
        foreign.shutdown()
        foreign.server_close()
