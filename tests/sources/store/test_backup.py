"""``store backup`` and ``store restore`` of a SQLite store (``sources.store.backup``): a copy made while
another process publishes has every version committed before it began; a restore refuses to replace a store
unless told, never replaces one in use, replaces atomically, refuses a newer schema and upgrades an older one
(its webhooks paused); for PostgreSQL the commands name pg_dump and pg_restore (run in test_copies)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from promptdeck.sources.store import webhooks
from promptdeck.sources.store.backup import backup_sqlite, postgres_commands, restore_sqlite
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.model import StoreError
from promptdeck.sources.store.schema import SCHEMA_VERSION
from tests.support.paths import REPO
from tests.support.store_schema import at_schema, promptdeck_in_process
from tests.support.stores import publish_texts

SECRET = "whsec_" + "a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s="
#: A publisher in its own process: a version of greet.md per commit, its number printed once committed.
WRITER = """
import sys
from promptdeck.sources.store.database import Store
from tests.support.stores import publish_texts
with Store(sys.argv[1], create=True) as store:
    for n in range(1, 100000):
        publish_texts(store, "production", {"greet.md": f"---\\ndescription: Hi\\n---\\nHello {n}\\n"})
        print(n, flush=True)
"""


def versions(path: str) -> list[int]:
    with Store(path) as store:
        return [int(v) for (v,) in store.db.rows("SELECT version FROM files WHERE path = 'greet.md' ORDER BY version")]


def test_a_backup_made_while_another_process_publishes_has_every_committed_version(tmp_path: Path) -> None:
    store = str(tmp_path / "prompts.db")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, store], stdout=subprocess.PIPE, text=True,
                              cwd=REPO, env={**os.environ, "PYTHONPATH": f"{os.environ.get('PYTHONPATH', '')}:{REPO}"})
    try:
        assert writer.stdout is not None
        committed = 0
        while committed < 20:  # the store is being written when the backup begins
            committed = int(writer.stdout.readline())
        assert backup_sqlite(store, str(tmp_path / "backup.db")) == SCHEMA_VERSION
        after = int(writer.stdout.readline())  # still writing after the copy
    finally:
        writer.kill()
        writer.communicate()
    copied = versions(str(tmp_path / "backup.db"))
    assert copied == list(range(1, len(copied) + 1)) and len(copied) >= committed and after > committed
    assert oct(os.stat(tmp_path / "backup.db").st_mode & 0o777) == "0o600"
    assert not os.path.exists(tmp_path / "backup.db-wal")  # one self-contained file
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".promptdeck-")] == []


def filled(path: Path) -> str:
    with Store(str(path), create=True) as store:
        publish_texts(store, "production", {"greet.md": "---\ndescription: Hi\n---\nHello\n"})
        webhooks.add(store.db, "https://example.com/hook", SECRET, [], scopes=[], allow=[], timeout=1, author="ops")
    return str(path)


def test_restore_refuses_a_store_unless_forced_and_never_one_in_use(tmp_path: Path) -> None:
    backup = str(tmp_path / "backup.db")
    backup_sqlite(filled(tmp_path / "prompts.db"), backup)
    target = filled(tmp_path / "other.db")
    with pytest.raises(StoreError, match="holds a store already.*--force"):
        restore_sqlite(backup, target)
    with Store(target) as served, pytest.raises(StoreError, match="in use"):  # a server has it open
        served.db.rows("SELECT 1 FROM publishes")
        restore_sqlite(backup, target, force=True)
    assert restore_sqlite(backup, target, force=True) == SCHEMA_VERSION
    assert versions(target) == [1]
    code, out, err = promptdeck_in_process("store", "restore", backup, target)
    assert code == 1 and "--force" in err and out == ""


def test_a_failed_restore_leaves_the_store_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    backup = str(tmp_path / "backup.db")
    backup_sqlite(filled(tmp_path / "prompts.db"), backup)
    target = Path(filled(tmp_path / "other.db"))
    before = target.read_bytes()

    def crash(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        restore_sqlite(backup, str(target), force=True)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["backup.db", "other.db", "prompts.db"]


def test_a_newer_backup_is_refused_and_an_older_one_upgraded_with_its_webhooks_paused(tmp_path: Path) -> None:
    newer = filled(tmp_path / "newer.db")
    with sqlite3.connect(newer) as db:
        db.execute("UPDATE promptdeck_schema SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="made by a newer promptdeck"):
        restore_sqlite(newer, str(tmp_path / "restored.db"))
    assert not (tmp_path / "restored.db").exists()
    old = at_schema(f"sqlite:///{tmp_path}/old.db", 9)
    old.execute("INSERT INTO webhooks (url, secret, kinds, scopes, allow, timeout, author, created) "
                "VALUES ('https://example.com/', ?, '*', '', '', 1, 'ops', 0)", (SECRET,))
    old.close()
    code, out, err = promptdeck_in_process("store", "restore", str(tmp_path / "old.db"), str(tmp_path / "restored.db"))
    assert code == 0 and f"upgraded from schema 9 to {SCHEMA_VERSION}" in out, err
    with Store(str(tmp_path / "restored.db")) as restored:
        (hook,) = webhooks.listed(restored.db)
        assert hook.paused is not None and "paused" in hook.paused


def test_what_is_not_a_store_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "notes.db").write_bytes(b"hello")
    with pytest.raises(StoreError, match="notes.db.*not a promptdeck store"):
        restore_sqlite(str(tmp_path / "notes.db"), str(tmp_path / "x.db"))
    with pytest.raises(StoreError, match="missing.db' does not exist"):
        backup_sqlite(str(tmp_path / "missing.db"), str(tmp_path / "x.db"))
    sqlite3.connect(tmp_path / "empty.db").close()
    with pytest.raises(StoreError, match="not a promptdeck store"):
        backup_sqlite(str(tmp_path / "empty.db"), str(tmp_path / "x.db"))


def test_for_postgresql_the_commands_are_named_without_the_password() -> None:
    (dump,) = postgres_commands("backup", "postgresql://ops:s3cret@db/prompts", "prompts.dump")
    assert dump == ("pg_dump --format=custom --no-owner --no-privileges --file=prompts.dump "
                    "--dbname='postgresql://ops:***@db/prompts'")
    (restore,) = postgres_commands("restore", "postgresql://ops@db/copy", "prompts.dump")
    assert restore == ("pg_restore --no-owner --no-privileges --exit-on-error --single-transaction "
                       "--dbname=postgresql://ops@db/copy prompts.dump")
    code, _, err = promptdeck_in_process("store", "backup", "postgresql://ops:s3cret@db/prompts", "p.dump")
    assert code == 1 and "nothing was done" in err and "pg_dump --format=custom" in err and "s3cret" not in err
