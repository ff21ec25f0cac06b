"""The threads that keep a served label current (sources/store/followers.py), on SQLite (its commit counter) and a
real PostgreSQL cluster (LISTEN/NOTIFY), around a recording source: a move is followed, the position's files are
written, an unreachable store is waited out and caught up with, and a stop ends both threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from promptdeck.sources.store.database import Store
from promptdeck.sources.store.followers import Followers
from promptdeck.sources.store.urls import is_postgres_url
from tests.support.stores import publish_texts

WAIT = 60.0


class Recording:
    """A source as the followers see it (``followers.Followed``): it records what they ask of it."""

    def __init__(self, url: str, *, from_listing: bool = False) -> None:
        self.url = url
        self.label = "production"
        self.position: int | None = None
        self.from_listing = from_listing
        self.synced: list[int | None] = []
        self.written: dict[str, tuple[int, bytes]] = {}
        self.mirrored: list[int] = []
        self._changed = threading.Condition()

    def sync(self, store: Store | None = None) -> bool:
        assert store is not None  # the follower's own connection
        head = store.reads.head(self.label)
        with self._changed:
            self.position = head[0] if head is not None else None
            self.synced.append(self.position)
            self._changed.notify_all()
        return True

    def put(self, path: str, version: int, data: bytes, position: int) -> bool:
        with self._changed:
            self.written[path] = (version, data)
            self._changed.notify_all()
        return True

    def mirror(self, store: Store, position: int) -> None:
        with self._changed:
            self.mirrored.append(position)
            self._changed.notify_all()

    def until(self, condition: Callable[[], bool]) -> None:
        with self._changed:
            assert self._changed.wait_for(condition, WAIT)


def threads(label: str = "production") -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.startswith(f"promptdeck-store-{label}-"))


def test_a_move_is_followed_and_its_files_written(store_url: str) -> None:
    with Store(store_url, create=True) as store:
        publish_texts(store, "production", {"greet.md": "Hello\n", "docs/notes.txt": "one"})
        first = store.reads.require_position("production")
        source = Recording(store_url, from_listing=True)
        followers = Followers(source)
        followers.start()
        try:
            assert threads() == ["promptdeck-store-production-files", "promptdeck-store-production-follow"]
            source.until(lambda: source.synced[-1:] == [first])
            followers.behind()
            source.until(lambda: source.written == {"greet.md": (1, b"Hello\n"), "docs/notes.txt": (1, b"one")})
            publish_texts(store, "production", {"greet.md": "Hi\n", "docs/notes.txt": "one"})
            second = store.reads.require_position("production")
            source.until(lambda: source.synced[-1:] == [second])
            followers.behind()
            source.until(lambda: source.written["greet.md"] == (2, b"Hi\n"))
            if is_postgres_url(store_url):  # a listed label of a PostgreSQL store is copied locally
                source.until(lambda: second in source.mirrored)
            assert not followers.failing
        finally:
            followers.stop()
        assert threads() == []
        assert source.mirrored == [] or is_postgres_url(store_url)


def test_an_unreachable_store_is_waited_out_and_caught_up_with(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/later.db"
    source = Recording(url)
    followers = Followers(source)
    followers.start()
    try:
        deadline = time.monotonic() + WAIT
        while not followers.failing:  # no store there yet
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert source.synced == []
        with Store(url, create=True) as store:
            publish_texts(store, "production", {"greet.md": "Hello\n"})
            position = store.reads.require_position("production")
        source.until(lambda: source.synced[-1:] == [position])
        deadline = time.monotonic() + WAIT
        while followers.failing:  # cleared once synced
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        followers.stop()
    assert threads() == []
