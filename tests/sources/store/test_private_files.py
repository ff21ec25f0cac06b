"""A label's files in the private folder (sources/store/private_files.py): written with their version, an older
version replaced whole, removed with the folders they leave empty, read back within bounds, a file that cannot
be written left out; the listing copies beside them; every folder removed at close, or once unreferenced."""

from __future__ import annotations

import gc
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from promptdeck.protocol.errors import McpError
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.private_files import PrivateFiles


@pytest.fixture
def files() -> Iterator[PrivateFiles]:
    files = PrivateFiles("production")
    files.open()
    try:
        yield files
    finally:
        files.close()


def on_disk(files: PrivateFiles) -> dict[str, bytes]:
    root = Path(files.folder)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_file_is_written_with_its_version_and_read_back(files: PrivateFiles) -> None:
    assert os.path.basename(files.folder).startswith("promptdeck-store-") and files.written == {}
    assert files.put("a/b/c.md", 3, b"hello")
    assert files.written == {"a/b/c.md": 3} and on_disk(files) == {"a/b/c.md": b"hello"}
    assert files.read("a/b/c.md", 100) == b"hello"


def test_the_same_version_is_not_written_again(files: PrivateFiles) -> None:
    assert files.put("a.md", 1, b"one")
    assert files.put("a.md", 1, b"what a version 1 is never")  # there already: nothing written
    assert on_disk(files) == {"a.md": b"one"}


def test_a_newer_version_replaces_the_file_whole(files: PrivateFiles) -> None:
    assert files.put("a.md", 1, b"one")
    Path(files.folder, ".a.md.promptdeck-new").write_bytes(b"left by a write that failed")
    assert files.put("a.md", 2, b"two")
    assert files.written == {"a.md": 2} and on_disk(files) == {"a.md": b"two"}  # no temporary file left


def test_a_file_already_there_but_not_written_is_replaced(files: PrivateFiles) -> None:
    Path(files.folder, "a.md").write_bytes(b"stale")  # a file of an earlier run of the same folder
    assert files.put("a.md", 1, b"one")
    assert on_disk(files) == {"a.md": b"one"}


def test_a_file_that_cannot_be_written_is_left_out_and_logged(files: PrivateFiles,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    assert files.put("a", 1, b"a file")
    with caplog.at_level(logging.ERROR, "promptdeck.store"):
        assert not files.put("a/b", 1, b"below a file")  # another tool stored both
    assert files.written == {"a": 1}
    assert "cannot write the stored file 'a/b' of label production" in caplog.text and "left out" in caplog.text


def test_a_removed_file_takes_the_folders_it_empties_with_it(files: PrivateFiles) -> None:
    for path in ("x/y/one.md", "x/two.md"):
        assert files.put(path, 1, b".")
    files.remove("x/y/one.md")
    assert files.written == {"x/two.md": 1}
    assert not Path(files.folder, "x/y").exists() and Path(files.folder, "x").is_dir()  # x still holds two.md
    files.remove("x/two.md")
    assert not Path(files.folder, "x").exists() and Path(files.folder).is_dir()
    files.remove("never/written.md")  # nothing to remove: no error


def test_a_read_stays_in_the_folder_and_within_its_limit(files: PrivateFiles) -> None:
    assert files.put("big.md", 1, b"x" * 10)
    with pytest.raises(McpError):
        files.read("big.md", 5)
    with pytest.raises(McpError):
        files.read("../outside.md", 100)


class Listings:
    """What ``copy_listing`` reads of a store: a copy of one position's listing, made at the path given."""

    def __init__(self) -> None:
        self.made: list[tuple[int, str]] = []

    def copy_listing(self, position: int, path: str) -> None:
        assert not os.path.exists(path)  # a half-made copy is removed first
        Path(path).write_bytes(b"listing %d" % position)
        self.made.append((position, path))


class FakeStore:
    def __init__(self) -> None:
        self.reads = Listings()


def test_a_listing_is_copied_to_a_folder_of_its_own_and_dropped(files: PrivateFiles) -> None:
    store = FakeStore()
    first = files.copy_listing(cast(Store, store), 7)
    assert Path(first).read_bytes() == b"listing 7" and Path(first).name == "listing-7.db"
    assert not first.startswith(files.folder + os.sep)  # never among the label's files
    again = files.copy_listing(cast(Store, store), 7)  # the same position again: made anew
    assert again == first and len(store.reads.made) == 2
    second = files.copy_listing(cast(Store, store), 8)
    assert os.path.dirname(second) == os.path.dirname(first)
    files.drop_listing(first)
    assert not os.path.exists(first) and os.path.exists(second)
    files.drop_listing(first)  # gone already: no error


def test_close_removes_every_folder() -> None:
    files = PrivateFiles("production")
    folder = files.open()
    assert files.put("a.md", 1, b".")
    listing = files.copy_listing(cast(Store, FakeStore()), 1)
    files.close()
    assert not os.path.exists(folder) and not os.path.exists(folder + ".lock")
    assert not os.path.exists(os.path.dirname(listing))
    files.close()  # once only: a second close does nothing


def test_a_folder_is_removed_once_nothing_holds_it() -> None:
    files = PrivateFiles("production")
    folder = files.open()
    del files
    gc.collect()
    assert not os.path.exists(folder)
