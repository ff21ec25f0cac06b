"""A server written with promptdeck's Python API, driven by the official SDK client over stdio."""

from __future__ import annotations

import sys

import anyio
import mcp_types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.libraries import REPO


def test_python_prompts_and_folder_on_one_server() -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(REPO / "examples" / "python_server.py")])

    async def run() -> None:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.instructions and "slash command" in init.instructions
                names = {p.name for p in (await session.list_prompts()).prompts}
                assert {"incident_summary", "handover", "code-review"} <= names
                summary = await session.get_prompt("incident_summary", {"service": "checkout", "minutes": "45"})
                assert [m.role for m in summary.messages] == ["user", "assistant"]
                assert "checkout" in summary.messages[0].content.text
                assert "45 minutes" in summary.messages[0].content.text
                handover = await session.get_prompt("handover", {"team": "search", "topic": "reindexing"})
                assert "search team" in handover.messages[0].content.text
                done = await session.complete(types.PromptReference(type="ref/prompt", name="handover"),
                                              {"name": "team", "value": "p"})
                assert done.completion.values == ["payments", "platform"]

    anyio.run(run)
