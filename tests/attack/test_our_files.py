"""The folders promptdeck reads back as its own: the prompt cache of ``Prompts`` and the OAuth token folder
(issue 38, findings 6 and 8).

- A cache folder shared by two tokens (by mistake: one ``cache=`` for two applications) never gives one
  token a render or listing written for the other, even when the other wrote it after the first opened
  the cache; a real server with two principals, then stopped.
- A cache or token folder owned by another user, or that others may write to, is refused with one error,
  whether found so when opened or made so later; a render planted there is never served.
- A lock file that is a symbolic link is one error on the command line, not a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from promptdeck import LibraryError, Prompts
from promptdeck.client.cache import RenderCache, render_key
from promptdeck.client.oauth_store import TokenStore
from promptdeck.protocol.errors import ConnectionFailed, OAuthError
from tests.support.http_server import free_port, http_server
from tests.support.libraries import prompt_folder
from tests.support.paths import REPO

GREET = "---\narguments:\n  - {name: who, required: true}\n---\nHello {{ who }}.\n"
PAY = "---\nscopes: [hr]\narguments:\n  - {name: who, required: true}\n---\nRaise the pay of {{ who }}.\n"
ALICE, HR = "alice-token-0123456789", "hr-token-0123456789"
URL = "http://127.0.0.1:9/mcp"
#: Another user's id for a folder "owned by someone else" (root may give a folder away; others use "/").
NOBODY = 65534


def test_a_cache_shared_by_two_tokens_never_serves_one_the_others_render(tmp_path: Path) -> None:
    folder = prompt_folder(tmp_path / "lib", {"greet.md": GREET, "pay.md": PAY})
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice:{ALICE}\nhr:{HR} hr\n")
    cache = str(tmp_path / "cache")
    with http_server(str(folder), "--no-watch", "--token-file", str(tokens), port=free_port()) as url:
        alice = Prompts(url, token=ALICE, cache=cache, timeout=1, retries=0)
        assert alice.names() == ["greet"]  # the cache is alice's when she opens it
        with Prompts(url, token=HR, cache=cache) as hr:  # then hr's, written anew
            assert hr.render("pay", who="Al").text() == "Raise the pay of Al."
            assert hr.names() == ["greet", "pay"]
    with alice:  # the server is gone: alice reads only what was written for her (nothing is left)
        with pytest.raises(ConnectionFailed, match="the cache holds no render of it"):
            alice.render("pay", who="Al")
        with pytest.raises(ConnectionFailed):
            alice.names()


def test_each_cache_file_is_checked_for_its_principal(tmp_path: Path) -> None:
    alice = RenderCache(tmp_path, URL, ALICE)
    hr = RenderCache(tmp_path, URL, HR)
    hr.put_listing([{"name": "pay"}])
    hr.put_render("pay", {"who": "Al"}, {"messages": []})
    assert alice.usable is False  # opened before hr wrote: not hers
    alice.usable = True  # as it was when alice opened a folder that was hers, before hr wrote it anew
    assert alice.render("pay", {"who": "Al"}) is None and alice.listing() is None
    assert hr.render("pay", {"who": "Al"}) == {"messages": []} and hr.listing() == [{"name": "pay"}]
    # A file without a mark (an older format, or written by hand) is no one's.
    entry = tmp_path / "renders" / f"{render_key('pay', {'who': 'Al'})}.json"
    entry.write_text(json.dumps({"name": "pay", "arguments": {"who": "Al"}, "result": {"messages": []}}))
    assert hr.render("pay", {"who": "Al"}) is None


def _planted(cache: Path, token: str | None = None) -> None:
    """A render of greet in ``cache`` as a cache of ``URL`` for ``token`` would hold it."""
    kept = RenderCache(cache, URL, token)
    kept.put_listing([{"name": "greet"}])
    kept.put_render("greet", {"who": "Ada"}, {"messages": [{"role": "user", "content": {"type": "text",
                                                                                          "text": "planted"}}]})


def _give_away(path: Path) -> Path:
    if os.getuid() != 0:
        return Path("/")  # root's, and not ours
    os.chown(path, NOBODY, NOBODY)
    return path


def test_a_cache_folder_open_to_others_or_not_ours_is_refused(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _planted(cache)
    cache.chmod(0o777)
    with pytest.raises(LibraryError, match="may be written by other users .mode 0777.*chmod 700"):
        Prompts(URL, cache=str(cache), timeout=1, retries=0)
    cache.chmod(0o700)
    (cache / "renders").chmod(0o733)
    with pytest.raises(LibraryError, match="may be written by other users"):
        Prompts(URL, cache=str(cache), timeout=1, retries=0)
    (cache / "renders").chmod(0o700)
    with pytest.raises(LibraryError, match="belongs to another user"):
        Prompts(URL, cache=str(_give_away(cache)), timeout=1, retries=0)


def test_a_cache_folder_opened_to_others_later_is_refused_on_read(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _planted(cache)
    with Prompts(URL, cache=str(cache), timeout=1, retries=0) as prompts:
        assert prompts.render("greet", who="Ada").text() == "planted"  # ours: served, stale
        cache.chmod(0o777)
        with pytest.raises(LibraryError, match="may be written by other users"):
            prompts.render("greet", who="Ada")


# -- the OAuth token folder ----------------------------------------------------------------------------

def logout(config: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "XDG_CONFIG_HOME": str(config)}
    return subprocess.run([sys.executable, "-m", "promptdeck", "logout", "https://mcp.example/mcp"],
                          capture_output=True, text=True, env=env, timeout=60)


def _token_file(config: Path) -> Path:
    store = TokenStore(config / "promptdeck" / "tokens.json")
    store.save_tokens("https://mcp.example/mcp", "https://mcp.example/mcp", "https://issuer.example",
                      {"access_token": "a"})
    return store.path


def test_a_lock_file_that_is_a_link_is_one_error(tmp_path: Path) -> None:
    path = _token_file(tmp_path / "config")
    elsewhere = tmp_path / "elsewhere"
    path.with_name("tokens.json.lock").unlink()
    path.with_name("tokens.json.lock").symlink_to(elsewhere)
    done = logout(tmp_path / "config")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
    assert "tokens.json.lock is a symbolic link" in done.stderr
    assert not elsewhere.exists()
    with pytest.raises(OAuthError, match="is a symbolic link"):
        TokenStore(path).save_client("https://issuer.example", {"client_id": "x"})


def test_a_token_folder_open_to_others_or_not_ours_is_refused(tmp_path: Path) -> None:
    path = _token_file(tmp_path / "config")
    path.parent.chmod(0o777)
    done = logout(tmp_path / "config")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "may be written by other users (mode 0777)" in done.stderr
    with pytest.raises(OAuthError, match="may be written by other users"):
        TokenStore(path).read()
    path.parent.chmod(0o700)
    assert TokenStore(path).tokens("https://mcp.example/mcp", "https://issuer.example") == {"access_token": "a"}
    given = _give_away(path.parent)
    with pytest.raises(OAuthError, match="belongs to another user"):
        TokenStore(given / "tokens.json").read()
