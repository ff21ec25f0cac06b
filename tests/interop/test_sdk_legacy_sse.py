"""The official MCP Python SDK's 2024-11-05 HTTP+SSE client (``mcp.client.sse``) drives the old
transport promptdeck serves on ``/sse`` and ``/messages``, beside Streamable HTTP on ``/mcp``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import anyio
import httpx
import mcp.client.session as sdk_session
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.shared.exceptions import MCPError

from tests.support.flag import Flag, setter_for
from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES, copy_examples

pytestmark = pytest.mark.slow

Handler = Any


@asynccontextmanager
async def connect_sse(url: str, revision: str, handler: Handler = None) -> AsyncIterator[tuple[Any, Any]]:
    with mock.patch.object(sdk_session, "LATEST_HANDSHAKE_VERSION", revision):
        async with sse_client(url, timeout=10, sse_read_timeout=30) as (read, write):
            async with ClientSession(read, write, message_handler=handler) as session:
                yield session, await session.initialize()


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26"])
def test_old_clients_list_get_and_complete(revision: str) -> None:
    async def run(url: str) -> None:
        async with connect_sse(url, revision) as (session, result):
            assert result.protocol_version == revision
            assert {p.name for p in (await session.list_prompts()).prompts} == set(EXAMPLE_ARGS)
            summary = await session.get_prompt("summarize", {"text": "sse still works"})
            assert any("sse still works" in getattr(m.content, "text", "") for m in summary.messages)
            done = await session.complete(types.PromptReference(type="ref/prompt", name="code-review"),
                                          {"name": "language", "value": "py"})
            assert done.completion.values == ["python"]
            with pytest.raises(MCPError) as err:
                await session.get_prompt("no-such-prompt", {})
            assert err.value.error.code == -32602
            await session.send_ping()

    with http_server(str(EXAMPLES), "--no-watch") as endpoint:
        anyio.run(run, endpoint.removesuffix("/mcp") + "/sse")


def test_list_changed_reaches_old_clients(tmp_path: Path) -> None:
    library = copy_examples(tmp_path / "library")
    changed = Flag()
    on_message = setter_for(types.PromptListChangedNotification, changed)

    async def run(url: str) -> None:
        async with connect_sse(url, "2024-11-05", on_message) as (session, _):
            await session.list_prompts()
            await anyio.sleep(0.3)  # let the watcher settle before the edit
            (library / "fresh.md").write_text("---\ndescription: Added while serving\n---\nHello!\n")
            with anyio.fail_after(10):
                await changed.wait()
            assert "fresh" in {p.name for p in (await session.list_prompts()).prompts}

    with http_server(str(library)) as endpoint:
        anyio.run(run, endpoint.removesuffix("/mcp") + "/sse")


def test_sessions_end_with_their_stream_and_belong_to_it() -> None:
    with http_server(str(EXAMPLES), "--no-watch") as endpoint:
        base = endpoint.removesuffix("/mcp")
        with httpx.Client(timeout=10) as client:
            assert client.post(f"{base}/messages", json={}).status_code == 400  # no session_id
            unknown = client.post(f"{base}/messages?session_id=nope", json={"jsonrpc": "2.0", "method": "x"})
            assert unknown.status_code == 404
            assert client.get(f"{base}/sse", headers={"accept": "application/json"}).status_code == 406
            assert client.post(f"{base}/sse").status_code == 405
            with client.stream("GET", f"{base}/sse", headers={"accept": "text/event-stream"}) as stream:
                lines = stream.iter_lines()
                assert next(lines) == "event: endpoint"
                post_to = next(lines).removeprefix("data: ")
                assert post_to.startswith("/messages?session_id=")
                wrong_type = client.post(base + post_to, content=b"{}", headers={"content-type": "text/plain"})
                assert wrong_type.status_code == 415
                accepted = client.post(base + post_to, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
                assert accepted.status_code == 202
                # Before initialize, ping is still answered, on the stream.
                assert next(line for line in lines if line.startswith("data:")).endswith('"result":{}}')
            # The stream is gone, and so is its session.
            for _ in range(100):
                gone = client.post(base + post_to, json={"jsonrpc": "2.0", "id": 2, "method": "ping"})
                if gone.status_code == 404:
                    break
                time.sleep(0.05)  # the server notices the closed stream on its next read
            assert gone.status_code == 404
