"""The official MCP Python SDK reads the files prompts send, as resources, from ``promptdeck serve``: a real
process over stdio and over Streamable HTTP, per revision, and at 2026-07-28 with ``mcp.Client``.

It lists them, reads a text file and a binary one, lists the templates, subscribes and hears a changed
file (``notifications/resources/updated``) and a new one (``list_changed``). Every server message is
recorded and validated against the official schema of its revision (the ``log`` and ``modern`` fixtures).
"""

from __future__ import annotations

import base64
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from tests.interop import sdk_resources as resources_suite
from tests.support.http_server import http_server
from tests.support.libraries import copy_examples
from tests.support.sdk_http import connect_http
from tests.support.sdk_stdio import connect
from tests.support.traffic import read_log

from .sdk_modern import Recorded, check_modern, sdk_client, serving

# The revisions and transports (fixtures) and the listener of notifications, shared with the skills suite.
revision, transport, modern_transport = resources_suite.revision, resources_suite.transport, \
    resources_suite.modern_transport
Heard = resources_suite.Heard

pytestmark = pytest.mark.slow

DEADLINE = 20
LOG = "promptdeck:///_material/app.log"
DIAGRAM = "promptdeck:///_material/diagram.png"
NEW = "promptdeck:///_material/new.txt"
#: The example library's material, every file of which a prompt may send (write-tests' path argument).
MATERIAL = ["CHANGELOG.txt", "app.log", "architecture.txt", "debugging-checklist.md", "diagram.png", "service.py",
            "standup.wav"]
SKILL_FILES = ["skill://changelog/SKILL.md", "skill://changelog/references/style.md"]


@pytest.fixture
def library(tmp_path: Path) -> Path:
    return copy_examples(tmp_path / "library")


def test_legacy_clients_list_read_and_follow(transport: str, revision: str, log: Path, library: Path) -> None:
    heard = Heard()

    async def run(session: Any, result: Any) -> None:
        capability = result.capabilities.resources
        assert capability is not None and capability.subscribe and capability.list_changed
        everything = (await session.list_resources()).resources
        # The example skill's files are resources too (skill://, after promptdeck:/// in URI order).
        assert [str(r.uri) for r in everything if str(r.uri).startswith("skill://")] == SKILL_FILES
        listed = [r for r in everything if str(r.uri).startswith("promptdeck:")]
        assert [str(r.uri) for r in listed] == [f"promptdeck:///_material/{name}" for name in MATERIAL]
        assert listed[1].mime_type == "text/plain" and listed[1].size == (library / "_material/app.log").stat().st_size
        text = (await session.read_resource(LOG)).contents[0]
        assert isinstance(text, types.TextResourceContents)
        assert text.text == (library / "_material/app.log").read_text()
        blob = (await session.read_resource(DIAGRAM)).contents[0]
        assert isinstance(blob, types.BlobResourceContents) and blob.mime_type == "image/png"
        assert base64.b64decode(blob.blob) == (library / "_material/diagram.png").read_bytes()
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["promptdeck:///{+path}"]
        with pytest.raises(MCPError) as caught:
            await session.read_resource("promptdeck:///.env")
        assert caught.value.error.code == -32602 and caught.value.error.message.startswith("Resource not found")
        with warnings.catch_warnings():
            # The SDK marks resources/subscribe deprecated (it is gone from 2026-07-28); these revisions have it.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await session.subscribe_resource(LOG)
        await anyio.sleep(0.5)  # let the watcher settle before the edit
        with (library / "_material/app.log").open("a") as log_file:
            log_file.write("2025-06-03T15:00:00.000Z INFO  orders.main     one more line\n")
        with anyio.fail_after(DEADLINE):
            await heard.updates.wait()
        assert heard.updated[0] == LOG
        (library / "_material/new.txt").write_text("new material\n")
        with anyio.fail_after(DEADLINE):
            await heard.list_changed.wait()
        assert NEW in [str(r.uri) for r in (await session.list_resources()).resources]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await session.unsubscribe_resource(LOG)

    async def main(url: str | None) -> None:
        if url is None:
            async with connect([str(library)], revision, log, heard) as (session, result):
                await run(session, result)
        else:
            async with connect_http(url, revision, log, heard) as (session, result):
                await run(session, result)

    if transport == "stdio":
        anyio.run(main, None)
    else:
        with http_server(str(library)) as url:
            anyio.run(main, url)
    _, received = read_log(log)
    assert {"notifications/resources/updated", "notifications/resources/list_changed"} <= \
        {m.get("method") for m in received}


@pytest.fixture
def modern(tmp_path: Path) -> Iterator[Recorded]:
    recorded = Recorded(tmp_path / "modern.log")
    yield recorded
    check_modern(recorded)


def test_2026_clients_read_and_listen(modern_transport: str, modern: Recorded, library: Path) -> None:
    async def run(target: str | list[str]) -> None:
        async with sdk_client(target, modern, mode="2026-07-28") as client:
            listed = (await client.list_resources()).resources
            assert LOG in [str(r.uri) for r in listed]
            text = (await client.read_resource(LOG)).contents[0]
            assert isinstance(text, types.TextResourceContents) and text.text.startswith("2025-06-03")
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["promptdeck:///{+path}"]
            with pytest.raises(MCPError) as caught:
                await client.read_resource("promptdeck:///%2e%2e/secret")
            assert caught.value.error.code == -32602
            async with client.listen(resources_list_changed=True, resource_subscriptions=[LOG]) as subscription:
                assert subscription.honored.resources_list_changed is True
                assert list(subscription.honored.resource_subscriptions or ()) == [LOG]
                await anyio.sleep(0.5)  # let the watcher settle before the edit
                with (library / "_material/app.log").open("a") as log_file:
                    log_file.write("one more line\n")
                with anyio.fail_after(DEADLINE):
                    event = await anext(subscription)
                assert isinstance(event, ResourceUpdated) and event.uri == LOG
                (library / "_material/new.txt").write_text("new material\n")
                with anyio.fail_after(DEADLINE):
                    assert isinstance(await anext(subscription), ResourcesListChanged)

    with serving(modern_transport, str(library)) as target:
        anyio.run(run, target)
    for body, headers in modern.posts:
        if body.get("method") == "resources/read":  # the URI travels in Mcp-Name too
            assert headers["mcp-name"] == body["params"]["uri"], (body, headers)
    if modern_transport != "stdio":
        assert any(body.get("method") == "resources/read" for body, _ in modern.posts)
