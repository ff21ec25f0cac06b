"""Where a store lives (sources/store/urls.py): which database a URL names, its SQLite file, made the owner's
alone, and the URL as messages and logs show it, with no secret left in."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from promptdeck.sources.store.model import StoreError
from promptdeck.sources.store.urls import (
    PRIVATE_MODE,
    create_private,
    is_postgres_url,
    shown_url,
    sqlite_path,
    store_secrets,
    without_secrets,
)


def test_a_url_names_its_database() -> None:
    assert is_postgres_url("postgresql://h/db") and is_postgres_url("postgres://h/db")
    assert not is_postgres_url("sqlite:///s.db") and not is_postgres_url("s.db")
    assert sqlite_path("sqlite:///rel/s.db") == "rel/s.db"
    assert sqlite_path("sqlite:////abs/s.db") == "/abs/s.db"
    assert sqlite_path("plain/s.db") == "plain/s.db"


@pytest.mark.parametrize("url", ["sqlite:///", "sqlite:////", "sqlite:s.db", "sqlite://user:pw@h/x"])
def test_a_sqlite_url_without_a_path_is_refused_naming_the_form(url: str) -> None:
    with pytest.raises(StoreError, match=r"a SQLite store URL is sqlite:///path\.db") as refused:
        sqlite_path(url)
    assert "pw" not in str(refused.value)


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://ann:s3cret@db/prompts", "postgresql://ann:***@db/prompts"),
    ("postgresql://ann:p?q#r@db/x", "postgresql://ann:***@db/x"),
    ("postgresql://ann:p/q@db/x?sslmode=require", "postgresql://ann:***@db/x?sslmode=require"),  # '/' unencoded
    ("postgresql://ann:p/q@db", "postgresql://ann:***@db"),
    ("postgresql://db:5432/x", "postgresql://db:5432/x"),
    ("postgresql://db/x?sslmode=require&PassWord=top&pass%77ord=too", "postgresql://db/x?sslmode=require&"
     "PassWord=***&pass%77ord=***"),
    ("postgresq://ann:typo@db/x", "postgresq://ann:***@db/x"),  # a mistyped scheme still carries a password
    ("sqlite:///s.db", "sqlite:///s.db"),
    ("just/a/path.db", "just/a/path.db"),
])
def test_a_url_is_shown_with_its_secrets_masked(url: str, shown: str) -> None:
    assert shown_url(url) == shown


def test_a_drivers_message_loses_every_secret_written_or_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSWORD", "from-env")
    url = "postgresql://ann:p%40ss@db/x?sslpassword=key%21"
    assert sorted(store_secrets(url)) == sorted(["from-env", "p%40ss", "key%21", "p@ss", "key!"])
    assert len(store_secrets(url)[0]) == max(map(len, store_secrets(url)))  # longest first: replaced whole
    said = 'invalid token: "p%40ss" then p@ss, key! and from-env'
    assert without_secrets(said, url) == 'invalid token: "***" then ***, *** and ***'


def test_a_new_store_file_is_the_owners_alone_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    old = os.umask(0o000)
    try:
        create_private(str(path))
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == PRIVATE_MODE


def test_an_existing_readable_store_is_warned_about_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "loose.db"
    path.write_bytes(b"")
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="promptdeck.store"):
        create_private(str(path))
        create_private(str(path))
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 1 and f"chmod 600 {path}" in warned[0] and "mode 644" in warned[0]
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # a warning only: the owner's file is not changed under them
