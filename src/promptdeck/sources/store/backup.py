"""Backing up a SQLite store while it is served, and restoring it; the commands that do it for PostgreSQL.

A SQLite backup uses SQLite's online backup API (``sqlite3.Connection.backup``), copying every page under one
read transaction: a store is in WAL mode, so servers serve and publishers write meanwhile, and the copy is
one committed state of the store (every version committed before the copy began, none half-written). Both a
backup and a restore are written to a temporary file beside their destination and renamed over it, so a
crash leaves the old file or the new one, never part of one.

PostgreSQL is backed up with its own tools, ``pg_dump`` and ``pg_restore`` (``postgres_commands``): they
must match the server's version, and take their connection settings, roles and passwords from where the
operator keeps them, so promptdeck names the exact commands rather than running them.

A restored store is a copy: its webhooks do not deliver until resumed (``copies``).
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Callable
from contextlib import closing, suppress

from .model import StoreError
from .schema import SCHEMA_VERSION
from .urls import PRIVATE_MODE, shown_url, sqlite_path


def backup_sqlite(url: str, file: str) -> int:
    """Copy the SQLite store at ``url`` to ``file`` (replaced atomically when it exists), while it may be
    served and written; the copy's schema version."""
    path = sqlite_path(url)
    version = schema_of(path, "the store")
    # Not read-only: a reader of a WAL database may need to make its -shm file.
    with closing(sqlite3.connect(path, timeout=30)) as source:
        _copy_to(source, file)
    return version


def restore_sqlite(file: str, url: str, *, force: bool = False) -> int:
    """Make the SQLite store at ``url`` a copy of the backup ``file``, upgraded to this promptdeck's schema; the
    schema version the backup had.

    A store that holds anything is kept unless ``force``; one that a process has open is never replaced
    (its servers would go on writing to the file the restore unlinked)."""
    path = sqlite_path(url)
    version = schema_of(file, "the backup")
    if os.path.exists(path) and os.path.getsize(path) > 0:
        if not force:
            raise StoreError(f"{shown_url(path)!r} holds a store already: restoring would replace it (--force "
                             "replaces it; stop every process that serves it first)")
        _require_unused(path)
    with closing(sqlite3.connect(file, timeout=30)) as source:
        _copy_to(source, path, _upgraded if version < SCHEMA_VERSION else None)
    return version


def _upgraded(path: str) -> None:
    """Bring a restored copy of an older schema to this one (``store upgrade``'s code) before it takes the
    store's place. A backup made before schema 10 records no identity for its webhooks, and the upgrade
    would take the copy for the database they were enabled in: they are paused instead."""
    from .connection import Connection

    with Connection(path, create=True) as db, db.transaction():
        db.run("UPDATE webhooks SET enabled_in = NULL")


def schema_of(path: str, what: str) -> int:
    """The schema version of the SQLite store at ``path``: refused when it is not one, is damaged, or is newer
    than this promptdeck (which cannot tell what it holds)."""
    if not os.path.isfile(path):
        raise StoreError(f"{what} {shown_url(path)!r} does not exist")
    try:
        with closing(sqlite3.connect(path, timeout=30)) as db:  # only read (it exists: not created)
            if db.execute("PRAGMA quick_check").fetchone() != ("ok",):
                raise StoreError(f"{what} {shown_url(path)!r} is damaged (SQLite's quick_check fails)")
            if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'promptdeck_schema'").fetchall():
                raise StoreError(f"{what} {shown_url(path)!r} is not a promptdeck store")
            row = db.execute("SELECT version FROM promptdeck_schema").fetchone()
    except sqlite3.Error as exc:
        raise StoreError(f"{what} {shown_url(path)!r} is not a promptdeck store: {exc}") from None
    version = int(row[0]) if row else 0
    if version > SCHEMA_VERSION:
        raise StoreError(f"{what} {shown_url(path)!r} has schema {version}, made by a newer promptdeck; this one "
                         f"knows schema {SCHEMA_VERSION} at most: upgrade promptdeck")
    return version


def _require_unused(path: str) -> None:
    """Refuse when a process has the store at ``path`` open: a checkpoint that empties the -wal file and the
    -wal file's removal at the last close are what show that none has."""
    with closing(sqlite3.connect(path, timeout=30)) as db, suppress(sqlite3.DatabaseError):  # not a database
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if os.path.exists(f"{path}-wal"):
        raise StoreError(f"{shown_url(path)!r} is in use (its -wal file stays): stop every process that serves "
                         "or writes it, then restore")


def _copy_to(source: sqlite3.Connection, file: str, prepare: Callable[[str], None] | None = None) -> None:
    """Copy ``source`` with the online backup API into a new private file beside ``file``, renamed over it
    (``prepare`` called with the new file's path before: its inode is the one the store will have)."""
    folder = os.path.dirname(os.path.abspath(file))
    fd, temporary = tempfile.mkstemp(prefix=".promptdeck-", suffix=".db", dir=folder)
    try:
        os.fchmod(fd, PRIVATE_MODE)  # a store holds restricted prompts, webhook secrets and the signing key
        os.close(fd)
        with closing(sqlite3.connect(temporary)) as copy:
            # In one step (pages=-1): one read transaction, so one snapshot, which a store in WAL mode keeps while
            # its writers go on. Copied in small steps, each write by another connection would start it again,
            # and a store written often would never be copied.
            source.backup(copy, pages=-1)
            # One self-contained file (no -wal beside it); a server opening it puts it back in WAL mode.
            copy.execute("PRAGMA journal_mode=DELETE")
        if prepare is not None:
            prepare(temporary)
            with closing(sqlite3.connect(temporary)) as copy:  # whole again, with no -wal beside it
                copy.execute("PRAGMA journal_mode=DELETE")
        with open(temporary, "rb") as done:
            os.fsync(done.fileno())
        os.replace(temporary, file)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
    with suppress(OSError):  # the rename itself made durable, where the platform allows a folder's fsync
        folder_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(folder_fd)
        finally:
            os.close(folder_fd)


#: pg_dump's flags: the custom format (compressed, restored by pg_restore in any order or in parts), without
#: the source's owners and grants, which name roles the cluster restored into may not have.
PG_DUMP_FLAGS = ("--format=custom", "--no-owner", "--no-privileges")
#: pg_restore's flags: into an empty database, all or nothing (one transaction, stopped at the first error:
#: a database that holds a store already fails on its first table), its objects owned by the restoring role.
PG_RESTORE_FLAGS = ("--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction")


def postgres_commands(kind: str, url: str, file: str) -> list[str]:
    """The exact command that backs up (``kind`` "backup") or restores a PostgreSQL store, its URL shown
    without its password (give that in ``$PGPASSWORD`` or ~/.pgpass, not on a command line ``ps`` shows)."""
    import shlex

    shown = shlex.quote(shown_url(url))
    if kind == "backup":
        return [f"pg_dump {' '.join(PG_DUMP_FLAGS)} --file={shlex.quote(file)} --dbname={shown}"]
    return [f"pg_restore {' '.join(PG_RESTORE_FLAGS)} --dbname={shown} {shlex.quote(file)}"]
