"""``promptdeck serve`` as a real subprocess, spoken to with raw bytes over its pipes."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from promptdeck import PromptServer, RenderContext
from promptdeck.server.stdio import StdioConnection, _Output
from tests.support.http_rpc import init
from tests.support.libraries import EXAMPLES
from tests.support.modern import exchange, legacy, notification, stdio_line

INIT = stdio_line(init("2025-03-26"))
INITIALIZED = stdio_line(notification("notifications/initialized"))


def test_stdout_carries_only_json_rpc_and_garbage_is_answered() -> None:
    lines = [INIT, INITIALIZED, b"this is not json\n", b"\n", b'{"jsonrpc":"2.0","id":1}\n',
             b'{"jsonrpc":"1.0","id":2,"method":"ping"}\n', b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n',
             b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n', b"\xff\xfe\n",
             stdio_line(legacy(4, "prompts/get", {"name": "summarize", "arguments": {"text": "hi"}}))]
    messages, _stderr, code = exchange(lines, str(EXAMPLES), "--no-watch")
    assert code == 0
    assert [m.get("id") for m in messages] == [0, None, 1, 2, 3, None, None, 4]
    assert messages[1]["error"]["code"] == -32700
    assert messages[2]["error"]["code"] == -32600
    assert messages[3]["error"]["code"] == -32600
    assert messages[4]["result"] == {}
    assert messages[5]["error"]["code"] == -32600
    assert messages[6]["error"]["code"] == -32700
    assert messages[7]["result"]["messages"]


def test_batch_in_a_2025_03_26_session_over_stdio() -> None:
    batch = b"[" + stdio_line(legacy(1, "ping")).strip() + b"," + stdio_line(legacy(2, "prompts/list")).strip() + b"]\n"
    messages, _, _ = exchange([INIT, INITIALIZED, batch], str(EXAMPLES), "--no-watch")
    assert isinstance(messages[1], list)
    assert {m["id"] for m in messages[1]} == {1, 2}


def test_pipelined_requests_all_answered_in_order() -> None:
    gets = [stdio_line(legacy(i, "prompts/get", {"name": "summarize", "arguments": {"text": f"n{i}"}}))
            for i in range(1, 501)]
    messages, _, code = exchange([INIT, INITIALIZED, *gets], str(EXAMPLES), "--no-watch")
    assert code == 0
    assert [m["id"] for m in messages] == list(range(0, 501))
    assert all("result" in m for m in messages)


def test_oversized_line_is_refused_and_serving_continues(monkeypatch: Any) -> None:
    huge = b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"' + b"x" * (17 * 1024 * 1024) + b'"}}\n'
    ping = stdio_line(legacy(10, "ping"))
    messages, _, _ = exchange([INIT, INITIALIZED, huge, ping], str(EXAMPLES), "--no-watch", timeout=60)
    assert messages[1]["error"]["code"] == -32600 and "longer than" in messages[1]["error"]["message"]
    assert messages[-1] == {"jsonrpc": "2.0", "id": 10, "result": {}}


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    messages, stderr, code = exchange([], str(tmp_path / "nowhere"))
    assert code != 0 and messages == []
    assert "nowhere" in stderr


def test_bad_file_is_logged_and_the_rest_is_served(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("Hello\n")
    (tmp_path / "bad.md").write_text("---\narguments: 5\n---\nx\n")
    listing = stdio_line(legacy(1, "prompts/list"))
    messages, stderr, code = exchange([INIT, INITIALIZED, listing], str(tmp_path), "--no-watch")
    assert code == 0
    assert [p["name"] for p in messages[1]["result"]["prompts"]] == ["good"]
    assert "bad.md:2: arguments must be a list" in stderr


def test_an_unknown_prompt_name_gets_did_you_mean_in_its_error() -> None:
    """prompts/get and completion/complete name close prompts in the -32602's message and data; over the
    tools (--tools), tools/call does too."""
    get = stdio_line(legacy(1, "prompts/get", {"name": "sumarize"}))
    complete = stdio_line(legacy(2, "completion/complete", {"ref": {"type": "ref/prompt", "name": "code_review"},
                                                            "argument": {"name": "focus", "value": ""}}))
    call = stdio_line(legacy(3, "tools/call", {"name": "get_prompt", "arguments": {"name": "Summarise"}}))
    messages, _stderr, code = exchange([INIT, INITIALIZED, get, complete, call], str(EXAMPLES), "--no-watch",
                                         "--tools", "--tools-per-prompt", "0")
    assert code == 0
    got, completed, called = messages[1:]
    assert got["error"] == {"code": -32602, "message": "unknown prompt 'sumarize'; did you mean 'summarize'?",
                            "data": {"prompt": "sumarize", "suggestions": ["summarize"]}}
    assert completed["error"]["data"] == {"prompt": "code_review", "suggestions": ["code-review"]}
    assert called["result"]["isError"] is True
    assert "unknown prompt 'Summarise'; did you mean 'summarize'?" in called["result"]["content"][0]["text"]


def test_a_related_message_sent_after_its_frame_was_answered_sends_that_frame_once() -> None:
    """An async prompt's progress leaves from the runner's thread once ``feed`` has written the frame's other
    answers: it once wrote them a second time (here the ping's), outside the output lock."""
    server = PromptServer("t")

    @server.prompt()
    async def slow(ctx: RenderContext) -> str:
        ctx.progress(1, 2, "half")
        return "done"

    read_end, write_end = os.pipe()
    connection = StdioConnection(server, _Output(write_end, threading.RLock()))
    connection.feed(INIT)
    get = {"jsonrpc": "2.0", "id": 2, "method": "prompts/get",
           "params": {"name": "slow", "_meta": {"progressToken": 7}}}
    connection.feed(stdio_line(legacy(1, "ping")) + stdio_line(get))
    connection.finish()
    loop = connection.runner.loop
    assert loop is not None
    while loop.is_running():  # drained and told to stop: its thread ends at once
        time.sleep(0.01)
    loop.close()
    os.close(write_end)
    with os.fdopen(read_end, "rb") as out:
        messages = [json.loads(line) for line in out.read().splitlines()]
    assert [m.get("id", m.get("method")) for m in messages] == [0, 1, "notifications/progress", 2]
