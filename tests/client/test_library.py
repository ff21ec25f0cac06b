"""A remote server's prompts for an application (client/library.py): the circuit breaker's states, renders
through a real promptdeck over HTTP, its refusals passed as they are, and a server that cannot be reached
reported naming it, with the tries made, until the breaker stops asking."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from promptdeck.client.library import Breaker, RemoteLibrary
from promptdeck.protocol.errors import ConnectionFailed, InvalidParams
from tests.support.http_server import free_port, http_server


def test_the_breaker_opens_after_failures_in_a_row_and_lets_one_trial_through() -> None:
    breaker = Breaker(failures=2, seconds=0.2)
    breaker.failed("boom")
    assert breaker.refusal() is None  # one failure: still closed
    breaker.failed("bang")
    refusal = breaker.refusal()
    assert refusal is not None and refusal.startswith("2 failures in a row, the last: bang; not tried again for")
    deadline = time.monotonic() + 30
    while breaker.refusal() is not None:  # half-open once its time is up: this call is the trial
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert breaker.refusal() is not None  # the others wait for the trial's outcome
    breaker.succeeded()
    assert breaker.refusal() is None


def test_a_listing_closes_the_breaker_only_when_listings_failed() -> None:
    breaker = Breaker(failures=1, seconds=60)
    breaker.failed("renders fail", "prompts/get")
    breaker.succeeded("prompts/list")  # a server that lists but never renders stays open
    assert breaker.refusal() is not None
    breaker.succeeded("prompts/get")
    breaker.failed("listing fails", "prompts/list")
    breaker.succeeded("prompts/list")
    assert breaker.refusal() is None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("library")
    (folder / "greet.md").write_text("---\ndescription: Greets\narguments:\n  - {name: who, required: true}\n"
                                     "---\nHello {{ who }}!\n")
    with http_server(str(folder), "--no-watch") as url:
        yield url


def test_renders_through_the_server_with_its_listing_entry(server: str) -> None:
    library = RemoteLibrary(server, timeout=30)
    try:
        entries = library.call(library.entries())
        assert list(entries) == ["greet"] and entries["greet"]["description"] == "Greets"
        result, entry = library.call(library.render("greet", {"who": "ann"}))
        assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": "Hello ann!"}}]
        assert entry == entries["greet"]
        with pytest.raises(InvalidParams, match="who"):
            library.call(library.render("greet", {}))
        with pytest.raises(InvalidParams, match=r"prompt 'greet': argument 'who' must be a string on the wire, "
                                                r"got int"):
            library.call(library.render("greet", {"who": 5}))  # type: ignore[dict-item]
    finally:
        library.close()
    with pytest.raises(ConnectionFailed, match=f"the prompts of {server} are closed"):
        library.call(library.entries())


def test_an_unreachable_server_is_named_with_the_tries_then_not_asked(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    library = RemoteLibrary(url, timeout=5, retries=1, breaker=Breaker(failures=2, seconds=60))
    try:
        for _ in range(2):
            with pytest.raises(ConnectionFailed, match=rf"the MCP server at {url} cannot be reached "
                                                       r"\(prompts/list, 2 tries\): ConnectionFailed"):
                library.call(library.entries())
        with pytest.raises(ConnectionFailed, match=rf"the MCP server at {url} is not being asked: 2 failures"):
            library.call(library.entries())
    finally:
        library.close()


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="retries must be 0 or more and timeout positive"):
        RemoteLibrary("http://127.0.0.1:1/mcp", retries=-1)
    with pytest.raises(ValueError, match="give a token or an auth, not both"):
        RemoteLibrary("http://127.0.0.1:1/mcp", token="t", auth=object())


def test_the_rollout_key_is_sent_where_the_server_reads_it() -> None:
    from promptdeck.client import library
    from promptdeck.server import handlers

    assert library.META_ROLLOUT_KEY == handlers.META_ROLLOUT_KEY
