"""The official MCP Python SDK client and a composed prompt served over stdio while its parts are edited (issue
31): a partial's edit shows in the next ``prompts/get`` of every prompt using it, a composed prompt's edit in
the prompt composing it, and ``list_changed`` comes for a changed listing only. Every message is validated
against the revision's schema (``log``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from tests.support.flag import Flag
from tests.support.libraries import COMPOSED_ARGS, composed_library
from tests.support.sdk_stdio import connect

#: the newest legacy revision: the edit behaves alike in each (test_sdk_stdio covers the revisions)
REVISION = "2025-11-25"


@pytest.fixture
def revision() -> str:
    return REVISION


def test_edits_to_parts_show_in_their_users_through_the_sdk(log: Path, tmp_path: Path) -> None:
    library = composed_library(tmp_path / "library")
    changed = Flag()
    notified: list[object] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            notified.append(message)
            changed.set()

    async def text(session: Any, name: str, arguments: dict[str, str]) -> str:
        got = await session.get_prompt(name, arguments)
        return "\n".join(m.content.text for m in got.messages if isinstance(m.content, types.TextContent))

    async def until(session: Any, wanted: str) -> str:
        with anyio.fail_after(10):
            while wanted not in (got := await text(session, "review", COMPOSED_ARGS)):
                await anyio.sleep(0.1)
        return got

    async def run() -> None:
        async with connect([str(library)], REVISION, log, on_message) as (session, _):
            assert (await text(session, "review", COMPOSED_ARGS)).startswith("House rules.\nBe blunt, and keep")
            await anyio.sleep(0.6)  # the watcher is watching
            (library / "_partials/tone.md").write_text("Be {{ tone }}; one line.\n")
            assert "House rules.\nBe blunt; one line." in await until(session, "one line")
            (library / "few-shot.md").write_text((library / "few-shot.md").read_text().replace("x=1", "y=2"))
            assert "Review this python: y=2" in await until(session, "y=2")
            assert notified == []  # no listing changed: no list_changed
            (library / "rules.md").write_text((library / "rules.md").read_text().replace("The house", "Our house"))
            with anyio.fail_after(10):
                await changed.wait()
            listed = {p.name: p.description for p in (await session.list_prompts()).prompts}
            assert listed["rules"] == "Our house rules"

    anyio.run(run)
