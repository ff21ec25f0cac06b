"""``pull`` never writes or deletes outside its folder, whatever the store says (sources/store/pull.py): a
path from another tool's writing of the database (``../``, absolute, hidden) and a symbolic link in the folder
pointing out (a folder on the way, or the file itself) refuse the whole pull before a byte is written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from promptdeck.cli.sync import pull
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.model import StoreError
from promptdeck.sources.store.pull import apply, plan
from tests.support.git import prompt
from tests.support.stores import publish_texts

pytestmark = pytest.mark.usefixtures("kept_logging")

GOOD = prompt("good", "Fine.").encode()


@pytest.mark.parametrize("path", ["../escape.md", "/tmp/escape.md", "a/../../escape.md", ".hidden/x.md", "a//b.md"])
def test_a_path_that_is_no_library_path_refuses_the_pull(tmp_path: Path, path: str) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    with pytest.raises(StoreError, match="not a library path"):
        plan(folder, {"good.md": GOOD, path: b"evil"}, {})
    assert list(folder.iterdir()) == [] and not (tmp_path / "escape.md").exists()


def test_a_link_on_the_way_out_refuses_the_pull(tmp_path: Path) -> None:
    folder, outside = tmp_path / "lib", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    (folder / "sub").symlink_to(outside)
    with pytest.raises(StoreError, match="sub is a symbolic link"):
        plan(folder, {"good.md": GOOD, "sub/a.md": b"evil"}, {})
    assert list(outside.iterdir()) == [] and not (folder / "good.md").exists()


def test_a_file_that_is_a_link_is_neither_written_through_nor_deleted(tmp_path: Path) -> None:
    folder, target = tmp_path / "lib", tmp_path / "precious.md"
    folder.mkdir()
    target.write_bytes(GOOD)
    (folder / "good.md").symlink_to(target)
    for files in ({"good.md": b"evil"}, {}):  # written, or deleted as a prompt the label no longer has
        with pytest.raises(StoreError, match="good.md is a symbolic link"):
            plan(folder, files, {"good.md": set()})
    assert target.read_bytes() == GOOD and (folder / "good.md").is_symlink()


def test_a_link_made_after_the_plan_is_refused_as_it_is_written(tmp_path: Path) -> None:
    folder, outside = tmp_path / "lib", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    done = plan(folder, {"sub/a.md": b"text"}, {})
    (folder / "sub").symlink_to(outside)  # swapped in between the plan and the write
    with pytest.raises(StoreError, match="symbolic link.*the pull stopped after 0 of 1 changes"):
        apply(folder, done)
    assert list(outside.iterdir()) == []


def test_a_store_holding_a_path_out_writes_nothing_outside(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    with Store(url, create=True) as opened:
        publish_texts(opened, "production", {"good.md": GOOD.decode()})
    with sqlite3.connect(tmp_path / "s.db") as db:  # another tool wrote the database
        db.execute("UPDATE files SET path = '../escape.md'")
        db.execute("UPDATE position_files SET path = '../escape.md'")
    folder = tmp_path / "lib"
    result = CliRunner().invoke(pull, [str(folder), "--store", url, "--label", "production"])
    assert not (tmp_path / "escape.md").exists()
    assert result.exit_code == 1 and "the store's '../escape.md' of label production cannot be written" \
        in result.stderr, result.output
    assert not folder.exists()
