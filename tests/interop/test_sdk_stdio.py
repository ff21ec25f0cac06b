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
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES, copy_examples
from tests.support.schema import schema_available, schema_missing_reason
from tests.support.traffic import read_log, validate_traffic

from .sdk import REVISIONS, connect

pytestmark = pytest.mark.slow


@pytest.fixture(params=REVISIONS)
def revision(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def log(tmp_path: Path, revision: str) -> Any:
    path = tmp_path / "traffic.log"
    yield path
    if not schema_available(revision):
        pytest.skip(schema_missing_reason(revision))
    assert validate_traffic(path, revision) > 0


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
            seen: list[str] = []
            cursor: str | None = None
            pages = 0
            while True:
                page = await session.list_prompts(params=types.PaginatedRequestParams(cursor=cursor))
                pages += 1
                seen.extend(p.name for p in page.prompts)
                cursor = page.next_cursor
                if cursor is None:
                    break
            assert seen == names
            assert pages == 11  # 1,050 prompts at the default 100 a page

    anyio.run(run)


def test_get_every_example_prompt(revision: str, log: Path) -> None:
    async def run() -> None:
        async with connect([str(EXAMPLES)], revision, log) as (session, _):
            listed = {p.name for p in (await session.list_prompts()).prompts}
            assert listed == set(EXAMPLE_ARGS)
            for name, arguments in sorted(EXAMPLE_ARGS.items()):
                if name == "standup.transcribe" and revision == "2024-11-05":
                    # Audio does not exist before 2025-03-26: a generic internal error, details in the log.
                    with pytest.raises(MCPError) as err:
                        await session.get_prompt(name, arguments)
                    assert err.value.error.code == -32603
                    continue
                result = await session.get_prompt(name, arguments)
                assert result.messages, name
                for value in arguments.values():
                    if not value.startswith("_material/"):
                        assert any(value in _text_of(m.content) for m in result.messages), (name, value)

    anyio.run(run)


def _text_of(content: Any) -> str:
    if content.type == "text":
        return str(content.text)
    if content.type == "resource" and hasattr(content.resource, "text"):
        return str(content.resource.text)
    return ""


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
            ref = types.PromptReference(type="ref/prompt", name="code-review")
            done = await session.complete(ref, {"name": "language", "value": "py"})
            assert done.completion.values == ["python"]
            assert done.completion.total == 1 and done.completion.has_more is False
            files = await session.complete(types.PromptReference(type="ref/prompt", name="write-tests"),
                                           {"name": "source", "value": "_material/s"})
            assert "_material/service.py" in files.completion.values

    anyio.run(run)


def test_error_codes(revision: str, log: Path) -> None:
    async def run() -> None:
        async with connect([str(EXAMPLES)], revision, log) as (session, _):
            with pytest.raises(MCPError) as err:
                await session.get_prompt("no-such-prompt", {})
            assert err.value.error.code == -32602 and "no-such-prompt" in err.value.error.message
            with pytest.raises(MCPError) as err:
                await session.get_prompt("code-review", {})
            assert err.value.error.code == -32602 and "'code'" in err.value.error.message
            with pytest.raises(MCPError) as err:
                await session.get_prompt("code-review", {"code": "x", "strictness": "eleven"})
            assert err.value.error.code == -32602 and "strictness" in err.value.error.message
            with pytest.raises(MCPError) as err:
                await session.get_prompt("code-review", {"code": "x", "colour": "red"})
            assert err.value.error.code == -32602 and "colour" in err.value.error.message
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

