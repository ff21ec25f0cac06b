"""The legacy session: lifecycle table, batches, progress, cancellation and logging, in memory."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from promptdeck import PromptServer, RenderContext
from promptdeck.protocol import jsonrpc
from promptdeck.protocol.lifecycle import State
from promptdeck.server.legacy import LegacySession
from promptdeck.server.local import LocalClient
from promptdeck.server.outcome import Answer, Pending, assemble
from tests.support.modern import legacy, notification


def make_server() -> PromptServer:
    server = PromptServer("test")

    @server.prompt(description="Greets")
    def greet(name: str, ctx: RenderContext) -> str:
        ctx.progress(1, 2, "half")
        ctx.progress(1, 2, "repeat is dropped")
        ctx.progress(2, 2, "done")
        return f"Hello {name}"

    @server.prompt()
    async def slow(seconds: float = 0.0) -> str:
        await asyncio.sleep(seconds)
        return "finally"

    return server


def call(session: LegacySession, frame: str | object, related: list[bytes] | None = None) -> Any:
    """The answer to one frame: its text as it is, or a message (or a batch of them) sent as JSON."""
    sink = related if related is not None else []
    text = frame if isinstance(frame, str) else json.dumps(frame)
    response = assemble(session.handle_bytes(text.encode(), sink.append))
    assert response is None or isinstance(response, Answer)
    return None if response is None else json.loads(response.data)


INIT = {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def test_requests_before_initialize_get_an_error_but_ping_works() -> None:
    session = LegacySession(make_server(), lambda _: None)
    refused = call(session, legacy(1, "prompts/list"))
    assert refused["error"]["code"] == -32600 and "initialize" in refused["error"]["message"]
    assert call(session, legacy(2, "ping")) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    answer = call(session, legacy(3, "initialize", INIT))
    assert answer["result"]["protocolVersion"] == "2025-03-26"
    assert session.lifecycle.state is State.INITIALIZING
    call(session, '{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert session.lifecycle.state.value == "ready"
    again = call(session, legacy(4, "initialize", INIT))
    assert again["error"]["code"] == -32600


def test_unknown_version_gets_the_newest() -> None:
    client = LocalClient(make_server(), "1999-01-01")
    assert client.initialize["result"]["protocolVersion"] == "2025-11-25"


def test_batches_only_in_2025_03_26() -> None:
    server = make_server()
    session = LegacySession(server, lambda _: None)
    call(session, legacy(1, "initialize", INIT))
    answers = call(session, [legacy(2, "ping"), legacy(3, "prompts/get", {"name": "nope"}),
                                   notification("notifications/initialized")])
    assert [a["id"] for a in answers] == [2, 3]
    assert answers[1]["error"]["code"] == -32602
    assert call(session, "[]")["error"]["code"] == -32600
    modern = LegacySession(server, lambda _: None)
    call(modern, legacy(1, "initialize", dict(INIT, protocolVersion="2025-06-18")))
    refused = call(modern, [legacy(2, "ping")])
    assert refused["error"]["code"] == -32600 and refused["id"] is None


def test_initialize_inside_a_batch_is_refused() -> None:
    session = LegacySession(make_server(), lambda _: None)
    call(session, legacy(1, "initialize", INIT))
    refused = call(session, [legacy(2, "initialize", INIT)])
    assert refused["error"]["code"] == -32600


def test_progress_goes_before_the_response_and_only_increases() -> None:
    client = LocalClient(make_server(), "2025-11-25")
    response = client.request("prompts/get", {"name": "greet", "arguments": {"name": "Ada"},
                                              "_meta": {"progressToken": "tok"}})
    assert response["result"]["messages"][0]["content"]["text"] == "Hello Ada"
    progress = [n["params"] for n in client.notifications if n["method"] == "notifications/progress"]
    assert progress == [{"progressToken": "tok", "progress": 1, "total": 2, "message": "half"},
                        {"progressToken": "tok", "progress": 2, "total": 2, "message": "done"}]


def test_progress_has_no_message_in_2024_11_05() -> None:
    client = LocalClient(make_server(), "2024-11-05")
    client.request("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}, "_meta": {"progressToken": 7}})
    progress = [n["params"] for n in client.notifications if n["method"] == "notifications/progress"]
    assert progress and all("message" not in p for p in progress)


def test_cancelled_request_gets_no_response() -> None:
    async def run() -> None:
        session = LegacySession(make_server(), lambda _: None)
        call(session, legacy(1, "initialize", INIT))
        slow = legacy(2, "prompts/get", {"name": "slow", "arguments": {"seconds": "30"}})
        pending = session.handle_bytes(json.dumps(slow).encode(), lambda _: None)
        assert isinstance(pending, Pending)
        task = asyncio.ensure_future(pending)
        await asyncio.sleep(0.01)
        assert 2 in session.in_flight
        call(session, '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}')
        assert await asyncio.wait_for(task, 2) is None
        assert session.in_flight == {}

    asyncio.run(run())


def test_log_level_controls_log_notifications() -> None:
    sent: list[bytes] = []
    session = LegacySession(make_server(), sent.append)
    call(session, legacy(1, "initialize", INIT))
    session.log_to_client(30, "promptdeck.files", "not asked for yet")
    assert sent == []
    assert call(session, legacy(2, "logging/setLevel", {"level": "loud"}))["error"]["code"] == -32602
    assert call(session, legacy(3, "logging/setLevel", {"level": "warning"}))["result"] == {}
    session.log_to_client(20, "promptdeck.files", "info is below warning")
    session.log_to_client(40, "promptdeck.files", "broken file")
    notes = [json.loads(s) for s in sent]
    assert notes == [{"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "error", "logger": "promptdeck.files", "data": "broken file"}}]


def test_list_changed_reaches_initialized_sessions_only_when_the_list_changes() -> None:
    server = make_server()
    sent: list[bytes] = []
    session = LegacySession(server, sent.append)
    call(session, legacy(1, "initialize", INIT))
    assert server.refresh() is False and sent == []

    @server.prompt()
    def extra() -> str:
        return "x"

    assert [jsonrpc.decode(s).method for s in sent] == ["notifications/prompts/list_changed"]  # type: ignore[union-attr]
    session.close()
    server.refresh()


def test_unexpected_exception_is_a_generic_internal_error(caplog: pytest.LogCaptureFixture) -> None:
    server = PromptServer()

    @server.prompt()
    def broken() -> str:
        raise RuntimeError("boom: details for the log")

    client = LocalClient(server, "2025-11-25")
    response = client.request("prompts/get", {"name": "broken"})
    assert response["error"] == {"code": -32603, "message": "Internal error"}
    assert "boom: details for the log" in caplog.text  # the details are in the server log, not on the wire


def test_a_resumed_session_is_ready_as_its_handshake_made_it_and_told_of_changes() -> None:
    """``resume`` (a Streamable HTTP session taken up on another replica): initialized without a handshake, eliciting
    only where it announces, and listening for list changes like a session that began here."""
    from promptdeck.protocol.revisions import REVISIONS

    server = make_server()
    told: list[bytes] = []
    session = LegacySession(server, told.append)
    session.resume(REVISIONS["2025-06-18"], elicits=True)
    assert session.lifecycle.state is State.READY and session.revision.version == "2025-06-18" and session.elicits
    assert session in server.listeners
    server.prompt(name="fresh", description="new")(lambda: "hi")
    assert [json.loads(m)["method"] for m in told] == ["notifications/prompts/list_changed"]
    assert call(session, legacy(1, "ping"))["result"] == {}
    quiet = LegacySession(server, told.append, announces=False)
    quiet.resume(REVISIONS["2025-06-18"], elicits=True)
    assert not quiet.elicits  # nothing it asks could reach its client
