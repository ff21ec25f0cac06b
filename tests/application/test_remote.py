"""``Prompts`` on an MCP server: rendered through it, with a cache of the last good copy and a fallback folder
for when it cannot be reached, bounded whatever the server does (real server processes throughout)."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from promptdeck import ConnectionFailed, InvalidParams, LibraryError, Prompts, connect
from promptdeck.client.library import BREAKER_FAILURES
from promptdeck.server.http.runner import KEEP_ALIVE_SECONDS
from tests.support.application import MODELLED, SCOPED, in_threads, wait_for
from tests.support.client_servers import http_peer, script
from tests.support.http_server import free_port, http_server
from tests.support.libraries import prompt_folder


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prompt_folder(tmp_path_factory.mktemp("remote-lib"), {"greet.md": MODELLED, "payroll.md": SCOPED})


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[str]:
    with http_server(str(folder)) as url:
        yield url


@pytest.fixture
def fallback(tmp_path: Path) -> Path:
    return prompt_folder(tmp_path / "fallback", {"greet.md": MODELLED.replace("Hello", "Fallback hello")})


def test_a_remote_render_carries_its_model_settings(server: str) -> None:
    with Prompts(server) as prompts:
        rendered = prompts.render("greet", who="Ada")
        assert rendered.text() == "Hello, Ada!" and not rendered.stale and rendered.source == server
        assert rendered.model == {"name": "gpt-4.1-mini", "temperature": 0.2, "max_tokens": 200}
        assert prompts.get("greet").model == rendered.model
        assert [(a["name"], a.get("required")) for a in prompts.get("greet").arguments] == [("who", True)]
        assert prompts.names() == ["greet"]  # payroll is scoped: an anonymous HTTP client does not see it
        with pytest.raises(InvalidParams, match="whom"):
            prompts.render("greet", whom="x")
        with pytest.raises(InvalidParams, match="gret"):
            prompts.render("gret")
        with pytest.raises(InvalidParams, match="argument 'who' must be a string on the wire, got int"):
            prompts.render("greet", who=5)


def test_remote_renders_from_many_threads_and_coroutines(server: str) -> None:
    with Prompts(server) as prompts:
        def work(index: int) -> None:
            for turn in range(20):
                assert prompts.render("greet", who=f"{index}.{turn}").text() == f"Hello, {index}.{turn}!"

        in_threads(8, work)

        async def many() -> list[str]:
            return [r.text() for r in await asyncio.gather(*(prompts.arender("greet", who=str(i)) for i in range(20)))]

        assert asyncio.run(many()) == [f"Hello, {i}!" for i in range(20)]


def test_a_coroutine_renders_on_its_own_loop_over_one_connection(server: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``arender`` runs on the caller's event loop (no thread is started, nothing is handed over), over one
    connection for every render on that loop, which ends with the loop; sync renders, from any thread, share
    another one, on a loop the calling threads run themselves (no thread is started for them either)."""
    from promptdeck.client import session

    connected: list[str] = []
    start = session._start

    async def counted(client: session.Client, *args: Any) -> None:
        connected.append(threading.current_thread().name)
        await start(client, *args)

    monkeypatch.setattr(session, "_start", counted)
    with Prompts(server) as prompts:
        async def renders() -> set[str]:
            loop = asyncio.get_running_loop()
            threads = set()
            for turn in range(10):
                rendered = await prompts.arender("greet", who=str(turn))
                assert rendered.text() == f"Hello, {turn}!" and asyncio.get_running_loop() is loop
                threads.add(threading.current_thread().name)
            done = await asyncio.gather(*(prompts.arender("greet", who=str(i)) for i in range(20)))
            assert [r.text() for r in done] == [f"Hello, {i}!" for i in range(20)]
            return threads

        assert asyncio.run(renders()) == {"MainThread"}
        assert "promptdeck-prompts" not in {thread.name for thread in threading.enumerate()}
        assert connected == ["MainThread"]
        assert asyncio.run(renders()) == {"MainThread"}  # a new loop: its own connection, the last one closed
        assert connected == ["MainThread"] * 2

        def sync(index: int) -> None:
            for turn in range(5):
                assert prompts.render("greet", who=f"{index}.{turn}").text() == f"Hello, {index}.{turn}!"

        in_threads(4, sync)
        sync(4)
        assert len(connected) == 3 and connected[:2] == ["MainThread"] * 2
        assert "promptdeck-prompts" not in {thread.name for thread in threading.enumerate()}


def test_a_render_after_the_server_closed_an_idle_connection_goes_out_on_a_new_one(
        folder: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Between sync renders nobody reads the connection; the server closes it after its keep-alive (5 s). The
    next render must see that before it sends, not fail on the dead connection and be tried again."""
    with http_server(str(folder), "--no-watch") as url, Prompts(url, retries=0) as prompts:
        assert prompts.render("greet", who="first").text() == "Hello, first!"
        time.sleep(KEEP_ALIVE_SECONDS + 1.5)
        with caplog.at_level(logging.INFO, "promptdeck.client"):
            assert prompts.render("greet", who="later").text() == "Hello, later!"
        assert not [r for r in caplog.records if "failed" in r.getMessage()], caplog.text


def test_the_listing_is_not_fetched_per_render(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first render, renders send prompts/get alone: the listing is fresh per its ttlMs, and the
    subscription that follows list changes holds it current meanwhile."""
    from promptdeck.client import session

    sent: list[str] = []
    call = session.Client._call

    async def counted(self: session.Client, method: str, params: dict[str, Any], **options: Any) -> Any:
        sent.append(method)
        return await call(self, method, params, **options)

    monkeypatch.setattr(session.Client, "_call", counted)
    with http_server(str(folder), "--no-watch") as url, Prompts(url) as prompts:
        assert prompts.render("greet", who="first").model is not None
        # The first listing, then the subscription's own (it lists once it is acknowledged). It goes on while the
        # library's loop runs, which for sync callers is while one of their calls waits: here, names().
        wait_for(lambda: prompts.names() == ["greet"] and sent.count("prompts/list") == 2
                 and "subscriptions/listen" in sent, "the subscription")
        for who in range(20):
            assert prompts.render("greet", who=str(who)).model is not None
        assert prompts.names() == ["greet"]
        assert sent.count("prompts/list") == 2 and sent.count("prompts/get") == 21


def test_the_listing_follows_the_servers_list_changes(tmp_path: Path) -> None:
    (tmp_path / "one.md").write_text("One.\n")
    with http_server(str(tmp_path)) as url, Prompts(url) as prompts:
        assert prompts.names() == ["one"]
        (tmp_path / "two.md").write_text("Two.\n")
        wait_for(lambda: prompts.names() == ["one", "two"], "the new prompt to be listed")


def test_a_token_sees_what_it_sees_over_mcp(folder: Path, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("hr:hr-token-0123456789abcdef prompts:hr\nstaff:staff-token-0123456789abcdef\n")

    async def over_mcp(url: str, token: str) -> list[str]:
        async with connect(url, token=token) as client:
            return sorted(p.name for p in await client.list_prompts())

    with http_server(str(folder), "--no-watch", "--token-file", str(tokens)) as url:
        for token in ("hr-token-0123456789abcdef", "staff-token-0123456789abcdef"):
            with Prompts(url, token=token) as prompts:
                assert prompts.names() == asyncio.run(over_mcp(url, token))
        with Prompts(url, token="staff-token-0123456789abcdef") as staff:
            with pytest.raises(InvalidParams, match="payroll"):
                staff.render("payroll")
        # A refusal is not asked again, whatever the retries.
        with Prompts(url, token="wrong-token-0123456789abcdef", retries=2) as wrong, \
                pytest.raises(ConnectionFailed, match=r"\(prompts/list, 1 try\): .*401"):
            wrong.render("greet", who="x")
        with Prompts(url, auth=StaticAuth("hr-token-0123456789abcdef")) as hr:
            assert hr.names() == asyncio.run(over_mcp(url, "hr-token-0123456789abcdef"))
        with pytest.raises(ValueError, match="a token or an auth"):
            Prompts(url, token="x", auth=StaticAuth("y"))


class StaticAuth:
    """The ``Auth`` protocol of ``connect(auth=...)`` at its simplest: one token, never renewed."""

    def __init__(self, token: str) -> None:
        self._token = token

    def needs_sign_in(self, url: str) -> bool:
        return False

    async def token(self, url: str) -> str | None:
        return self._token

    async def unauthorized(self, url: str, status: int, challenge: str, sent: str | None) -> bool:
        return False


def test_a_closed_prompts_says_so(server: str, folder: Path) -> None:
    for source in (server, str(folder)):
        prompts = Prompts(source)
        prompts.close()
        prompts.close()
        with pytest.raises(LibraryError, match="is closed"):
            prompts.render("greet", who="x")
        with pytest.raises(LibraryError, match="is closed"):
            prompts.names()


def test_the_cache_renders_what_was_rendered_when_the_server_is_gone(folder: Path, fallback: Path,
                                                                     tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    port = free_port()
    with http_server(str(folder), "--no-watch", port=port) as url:
        with Prompts(url, cache=str(cache)) as prompts:
            live = prompts.render("greet", who="Ada")
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    assert all(stat.S_IMODE(os.stat(f).st_mode) == 0o600 for f in cache.rglob("*.json"))
    # The server is gone: what was rendered comes from the cache, the rest from the fallback folder.
    with Prompts(url, cache=str(cache), fallback=str(fallback), timeout=1, retries=0) as prompts:
        cached = prompts.render("greet", who="Ada")
        assert (cached.messages, cached.model, cached.stale) == (live.messages, live.model, True)
        assert cached.source == str(cache)
        other = prompts.render("greet", who="Bea")
        assert other.text() == "Fallback hello, Bea!" and other.stale and other.source == str(fallback)
        assert prompts.names() == ["greet"]  # the cached listing
    with Prompts(url, cache=str(cache), timeout=1, retries=0) as prompts, \
            pytest.raises(ConnectionFailed, match="the cache holds no render of it"):
        prompts.render("greet", who="Cy")
    # Another token's cache is not read.
    with Prompts(url, cache=str(cache), token="someone-else-0123456789", timeout=1, retries=0) as prompts, \
            pytest.raises(ConnectionFailed):
        prompts.render("greet", who="Ada")


def test_the_cache_gives_a_rollout_key_only_what_was_rendered_for_that_key(folder: Path, tmp_path: Path) -> None:
    """During a rollout two keys may be given two versions: the copy kept for one key is not the other's."""
    cache = tmp_path / "cache"
    port = free_port()
    with http_server(str(folder), "--no-watch", port=port) as url:
        with Prompts(url, cache=str(cache)) as prompts:
            live = prompts.render("greet", who="Ada", key="tenant-a")
    with Prompts(url, cache=str(cache), timeout=1, retries=0) as prompts:
        cached = prompts.render("greet", who="Ada", key="tenant-a")
        assert (cached.messages, cached.stale) == (live.messages, True)
        for other in ("tenant-b", None):
            with pytest.raises(ConnectionFailed, match="the cache holds no render of it"):
                prompts.render("greet", who="Ada", key=other)


def test_without_a_fallback_one_error_names_the_server_and_the_cause() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with Prompts(url, timeout=1, retries=1) as prompts, pytest.raises(ConnectionFailed) as caught:
        prompts.render("greet", who="x")
    message = str(caught.value)
    assert url in message and "cannot be reached" in message and "2 tries" in message


@pytest.mark.parametrize(("mode", "cause"), [("garbage-get", "outside the protocol: ProtocolViolation"),
                                             ("hang-modern", "no answer within 1 s"),
                                             ("huge-get", "is over 67108864 bytes")])
def test_a_misbehaving_server_is_bounded_then_the_fallback_renders(mode: str, cause: str, fallback: Path,
                                                                   tmp_path: Path) -> None:
    with http_peer(lambda port: script("bad_http.py", mode, str(port), str(tmp_path / "log"))) as url:
        with Prompts(url, timeout=1, retries=1) as prompts:
            started = time.monotonic()
            with pytest.raises(ConnectionFailed) as caught:
                prompts.render("crlf", who="x")
            assert time.monotonic() - started < 10
            assert url in str(caught.value) and cause in str(caught.value)
        with Prompts(url, timeout=1, retries=0, fallback=str(fallback)) as prompts:
            rendered = prompts.render("greet", who="Ada")
            assert rendered.stale and rendered.text() == "Fallback hello, Ada!"


def test_the_breaker_stops_asking_a_failing_server(fallback: Path, tmp_path: Path) -> None:
    """A server that never answers: after BREAKER_FAILURES timeouts, renders fail (or fall back) at once."""
    with http_peer(lambda port: script("bad_http.py", "hang-modern", str(port), str(tmp_path / "log"))) as url, \
            Prompts(url, timeout=0.5, retries=0) as prompts:
        for _ in range(BREAKER_FAILURES):
            with pytest.raises(ConnectionFailed, match="no answer within 0.5 s"):
                prompts.render("crlf", who="x")
        started = time.monotonic()
        with pytest.raises(ConnectionFailed, match="is not being asked: 3 failures in a row, the last: RequestTimeout"):
            prompts.render("crlf", who="x")
        assert time.monotonic() - started < 0.3


def test_arender_keeps_the_retries_the_breaker_and_the_fallback(fallback: Path, tmp_path: Path) -> None:
    """On the caller's loop as from a thread: a server that never answers is tried ``retries`` more times, the
    breaker opens after BREAKER_FAILURES failures, and the fallback folder renders meanwhile."""
    with http_peer(lambda port: script("bad_http.py", "hang-modern", str(port), str(tmp_path / "log"))) as url, \
            Prompts(url, timeout=0.5, retries=1) as prompts, \
            Prompts(url, timeout=0.5, retries=0, fallback=str(fallback)) as fallen:
        async def renders() -> None:
            for _ in range(BREAKER_FAILURES):
                with pytest.raises(ConnectionFailed, match=r"\(prompts/get, 2 tries\): .*no answer within 0.5 s"):
                    await prompts.arender("crlf", who="x")
            started = time.monotonic()
            with pytest.raises(ConnectionFailed, match="is not being asked: 3 failures in a row"):
                await prompts.arender("crlf", who="x")
            assert time.monotonic() - started < 0.3
            rendered = await fallen.arender("greet", who="Ada")
            assert rendered.stale and rendered.text() == "Fallback hello, Ada!"

        asyncio.run(renders())
