"""A library folder as a publish reads it (sources/store/folder.py): the files ``serve`` would read, hidden ones
and other tools' non-prompt files left out, skills whole, and a link that would copy a restricted source refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from promptdeck.sources.store.folder import read_library
from promptdeck.sources.store.model import StoreError

PROMPT = "---\ndescription: greet\n---\nuser: Hello\n"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_prompts_and_material_are_read_hidden_files_are_not(tmp_path: Path) -> None:
    write(tmp_path, {"greet.md": PROMPT, "_shots/one.txt": "one", "docs/notes.txt": "deep",
                     ".env": "SECRET=1", ".git/config": "[core]", "docs/.cache/x.txt": "x"})
    files = read_library(tmp_path)
    assert files == {"greet.md": PROMPT.encode(), "_shots/one.txt": b"one", "docs/notes.txt": b"deep"}


def test_a_non_prompt_file_at_the_root_is_read_as_serve_offers_it(tmp_path: Path) -> None:
    # ``serve`` offers a root-level notes.txt as a resource (``LibraryRoot.files``), so a publish keeps it too:
    # the root's relative folder is ".", which is no hidden folder.
    write(tmp_path, {"greet.md": PROMPT, "notes.txt": "at the root", "docs/notes.txt": "below"})
    files = read_library(tmp_path)
    assert files["notes.txt"] == b"at the root"
    assert files["docs/notes.txt"] == b"below"


def test_another_tools_folder_gives_its_prompt_files_only(tmp_path: Path) -> None:
    write(tmp_path, {".claude/commands/review.md": "Review $ARGUMENTS\n", ".claude/commands/notes.txt": "no",
                     ".claude/settings.json": "{}"})
    assert sorted(read_library(tmp_path)) == [".claude/commands/review.md"]


def test_a_prefix_names_the_files_below_a_library_root(tmp_path: Path) -> None:
    write(tmp_path, {"review.md": "Review $ARGUMENTS\n", "notes.txt": "not a command"})
    assert read_library(tmp_path, prefix=".claude/commands/") == {
        ".claude/commands/review.md": b"Review $ARGUMENTS\n"}


def test_a_link_inside_is_read_as_its_target(tmp_path: Path) -> None:
    write(tmp_path, {"greet.md": PROMPT, "_m/real.txt": "real"})
    os.symlink("_m/real.txt", tmp_path / "alias.txt")
    assert read_library(tmp_path)["alias.txt"] == b"real"


def test_a_link_to_a_hidden_file_is_refused_naming_both(tmp_path: Path) -> None:
    write(tmp_path, {"greet.md": PROMPT, ".secrets/key.txt": "k"})
    os.symlink(".secrets/key.txt", tmp_path / "key.txt")
    with pytest.raises(StoreError, match=r"key\.txt is a link to the hidden file \.secrets/key\.txt"):
        read_library(tmp_path)


def test_a_skill_with_a_problem_is_left_out_and_named(tmp_path: Path) -> None:
    write(tmp_path, {"greet.md": PROMPT,
                     ".claude/skills/good/SKILL.md": "---\nname: good\ndescription: fine\n---\nDo it.\n",
                     ".claude/skills/good/ref.txt": "ref"})
    left_out: list[str] = []
    files = read_library(tmp_path, left_out=left_out)
    assert files[".claude/skills/good/ref.txt"] == b"ref" and ".claude/skills/good/SKILL.md" in files
    assert left_out == []
    os.symlink("/", tmp_path / ".claude/skills/good/escape")  # a link that leads out is a problem of the walk
    files = read_library(tmp_path, left_out=left_out)
    assert left_out == [".claude/skills/good"]
    assert not any(path.startswith(".claude/skills/") for path in files)
