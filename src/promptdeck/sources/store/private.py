"""The private folder a store server writes a label's files to: made in memory (tmpfs) where there is one,
locked while its server lives, and removed at exit, or by the next store server when its own was killed."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile

from .model import StoreError

try:
    import fcntl
except ImportError:  # not POSIX: folders are still removed at exit, but not swept after a crash
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("promptdeck.store")

_PREFIX = "promptdeck-store-"


def private_folder() -> tuple[str, int]:
    """A new folder only this process uses, in memory (tmpfs) where there is one; and the descriptor
    that holds its lock.

    Creating a file costs ~0.8 ms on this machine's disk and ~12 µs in ``/dev/shm``: for a large library
    that is the difference between seconds and a blink. The memory it takes is the library's size, so
    a folder must not outlive its server: beside it, FOLDER.lock is held locked (``flock``) for as long
    as the server lives, and each new folder first removes those whose lock it can take, left by a
    server killed before it could clean up (kill -9, the OOM killer), whatever pid namespace it ran in.
    """
    bases = ["/dev/shm"] if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK) else []
    for base in [*bases, tempfile.gettempdir()]:
        _sweep(base)
        try:
            # The lock first: a sweep never finds the folder without its lock held (a lock taken in the
            # moment between these two calls only loses this folder its sweep, never a live folder).
            fd, lock = tempfile.mkstemp(prefix=_PREFIX, suffix=".lock", dir=base)
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            os.mkdir(lock[:-len(".lock")], 0o700)
        except OSError:
            continue
        return lock[:-len(".lock")], fd
    raise StoreError("no folder can be made for the store's files (tried /dev/shm and the temporary folder)")


def _sweep(base: str) -> None:
    """Remove the folders in ``base`` of store servers that are gone (their lock is free)."""
    if fcntl is None:
        return
    try:
        entries = [e for e in os.scandir(base) if e.name.startswith(_PREFIX) and e.name.endswith(".lock")]
    except OSError:
        return
    for entry in entries:
        try:
            if entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
            fd = os.open(entry.path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its server lives
            os.close(fd)
            continue
        log.info("removing %s, left by a store server that is gone", entry.path[:-len(".lock")])
        release(entry.path[:-len(".lock")], fd)


def release(folder: str, fd: int) -> None:
    """Remove a private folder and its lock file, and let the lock go."""
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.unlink(folder + ".lock")
    with contextlib.suppress(OSError):
        os.close(fd)


def write_new(path: str, data: bytes) -> None:
    """Create ``path`` (it must not exist) with ``data``; raw calls, as this runs once per stored file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def replace_whole(path: str | os.PathLike[str], data: bytes, prefix: str) -> None:
    """Write ``data`` to a new file beside ``path`` (``mkstemp``: 0600, named ``prefix`` and a random tail) and
    rename it over ``path``: a reader sees the old file or the new one, never half of one, and a failure
    leaves nothing behind."""
    folder = os.path.dirname(os.fspath(path)) or "."
    fd, temporary = tempfile.mkstemp(prefix=prefix, dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
