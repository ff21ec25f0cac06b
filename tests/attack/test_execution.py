"""Prompts that misbehave while rendering (issue 13, items 3 and 12, and the 100 MB stdio line).

A Python prompt may raise anything, ``SystemExit`` included, sleep, hang, or return
far too much; a template may loop. Each must cost its own request an error naming
the prompt, and nothing else: the server process lives on, other requests (and
``/healthz``) are answered meanwhile, and nothing is written twice.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import modern
from tests.support.http_rpc import init, start_session
from tests.support.http_server import free_port
from tests.support.modern import (
    CLIENT_INFO_KEY,
    Message,
    answers,
    by_id,
    exchange,
    get_prompt,
    legacy,
    notification,
    post,
    stdio_line,
)

SERVER = '''
import asyncio, sys, time
from promptdeck import PromptServer

server = PromptServer("attack", prompt_seconds=1.5)
server.add_folder(sys.argv[3])

@server.prompt()
def leave() -> str:
    raise SystemExit(3)

@server.prompt()
def interrupt() -> str:
    raise KeyboardInterrupt

@server.prompt()
async def leave_async() -> str:
    raise SystemExit(4)

@server.prompt()
def sleeper() -> str:
    time.sleep(4)
    return "slept"

@server.prompt()
async def hang() -> str:
    await asyncio.sleep(3600)
    return "never"

@server.prompt()
def huge() -> str:
    return "x" * (10 * 1024 * 1024)

@server.prompt()
def fine(name: str = "you") -> str:
    return f"Hello {name}"

if sys.argv[1] == "http":
    from promptdeck.server.http.runner import serve as run
    run(server, "127.0.0.1", int(sys.argv[2]))
else:
    server.serve(watch=False)
'''

SPIN = "{% for i in range(10**9) %}{% for j in range(10**9) %}x{% endfor %}{% endfor %}\n"
DIVIDE = "---\narguments:\n  - name: a\n    type: integer\n---\n{{ 10 // a }}\n"
LEGACY = "2025-06-18"
MODERN = "2026-07-28"


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("execution")
    (root / "server.py").write_text(SERVER)
    library = root / "library"
    library.mkdir()
    (library / "spin.md").write_text(SPIN)
    (library / "divide.md").write_text(DIVIDE)
    return root / "server.py", library


def _start(script: tuple[Path, Path], *python: str, stderr: int) -> tuple[str, subprocess.Popen[bytes]]:
    """The script serving HTTP on a free port, once /healthz answers."""
    path, library = script
    port = free_port()
    proc = subprocess.Popen([sys.executable, *python, str(path), "http", str(port), str(library)],
                            stdout=subprocess.DEVNULL, stderr=stderr)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return base, proc
        except httpx.TransportError:
            pass
        assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def http_url(script: tuple[Path, Path]) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    base, proc = _start(script, stderr=subprocess.DEVNULL)
    yield base, proc
    proc.terminate()
    proc.wait(10)


def _stateless_get(base: str, name: str, version: str, arguments: dict[str, str] | None = None) -> Message:
    """A prompts/get of ``name`` in ``version``'s era over HTTP (a legacy one in a session of its own); its answer.

    Kept here: it only picks the era's shared helpers, so each test runs in both eras.
    """
    url = base + "/mcp"
    with httpx.Client(timeout=60) as client:
        if version == MODERN:
            return post(client, url, get_prompt(1, name, arguments or {}))[1]
        headers = start_session(client, url, LEGACY)
        return answers(client.post(url, json=legacy(1, "prompts/get", {"name": name, "arguments": arguments or {}}),
                                   headers=headers))[-1]


@pytest.mark.parametrize("version", [LEGACY, MODERN])
@pytest.mark.parametrize("prompt", ["leave", "interrupt", "leave_async", "huge", "spin"])
def test_a_failing_render_is_an_internal_error_and_the_server_lives(
        http_url: tuple[str, subprocess.Popen[bytes]], prompt: str, version: str) -> None:
    base, proc = http_url
    answer = _stateless_get(base, prompt, version)
    assert answer["error"]["code"] == -32603, answer
    assert proc.poll() is None, "the server process ended"
    fine = _stateless_get(base, "fine", version, {"name": "Ada"})
    assert "Hello Ada" in json.dumps(fine), fine


@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_sleeping_prompts_hold_neither_the_loop_nor_their_request(
        http_url: tuple[str, subprocess.Popen[bytes]], version: str) -> None:
    base, proc = http_url
    results: dict[str, Any] = {}

    def slow(name: str) -> None:
        results[name] = _stateless_get(base, name, version)

    threads = [threading.Thread(target=slow, args=(name,)) for name in ("sleeper", "hang")]
    for thread in threads:
        thread.start()
    time.sleep(0.3)  # let both renders start; no timing is asserted, only order
    health = httpx.get(base + "/healthz", timeout=30)
    answered_first = not any(name in results for name in ("sleeper", "hang"))
    fine = _stateless_get(base, "fine", version)
    for thread in threads:
        thread.join(60)
    assert health.status_code == 200 and answered_first, "the loop waited for a sleeping prompt"
    assert "Hello you" in json.dumps(fine)
    for name in ("sleeper", "hang"):
        assert results[name]["error"]["code"] == -32603, results[name]  # cut off at the render time limit


def test_the_log_names_the_prompt_and_nothing_was_never_awaited(script: tuple[Path, Path]) -> None:
    base, proc = _start(script, "-W", "always", stderr=subprocess.PIPE)
    try:
        for name in ("leave", "hang", "leave_async"):
            assert _stateless_get(base, name, LEGACY)["error"]["code"] == -32603
            assert _stateless_get(base, name, MODERN)["error"]["code"] == -32603
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    log = stderr.decode()
    assert "never awaited" not in log, log
    assert "'leave'" in log and "SystemExit" in log and "'hang'" in log, log
    assert "Traceback" not in log, log


INIT = stdio_line(init(LEGACY))
INITIALIZED = stdio_line(notification("notifications/initialized"))


def test_over_stdio_every_failure_is_answered_and_serving_goes_on(script: tuple[Path, Path]) -> None:
    names = ["leave", "interrupt", "leave_async", "sleeper", "hang", "huge", "spin", "fine"]
    lines = [INIT, INITIALIZED]
    lines += [stdio_line(legacy(i, "prompts/get", {"name": name})) for i, name in enumerate(names, 1)]
    messages, stderr, code = exchange(lines, "stdio", "0", str(script[1]), command=(sys.executable, str(script[0])))
    answered = by_id(messages)
    assert code == 0, stderr
    for i, name in enumerate(names[:-1], 1):
        assert answered[i]["error"]["code"] == -32603, (name, answered.get(i))
    assert answered[len(names)]["result"]["messages"][0]["content"]["text"] == "Hello you"
    assert "never awaited" not in stderr


def test_a_100_mb_stdio_line_gets_one_error(script: tuple[Path, Path]) -> None:
    huge = b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"' + b"a" * (100 * 1024 * 1024) + b'"}}\n'
    messages, stderr, code = exchange([INIT, huge, stdio_line(legacy(2, "ping"))], "stdio", "0", str(script[1]),
                                      command=(sys.executable, str(script[0])))
    errors = [m for m in messages if "error" in m]
    assert len(errors) == 1 and errors[0]["error"]["code"] == -32600, messages
    assert any(m.get("id") == 2 and m.get("result") == {} for m in messages)
    assert code == 0, stderr


def test_a_failed_render_is_logged_in_both_eras_on_both_transports(script: tuple[Path, Path]) -> None:
    """Issue 14: the details of an internal error go to the server's log in every era and on every
    transport, and never to the client."""
    base, proc = _start(script, stderr=subprocess.PIPE)
    try:
        for version in (LEGACY, MODERN):
            answer = _stateless_get(base, "divide", version, {"a": "0"})
            assert answer["error"] == {"code": -32603, "message": "Internal error"}, answer
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    http_log = [line for line in stderr.decode().splitlines() if "ZeroDivisionError" in line]
    assert len(http_log) == 2 and all("prompt 'divide'" in line for line in http_log), stderr.decode()

    get = {"name": "divide", "arguments": {"a": "0"}}
    fewest = modern.request(2, "prompts/get", get, omit=[CLIENT_INFO_KEY])  # a modern request of the fewest fields
    lines = [INIT, INITIALIZED, stdio_line(legacy(1, "prompts/get", get)), stdio_line(fewest)]
    messages, log, code = exchange(lines, str(script[1]), "--no-watch")
    answered = by_id(messages)
    assert code == 0, log
    assert answered[1]["error"] == answered[2]["error"] == {"code": -32603, "message": "Internal error"}
    for request in (1, 2):
        assert f"request {request} (prompts/get) failed: prompt 'divide': ZeroDivisionError" in log, log
