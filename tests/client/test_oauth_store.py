"""The per-user token file (client/oauth_store.py): written 0600 and atomically, read back, tokens forgotten per
server, and every file it must not trust refused with the command that fixes it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from promptdeck.client.oauth_store import MAX_FILE, TokenStore, default_path, token_key
from promptdeck.protocol.errors import OAuthError

URL, RESOURCE, ISSUER = "https://mcp.example/mcp", "https://mcp.example/mcp", "https://auth.example"


@pytest.fixture
def store(tmp_path: Path) -> TokenStore:
    return TokenStore(tmp_path / "conf" / "tokens.json")


def test_the_default_path_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_path() == tmp_path / "promptdeck" / "tokens.json"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".config" / "promptdeck" / "tokens.json"


def test_no_file_reads_as_an_empty_document(store: TokenStore) -> None:
    assert store.read() == {"version": 1, "clients": {}, "tokens": {}, "servers": {}}
    assert store.tokens(RESOURCE, ISSUER) is None and store.client(ISSUER) is None and store.server(URL) is None
    assert store.forget(URL) is False


def test_tokens_and_clients_are_kept_0600_in_a_0700_folder(store: TokenStore) -> None:
    store.save_client(ISSUER, {"client_id": "abc"})
    store.save_tokens(URL, RESOURCE, ISSUER, {"access_token": "t1", "refresh_token": "r1"})
    assert store.path.stat().st_mode & 0o777 == 0o600
    assert store.path.parent.stat().st_mode & 0o777 == 0o700
    assert store.tokens(RESOURCE, ISSUER) == {"access_token": "t1", "refresh_token": "r1"}
    assert store.tokens(RESOURCE, "https://other.example") is None  # another issuer's token is no use here
    assert store.client(ISSUER) == {"client_id": "abc"}
    assert store.server(URL) == {"resource": RESOURCE, "issuer": ISSUER}
    assert json.loads(store.path.read_text())["tokens"] == {token_key(RESOURCE, ISSUER): {
        "access_token": "t1", "refresh_token": "r1"}}
    assert [p.name for p in store.path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_forget_drops_a_servers_tokens_and_keeps_the_registration(store: TokenStore) -> None:
    store.save_client(ISSUER, {"client_id": "abc"})
    store.save_tokens(URL, RESOURCE, ISSUER, {"access_token": "t1"})
    assert store.forget(URL) is True
    assert store.tokens(RESOURCE, ISSUER) is None and store.server(URL) is None
    assert store.client(ISSUER) == {"client_id": "abc"}
    assert store.forget(URL) is False


def test_a_file_others_may_read_is_refused_with_chmod_600(store: TokenStore) -> None:
    store.save_client(ISSUER, {"client_id": "abc"})
    os.chmod(store.path, 0o644)
    with pytest.raises(OAuthError, match=rf"may be read by other users \(mode 0644\).*chmod 600 {store.path}"):
        store.read()


def test_a_link_is_refused_rather_than_followed(store: TokenStore, tmp_path: Path) -> None:
    store.path.parent.mkdir(mode=0o700)
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    store.path.symlink_to(target)
    with pytest.raises(OAuthError, match="is a symbolic link"):
        store.read()
    with pytest.raises(OAuthError, match="is a symbolic link"):
        store.save_client(ISSUER, {"client_id": "abc"})
    assert target.read_text() == "{}"


def test_a_planted_lock_link_is_refused(store: TokenStore, tmp_path: Path) -> None:
    store.path.parent.mkdir(mode=0o700)
    store.path.with_name("tokens.json.lock").symlink_to(tmp_path / "anywhere")
    with pytest.raises(OAuthError, match=r"lock .* is a symbolic link"):
        store.save_client(ISSUER, {"client_id": "abc"})


@pytest.mark.parametrize(("text", "says"), [
    ("not json", "is not JSON; remove it"),
    ('{"version": 7}', "is not a version-1 promptdeck token file"),
    ("[]", "is not a version-1 promptdeck token file"),
])
def test_a_file_not_ours_is_refused_naming_it(store: TokenStore, text: str, says: str) -> None:
    store.path.parent.mkdir(mode=0o700)
    store.path.write_text(text)
    os.chmod(store.path, 0o600)
    with pytest.raises(OAuthError, match=says) as caught:
        store.read()
    assert str(store.path) in str(caught.value)


def test_an_oversized_file_is_refused(store: TokenStore) -> None:
    store.path.parent.mkdir(mode=0o700)
    store.path.write_bytes(b" " * (MAX_FILE + 1))
    os.chmod(store.path, 0o600)
    with pytest.raises(OAuthError, match=f"is over {MAX_FILE} bytes"):
        store.read()


def test_odd_parts_of_a_version_1_file_read_as_empty(store: TokenStore) -> None:
    store.path.parent.mkdir(mode=0o700)
    store.path.write_text('{"version": 1, "clients": [], "tokens": {"k": 1}}')
    os.chmod(store.path, 0o600)
    assert store.read() == {"version": 1, "clients": {}, "tokens": {"k": 1}, "servers": {}}
