"""``Prompts`` under attack: hostile arguments answered as the server answers them, a cache folder tampered with
(symlinks, garbage, spoofed entries, oversized files, another server's or token's copy), and odd sources."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest

from promptdeck import InvalidParams, LibraryError, McpError, Prompts, connect
from promptdeck.client import cache as cache_module
from promptdeck.client.cache import RenderCache, render_key
from promptdeck.client.library import Breaker
from tests.support.http_server import free_port
from tests.support.libraries import prompt_folder

GREET = "---\narguments:\n  - {name: who, required: true}\n  - {name: n, type: integer}\n---\nHello {{ who }}\n"
URL = "http://127.0.0.1:9/mcp"


@pytest.fixture
def library(tmp_path: Path) -> Path:
    return prompt_folder(tmp_path / "lib", {"greet.md": GREET})


@pytest.mark.parametrize("arguments", [{"who": 5}, {"who": None}, {"who": "x", "n": "abc"}, {"who": "x" * 1_000_001},
                                       {"who": "x", "../etc/passwd": "y"}, {}])
def test_hostile_arguments_are_the_servers_invalid_params(library: Path, arguments: dict[str, object]) -> None:
    async def over_mcp() -> McpError:
        async with connect([sys.executable, "-m", "promptdeck", "serve", "--no-watch", str(library)]) as client:
            with pytest.raises(McpError) as caught:
                await client.request("prompts/get", {"name": "greet", "arguments": arguments})
            return caught.value

    with Prompts(str(library)) as prompts, pytest.raises(InvalidParams) as caught:
        prompts.render("greet", arguments)
    expected = asyncio.run(over_mcp())
    assert (caught.value.message, caught.value.data) == (expected.message, expected.data)


@pytest.mark.parametrize("name", ["../greet", "greet/../../x", "", "g" * 10_000, "greet\x00"])
def test_hostile_prompt_names_are_unknown(library: Path, name: str) -> None:
    with Prompts(str(library)) as prompts, pytest.raises(InvalidParams):
        prompts.render(name)


def primed(path: Path, server: str = URL, token: str | None = None) -> RenderCache:
    cache = RenderCache(path, server, token)
    cache.put_listing([{"name": "greet"}])
    cache.put_render("greet", {"who": "Ada"}, {"messages": [{"role": "user", "content": {"type": "text",
                                                                                          "text": "cached"}}]})
    return cache


def test_a_cache_entry_that_is_a_symlink_garbage_or_spoofed_is_not_read(tmp_path: Path) -> None:
    cache = primed(tmp_path / "cache")
    entry = tmp_path / "cache" / "renders" / f"{render_key('greet', {'who': 'Ada'})}.json"
    assert cache.render("greet", {"who": "Ada"}) is not None
    outside = tmp_path / "outside.json"
    outside.write_bytes(entry.read_bytes())
    entry.unlink()
    entry.symlink_to(outside)
    assert cache.render("greet", {"who": "Ada"}) is None
    entry.unlink()
    entry.write_bytes(b"\x00not json{")
    assert cache.render("greet", {"who": "Ada"}) is None
    # An entry filed under this key but holding another render (written by hand) is refused.
    entry.write_text(json.dumps({"name": "greet", "arguments": {"who": "Eve"}, "result": {"messages": []}}))
    assert cache.render("greet", {"who": "Ada"}) is None
    entry.write_text(json.dumps({"name": "greet", "arguments": {"who": "Ada"}, "result": {"messages": "no"}}))
    assert cache.render("greet", {"who": "Ada"}) is None


def test_an_oversized_cache_file_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = primed(tmp_path / "cache")
    monkeypatch.setattr(cache_module, "MAX_FILE", 10)
    assert cache.render("greet", {"who": "Ada"}) is None and cache.listing() is None


def test_another_servers_or_tokens_cache_is_not_read_and_is_written_anew(tmp_path: Path) -> None:
    primed(tmp_path / "cache", URL, "alice-token-0123456789")
    others = ((URL, "mallory-token-0123456789"), (URL, None), ("http://elsewhere/mcp", "alice-token-0123456789"))
    for server, token in others:
        other = RenderCache(tmp_path / "cache", server, token)
        assert not other.usable and other.render("greet", {"who": "Ada"}) is None and other.listing() is None
    assert RenderCache(tmp_path / "cache", URL, "alice-token-0123456789").usable
    # The token itself is never written down.
    assert all(b"alice-token" not in f.read_bytes() for f in (tmp_path / "cache").rglob("*") if f.is_file())
    mallory = RenderCache(tmp_path / "cache", URL, "mallory-token-0123456789")
    mallory.put_listing([{"name": "x"}])
    assert mallory.render("greet", {"who": "Ada"}) is None  # alice's renders were removed, not inherited


def test_a_cache_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(LibraryError, match="is not a folder"):
        Prompts(URL, cache=str(tmp_path / "file"))


def test_the_cache_keeps_at_most_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "MAX_RENDERS", 5)
    cache = RenderCache(tmp_path / "cache", URL, None)
    for i in range(12):
        cache.put_render("greet", {"who": str(i)}, {"messages": []})
    kept = list((tmp_path / "cache" / "renders").glob("*.json"))
    assert len(kept) == 5
    # The same render again is not written again; a changed one is.
    last = tmp_path / "cache" / "renders" / f"{render_key('greet', {'who': '11'})}.json"
    written = last.stat().st_mtime_ns
    os.utime(last, ns=(1, 1))
    cache.put_render("greet", {"who": "11"}, {"messages": []})
    assert last.stat().st_mtime_ns == 1 != written
    cache.put_render("greet", {"who": "11"}, {"messages": [{"role": "user", "content": {"type": "text", "text": "x"}}]})
    assert last.stat().st_mtime_ns != 1


def test_a_store_that_cannot_be_opened_renders_from_the_fallback(library: Path, tmp_path: Path) -> None:
    url = f"postgresql://nobody@127.0.0.1:{free_port()}/none"
    with pytest.raises(LibraryError, match="cannot reach the store"):
        Prompts(url)
    with Prompts(url, fallback=str(library)) as prompts:
        rendered = prompts.render("greet", who="Ada")
        assert rendered.stale and rendered.text() == "Hello Ada" and rendered.source == str(library)
        assert prompts.names() == ["greet"]
    with pytest.raises(ValueError, match="fallback= is for"):
        Prompts(str(library), fallback=str(library))
    with pytest.raises(ValueError, match="cache= is for"):
        Prompts(str(library), cache=str(tmp_path / "c"))


def test_the_breaker_lets_one_trial_through_then_closes_on_success() -> None:
    breaker = Breaker(failures=2, seconds=0.2)
    breaker.failed("a")
    assert breaker.refusal() is None
    breaker.failed("b")
    assert "2 failures in a row, the last: b" in (breaker.refusal() or "")
    time.sleep(0.25)
    assert breaker.refusal() is None  # the trial
    assert breaker.refusal() is not None  # everyone else waits for its outcome
    breaker.succeeded()
    assert breaker.refusal() is None
    # A server that lists but does not render: its listings do not close the breaker its renders opened.
    breaker.failed("get", "prompts/get")
    breaker.succeeded("prompts/list")
    breaker.failed("get", "prompts/get")
    assert breaker.refusal() is not None
    # When listings were what failed, a listing that works closes it.
    time.sleep(0.25)
    breaker.failed("list", "prompts/list")
    breaker.succeeded("prompts/list")
    assert breaker.refusal() is None

