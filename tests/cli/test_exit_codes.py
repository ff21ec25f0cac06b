"""One exit-code convention for the commands that run until stopped (docs/cli.md, "Exit codes"): serve over
stdio and HTTP, watch and ui end with 0 and nothing more said on Ctrl-C (SIGINT, as a terminal sends it)
and on SIGTERM. Real processes, real signals."""

from __future__ import annotations

import queue
import shlex
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from tests.support.http_server import free_port
from tests.support.libraries import EXAMPLES

PROMPTDECK = [sys.executable, "-m", "promptdeck"]


def _as_in_a_terminal() -> None:
    """In the child: SIGINT as a terminal delivers it (a suite run in the background inherits it ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _started(args: list[str], ready: str) -> subprocess.Popen[str]:
    """The command, once a line of its stderr holds ``ready``."""
    process = subprocess.Popen([*PROMPTDECK, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_as_in_a_terminal)
    assert process.stderr is not None
    lines: queue.Queue[str] = queue.Queue()
    stderr = process.stderr

    def read() -> None:  # until ``ready``: the rest is read by ``communicate``
        for line in iter(stderr.readline, ""):
            lines.put(line)
            if ready in line:
                return
        lines.put("")

    threading.Thread(target=read, daemon=True).start()
    seen = ""
    while ready not in seen:
        try:
            line = lines.get(timeout=30)
        except queue.Empty:
            line = ""
        if not line:
            process.kill()
            process.communicate()
            raise AssertionError(f"no {ready!r} in {seen!r}")
        seen += line
    return process


def _stopped(process: subprocess.Popen[str], how: signal.Signals) -> tuple[int, str]:
    try:
        process.send_signal(how)
        _, rest = process.communicate(timeout=30)
        return process.returncode, rest
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_serve_http_stops_quietly_with_0(how: signal.Signals) -> None:
    port = free_port()
    process = _started(["serve", str(EXAMPLES), "--http", str(port)], "web page")
    assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
    code, rest = _stopped(process, how)
    assert code == 0
    assert "Aborted" not in rest and "Traceback" not in rest and "Error" not in rest, rest


def test_serve_http_names_its_web_page_on_start() -> None:
    port = free_port()
    process = _started(["serve", str(EXAMPLES), "--http", str(port)], f"web page: http://127.0.0.1:{port}/ ")
    code, rest = _stopped(process, signal.SIGTERM)
    assert code == 0
    process = subprocess.Popen([*PROMPTDECK, "serve", str(EXAMPLES), "--http", str(port), "--no-ui"],
                               stderr=subprocess.PIPE, text=True, preexec_fn=_as_in_a_terminal)
    assert process.stderr is not None
    first = process.stderr.readline()
    assert f"serving 11 prompts on http://127.0.0.1:{port}/mcp" in first
    process.terminate()
    _, rest = process.communicate(timeout=30)
    assert "web page" not in rest and process.returncode == 0


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_serve_stdio_stops_quietly_with_0(how: signal.Signals, tmp_path: Path) -> None:
    init = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",' \
           b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
    process = subprocess.Popen([*PROMPTDECK, "serve", str(EXAMPLES)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, preexec_fn=_as_in_a_terminal)
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(init)
        process.stdin.flush()
        assert b'"result"' in process.stdout.readline()  # serving, watcher and all
        process.send_signal(how)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert b"Traceback" not in stderr and b"Aborted" not in stderr, stderr


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_watch_stops_quietly_with_0(how: signal.Signals) -> None:
    target = shlex.join([*PROMPTDECK, "serve", str(EXAMPLES)])
    process = _started(["watch", target], "watching for changes")
    code, rest = _stopped(process, how)
    assert code == 0 and "Traceback" not in rest, rest
