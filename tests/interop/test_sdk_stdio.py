"""The official MCP Python SDK client drives ``promptdeck serve`` as a real subprocess, per revision.

Every server message of every session is recorded and validated against the
official JSON schema of the negotiated revision, unknown fields included.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from tests.support.flag import Flag
from tests.support.interop_checks import all_pages, check_argument_errors, check_completions, check_examples_render
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES, copy_examples
from tests.support.sdk_stdio import REVISIONS, connect
from tests.support.traffic import read_log

pytestmark = pytest.mark.slow


@pytest.fixture(params=REVISIONS)
def revision(request: pytest.FixtureRequest) -> str:
    return str(request.param)



def test_initialize_negotiates_each_revision(revision: str, log: Path) -> None:
    async def run() -> None:
        async with connect([str(EXAMPLES)], revision, log) as (_session, result):
            assert result.protocol_version == revision
            assert result.capabilities.prompts is not None and result.capabilities.prompts.list_changed
            assert result.capabilities.logging is not None
            # 2024-11-05 has no completions capability flag; later revisions declare it.
            assert (result.capabilities.completions is not None) == (revision != "2024-11-05")
            await _session.send_ping()

    anyio.run(run)


def test_list_walks_more_than_1000_prompts(revision: str, log: Path, big_library: tuple[Path, list[str]]) -> None:
    root, names = big_library

    async def run() -> None:
        async with connect([str(root), "--no-watch"], revision, log) as (session, _):
            pages = await all_pages(
                lambda cursor: session.list_prompts(params=types.PaginatedRequestParams(cursor=cursor)))
            assert [p.name for page in pages for p in page.prompts] == names
            assert len(pages) == 11  # 1,050 prompts at the default 100 a page

    anyio.run(run)


def test_get_every_example_prompt(revision: str, log: Path) -> None:
    async def run() -> None:
        async with connect([str(EXAMPLES)], revision, log) as (session, _):
            listed = {p.name for p in (await session.list_prompts()).prompts}
            assert listed == set(EXAMPLE_ARGS)
            if revision == "2024-11-05":
                # Audio does not exist before 2025-03-26: a generic internal error, details in the log.
                with pytest.raises(MCPError) as err:
                    await session.get_prompt("standup.transcribe", EXAMPLE_ARGS["standup.transcribe"])
                assert err.value.error.code == -32603
            await check_examples_render(session.get_prompt,
                                        skip={"standup.transcribe"} if revision == "2024-11-05" else ())

    anyio.run(run)


def test_content_blocks_per_revision(revision: str, log: Path) -> None:
    async def run() -> None:
        async with connect([str(EXAMPLES)], revision, log) as (session, _):
            image = await session.get_prompt("describe-image", {})
            blocks = [m.content for m in image.messages]
            pictures = [b for b in blocks if b.type == "image"]
            assert pictures and pictures[0].mime_type == "image/png"
            assert base64.b64decode(pictures[0].data).startswith(b"\x89PNG")
            analysis = await session.get_prompt("project-analysis", {})
            kinds = [m.content.type for m in analysis.messages]
            assert "resource" in kinds
            # resource_link exists from 2025-06-18; older sessions get the link as text.
            assert ("resource_link" in kinds) == (revision >= "2025-06-18")
            if revision >= "2025-03-26":
                audio = await session.get_prompt("standup.transcribe", {})
                sound = [m.content for m in audio.messages if m.content.type == "audio"]
                assert sound and base64.b64decode(sound[0].data).startswith(b"RIFF")

    anyio.run(run)


def test_completion(revision: str, log: Path) -> None:
    async def run() -> None:
        async with connect([str(EXAMPLES)], revision, log) as (session, _):
            await check_completions(session.complete)

    anyio.run(run)


def test_error_codes(revision: str, log: Path) -> None:
    async def run() -> None:
        async with connect([str(EXAMPLES)], revision, log) as (session, _):
            await check_argument_errors(session.get_prompt)
            with pytest.raises(MCPError) as err:
                await session.list_prompts(params=types.PaginatedRequestParams(cursor="not-a-cursor"))
            assert err.value.error.code == -32602
            with pytest.raises(MCPError) as err:
                await session.list_tools()
            assert err.value.error.code == -32601
            # The server kept serving through all of that.
            assert (await session.get_prompt("code-review", {"code": "x"})).messages

    anyio.run(run)


def test_list_changed_after_file_edit(revision: str, log: Path, tmp_path: Path) -> None:
    library = copy_examples(tmp_path / "library")
    changed = Flag()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            changed.set()

    async def run() -> None:
        async with connect([str(library)], revision, log, on_message) as (session, _):
            before = {p.name for p in (await session.list_prompts()).prompts}
            await anyio.sleep(0.3)  # let the watcher settle before the edit
            (library / "fresh.md").write_text("---\ndescription: Added while serving\n---\nHello!\n")
            with anyio.fail_after(10):
                await changed.wait()
            after = {p.name for p in (await session.list_prompts()).prompts}
            assert after == before | {"fresh"}
            # A file that stops parsing keeps its last good version.
            changed_again = (library / "fresh.md")
            changed_again.write_text("---\ndescription: [unclosed\n---\nHello!\n")
            await anyio.sleep(1.0)
            assert "fresh" in {p.name for p in (await session.list_prompts()).prompts}
            assert (await session.get_prompt("fresh", {})).messages[0].content.text == "Hello!"
            # Deleting the file removes its prompt, and says so.
            changed.clear()
            (library / "fresh.md").unlink()
            with anyio.fail_after(10):
                await changed.wait()
            assert {p.name for p in (await session.list_prompts()).prompts} == before

    anyio.run(run)
    sent, received = read_log(log)
    assert any(m.get("method") == "notifications/prompts/list_changed" for m in received)

