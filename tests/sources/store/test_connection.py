"""``Connection`` (sources/store/connection.py), on SQLite and a real PostgreSQL cluster: one statement dialect,
the write transaction every writer takes, errors that name the store and not its secrets, and the schema check."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from promptdeck.sources.store.connection import Connection
from promptdeck.sources.store.model import StoreError
from promptdeck.sources.store.schema import SCHEMA_VERSION
from tests.support.store_schema import as_schema_4


def test_statements_take_question_marks_in_both_databases(store_url: str) -> None:
    with Connection(store_url, create=True) as db:
        db.run("INSERT INTO publishes (author, message, created) VALUES (?, ?, ?)", "ana", "one", 1.0)
        db.many("INSERT INTO publishes (author, message, created) VALUES (?, ?, ?)",
                [("bo", "two", 2.0), ("cy", "three", 3.0)])
        assert db.rows("SELECT author, message FROM publishes WHERE created >= ? ORDER BY id", 2.0) == \
            [("bo", "two"), ("cy", "three")]
        assert db.run("UPDATE publishes SET message = ? WHERE author <> ?", "x", "ana").rowcount == 2


def test_a_transaction_commits_at_its_end_and_leaves_nothing_when_it_fails(store_url: str) -> None:
    with Connection(store_url, create=True) as db, Connection(store_url) as other:
        with db.transaction():
            db.run("INSERT INTO publishes (author, message, created) VALUES (?, ?, ?)", "ana", "kept", 1.0)
        with pytest.raises(RuntimeError), db.transaction():
            db.run("INSERT INTO publishes (author, message, created) VALUES (?, ?, ?)", "bo", "lost", 2.0)
            raise RuntimeError("midway")
        assert other.rows("SELECT author FROM publishes") == [("ana",)]


def test_writers_queue_behind_the_transaction_that_holds_the_lock(store_url: str) -> None:
    with Connection(store_url, create=True) as first, Connection(store_url) as second:
        order: list[str] = []
        inside = threading.Event()

        def later() -> None:
            inside.wait(30)
            with second.transaction():
                order.append("second")

        thread = threading.Thread(target=later)
        thread.start()
        with first.transaction():
            inside.set()
            thread.join(0.5)  # it waits for the lock: still alive, nothing written by it
            order.append("first")
        thread.join(30)
        assert order == ["first", "second"]


def test_a_failing_statement_is_one_store_error_without_the_urls_secrets(store_url: str) -> None:
    with Connection(store_url, create=True) as db, pytest.raises(StoreError) as caught:
        db.rows("SELECT nothing FROM nowhere")
    message = str(caught.value)
    assert message.startswith("the store ") and "failed" in message and "\n" not in message
    if db.postgres:
        password = store_url.split("://", 1)[1].split("@", 1)[0].partition(":")[2]
        assert not password or password not in message


def test_a_missing_sqlite_store_is_refused_unless_created(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/new.db"
    with pytest.raises(StoreError, match="no store at"):
        Connection(url)
    with Connection(url, create=True) as db:
        assert db.upgraded_from == 0 and not db.postgres
        assert db.rows("SELECT version FROM promptdeck_schema") == [(SCHEMA_VERSION,)]
        assert isinstance(db.driver, sqlite3.Connection)
    with Connection(url) as again:
        assert again.upgraded_from is None  # found at its version: nothing to upgrade


def test_a_database_that_is_not_a_store_or_is_newer_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain.db"
    sqlite3.connect(plain).close()
    with pytest.raises(StoreError, match="is not a promptdeck store yet"):
        Connection(f"sqlite:///{plain}")
    url = f"sqlite:///{tmp_path}/newer.db"
    with Connection(url, create=True) as db:
        db.run("UPDATE promptdeck_schema SET version = ?", SCHEMA_VERSION + 1)
    with pytest.raises(StoreError, match="made by a newer promptdeck"):
        Connection(url)


def test_an_older_schema_needs_an_upgrade_unless_created(store_url: str) -> None:
    with Connection(store_url, create=True) as db:
        as_schema_4(db.driver)
    with pytest.raises(StoreError, match="run `promptdeck store upgrade"):
        Connection(store_url)
    with Connection(store_url, create=True) as db:
        assert db.upgraded_from == 4
        assert db.rows("SELECT version FROM promptdeck_schema") == [(SCHEMA_VERSION,)]
        assert db.upgrade() == SCHEMA_VERSION  # again: nothing to do
