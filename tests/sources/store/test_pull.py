"""sources/store/pull.py: the plan of a pull (what differs, what goes, what holds unpublished work) and its
writing, each file whole, folders made on the way. Its attacks are in tests/attack/test_pull_confinement.py."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from promptdeck.sources.store.model import StoreConflict
from promptdeck.sources.store.pull import apply, plan


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_files_in_folders_not_yet_made_are_written_where_they_belong(tmp_path: Path) -> None:
    files = {"s000/p1.md": b"one", "s000/p2.md": b"two", "s001/deep/p3.md": b"three", "top.md": b"top"}
    done = plan(tmp_path, files, {})
    assert done.new == set(files) and done.delete == [] and done.same == 0
    apply(tmp_path, done)
    assert {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == files


def test_only_what_differs_is_written_and_what_the_label_dropped_is_deleted(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"a1")
    (tmp_path / "b.md").write_bytes(b"b1")
    (tmp_path / "gone.md").write_bytes(b"g1")
    (tmp_path / "mine.txt").write_bytes(b"never in the store")
    known = {"a.md": {digest(b"a1"), digest(b"a2")}, "b.md": {digest(b"b1")}, "gone.md": {digest(b"g1")}}
    done = plan(tmp_path, {"a.md": b"a2", "b.md": b"b1"}, known)
    assert (done.write, done.new, done.delete, done.same) == ({"a.md": b"a2"}, set(), ["gone.md"], 1)
    apply(tmp_path, done)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md", "b.md", "mine.txt"]
    assert (tmp_path / "a.md").read_bytes() == b"a2"


def test_unpublished_work_stops_the_pull_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"edited here")
    (tmp_path / "gone.md").write_bytes(b"edited too")
    known = {"a.md": {digest(b"a1")}, "gone.md": {digest(b"g1")}}
    with pytest.raises(StoreConflict, match="2 files in .* hold work the store never had.*a.md, gone.md"):
        plan(tmp_path, {"a.md": b"a2"}, known)
    done = plan(tmp_path, {"a.md": b"a2"}, known, force=True)
    assert done.write == {"a.md": b"a2"} and done.delete == ["gone.md"]
