"""Watching prompt folders (server/watch.py), both shapes: a thread for stdio and a coroutine for an event
loop. Changes made while the watcher started are caught up once, each change reaches ``reload_paths`` by
path, and a reload that fails is logged and watching goes on. The folders are real, watched by watchfiles."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from promptdeck.server.watch import WatchThread, watch_folders

DEADLINE = 60.0


class Library:
    """What the watcher needs of a server (``served.Watched``), recording what it is told."""

    def __init__(self, roots: list[str], fail_first: bool = False) -> None:
        self.roots = roots
        self.caught_up = 0
        self.reloaded: list[list[str]] = []
        self.fail_first = fail_first
        self.lock = threading.Lock()

    def watch_roots(self) -> list[str]:
        return self.roots

    @property
    def loaded(self) -> bool:
        return True

    def catch_up(self) -> bool:
        self.caught_up += 1
        return False

    def reload_paths(self, paths: Iterable[str]) -> bool:
        with self.lock:
            self.reloaded.append(list(paths))
            if self.fail_first and len(self.reloaded) == 1:
                raise OSError("the disk went away")
        return True

    def paths(self) -> set[str]:
        with self.lock:
            return {path for batch in self.reloaded for path in batch}


def until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.02)


def test_the_thread_catches_up_once_and_reloads_each_change(tmp_path: Path,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "sub").mkdir()  # there before the watcher: a folder made afterwards is watched once noticed
    library = Library([str(tmp_path)], fail_first=True)
    watcher = WatchThread(library, threading.RLock())
    watcher.start()
    try:
        until(lambda: library.caught_up == 1, "the watcher's first pass")
        first = tmp_path / "a.md"
        with caplog.at_level(logging.ERROR, "promptdeck.watch"):
            first.write_text("a\n")
            until(lambda: str(first) in library.paths(), "a.md reloaded")
            # logged by the watcher's thread after the reload raised, which may be after the path was recorded
            until(lambda: "reloading the library failed; still serving the previous catalog" in caplog.text,
                  "the failed reload logged")
        second = tmp_path / "sub" / "b.md"
        second.write_text("b\n")  # after a failed reload the watcher still watches, below the root too
        until(lambda: str(second) in library.paths(), "sub/b.md reloaded")
    finally:
        watcher.stop()
        watcher.join(DEADLINE)
    assert not watcher.is_alive() and watcher.stopped and library.caught_up == 1


def test_a_server_without_folders_watches_nothing() -> None:
    watcher = WatchThread(Library([]), threading.RLock())
    watcher.start()
    watcher.join(DEADLINE)
    assert not watcher.is_alive() and watcher.stopped

    async def main() -> None:
        await asyncio.wait_for(watch_folders(Library([]), asyncio.Event()), DEADLINE)

    asyncio.run(main())


def test_the_coroutine_reloads_until_stopped(tmp_path: Path) -> None:
    library = Library([str(tmp_path)])

    async def main() -> None:
        stop = asyncio.Event()
        watching = asyncio.ensure_future(watch_folders(library, stop))
        deadline = time.monotonic() + DEADLINE
        while library.caught_up == 0:
            assert time.monotonic() < deadline, "the watcher never started"
            await asyncio.sleep(0.02)
        (tmp_path / "c.md").write_text("c\n")
        while str(tmp_path / "c.md") not in library.paths():
            assert time.monotonic() < deadline, "c.md was never reloaded"
            await asyncio.sleep(0.02)
        stop.set()
        await asyncio.wait_for(watching, DEADLINE)

    asyncio.run(main())
    assert library.caught_up == 1
