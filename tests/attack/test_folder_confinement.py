"""A folder's files are read with their confinement checked once per folder (``paths.read_confined_all``,
issue 42), and that must be as safe as resolving every file: a file that is a link out of the library, a link
to ``/proc/self/environ``, a FIFO, and a folder swapped for a link out of the library between the walk and the
read are each refused, never read nor waited on; links that stay inside are read as before; and a load, by one
process or by worker processes, serves none of what is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from promptdeck.protocol.errors import InvalidParams
from promptdeck.sources.files import source as source_module
from promptdeck.sources.files.paths import read_confined_all
from promptdeck.sources.files.source import FileSource

SECRET = "s3cr3t-outside-the-library"


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "library"
    outside = tmp_path / "outside"
    for folder in (root / "a", root / "b", outside):
        folder.mkdir(parents=True)
    (outside / "leak.md").write_text(f"Outside: {SECRET}\n")
    for rel in ("top.md", "a/one.md", "a/two.md", "b/three.md"):
        (root / rel).write_text(f"Prompt {rel}\n")
    (root / "a/out.md").symlink_to(outside / "leak.md")
    (root / "a/environ.md").symlink_to("/proc/self/environ")
    (root / "a/inside.md").symlink_to("../b/three.md")
    (root / "inner").symlink_to(root / "b")  # a folder link that stays inside
    os.mkfifo(root / "b/pipe.md")
    return root


def _read(root: Path, rels: list[str]) -> dict[str, bytes | str]:
    got = read_confined_all(str(root.resolve()), rels, 1 << 20)
    return {rel: (found.message if isinstance(found, InvalidParams) else found) for rel, found in zip(rels, got,
                                                                                                       strict=True)}


def test_links_out_and_fifos_are_refused_and_links_inside_read(library: Path) -> None:
    got = _read(library, ["top.md", "a/one.md", "a/out.md", "a/environ.md", "a/inside.md", "a/two.md",
                          "b/pipe.md", "b/three.md", "inner/three.md"])
    assert got["top.md"] == b"Prompt top.md\n" and got["a/two.md"] == b"Prompt a/two.md\n"
    assert got["a/out.md"] == "file 'a/out.md' is a link that leads out of the library"
    assert got["a/environ.md"] == "file 'a/environ.md' is a link that leads out of the library"
    assert got["a/inside.md"] == got["b/three.md"] == got["inner/three.md"] == b"Prompt b/three.md\n"
    assert got["b/pipe.md"] == "file 'b/pipe.md' is not a regular file"


def test_a_folder_swapped_for_a_link_out_after_the_walk_is_refused(library: Path, tmp_path: Path) -> None:
    """The walk found ``a/one.md``; by the read, ``a`` leads out of the library to a folder holding a file of
    that name. Neither the folder's files nor a file named through a folder link out are read."""
    away = tmp_path / "away"
    away.mkdir()
    (away / "one.md").write_text(f"Away: {SECRET}\n")
    os.rename(library / "a", tmp_path / "a-moved")
    (library / "a").symlink_to(away)
    got = _read(library, ["top.md", "a/one.md", "b/three.md"])
    assert got["a/one.md"] == "file 'a/one.md' is a link that leads out of the library"
    assert got["top.md"] == b"Prompt top.md\n" and got["b/three.md"] == b"Prompt b/three.md\n"


@pytest.mark.parametrize("parallel", [False, True])
def test_a_load_serves_none_of_it(library: Path, monkeypatch: pytest.MonkeyPatch, parallel: bool) -> None:
    if parallel:  # the worker processes' way, which large libraries take
        monkeypatch.setattr(source_module, "PARALLEL_MIN_FILES", 2)
    source = FileSource(library)
    errors = {str(e) for e in source.load()}
    names = {p.name for p in source.prompts()}
    assert "a.out" not in names and "a.environ" not in names and "b.pipe" not in names
    assert {"top", "a.one", "a.two", "a.inside", "b.three"} <= names
    assert "a/out.md: file is a link that leads out of the library" in errors
    assert "a/environ.md: file is a link that leads out of the library" in errors
    assert "b/pipe.md: file is not a regular file" in errors
    for prompt in source.prompts():
        assert SECRET not in str(prompt.parsed().plain)
