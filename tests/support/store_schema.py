"""What turns a store of this promptdeck's schema back into one of schema 4, as an older promptdeck left it:
for the tests of ``promptdeck store upgrade`` (a migration applied to a store that lacks it)."""

from __future__ import annotations

from typing import Any

#: What schemas 6 (governance: ``sources.store.governance``) and 5 (webhooks: ``sources.store.events``)
#: added, undone in the opposite order; each statement runs on its own.
UNDO_AFTER_4 = ("DROP TABLE rollout_events", "DROP TABLE rollouts", "DROP TABLE protected_labels",
                "ALTER TABLE positions DROP COLUMN message", "ALTER TABLE positions DROP COLUMN previous",
                "DROP TABLE delivery_attempts", "DROP TABLE deliveries", "DROP TABLE events", "DROP TABLE webhooks",
                "DROP TABLE event_kinds")


def as_schema_4(conn: Any) -> None:
    """Undo schemas 6 and 5 on ``conn`` (sqlite3's or psycopg's, or anything with their ``execute``) and
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
