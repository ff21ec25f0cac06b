"""2025-era Streamable HTTP sessions outlive the replica that began them (issue 41): real ``serve --store``
processes on SQLite and PostgreSQL, the official SDK client, a replica restarted on its port, two replicas
behind a round-robin proxy without stickiness."""

from __future__ import annotations

import logging
from contextlib import ExitStack
from pathlib import Path

import anyio
import mcp_types as types
import pytest

from promptdeck.sources.store.database import Store
from tests.support.flag import Flag, setter_for
from tests.support.http_server import free_port, http_server
from tests.support.round_robin import round_robin
from tests.support.sdk_http import connect_http
from tests.support.stores import publish_texts

pytestmark = pytest.mark.slow

GREET = "---\ndescription: Say hello\n---\nHello, version {n}!\n"
#: Long enough for the SDK client, which tries a dropped GET stream twice, to outlast a restart on a loaded machine.
RETRY = "10"


def publish(url: str, n: int) -> None:
    """Put greet at version ``n`` on the label production (the label moves)."""
    with Store(url, create=True) as store:
        publish_texts(store, "production", {"greet.md": GREET.format(n=n)}, message=f"version {n}")


async def greeting(session: object) -> str:
    result = await session.get_prompt("greet", {})  # type: ignore[attr-defined]
    text = result.messages[0].content.text
    assert isinstance(text, str)
    return text


def across_a_restart(store_url: str, revision: str, tmp_path: Path, *, moved_while_down: bool) -> None:
    """An SDK client reads greet at version 1; its replica restarts on its port; the label moves (while the
    replica is down, or once the new process has taken up the session); the client is told, and reads version 2."""
    publish(store_url, 1)
    port = free_port()
    second = tmp_path / "second.log"
    options = ("--store", store_url, "--label", "production", "--stream-retry", RETRY, "-v")
    changed = Flag()
    stack = ExitStack()

    async def run() -> None:
        async with connect_http(url, revision, tmp_path / "traffic.log",
                                setter_for(types.PromptListChangedNotification, changed)) as (session, _):
            assert await greeting(session) == "Hello, version 1!"
            await anyio.sleep(0.5)  # the GET stream is open
            # The replica stops (its graceful stop ends the client's GET stream) and starts again on its port.
            await anyio.to_thread.run_sync(stack.close)
            if moved_while_down:
                publish(store_url, 2)  # the new process never sees this move happen
                changed.clear()
            await anyio.to_thread.run_sync(lambda: stack.enter_context(
                http_server("", *options, log=second, port=port)))
            if not moved_while_down:
                # The client's GET stream comes back to the new process (the client sends nothing else), which
                # takes up the session from its id and tells it the list may have changed, not knowing what the
                # old one sent. That one is not what this test waits for.
                with anyio.fail_after(60):
                    await changed.wait()
                assert "session taken up from its id" in second.read_text()
                changed.clear()
                publish(store_url, 2)  # seen by the new process's follower
            with anyio.fail_after(60):
                await changed.wait()
            assert await greeting(session) == "Hello, version 2!"

    url = stack.enter_context(http_server("", *options, log=tmp_path / "first.log", port=port))
    try:
        anyio.run(run)
    finally:
        stack.close()
    assert "session refused" not in second.read_text()


@pytest.mark.parametrize("revision", ["2025-11-25", "2025-03-26"])
def test_an_sdk_session_lives_through_a_restart_of_its_replica(store_url: str, revision: str, tmp_path: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="mcp"):
        across_a_restart(store_url, revision, tmp_path, moved_while_down=False)
    # The client ended its session with DELETE, answered by the new process: no "Session termination failed".
    assert not [r for r in caplog.records if r.name.startswith("mcp")], [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize("revision", ["2025-11-25", "2025-03-26"])
def test_a_label_moved_while_the_replica_was_down_is_told_on_reconnect(store_url: str, revision: str,
                                                                       tmp_path: Path) -> None:
    """The process that saw nothing of the move (it started after it) still tells the client the list changed."""
    across_a_restart(store_url, revision, tmp_path, moved_while_down=True)


def test_a_session_is_served_by_two_replicas_without_stickiness(store_url: str, tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    publish(store_url, 1)
    options = ("--store", store_url, "--label", "production", "-v")
    changed = Flag()

    async def run(url: str) -> None:
        async with connect_http(url, "2025-11-25", tmp_path / "traffic.log",
                                setter_for(types.PromptListChangedNotification, changed)) as (session, _):
            for _ in range(4):
                assert await greeting(session) == "Hello, version 1!"
                assert [p.name for p in (await session.list_prompts()).prompts] == ["greet"]
            await anyio.sleep(1)
            changed.clear()
            publish(store_url, 2)
            with anyio.fail_after(60):
                await changed.wait()
            # The replica that told the client has followed the move; the other may be a moment behind (a SQLite
            # store is read four times a second): soon every answer, from both, is the new version.
            with anyio.fail_after(30):
                streak = 0
                while streak < 4:
                    streak = streak + 1 if await greeting(session) == "Hello, version 2!" else 0

    with http_server("", *options, log=tmp_path / "a.log") as a, \
            http_server("", *options, log=tmp_path / "b.log") as b, round_robin([a, b]) as proxy:
        with caplog.at_level(logging.WARNING, logger="mcp"):
            anyio.run(run, proxy.url)
    # No error reached the client, nor its DELETE at the end (answered by whichever replica it reached).
    assert not [r for r in caplog.records if r.name.startswith("mcp")], [r.getMessage() for r in caplog.records]
    posts = {index for method, index in proxy.served if method == "POST"}
    assert posts == {0, 1}, proxy.served  # both replicas answered the session's requests
    for name in ("a.log", "b.log"):
        text = (tmp_path / name).read_text()
        assert "session refused" not in text and "Traceback" not in text, text
    # Each replica took up the session the other began (or both took it up from the first one's id).
    assert "session taken up from its id" in (tmp_path / "a.log").read_text() + (tmp_path / "b.log").read_text()

