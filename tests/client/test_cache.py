"""The last good copy of a remote's prompts (client/cache.py): listings and renders kept per server and token,
read back only by the server and token that wrote them, bounded, and a folder that is not the user's alone
refused."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

import promptdeck.client.cache as cache_module
from promptdeck.client.cache import MARKER, RenderCache, render_key
from promptdeck.protocol.errors import LibraryError

SERVER = "https://mcp.example/mcp"
RESULT: dict[str, Any] = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}


def test_the_render_key_does_not_depend_on_argument_order() -> None:
    assert render_key("p", {"a": "1", "b": "2"}) == render_key("p", {"b": "2", "a": "1"})
    assert render_key("p", {"a": "1"}) != render_key("q", {"a": "1"}) != render_key("p", {"a": "2"})


def test_renders_asked_with_different_rollout_keys_are_kept_apart(tmp_path: Path) -> None:
    cache = RenderCache(tmp_path / "c", SERVER, None)
    cache.put_render("a", {}, RESULT, "key-1")
    assert render_key("a", {}, "key-1") != render_key("a", {}, "key-2") != render_key("a", {})
    assert cache.render("a", {}, "key-1") == RESULT
    assert cache.render("a", {}, "key-2") is None and cache.render("a", {}) is None
    # A file renamed to another key's name is not taken for it: the key it was asked with is read back too.
    kept = tmp_path / "c" / "renders" / f"{render_key('a', {}, 'key-1')}.json"
    kept.rename(tmp_path / "c" / "renders" / f"{render_key('a', {}, 'key-2')}.json")
    assert cache.render("a", {}, "key-2") is None


def test_an_empty_cache_has_nothing_and_writes_nothing_until_a_success(tmp_path: Path) -> None:
    cache = RenderCache(tmp_path / "c", SERVER, None)
    assert cache.listing() is None and cache.render("p", {}) is None
    assert not (tmp_path / "c").exists()


def test_listings_and_renders_are_read_back(tmp_path: Path) -> None:
    cache = RenderCache(tmp_path / "c", SERVER, "token-1")
    cache.put_listing([{"name": "a"}, {"name": "b", "title": "B"}, {"title": "no name"}])
    cache.put_render("a", {"x": "1"}, RESULT)
    again = RenderCache(tmp_path / "c", SERVER, "token-1")
    assert again.listing() == [{"name": "a"}, {"name": "b", "title": "B"}]  # an entry without a name is dropped
    assert again.render("a", {"x": "1"}) == RESULT
    assert again.render("a", {"x": "2"}) is None  # arguments it has not seen rendered
    assert (tmp_path / "c").stat().st_mode & 0o777 == 0o700
    for written in (tmp_path / "c").rglob("*.json"):
        assert written.stat().st_mode & 0o777 == 0o600
    assert "token-1" not in (tmp_path / "c" / MARKER).read_text()  # only a digest of the token


def test_another_token_or_server_neither_reads_nor_keeps_what_was_there(tmp_path: Path,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    RenderCache(tmp_path / "c", SERVER, "token-1").put_render("a", {}, RESULT)
    with caplog.at_level(logging.WARNING, "promptdeck.client"):
        other = RenderCache(tmp_path / "c", SERVER, "token-2")
    assert "written for another server or token" in caplog.text
    assert other.render("a", {}) is None
    other.put_listing([{"name": "z"}])  # written anew for this token: the other token's renders are gone
    assert list((tmp_path / "c" / "renders").glob("*.json")) == []
    assert RenderCache(tmp_path / "c", "https://other.example/mcp", "token-2").listing() is None


def test_a_file_written_by_another_token_later_is_not_served(tmp_path: Path) -> None:
    cache = RenderCache(tmp_path / "c", SERVER, "token-1")
    cache.put_render("a", {}, RESULT)
    path = next((tmp_path / "c" / "renders").glob("*.json"))
    planted = json.loads(path.read_text())
    planted["principal"] = "someone else"
    path.write_text(json.dumps(planted))
    assert cache.render("a", {}) is None


def test_renders_are_bounded_oldest_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "MAX_RENDERS", 3)
    cache = RenderCache(tmp_path / "c", SERVER, None)
    for i in range(5):
        cache.put_render(f"p{i}", {}, RESULT)
        path = tmp_path / "c" / "renders" / f"{render_key(f'p{i}', {})}.json"
        if path.exists():
            os.utime(path, (i, i))  # the order written, whatever the file system's clock resolution
    kept = sorted(p.stem for p in (tmp_path / "c" / "renders").glob("*.json"))
    assert len(kept) == 3
    assert cache.render("p4", {}) == RESULT and cache.render("p0", {}) is None


def test_a_folder_others_may_write_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    folder.mkdir()
    os.chmod(folder, 0o777)
    with pytest.raises(LibraryError, match=r"the prompt cache .* may be written by other users"):
        RenderCache(folder, SERVER, None)


def test_a_failed_write_is_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cache = RenderCache(tmp_path / "c", SERVER, None)
    (tmp_path / "c").write_text("a file where the folder should be")
    with caplog.at_level(logging.WARNING, "promptdeck.client"):
        cache.put_listing([{"name": "a"}])
        cache.put_render("a", {}, RESULT)
    assert caplog.text.count("cannot be written") == 2 and "is not a folder" in caplog.text
