"""What turns a store of this promptdeck's schema back into one of schema 4, as an older promptdeck left it:
for the tests of ``promptdeck store upgrade`` (a migration applied to a store that lacks it)."""

from __future__ import annotations

from typing import Any

#: Schema 5's additions (governance: ``sources.store.governance``), undone; each statement runs on its own.
UNDO_SCHEMA_5 = ("DROP TABLE rollout_events", "DROP TABLE rollouts", "DROP TABLE protected_labels",
                 "ALTER TABLE positions DROP COLUMN message", "ALTER TABLE positions DROP COLUMN previous")


def as_schema_4(conn: Any) -> None:
    """Undo schema 5 on ``conn`` (sqlite3's or psycopg's) and record schema 4."""
    for statement in UNDO_SCHEMA_5:
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
