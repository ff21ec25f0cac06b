"""Usage in the store (sources/store/usage.py, schema 11): upserts that add up across replicas, rows bounded
per prompt and hour whatever the clients, the writer that drains in batches, and the upgrade from schema 10."""

from __future__ import annotations

import pytest

from promptdeck.prompts.usage import MAX_CLIENTS, OTHER, Key, Usage
from promptdeck.sources.store.connection import Connection
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.model import StoreError
from promptdeck.sources.store.schema import SCHEMA_VERSION
from promptdeck.sources.store.usage import UsageWriter, add, last_rendered, read
from tests.support.store_schema import at_schema, promptdeck_in_process
from tests.support.usage import Served

GREET = Served("greet", 1, "production")

HOUR = 1_800_000_000 // 3600 * 3600


def _store(url: str) -> Connection:
    Store(url, create=True).close()
    return Connection(url)


def test_two_replicas_writing_the_same_row_add_up(store_url: str) -> None:
    first, second = _store(store_url), Connection(store_url)
    try:
        key = Key("greet", HOUR, 2, "production", "rollout", "claude-code")
        add(first, {key: 3})
        add(second, {key: 4, key._replace(hour=HOUR + 3600): 1})
        assert read(first, HOUR) == [(key, 7), (key._replace(hour=HOUR + 3600), 1)]
        assert read(first, HOUR + 3600, ["greet"]) == [(key._replace(hour=HOUR + 3600), 1)]
        assert read(first, HOUR, ["other"]) == []
        assert last_rendered(first) == {"greet": HOUR + 3600}
    finally:
        first.close()
        second.close()


def test_rows_of_a_prompt_and_hour_stay_bounded_over_many_flushes(store_url: str) -> None:
    db = _store(store_url)
    try:
        for batch in range(5):  # each flush within its own cap, new names each time: the store's cap holds
            add(db, {Key("greet", HOUR, 1, "", "", f"c{batch}-{i}"): 1 for i in range(MAX_CLIENTS)})
        rows = read(db, HOUR)
        assert len(rows) == MAX_CLIENTS + 1 and sum(n for _, n in rows) == 5 * MAX_CLIENTS
        assert dict(rows)[Key("greet", HOUR, 1, "", "", OTHER)] == 4 * MAX_CLIENTS
    finally:
        db.close()


def test_the_writer_drains_in_batches_and_flushes_on_stop(store_url: str) -> None:
    _store(store_url).close()
    usage = Usage()
    writer = UsageWriter(store_url, usage, seconds=3600)  # no scheduled flush in this test: only stop's
    writer.start()
    assert usage.keep is False  # the store keeps them, not memory
    for _ in range(5):
        usage.count(GREET, "", "app")
    writer.stop()
    assert not writer.is_alive()
    with Connection(store_url) as db:
        [(key, n)] = read(db, 0)
    assert (key.prompt, key.version, key.label, key.client, n) == ("greet", 1, "production", "app", 5)


def test_a_schema_10_store_is_upgraded_and_a_newer_one_refused(store_url: str) -> None:
    at_schema(store_url, 10).close()
    with pytest.raises(StoreError, match="run `promptdeck store upgrade"):
        Connection(store_url)
    code, out, _ = promptdeck_in_process("store", "upgrade", store_url)
    assert code == 0 and f"upgraded the store from schema 10 to {SCHEMA_VERSION}" in out, out
    with Connection(store_url) as db:
        add(db, {Key("greet", HOUR, 1, "", "", "a"): 1})
        db.run("UPDATE promptdeck_schema SET version = ?", SCHEMA_VERSION + 1)
    with pytest.raises(StoreError, match=f"has schema {SCHEMA_VERSION + 1}, made by a newer promptdeck"):
        Connection(store_url)
