"""Listing: every page of a 5,000-prompt library, the 2026-07-28 ttlMs cache, and list_changed invalidating it.

Requests are counted on the wire: the stdio server runs behind the recorder, which logs each line."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from promptdeck.client import Client, Era, ListChange, connect
from promptdeck.protocol.errors import ProtocolViolation
from tests.support.client_servers import eventually, recorded, run, serve
from tests.support.http_server import http_server
from tests.support.libraries import write_prompts

from .conftest import BIG, PAGE


def lines(log: Path, mark: str, method: str) -> int:
    """How many messages with ``method`` went ``>`` to or came ``<`` from the server."""
    if not log.exists():
        return 0
    count = 0
    for raw in log.read_text().splitlines():
        if raw.startswith(mark + " ") and json.loads(raw[2:]).get("method") == method:
            count += 1
    return count


def listings(log: Path) -> int:
    return lines(log, ">", "prompts/list")


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_every_page_of_5000_prompts_in_order(era: Era, big_library: tuple[Path, list[str]], tmp_path: Path) -> None:
    root, names = big_library
    log = tmp_path / "traffic.log"
    seen: list[tuple[int, int]] = []
    pages = -(-BIG // PAGE)

    async def scenario() -> None:
        argv = recorded(log, serve(root, "--page-size", str(PAGE), "--no-watch"))
        async with connect(argv, era=era) as client:
            prompts = await client.list_prompts(progress=lambda count, page: seen.append((count, page)))
            assert [prompt.name for prompt in prompts] == names
            assert all(prompt.arguments[0].name == "topic" and prompt.arguments[0].required for prompt in prompts)

    run(scenario())
    assert seen == [(min(page * PAGE, BIG), page) for page in range(1, pages + 1)]
    assert listings(log) == pages
    sent = [json.loads(raw[2:]) for raw in log.read_text().splitlines() if raw.startswith("> ")]
    cursors = [message.get("params", {}).get("cursor") for message in sent if message.get("method") == "prompts/list"]
    assert cursors[0] is None and len(set(cursors[1:])) == pages - 1 and None not in cursors[1:]


def test_every_page_over_http(big_library: tuple[Path, list[str]]) -> None:
    root, names = big_library
    seen: list[int] = []

    async def scenario(url: str) -> None:
        async with connect(url) as client:
            assert client.era == "modern"
            prompts = await client.list_prompts(progress=lambda count, page: seen.append(page))
            assert [prompt.name for prompt in prompts] == names

    # Fewer, bigger pages than over stdio: each HTTP page is a request of its own (the run stays quick).
    with http_server(str(root), "--page-size", "250", "--no-watch", "--stateless", "--json-response") as url:
        run(scenario(url))
    assert seen == list(range(1, BIG // 250 + 1))


# -- ttlMs ------------------------------------------------------------------------------------------


@pytest.fixture
def small(tmp_path: Path) -> Path:
    root = tmp_path / "library"
    write_prompts(root, 12, per_folder=100)
    return root


@pytest.mark.parametrize(("ttl", "era", "cached"), [("600000", "auto", True), ("0", "auto", False),
                                                     ("600000", "legacy", False)])
def test_a_fresh_modern_listing_is_reused(ttl: str, era: Era, cached: bool, small: Path, tmp_path: Path) -> None:
    """Modern listings are kept while ttlMs says they are fresh; a legacy listing has no ttlMs."""
    log = tmp_path / "traffic.log"

    async def scenario() -> None:
        argv = recorded(log, serve(small, "--page-size", "5", "--list-ttl", ttl, "--no-watch"))
        async with connect(argv, era=era) as client:
            first = await client.list_prompts()
            assert listings(log) == 3 and len(first) == 12
            again = await client.list_prompts()
            assert again == first
            assert listings(log) == (3 if cached else 6)
            await client.list_prompts(refresh=True)
            assert listings(log) == (6 if cached else 9)

    run(scenario())


def test_list_changed_makes_the_cached_listing_stale(small: Path, tmp_path: Path) -> None:
    """A change announced on a subscription invalidates the ttlMs cache, even before the watcher reads it."""
    log = tmp_path / "traffic.log"
    changes: list[ListChange] = []

    async def watching(client: Client) -> None:
        async with contextlib.aclosing(client.watch()) as stream:
            async for change in stream:
                changes.append(change)
                await asyncio.Event().wait()  # read no further: the next change stays queued

    async def scenario() -> None:
        async with connect(recorded(log, serve(small, "--list-ttl", "600000")), era="modern") as client:
            watcher = asyncio.ensure_future(watching(client))
            await eventually(lambda: client.prompts is not None, "the watcher's first listing")
            (small / "first.md").write_text("First added prompt\n")
            await eventually(lambda: bool(changes), "the first change")
            assert changes[0].added == ("first",)
            counted = listings(log)
            assert "first" in {prompt.name for prompt in await client.list_prompts()}
            assert listings(log) == counted  # the watcher's refresh is fresh for ttlMs
            (small / "second.md").write_text("Second added prompt\n")
            await eventually(lambda: lines(log, "<", "notifications/prompts/list_changed") == 2,
                             "the second list_changed")
            names = {prompt.name for prompt in await client.list_prompts()}
            assert "second" in names and listings(log) == counted + 1
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)

    run(scenario())


def test_max_pages_stops_a_listing_that_is_too_long(small: Path) -> None:
    async def scenario() -> None:
        async with connect(serve(small, "--page-size", "2", "--no-watch"), max_pages=3) as client:
            with pytest.raises(ProtocolViolation, match="after 3"):
                await client.list_prompts()
            assert client.prompts is None
            # The connection itself is fine: only the listing was given up.
            assert (await client.get_prompt("set000.p00000", topic="x")).messages

    run(scenario())


def test_progress_is_told_once_for_a_single_page(small: Path) -> None:
    calls: list[Any] = []

    async def scenario() -> None:
        async with connect(serve(small, "--no-watch")) as client:
            await client.list_prompts(progress=lambda count, page: calls.append((count, page)))

    run(scenario())
    assert calls == [(12, 1)]
