"""Watching prompt folders and reloading what changed.

Two shapes of the same loop: ``watch_folders`` for servers that run an asyncio
loop (HTTP), ``WatchThread`` for the stdio server, which runs without one.
Both import watchfiles only when they start, after the library has loaded, so
it never delays a server's first answer.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

    from .served import Watched

log = logging.getLogger("promptdeck.watch")


#: The watcher yields (empty-handed) this often: its first yield means it is watching, and then the
#: files changed before that moment are looked for once.
CATCH_UP_MS = 500


def _catch_up(server: Watched) -> bool:
    try:
        server.catch_up()
    except Exception:
        log.exception("looking for changes made while the library loaded failed")
    return True


def _reload(server: Watched, changes: set[tuple[Any, str]]) -> None:
    try:
        server.reload_paths(sorted({path for _, path in changes}))
    except Exception:
        log.exception("reloading the library failed; still serving the previous catalog")


async def watch_folders(server: Watched, stop: asyncio.Event) -> None:
    """Reload changed prompt files until ``stop`` is set (inside an asyncio loop)."""
    roots = server.watch_roots()
    if not roots:
        return
    from watchfiles import awatch

    caught_up = False
    async for changes in awatch(*roots, stop_event=stop, debounce=100, step=20, recursive=True,
                                yield_on_timeout=True, rust_timeout=CATCH_UP_MS):
        if not caught_up:
            caught_up = _catch_up(server)
        if changes:
            _reload(server, changes)


class WatchThread(threading.Thread):
    """Reloads changed prompt files on a thread of its own until ``stop()``."""

    def __init__(self, server: Watched, lock: threading.RLock) -> None:
        super().__init__(name="promptdeck-watch", daemon=True)
        self.server = server
        self.lock = lock
        self._stop_event = threading.Event()

    def run(self) -> None:
        roots = self.server.watch_roots()
        if not roots:
            return
        from watchfiles import watch

        caught_up = False
        for changes in watch(*roots, stop_event=self._stop_event, debounce=100, step=20, recursive=True,
                             raise_interrupt=False, yield_on_timeout=True, rust_timeout=CATCH_UP_MS):
            # The lock keeps a reload from interleaving its notifications with a response being written.
            with self.lock:
                if not caught_up:
                    caught_up = _catch_up(self.server)
                if changes:
                    _reload(self.server, changes)

    @property
    def stopped(self) -> bool:
        """True once started and finished (or told to stop): never start it again."""
        return self._stop_event.is_set() or self.ident is not None

    def stop(self) -> None:
        self._stop_event.set()
