"""A connection to a store, in either database: one small SQL dialect, one write lock, the schema checked.

``Connection`` is what every other part of the store takes (composition, not inheritance): ``reads.Reads``
(the queries), ``governance.Governance`` (label moves, protections, rollouts), ``events`` and ``webhooks``
(the outbox), ``delivery`` (claiming and recording deliveries), and ``database.Store``, which composes them.
Its statements are written once with ``?`` placeholders; ``rows``, ``run`` and ``many`` turn them into the
driver's, and ``transaction`` is the one write lock every writer takes.
"""

from __future__ import annotations

import logging
import os
import secrets
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, Self

from .model import StoreError, first_line
from .schema import SCHEMA_VERSION, migration
from .urls import create_private, is_postgres_url, shown_url, sqlite_path, warn_if_readable, without_secrets

log = logging.getLogger("promptdeck.store")

class Connection:
    """A store's connection and its one SQL dialect: opening, statements, transactions, the schema."""

    def __init__(self, url: str, *, create: bool = False, timeout: float = 10) -> None:
        """Open the store; with ``create``, make (or upgrade) its schema where needed. ``timeout``: how long
        connecting to a PostgreSQL store may take, in seconds."""
        self.url = url
        self.timeout = timeout
        self.postgres = is_postgres_url(url)
        self._errors: tuple[type[BaseException], ...] = (sqlite3.Error,)
        self._conn: Any = self._connect(create)
        #: the schema version ``upgrade`` found (0: none), when this opening upgraded the store
        self.upgraded_from: int | None = None
        try:
            self._check_schema(create)
        except BaseException:
            self._conn.close()  # refused: the driver's connection is not left for the garbage collector
            raise

    # -- connecting ------------------------------------------------------------------------------

    def _connect(self, create: bool) -> Any:
        if self.postgres:
            try:
                import psycopg
            except ImportError:
                from ...extras import needs  # the command that works from a clone: not on PyPI

                raise StoreError(needs("a PostgreSQL store", "store")) from None
            self._errors = (psycopg.Error,)
            try:
                return psycopg.connect(self.url, autocommit=True, connect_timeout=max(1, round(self.timeout)))
            except psycopg.Error as exc:
                raise StoreError(f"cannot reach the store {shown_url(self.url)}: {self._why(exc)}") from None
        path = sqlite_path(self.url)
        if not create and not os.path.exists(path):
            # shown_url: a mistyped postgresql:// URL is taken for a path, password and all.
            raise StoreError(f"no store at {shown_url(path)!r} (publish to it first, or run "
                             "`promptdeck store upgrade`)")
        try:
            if create:
                create_private(path)
            else:
                warn_if_readable(path)
            conn = sqlite3.connect(path, isolation_level=None, timeout=30, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store {shown_url(path)!r}: {exc}") from None
        except OSError as exc:
            raise StoreError(f"cannot create the store {shown_url(path)!r}: {exc.strerror}") from None
        return conn

    def _why(self, exc: BaseException) -> str:
        """The first line of a driver's error, without the secrets of this store's URL."""
        return without_secrets(first_line(exc), self.url)

    @property
    def driver(self) -> Any:
        """The driver's connection (sqlite3 or psycopg), for what the statements here do not cover."""
        return self._conn

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s") if self.postgres else statement

    def rows(self, statement: str, *args: Any) -> list[tuple[Any, ...]]:
        """Every row ``statement`` (``?`` placeholders) answers."""
        return list(self.run(statement, *args).fetchall())

    def run(self, statement: str, *args: Any) -> Any:
        """Run ``statement`` (``?`` placeholders); the driver's cursor (``fetchone``, ``rowcount``)."""
        try:
            return self._conn.execute(self._sql(statement), args)
        except self._errors as exc:
            # One line naming the store, never a driver traceback: a full disk, a lost connection.
            raise StoreError(f"the store {shown_url(self.url)} failed: {self._why(exc)}") from exc

    def many(self, statement: str, rows: Sequence[tuple[Any, ...]]) -> None:
        """Run ``statement`` once for each of ``rows``."""
        if self.postgres:
            with self._conn.cursor() as cursor:
                cursor.executemany(self._sql(statement), rows)
        else:
            self._conn.executemany(statement, rows)

    @contextmanager
    def transaction(self, lock: str = "LOCK TABLE publishes IN EXCLUSIVE MODE") -> Iterator[None]:
        """One write transaction, holding the store's lock: publishers and label moves queue here.

        SQLite's ``BEGIN IMMEDIATE`` takes the database's one write lock; in PostgreSQL ``lock`` does.
        """
        self.run("BEGIN" if self.postgres else "BEGIN IMMEDIATE")
        try:
            if self.postgres:
                self.run(lock)
            yield
        except BaseException:
            with suppress(StoreError):  # the database may have ended the transaction itself (SQLite I/O errors)
                self.run("ROLLBACK")
            raise
        self.run("COMMIT")

    def identity(self) -> str:
        """Which database this is (``copies``): a SQLite file's inode number; a PostgreSQL cluster's system
        identifier and the database's OID."""
        if self.postgres:
            system, oid = self.rows("SELECT (SELECT system_identifier FROM pg_control_system()), "
                                    "(SELECT oid FROM pg_database WHERE datname = current_database())")[0]
            return f"postgresql {system} {oid}"
        try:
            return f"sqlite {os.stat(sqlite_path(self.url)).st_ino}"
        except OSError as exc:
            raise StoreError(f"cannot read the store file {shown_url(self.url)!r}: {exc.strerror}") from None

    # -- schema ----------------------------------------------------------------------------------

    def _schema_version(self) -> int | None:
        """The store's schema version; None when it has no promptdeck schema at all."""
        if self.postgres:
            present = self.rows("SELECT to_regclass('promptdeck_schema') IS NOT NULL")[0][0]
        else:
            present = bool(self.rows("SELECT 1 FROM sqlite_master WHERE name = 'promptdeck_schema'"))
        if not present:
            return None
        rows = self.rows("SELECT version FROM promptdeck_schema")
        return int(rows[0][0]) if rows else None

    def _check_schema(self, create: bool) -> None:
        version = self._schema_version()
        if version is None:
            if not create:
                raise StoreError(f"{shown_url(self.url)} is not a promptdeck store yet (publish to it, or run "
                                 "`promptdeck store upgrade`)")
            self.upgrade()
            return
        if version > SCHEMA_VERSION:
            raise StoreError(f"the store {shown_url(self.url)} has schema {version}, made by a newer promptdeck; "
                             f"this one knows schema {SCHEMA_VERSION} at most: upgrade promptdeck")
        if version < SCHEMA_VERSION and create:
            self.upgrade()
        elif version < SCHEMA_VERSION:
            raise StoreError(f"the store {shown_url(self.url)} has schema {version}: run `promptdeck store upgrade "
                             f"{shown_url(self.url)}` first")

    def upgrade(self) -> int:
        """Bring the schema to ``SCHEMA_VERSION``; the version it had (0: none)."""
        # Two first publishers at once: one creates the schema, the other waits for it and finds it (no
        # table exists yet to lock, so an advisory lock).
        with self.transaction("SELECT pg_advisory_xact_lock(7151)"):
            found = self._schema_version() or 0
            if found > SCHEMA_VERSION:
                raise StoreError(f"the store has schema {found}, newer than this promptdeck's {SCHEMA_VERSION}")
            for version in range(found + 1, SCHEMA_VERSION + 1):
                for statement in migration(version, self.postgres):
                    self.run(statement)
                if version == 2:
                    self.run("INSERT INTO state_key (key) VALUES (?)", secrets.token_urlsafe(32))
                if version == 10:  # the webhooks a store has were enabled where it is being upgraded
                    self.run("UPDATE webhooks SET enabled_in = ?", self.identity())
            if found == 0:
                self.run("INSERT INTO promptdeck_schema (version) VALUES (?)", SCHEMA_VERSION)
            elif found < SCHEMA_VERSION:
                self.run("UPDATE promptdeck_schema SET version = ?", SCHEMA_VERSION)
            self.upgraded_from = found
            return found
