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

from tests.support.http_server import free_port

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


def _post(base: str, body: dict[str, Any], version: str) -> dict[str, Any]:
    headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": version}
    if version == MODERN:
        meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "attack", "version": "1"}}
        body = {**body, "params": {**body.get("params", {}), "_meta": meta}}
        headers["mcp-method"] = body["method"]
        headers["mcp-name"] = body["params"].get("name", "")
    answer = httpx.post(base + "/mcp", json=body, headers=headers, timeout=60)
    text = answer.text
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
    return json.loads(text)  # type: ignore[no-any-return]


def _stateless_get(base: str, name: str, version: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
    if version == LEGACY:
        headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": LEGACY}
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}}}
        opened = httpx.post(base + "/mcp", json=init, headers=headers, timeout=30)
        session = opened.headers.get("mcp-session-id")
        if session:
            headers["mcp-session-id"] = session
            httpx.post(base + "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                       headers=headers, timeout=30)
        body = {"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
                "params": {"name": name, "arguments": arguments or {}}}
        answer = httpx.post(base + "/mcp", json=body, headers=headers, timeout=60)
        text = answer.text
        if answer.headers.get("content-type", "").startswith("text/event-stream"):
            text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
        return json.loads(text)  # type: ignore[no-any-return]
    return _post(base, {"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
                        "params": {"name": name, "arguments": arguments or {}}}, version)


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


def _stdio(script: tuple[Path, Path], lines: list[bytes]) -> tuple[list[dict[str, Any]], str, int]:
    path, library = script
    done = subprocess.run([sys.executable, str(path), "stdio", "0", str(library)], input=b"".join(lines),
                          capture_output=True, timeout=120)
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr.decode(), done.returncode


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


INIT = _line({"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}}})


def test_over_stdio_every_failure_is_answered_and_serving_goes_on(script: tuple[Path, Path]) -> None:
    names = ["leave", "interrupt", "leave_async", "sleeper", "hang", "huge", "spin", "fine"]
    lines = [INIT, _line({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    lines += [_line({"jsonrpc": "2.0", "id": i, "method": "prompts/get", "params": {"name": name}})
              for i, name in enumerate(names, 1)]
    messages, stderr, code = _stdio(script, lines)
    by_id = {m["id"]: m for m in messages if "id" in m}
    assert code == 0, stderr
    for i, name in enumerate(names[:-1], 1):
        assert by_id[i]["error"]["code"] == -32603, (name, by_id.get(i))
    assert by_id[len(names)]["result"]["messages"][0]["content"]["text"] == "Hello you"
    assert "never awaited" not in stderr


def test_a_100_mb_stdio_line_gets_one_error(script: tuple[Path, Path]) -> None:
    huge = b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"' + b"a" * (100 * 1024 * 1024) + b'"}}\n'
    messages, stderr, code = _stdio(script, [INIT, huge, _line({"jsonrpc": "2.0", "id": 2, "method": "ping"})])
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
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    lines = [INIT, _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
             _line({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": get}),
             _line({"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {**get, "_meta": meta}})]
    done = subprocess.run([sys.executable, "-m", "promptdeck", "serve", str(script[1]), "--no-watch"],
                          input=b"".join(lines), capture_output=True, timeout=120)
    by_id = {m["id"]: m for m in map(json.loads, done.stdout.splitlines()) if "id" in m}
    log = done.stderr.decode()
    assert done.returncode == 0, log
    assert by_id[1]["error"] == by_id[2]["error"] == {"code": -32603, "message": "Internal error"}
    for request in (1, 2):
        assert f"request {request} (prompts/get) failed: prompt 'divide': ZeroDivisionError" in log, log
