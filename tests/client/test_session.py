"""A client's view of one server (client/session.py): the era found by probing, prompts listed, rendered and
completed the same in both eras, a list change seen, and a server's answer that breaks the schema or the
rules refused naming the method. The servers are real processes over stdio: promptdeck itself, and
tests/client/servers/bad_stdio.py playing a legacy server that misbehaves on request."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from promptdeck.client import Era, TextContent, connect
from promptdeck.protocol.errors import ConnectionFailed, InvalidParams, ProtocolViolation
from promptdeck.protocol.revisions import LATEST, NEWEST_MODERN
from tests.support.client_servers import run, script

GREET = "---\ndescription: Greets someone\narguments:\n  - {name: who, required: true, enum: [ann, bob]}\n---\n" \
        "Hello {{ who }}!\n"

def serve(folder: Path) -> list[str]:
    return [sys.executable, "-m", "promptdeck", "serve", str(folder), "--no-watch"]


@pytest.fixture
def library(tmp_path: Path) -> Path:
    (tmp_path / "greet.md").write_text(GREET)
    return tmp_path


@pytest.mark.parametrize(("era", "found", "version"), [("auto", "modern", NEWEST_MODERN.version),
                                                       ("legacy", "legacy", LATEST.version)])
def test_both_eras_list_render_and_complete_alike(library: Path, era: Era, found: str, version: str) -> None:
    async def main() -> None:
        async with connect(serve(library), era=era) as client:
            assert (client.era, client.protocol_version) == (found, version)
            [prompt] = await client.list_prompts()
            assert (prompt.name, prompt.description) == ("greet", "Greets someone")
            assert [(a.name, a.required) for a in prompt.arguments] == [("who", True)]
            assert client.prompts == (prompt,)
            rendered = await client.get_prompt("greet", who="ann")
            assert [m.content for m in rendered.messages] == [TextContent(text="Hello ann!")]
            assert (await client.complete("greet", "who", "b")).values == ("bob",)
            with pytest.raises(InvalidParams, match="nope"):
                await client.get_prompt("nope")
            with pytest.raises(InvalidParams, match="who"):
                await client.get_prompt("greet")

    run(main())


def test_a_legacy_server_is_found_by_its_answer_to_discover(tmp_path: Path) -> None:
    legacy = script("bad_stdio.py", "quiet", str(tmp_path / "log"))  # well-behaved, legacy only

    async def main() -> None:
        async with connect(legacy) as client:
            assert client.era == "legacy" and client.server_info == {"name": "bad-quiet", "version": "0"}
            assert [p.name for p in await client.list_prompts()] == ["alpha"]
        with pytest.raises(ConnectionFailed, match="does not speak MCP 2026-07-28"):
            async with connect(legacy, era="modern"):
                pass

    run(main())


@pytest.mark.parametrize(("mode", "says"), [
    ("not-a-list", "prompts/list: the server's result does not fit the MCP schema"),
    ("cursor-loop", "cursor"),
])
def test_a_listing_that_breaks_the_rules_is_refused(tmp_path: Path, mode: str, says: str) -> None:
    async def main() -> None:
        async with connect(script("bad_stdio.py", mode, str(tmp_path / "log"))) as client:
            with pytest.raises(ProtocolViolation, match=says):
                await client.list_prompts()

    run(main())


def test_a_list_change_names_what_was_added_and_removed(tmp_path: Path) -> None:
    (tmp_path / "old.md").write_text("old\n")
    (tmp_path / "kept.md").write_text("kept\n")

    async def poke() -> None:
        """Change the folder until the client hears of it (the subscription may open after a first change)."""
        (tmp_path / "old.md").unlink()
        for n in range(1000):
            (tmp_path / f"new{n}.md").write_text("new\n")
            await asyncio.sleep(0.2)

    async def main() -> None:
        command = [sys.executable, "-m", "promptdeck", "serve", str(tmp_path)]  # watching the folder
        async with connect(command) as client:
            await client.list_prompts()
            changes = client.watch()
            first = asyncio.ensure_future(anext(changes))
            poking = asyncio.ensure_future(poke())
            added: set[str] = set()
            removed: set[str] = set()
            change = await first
            poking.cancel()
            while True:
                added |= set(change.added)
                removed |= set(change.removed)
                if "old" not in {p.name for p in change.prompts}:
                    break
                change = await anext(changes)  # the watcher may report the changes in several batches
            assert removed == {"old"} and added and all(name.startswith("new") for name in added)
            assert "kept" in {p.name for p in change.prompts} and "kept" not in added | removed
            await changes.aclose()

    run(main())


def test_token_and_headers_are_for_http_servers_only() -> None:
    async def main() -> None:
        with pytest.raises(ValueError, match="token, auth and headers are for HTTP servers"):
            async with connect("promptdeck serve .", token="t"):
                pass

    run(main())
