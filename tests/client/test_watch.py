"""watch(): the prompt list changing on a real promptdeck server as its files are edited, in both eras,
over stdio and HTTP (legacy GET stream, modern subscriptions with and without sessions)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest

from promptdeck.client import Era, connect
from promptdeck.client.stdio import StdioChannel
from promptdeck.protocol.errors import ClientError, ConnectionFailed, McpError, ProtocolViolation, RequestTimeout
from tests.support.client_servers import eventually, run, script, serve
from tests.support.http_server import http_server
from tests.support.watching import started, unwatchable

PROMPT = "---\ndescription: {description}\n---\nSay hi.\n"

#: (name, era, how to reach the server for a folder)
WAYS: dict[str, tuple[Era, Callable[[Path], AbstractContextManager[str | list[str]]]]] = {
    "legacy-stdio": ("legacy", lambda root: nullcontext(serve(root))),
    "legacy-http": ("legacy", lambda root: http_server(str(root))),
    "modern-stdio": ("modern", lambda root: nullcontext(serve(root))),
    "modern-http": ("modern", lambda root: http_server(str(root))),
    "modern-stateless": ("modern", lambda root: http_server(str(root), "--stateless")),
}


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "library"
    root.mkdir()
    for name in ("alpha", "beta"):
        (root / f"{name}.md").write_text(PROMPT.format(description=f"The {name} prompt"))
    return root


@pytest.fixture(params=sorted(WAYS))
def way(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_added_changed_and_removed_prompts_are_told(way: str, library: Path) -> None:
    era, reach = WAYS[way]

    async def scenario(target: str | list[str]) -> None:
        async with connect(target, era=era) as client:
            assert client.era == era
            [watcher] = await started(client)
            (library / "gamma.md").write_text(PROMPT.format(description="New"))
            added = await watcher.next_change(0)
            assert (added.added, added.removed, added.changed) == (("gamma",), (), ())
            assert [prompt.name for prompt in added.prompts] == ["alpha", "beta", "gamma"]
            (library / "alpha.md").write_text(PROMPT.format(description="Rewritten"))
            changed = await watcher.next_change(1)
            assert (changed.added, changed.removed, changed.changed) == ((), (), ("alpha",))
            assert changed.prompts[0].description == "Rewritten"
            (library / "beta.md").unlink()
            removed = await watcher.next_change(2)
            assert (removed.added, removed.removed, removed.changed) == ((), ("beta",), ())
            assert client.prompts == removed.prompts
            await watcher.stop()
            # Still a working client after its watch is closed.
            assert [prompt.name for prompt in await client.list_prompts(refresh=True)] == ["alpha", "gamma"]

    with reach(library) as target:
        run(scenario(target))


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_concurrent_watchers_each_see_every_change(era: Era, library: Path) -> None:
    async def scenario() -> None:
        async with connect(serve(library), era=era) as client:
            watchers = await started(client, 3)
            (library / "gamma.md").write_text(PROMPT.format(description="New"))
            for watcher in watchers:
                assert (await watcher.next_change(0)).added == ("gamma",)
            # One watcher leaving does not stop the others.
            await watchers[0].stop()
            (library / "delta.md").write_text(PROMPT.format(description="Newer"))
            for watcher in watchers[1:]:
                assert (await watcher.next_change(1)).added == ("delta",)
            assert len(watchers[0].changes) == 1
            for watcher in watchers[1:]:
                await watcher.stop()

    run(scenario())


def test_two_clients_watch_one_http_server(library: Path) -> None:
    async def scenario(url: str) -> None:
        async with connect(url) as modern, connect(url, era="legacy") as legacy:
            watchers = [*(await started(modern)), *(await started(legacy))]
            (library / "gamma.md").write_text(PROMPT.format(description="New"))
            for watcher in watchers:
                assert (await watcher.next_change(0)).added == ("gamma",)
                await watcher.stop()

    with http_server(str(library)) as url:
        run(scenario(url))


def test_a_server_without_list_changed_cannot_be_watched(tmp_path: Path) -> None:
    assert run(unwatchable(script("bad_stdio.py", "quiet", str(tmp_path / "log")))) == {}


def test_a_stateless_legacy_session_offers_no_list_changed(library: Path) -> None:
    """A stateless server has no stream to announce changes on, so its sessions are not offered them."""
    with http_server(str(library), "--stateless") as url:
        assert run(unwatchable(url, era="legacy")) == {}


@pytest.mark.parametrize(("mode", "error", "said"), [
    ("listen-unknown", McpError, "Method not found: subscriptions/listen"),
    ("listen-silent", RequestTimeout, "subscriptions/listen: no acknowledgement within 1 s"),
    ("listen-declines", ClientError, "did not agree to send prompt list changes"),
    ("listen-ends", ProtocolViolation, "ended before it was acknowledged"),
])
def test_a_subscription_the_server_will_not_hold(mode: str, error: type[Exception], said: str, tmp_path: Path) -> None:
    log = tmp_path / "log"

    async def scenario() -> None:
        async with connect(script("bad_stdio.py", mode, str(log)), timeout=1.0) as client:
            assert client.era == "modern"
            with pytest.raises(error, match=said):
                async for _ in client.watch():
                    pass

    run(scenario())
    sent = [json.loads(line) for line in log.read_text().splitlines()]
    [listen] = [message for message in sent if message.get("method") == "subscriptions/listen"]
    assert listen["params"]["notifications"] == {"promptsListChanged": True}
    cancels = [m["params"]["requestId"] for m in sent if m.get("method") == "notifications/cancelled"]
    # A subscription still open when the watch gives up is cancelled; one the server ended is not.
    assert cancels == ([] if mode in ("listen-unknown", "listen-ends") else [listen["id"]])


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_stdio_server_that_dies_ends_the_watch_with_connection_failed(era: Era, library: Path) -> None:
    async def scenario() -> None:
        async with connect(serve(library), era=era) as client:
            [watcher] = await started(client)
            channel = client._channel
            assert isinstance(channel, StdioChannel)
            channel.process.kill()
            await eventually(watcher.task.done, "the watch to end")
            assert isinstance(watcher.error, ConnectionFailed), watcher.error
            assert "exited" in str(watcher.error)

    run(scenario())


@contextlib.contextmanager
def stopping_server(root: Path) -> Iterator[tuple[str, Callable[[], None]]]:
    """An HTTP server the test may stop early (the context stops it anyway)."""
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(http_server(str(root)))
        yield url, stack.close


def test_a_modern_http_watch_ends_when_the_server_shuts_down(library: Path) -> None:
    async def scenario(url: str, shut_down: Callable[[], None]) -> None:
        async with connect(url) as client:
            [watcher] = await started(client)
            await asyncio.to_thread(shut_down)
            await eventually(watcher.task.done, "the watch to end")
            # promptdeck answers open subscriptions/listen requests as it shuts down: the watch just ends.
            assert watcher.ended and watcher.error is None, watcher.error

    with stopping_server(library) as (url, shut_down):
        run(scenario(url, shut_down))


def test_closing_the_client_ends_its_watches(way: str, library: Path) -> None:
    era, reach = WAYS[way]

    async def scenario(target: str | list[str]) -> None:
        async with connect(target, era=era) as client:
            watchers = await started(client, 2)
        for watcher in watchers:
            await eventually(watcher.task.done, "the watch to end with its client")
            # Said plainly, on every transport; never a CancelledError the watching task did not ask for.
            assert not watcher.task.cancelled()
            assert isinstance(watcher.error, ConnectionFailed) and str(watcher.error) == "the client is closed"

    with reach(library) as target:
        run(scenario(target))
