"""Usage in the store (schema 11, ``prompt_usage``): renders per prompt and hour, by version, label, rollout
arm and client, written in batches by a background thread and read by ``/api/store/usage`` and
``promptdeck usage``.

The render path only increments a dict (``prompts.usage.Usage``); ``UsageWriter`` drains it every
``FLUSH_SECONDS`` on its own connection and adds the counts with one upsert per row (``renders = renders +
n``), so replicas writing the same row add up. What a crash loses is what was counted since the last flush:
at most ``FLUSH_SECONDS`` of renders of that process (docs/usage.md). Rows stay bounded: a prompt's hour
keeps at most ``MAX_CLIENTS`` client names in the store too (the names already stored count; the rest go to
``OTHER``), and versions, labels and arms are the store's own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

from ...prompts.usage import MAX_CLIENTS, OTHER, Key, Usage
from .connection import Connection
from .model import StoreError

log = logging.getLogger("promptdeck.store")

#: how often the counts are written; a crash loses at most this long of one process's counts
FLUSH_SECONDS = 10.0

_UPSERT = ("INSERT INTO prompt_usage (prompt, hour, version, label, arm, client, renders) "
           "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (prompt, hour, version, label, arm, client) "
           "DO UPDATE SET renders = prompt_usage.renders + excluded.renders")


def add(db: Connection, rows: dict[Key, int]) -> None:
    """Add ``rows`` to the store in one transaction, clients past ``MAX_CLIENTS`` a prompt and hour (those
    stored already counted) written as ``OTHER``."""
    if not rows:
        return
    hours = sorted({key.hour for key in rows})
    with db.transaction("SELECT 1"):  # rows, not the publish lock: an upsert waits only for the same row
        stored: dict[tuple[str, int], set[str]] = {}
        marks = ", ".join("?" * len(hours))
        for prompt, hour, client in db.rows(f"SELECT DISTINCT prompt, hour, client FROM prompt_usage "
                                            f"WHERE hour IN ({marks}) AND client <> ?", *hours, OTHER):
            stored.setdefault((prompt, int(hour)), set()).add(client)
        batch: dict[Key, int] = {}
        for key, n in rows.items():
            seen = stored.setdefault((key.prompt, key.hour), set())
            if key.client != OTHER and key.client not in seen:
                if len(seen) >= MAX_CLIENTS:
                    key = key._replace(client=OTHER)
                else:
                    seen.add(key.client)
            batch[key] = batch.get(key, 0) + n
        db.many(_UPSERT, [(*key, n) for key, n in sorted(batch.items())])


def read(db: Connection, since: float, prompts: Iterable[str] | None = None) -> list[tuple[Key, int]]:
    """The rows of hours from ``since`` on (of ``prompts`` only, when given), oldest first."""
    rows = db.rows("SELECT prompt, hour, version, label, arm, client, renders FROM prompt_usage WHERE hour >= ? "
                   "ORDER BY hour, prompt, version, label, arm, client", int(since) // 3600 * 3600)
    wanted = None if prompts is None else set(prompts)
    return [(Key(p, int(h), int(v), lb, a, c), int(n)) for p, h, v, lb, a, c, n in rows
            if wanted is None or p in wanted]


def last_rendered(db: Connection) -> dict[str, int]:
    """Each prompt ever counted -> the start of the last hour it was rendered in."""
    return {prompt: int(hour) for prompt, hour in db.rows("SELECT prompt, MAX(hour) FROM prompt_usage GROUP BY prompt")}


class UsageWriter(threading.Thread):
    """Drains ``usage`` into the store at ``url`` every ``seconds``, never on a request's path. A store that
    cannot be written keeps the counts for the next try (merged back into the window)."""

    def __init__(self, url: str, usage: Usage, seconds: float = FLUSH_SECONDS) -> None:
        super().__init__(name="promptdeck-usage", daemon=True)
        self.url, self.usage, self.seconds = url, usage, seconds
        usage.keep = False  # the store keeps them
        self._stop_event = threading.Event()
        self._db: Connection | None = None
        self._held: dict[Key, int] = {}

    def run(self) -> None:
        while not self._stop_event.wait(self.seconds):
            self.flush()
        self.flush()

    def flush(self) -> None:
        rows = self.usage.drain()
        for key, n in self._held.items():
            rows[key] = rows.get(key, 0) + n
        try:
            if self._db is None:
                self._db = Connection(self.url)
            add(self._db, rows)
            self._held = {}
        except StoreError as exc:
            log.warning("usage not written yet (kept for the next try): %s", exc)
            self._held = dict(list(rows.items())[:10_000])  # bounded while the store is away
            if self._db is not None:
                self._db.close()
                self._db = None

    def stop(self, timeout: float = 10) -> None:
        """Write what is counted, and stop."""
        self._stop_event.set()
        if self.is_alive():
            self.join(timeout)
        if self._db is not None:
            self._db.close()
            self._db = None
