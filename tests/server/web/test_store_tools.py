"""The store's write tools (``server.web.store_tools``) driven by the official SDK client over stdio, on SQLite and
PostgreSQL: ``serve --store URL --write-tools`` offers them (alone, without ``--tools``) to the local client,
which is trusted with everything; a proposal opens and no label moves. Their schemas say what their structs
take. The HTTP side, with scopes, is tests/attack/test_write_tools.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec
import pytest
from mcp.shared.exceptions import MCPError as SdkError

from promptdeck.server.web.store_tools import TOOLS
from promptdeck.sources.store.database import Store
from tests.support.cli import pd
from tests.support.publishing import GREET, greet_store
from tests.support.sdk_stdio import connect


def test_the_schemas_name_what_the_tools_take() -> None:
    for name, (tool, struct) in TOOLS.items():
        fields = {field.encode_name for field in msgspec.structs.fields(struct)}
        assert set(tool["inputSchema"]["properties"]) == fields, name
        assert set(tool["inputSchema"]["required"]) == {
            field.encode_name for field in msgspec.structs.fields(struct) if field.required}, name
        assert tool["name"] == name and tool["inputSchema"]["additionalProperties"] is False


def test_an_sdk_client_over_stdio_reads_and_proposes(tmp_path: Path, store_url: str) -> None:
    greet_store(tmp_path, store_url)

    async def run() -> None:
        async with connect(["--store", store_url, "--write-tools", "--no-watch"], "2025-11-25",
                           tmp_path / "log") as (session, init):
            assert init.capabilities.tools is not None
            names = [tool.name for tool in (await session.list_tools()).tools]
            assert names == sorted(TOOLS)  # the write tools alone: no --tools, no prompt tools
            versions = await session.call_tool("prompt_versions", {"prompt": "greet"})
            assert not versions.is_error
            assert [v["version"] for v in versions.structured_content["versions"]] == [3, 2, 1]
            proposed = await session.call_tool("propose_change", {"label": "staging", "files": [
                {"prompt": "greet", "text": GREET.format("Howdy"), "base": 3}]})
            assert not proposed.is_error, proposed
            assert proposed.structured_content["files"] == {"greet.md": 4}
            with pytest.raises(SdkError) as wrong:
                await session.call_tool("prompt_diff", {"prompt": "greet", "from": 1})
            assert wrong.value.error.code == -32602 and "required field `to`" in wrong.value.error.message

    asyncio.run(run())
    with Store(store_url) as store:
        assert store.reads.position("production").files == {"greet.md": 1}  # type: ignore[union-attr]
        assert store.reads.position("staging") is None
        [proposal] = store.proposals.find()
        assert (proposal.label, proposal.author, proposal.files, proposal.state) == (
            "staging", "local", {"greet.md": 4}, "open")


def test_without_write_tools_a_store_server_offers_no_tools(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/store.db"
    greet_store(tmp_path, url)

    async def run() -> None:
        async with connect(["--store", url, "--no-watch"], "2025-11-25", tmp_path / "log") as (session, init):
            assert init.capabilities.tools is None
            with pytest.raises(SdkError) as refused:
                await session.list_tools()
            assert refused.value.error.code == -32601

    asyncio.run(run())


def test_write_tools_go_with_a_store(tmp_path: Path) -> None:
    refused = pd("serve", str(tmp_path), "--write-tools", check=False)
    assert refused.returncode == 2 and "--write-tools goes with --store" in refused.stderr, refused
