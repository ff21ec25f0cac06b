"""The two threads that keep a served label current (``StoreSource.attach`` starts them, ``close`` stops them).

*Follow*: a thread follows the label. In PostgreSQL it LISTENs on the store's channel (no polling); a SQLite
store has no notifications, so the thread reads SQLite's ``data_version`` (a counter of other connections'
commits) four times a second. Either way it calls ``StoreSource.sync`` with its own connection when the
label may have moved. A store that goes away is logged once; the last good catalog stays served, and the
thread reconnects with a growing pause and catches up when it is back (``unreachable`` meanwhile).

*Files*: a thread writes every file of the label's position not yet in the source's private folder, a page
at a time, so the label stays renderable through a store outage; for a listed label of a PostgreSQL store it
then has the source copy the position's listing locally (``StoreSource.mirror``). It waits for ``behind``,
which the source calls whenever the folder may lack files of the label's position.

Webhook delivery is not started here: only ``serve`` delivers (``cli.stopping.delivering``).
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Protocol

from .database import Store
from .model import StoreError
from .schema import CHANNEL
from .urls import is_postgres_url, shown_url, without_secrets

log = logging.getLogger("promptdeck.store")

#: How often a SQLite store is looked at for new commits, and the longest pause between reconnects.
POLL_SECONDS = 0.25
MAX_BACKOFF_SECONDS = 10.0
#: How long the files thread waits after a label move before it writes the position's files.
WRITE_PAUSE_SECONDS = 0.5
#: Files fetched per query when writing a label's files; bounds the memory a large label takes meanwhile.
PAGE_FILES = 500


class Followed(Protocol):
    """What the threads need of the source they keep current (``StoreSource``)."""

    @property
    def url(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def position(self) -> int | None: ...
    @property
    def from_listing(self) -> bool: ...
    def sync(self, store: Store | None = None) -> bool: ...
    def put(self, path: str, version: int, data: bytes, position: int) -> bool: ...
    def mirror(self, store: Store, position: int) -> None: ...


class Followers:
    """The follow and files threads of one ``StoreSource``."""

    def __init__(self, source: Followed) -> None:
        self.source = source
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        #: set when the folder may lack files of the label's position (the files thread's cue)
        self._unwritten = threading.Event()
        #: whether the store was unreachable when last tried (logged once, until it is back)
        self.failing = False

    def start(self) -> None:
        for target, name in ((self._follow, "follow"), (self._write_rest, "files")):
            thread = threading.Thread(target=target, name=f"promptdeck-store-{self.source.label}-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        """Stop both threads (each within a few seconds: a poll, a notification wait or a page)."""
        self._stop.set()
        self._unwritten.set()
        for thread in self._threads:
            thread.join(5)

    def behind(self) -> None:
        """The folder may lack files of the label's position now: the files thread writes them."""
        self._unwritten.set()

    # -- follow ----------------------------------------------------------------------------------

    def _follow(self) -> None:
        url, pause = self.source.url, POLL_SECONDS
        while not self._stop.is_set():
            try:
                if is_postgres_url(url):
                    self._listen()
                else:
                    self._poll()
                pause = POLL_SECONDS
            except Exception as exc:  # a store can fail in any way; serving goes on regardless
                if not self.failing:
                    log.error("the store %s is not reachable (%s); still serving label %s as last loaded",
                              shown_url(url), without_secrets(_reason(exc), url), self.source.label)
                self.failing = True
                self._stop.wait(pause)
                pause = min(pause * 2, MAX_BACKOFF_SECONDS)

    def _caught_up(self) -> None:
        """Called once connected and synced: the end of an outage, if there was one."""
        if self.failing:
            log.warning("the store is reachable again; label %s is current", self.source.label)
            self.failing = False

    def _listen(self) -> None:
        import psycopg

        url = self.source.url
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn, Store(url) as store:
            conn.execute(f"LISTEN {CHANNEL}")
            self.source.sync(store)  # whatever moved while we were not listening
            self._caught_up()
            while not self._stop.is_set():
                for note in conn.notifies(timeout=1.0):
                    if note.payload == self.source.label:
                        self.source.sync(store)

    def _poll(self) -> None:
        with Store(self.source.url) as store:
            conn = store.db.driver
            seen: Any = None
            self.source.sync(store)
            self._caught_up()
            while not self._stop.wait(POLL_SECONDS):
                # Other connections' commits, on the connection that then reads what they wrote.
                now = conn.execute("PRAGMA data_version").fetchone()[0]
                if now != seen:
                    seen = now
                    self.source.sync(store)

    # -- files -----------------------------------------------------------------------------------

    def _write_rest(self) -> None:
        """Write every file of the label's position not yet in the folder, a page at a time."""
        source = self.source
        pause = 0.0  # none at start; after a move, leave the moment to the notifications it causes
        while not self._stop.is_set():
            self._unwritten.wait()
            if self._stop.wait(pause):
                return
            pause = WRITE_PAUSE_SECONDS
            self._unwritten.clear()
            try:
                with Store(source.url) as store:
                    position, after = source.position, ""
                    while position is not None and position == source.position and not self._stop.is_set():
                        page = store.reads.contents(position, after=after, limit=PAGE_FILES)
                        if not page:
                            break
                        for path, version, data in page:
                            source.put(path, version, data, position)
                        after = page[-1][0]
                    if source.from_listing and is_postgres_url(source.url) and position is not None \
                            and position == source.position:
                        source.mirror(store, position)
            except StoreError as exc:  # tried again at the next move; the follower logs the outage
                log.debug("writing the files of label %s stopped: %s", source.label, exc)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
