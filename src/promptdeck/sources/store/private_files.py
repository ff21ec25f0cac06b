"""A served label's files as its server writes them to its private folder (``private.private_folder``).

``PrivateFiles`` knows which version of each file is written, writes one (over an older version atomically,
so a reader sees the old file or the new one, never half), removes one with the folders it leaves empty,
and reads one back within bounds. It also holds the local copies of a position's listing
(``StoreSource.mirror``), in a second private folder. Both folders are removed at ``close``, or at process
end if the server never gets there.

It decides nothing about *when*: ``StoreSource`` writes a file only for the position it serves, and holds its
lock around each call here, which keeps the record of what is written and the folder in step.
"""

from __future__ import annotations

import contextlib
import logging
import os
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..files.paths import read_confined
from .private import private_folder, release, write_new

if TYPE_CHECKING:
    from .database import Store

log = logging.getLogger("promptdeck.store")


class PrivateFiles:
    """The files of label ``label`` written to a private folder (made by ``open``), by path and version."""

    def __init__(self, label: str) -> None:
        self.label = label
        #: the folder the label's files are written to ("" before ``open``)
        self.folder = ""
        self._written: dict[str, int] = {}
        #: the folder of the listing copies, made on the first copy
        self._listings = ""
        #: removing the folders (each a ``weakref.finalize``: once, at close or at process end)
        self._held: list[weakref.finalize[Any, Any]] = []

    def open(self) -> str:
        """Make the private folder the files are written to; its path."""
        self.folder = self._made()
        return self.folder

    def _made(self) -> str:
        folder, held = private_folder()
        self._held.append(weakref.finalize(self, release, folder, held))  # at close, or process end
        return folder

    @property
    def written(self) -> Mapping[str, int]:
        """The version of each file written (path -> version)."""
        return self._written

    def put(self, path: str, version: int, data: bytes) -> bool:
        """Write ``data`` as ``version`` of ``path``; whether that version is there now (a failure is logged,
        and the file left out: "a" a file and "a/b" too, say, as another tool may have stored them)."""
        if self._written.get(path) == version:
            return True
        target = os.path.join(self.folder, path)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if path in self._written or os.path.lexists(target):
                # Hidden, so a walk of the folder (a skill's) never takes it for one of the label's files.
                head, name = os.path.split(target)
                temporary = os.path.join(head, f".{name}.promptdeck-new")
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temporary)  # left by a write that failed
                write_new(temporary, data)
                os.replace(temporary, target)  # a reader sees the old file or the new one, never half
            else:
                write_new(target, data)
        except OSError as exc:
            log.error("cannot write the stored file %r of label %s (%s); left out", path, self.label, exc.strerror)
            return False
        self._written[path] = version
        return True

    def remove(self, path: str) -> None:
        """Remove ``path``, and the folders it leaves empty: a folder is there only for the files in it (a
        skill's folder is listed as its files are)."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(self.folder, path))
        self._written.pop(path, None)
        folder = path.rpartition("/")[0]
        while folder:
            try:
                os.rmdir(os.path.join(self.folder, folder))
            except OSError:  # not empty (the usual case), or gone
                break
            folder = folder.rpartition("/")[0]

    def read(self, path: str, limit: int) -> bytes:
        """The bytes of ``path`` as written, confined to the folder and at most ``limit`` of them
        (``paths.read_confined``: ``McpError`` otherwise)."""
        return read_confined(self.folder, path, limit)

    def copy_listing(self, store: Store, position: int) -> str:
        """Copy the listing of ``position`` to a new SQLite file in the listings folder; its path."""
        if not self._listings:
            self._listings = self._made()
        path = os.path.join(self._listings, f"listing-{position}.db")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # a copy an earlier attempt left half made
        store.reads.copy_listing(position, path)
        return path

    def drop_listing(self, path: str) -> None:
        """Remove a listing copy no longer read (``copy_listing``'s ``path``)."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    def close(self) -> None:
        """Remove the folders, and everything in them."""
        for finalize in self._held:
            finalize()


__all__ = ["PrivateFiles"]
