"""Stores as an older promptdeck left them, for the tests of ``promptdeck store upgrade`` (a migration applied
to a store that lacks it): this promptdeck's schema turned back into schema 4 (``as_schema_4``), or a new
store made with the migrations up to a version only (``at_schema``)."""

from __future__ import annotations

import secrets
import sqlite3
from typing import Any

from promptdeck.sources.store.schema import migration
from promptdeck.sources.store.urls import is_postgres_url, sqlite_path

#: What schemas 11 (usage: ``sources.store.usage``), 9 (reviews: ``sources.store.proposals``), 8 (git
#: provenance and bases: ``sources.store.sync``), 7 (kinds of event in code: ``sources.store.event_kinds``),
#: 6 (governance: ``sources.store.governance``) and 5 (webhooks: ``sources.store.events``) added, undone in
#: the opposite order; each statement runs on its own.
UNDO_AFTER_4 = ("DROP TABLE prompt_usage",
                "DROP TABLE proposal_reviews", "DROP TABLE proposal_files", "DROP TABLE proposals",
                "DROP TABLE label_bases", "ALTER TABLE publishes DROP COLUMN git_commit",
                "ALTER TABLE publishes DROP COLUMN git_branch", "ALTER TABLE publishes DROP COLUMN git_dirty",
                "DROP TABLE rollout_events", "DROP TABLE rollouts", "DROP TABLE protected_labels",
                "ALTER TABLE positions DROP COLUMN message", "ALTER TABLE positions DROP COLUMN previous",
                "DROP TABLE delivery_attempts", "DROP TABLE deliveries", "DROP TABLE events", "DROP TABLE webhooks")


def at_schema(url: str, version: int) -> Any:
    """A new store at ``url`` made by the migrations up to ``version``, as a promptdeck of that schema made
    it: its open connection (sqlite3's or psycopg's, committing each statement), for the test to fill."""
    postgres = is_postgres_url(url)
    if postgres:
        import psycopg

        conn: Any = psycopg.connect(url, autocommit=True)
    else:
        conn = sqlite3.connect(sqlite_path(url), isolation_level=None)
        conn.execute("PRAGMA foreign_keys=ON")
    for number in range(1, version + 1):
        for statement in migration(number, postgres):
            conn.execute(statement)
    mark = "%s" if postgres else "?"
    conn.execute(f"INSERT INTO promptdeck_schema (version) VALUES ({mark})", (version,))
    if version >= 2:  # as ``upgrade`` makes it
        conn.execute(f"INSERT INTO state_key (key) VALUES ({mark})", (secrets.token_urlsafe(32),))
    return conn


def as_schema_4(conn: Any) -> None:
    """Undo schemas 7, 6 and 5 on ``conn`` (sqlite3's or psycopg's, or anything with their ``execute``) and
    record schema 4."""
    for statement in UNDO_AFTER_4:
        conn.execute(statement)
    conn.execute("UPDATE promptdeck_schema SET version = 4")


def promptdeck_in_process(*args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the command line run in this process (click's runner): for the many
    refusals a test checks, each of which would otherwise start an interpreter."""
    from click.testing import CliRunner

    from promptdeck.cli.main import main

    result = CliRunner().invoke(main, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr
