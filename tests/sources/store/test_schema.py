"""The store's migrations (``sources.store.schema``), on SQLite and on a real PostgreSQL cluster: each database's
statements, and schema 7, which took the kinds of webhook event out of the database (``event_kinds``), run on a
store a schema 6 promptdeck made and filled."""

from __future__ import annotations

import base64
import sqlite3
import time
from typing import Any

import pytest

from promptdeck.sources.store import webhooks
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.events import emit
from promptdeck.sources.store.model import StoreError
from promptdeck.sources.store.schema import _MIGRATIONS, SCHEMA_VERSION, migration
from tests.support.event_kinds import Deployed, registered
from tests.support.store_schema import at_schema, promptdeck_in_process

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()


def test_each_database_gets_its_words_and_its_own_statements() -> None:
    assert sorted(_MIGRATIONS) == list(range(1, SCHEMA_VERSION + 1))
    sqlite, postgres = migration(1, False), migration(1, True)
    assert "id INTEGER PRIMARY KEY" in sqlite[1] and "id BIGSERIAL PRIMARY KEY" in postgres[1]
    assert "data BLOB" in sqlite[2] and "data BYTEA" in postgres[2]
    assert not any("{" in statement for version in _MIGRATIONS for statement in migration(version, True))
    assert 'name TEXT COLLATE "C"' in migration(3, True)[2] and migration(3, False)[2].endswith("name TEXT")
    assert migration(7, True)[-1] == "DROP TABLE event_kinds CASCADE"
    assert migration(7, False)[1] == "PRAGMA defer_foreign_keys = ON"
    assert migration(7, True)[0] == migration(7, False)[0]  # the webhooks' kinds: the same in both


def test_schema_7_drops_the_table_of_kinds_and_makes_every_kind_the_wildcard(store_url: str) -> None:
    old = at_schema(store_url, 6)
    mark = "%s" if store_url.startswith("postgresql") else "?"
    try:
        now = time.time()
        for kinds, removed in [("label publish rollback rollout", None), ("label", None),
                               ("label publish rollback", None), ("label publish rollback rollout", now)]:
            old.execute("INSERT INTO webhooks (url, secret, kinds, scopes, allow, timeout, author, created, removed) "
                        f"VALUES ({', '.join([mark] * 9)})",
                        ("https://example.com/", SECRET, kinds, "", "", 1.0, "ops", now, removed))
        old.execute(f"INSERT INTO events (kind, payload, created, uid) VALUES ('label', '{{}}', {mark}, 'evt_1')",
                    (now,))
        old.execute("INSERT INTO deliveries (event, webhook, body, status, attempts, next_try, finished) "
                    f"VALUES (1, 1, 'x', 'delivered', 1, {mark}, {mark})", (now, now))
        old.execute("INSERT INTO delivery_attempts (delivery, attempt, at, sender, code) "
                    f"VALUES (1, 1, {mark}, 'host:1', 200)", (now,))
        # What schema 6 was: a kind is a row of event_kinds, and an event of another kind is refused.
        with pytest.raises(Exception, match="(?i)foreign key"):
            old.execute(f"INSERT INTO events (kind, payload, created, uid) VALUES ('deploy', '{{}}', {mark}, 'e')",
                        (now,))
    finally:
        old.close()
    code, out, _ = promptdeck_in_process("store", "upgrade", store_url)
    assert code == 0 and f"upgraded the store from schema 6 to {SCHEMA_VERSION}" in out
    with Store(store_url) as store:
        assert rows_of(store, "SELECT kinds FROM webhooks ORDER BY id") == [
            ("*",), ("label",), ("label publish rollback",), ("*",)]
        assert [hook.kinds for hook in webhooks.listed(store.db)] == [
            ("*",), ("label",), ("label", "publish", "rollback")]
        # the event, its delivery and its attempt, as they were
        assert rows_of(store, "SELECT id, kind, uid FROM events") == [(1, "label", "evt_1")]
        (logged,) = webhooks.log(store.db, 1)
        assert (logged.event, logged.kind, logged.status, logged.uid, logged.tries[0].code) == (
            1, "label", "delivered", "evt_1", 200)
        if store.db.postgres:
            gone = rows_of(store, "SELECT to_regclass('event_kinds') IS NULL")[0][0]
        else:
            gone = not rows_of(store, "SELECT 1 FROM sqlite_master WHERE name = 'event_kinds'")
            assert rows_of(store, "PRAGMA foreign_key_check") == []
        assert gone
        # deliveries still refer to events: the rebuilt table is the one they point at
        with pytest.raises(StoreError, match="(?i)foreign key"), store.db.transaction():
            store.db.run("INSERT INTO deliveries (event, webhook, body, status, attempts, next_try) "
                         "VALUES (99, 1, 'x', 'pending', 0, 0)")
        # A kind no migration ever named: an event, numbered after the old one, for the webhook of every kind.
        with registered(), store.db.transaction():
            event = emit(store.db, "deploy", Deployed(label="production"))
        assert event is not None and event > 1
        assert rows_of(store, f"SELECT webhook FROM deliveries WHERE event = {event}") == [(1,)]


def rows_of(store: Store, query: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in store.db.rows(query)]


def test_a_sqlite_store_of_schema_6_without_events_upgrades_too(tmp_path: Any) -> None:
    """The copy and the deferred check with nothing to copy (a store that never had a webhook)."""
    url = f"sqlite:///{tmp_path}/s.db"
    at_schema(url, 6).close()
    assert promptdeck_in_process("store", "upgrade", url)[0] == 0
    with sqlite3.connect(tmp_path / "s.db") as conn:
        assert conn.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0] == (
            "CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, payload TEXT NOT NULL, "
            "created DOUBLE PRECISION NOT NULL, uid TEXT NOT NULL)")
