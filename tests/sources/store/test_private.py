"""The store server's private folder (sources/store/private.py): made locked and the owner's alone, swept by the
next server once its own is gone, released whole; and a stored file written only where none is."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from promptdeck.sources.store import private
from promptdeck.sources.store.model import StoreError
from promptdeck.sources.store.private import private_folder, release, replace_whole, write_new


def test_a_private_folder_is_the_owners_alone_and_released_whole() -> None:
    folder, fd = private_folder()
    try:
        assert os.path.basename(folder).startswith("promptdeck-store-")
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
        assert os.path.exists(folder + ".lock")
        write_new(os.path.join(folder, "a.md"), b"hello")
    finally:
        release(folder, fd)
    assert not os.path.exists(folder) and not os.path.exists(folder + ".lock")
    with pytest.raises(OSError):  # the lock's descriptor was let go
        os.fstat(fd)


def test_a_live_servers_folder_is_kept_and_a_gone_ones_swept() -> None:
    live, live_fd = private_folder()
    gone, gone_fd = private_folder()
    try:
        os.close(gone_fd)  # its server was killed: the lock is free, the folder left behind
        base = os.path.dirname(gone)
        private._sweep(base)
        assert not os.path.exists(gone) and not os.path.exists(gone + ".lock")
        assert os.path.isdir(live) and os.path.exists(live + ".lock")
    finally:
        release(live, live_fd)
        release(gone, -1)


def test_no_folder_anywhere_is_refused_naming_the_places_tried(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    monkeypatch.setattr(os, "access", lambda *_: False)  # no /dev/shm
    # A temporary folder that does not exist: nothing can be made in it, even by root.
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path / "gone"))
    with pytest.raises(StoreError, match=r"no folder can be made for the store's files \(tried /dev/shm and the "
                                         r"temporary folder\)"):
        private_folder()


def test_write_new_writes_every_byte_and_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "f.md"
    data = bytes(range(256)) * 4096  # more than one write may take
    write_new(str(path), data)
    assert path.read_bytes() == data
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(FileExistsError, match="f.md"):
        write_new(str(path), b"other")
    assert path.read_bytes() == data


def test_replace_whole_puts_the_new_bytes_in_place_and_leaves_nothing_when_it_fails(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_bytes(b"old")
    replace_whole(target, b"new", ".t.")
    assert target.read_bytes() == b"new" and os.listdir(tmp_path) == ["file"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o600)  # made by mkstemp: never readable by others
    (tmp_path / "folder").mkdir()
    with pytest.raises(IsADirectoryError):
        replace_whole(tmp_path / "folder", b"x", ".t.")  # a rename over a folder fails: the temporary file goes
    assert sorted(os.listdir(tmp_path)) == ["file", "folder"] and target.read_bytes() == b"new"
