"""Which database a store is, so that a copy of it never delivers webhooks as if it were the original.

A backup restored (``promptdeck store restore``, ``pg_restore``), a SQLite file copied, a database dumped into
another: each holds the original's webhooks, secrets and pending deliveries. Each webhook records the identity
of the database it was last enabled in (``webhooks.enabled_in``: by ``webhook add``, ``webhook resume``, or
the upgrade to schema 10); it delivers only where that is the database's identity now (``deliverable``,
which every claim of a delivery goes through), and is shown paused elsewhere (``paused_reason``).

The identity: of a SQLite store, its file's inode number (a copy, a restore renamed into place, a file
moved to another file system: a new file, a new number; the device number is left out, since an overlay or
network file system may give the same file another after a remount). Of a PostgreSQL store, the cluster's
system identifier (made by initdb, kept by its streaming replicas, so a promoted standby goes on delivering)
and the database's OID (a database made to restore into gets a new one, in the same cluster too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model import StoreMissing

if TYPE_CHECKING:
    from .connection import Connection


def identity(db: Connection) -> str:
    """The identity of the database ``db`` is connected to (``Connection.identity``)."""
    return db.identity()


def paused_reason(enabled_in: str | None, here: str) -> str | None:
    """Why a webhook enabled in ``enabled_in`` does not deliver from the database whose identity is ``here``;
    None when it does. The rule ``deliverable`` writes in SQL."""
    if enabled_in is None:
        return "paused (by `webhook pause`, or restored from a backup older than schema 10)"
    if enabled_in != here:
        return "paused: this store is a copy (restored, or copied from the database it was enabled in)"
    return None


def deliverable(db: Connection) -> tuple[str, str]:
    """The condition (on the webhook ``w``) a delivery's webhook meets to be sent from ``db``, and its argument:
    what every claim of a delivery adds to its query, so no path delivers from a copy."""
    return "w.enabled_in = ?", identity(db)


def pause(db: Connection, hook: int) -> None:
    """Stop webhook ``hook`` delivering (its deliveries wait, and are sent once it is resumed)."""
    _set(db, hook, None)


def resume(db: Connection, hook: int) -> None:
    """Let webhook ``hook`` deliver from this database, and from no other: what it waited to send goes out."""
    _set(db, hook, identity(db))


def _set(db: Connection, hook: int, enabled_in: str | None) -> None:
    with db.transaction():
        if db.run("UPDATE webhooks SET enabled_in = ? WHERE id = ? AND removed IS NULL", enabled_in,
                  hook).rowcount != 1:
            raise StoreMissing(f"no webhook {hook} (promptdeck webhook list shows them)")
