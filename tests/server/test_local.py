"""The in-process client (server/local.py): one legacy session on the real request path, initialized for the
revision asked, answering requests as the wire would, errors included, and keeping what the server says on
its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdeck.server.app import PromptServer
from promptdeck.server.local import LocalClient


@pytest.fixture
def server(tmp_path: Path) -> PromptServer:
    (tmp_path / "greet.md").write_text("---\narguments:\n  - {name: who, required: true}\n---\nHello {{ who }}!\n")
    served = PromptServer("local-test")
    served.add_folder(str(tmp_path))
    return served


def test_the_session_is_initialized_for_the_revision_asked(server: PromptServer) -> None:
    client = LocalClient(server, "2024-11-05")
    result = client.initialize["result"]
    assert result["protocolVersion"] == "2024-11-05" and result["serverInfo"]["name"] == "local-test"
    assert client.initialize["id"] == 1


def test_requests_are_answered_as_on_the_wire(server: PromptServer) -> None:
    client = LocalClient(server, "2025-06-18")
    listed = client.request("prompts/list")
    assert [p["name"] for p in listed["result"]["prompts"]] == ["greet"]
    got = client.request("prompts/get", {"name": "greet", "arguments": {"who": "ann"}})
    assert got["result"]["messages"] == [{"role": "user", "content": {"type": "text", "text": "Hello ann!"}}]
    assert got["id"] == 3  # each request its own id, after initialize's


def test_errors_come_back_as_error_objects(server: PromptServer) -> None:
    client = LocalClient(server, "2025-06-18")
    missing = client.request("prompts/get", {"name": "greet"})
    assert missing["error"]["code"] == -32602 and "who" in missing["error"]["message"]
    assert client.request("no/such/method")["error"]["code"] == -32601


def test_notifications_from_the_server_are_kept(server: PromptServer, tmp_path: Path) -> None:
    client = LocalClient(server, "2025-06-18")
    assert client.notifications == []
    added = tmp_path / "new.md"
    added.write_text("new\n")
    assert server.reload_paths([str(added)])
    assert client.notifications == [{"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}]
