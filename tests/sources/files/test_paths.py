"""Paths of a library (sources/files/paths.py): which paths are prompts and which folders a scan enters,
agreeing with each other; reads confined to the root (symlinks, FIFOs, devices, sizes); what a path
argument may name; and the guard every prompt file passes before its bytes are used."""

from __future__ import annotations

import itertools
import os
import re
import threading
from pathlib import Path

import pytest

from promptdeck.protocol.errors import InvalidParams
from promptdeck.sources.files.formats import FORMATS
from promptdeck.sources.files.paths import (
    FOLDER_FORMATS,
    SKILL_FOLDERS,
    LibraryRoot,
    folder_prefix,
    may_hold_prompts,
    prompt_format,
    read_confined,
    read_opened,
    skill_folder_of,
)

ANY = re.compile(".*")


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


# -- prompt_format and may_hold_prompts agree --------------------------------------------------------


PARTS = ["a", "_m", ".h", ".claude", "commands", "skills", "x", ".github", "prompts", ".gemini", ".cursor",
         ".continue", ".codex", "workflows"]
ENDINGS = ["a.md", "SKILL.md", "a.prompt.md", "a.toml", "a.prompty", "a.prompt", "a.txt", ".a.md", "_a.md"]


def every_path(depth: int = 3) -> list[str]:
    return ["/".join((*folders, name)) for n in range(depth + 1)
            for folders in itertools.product(PARTS, repeat=n) for name in ENDINGS]


def test_a_scan_enters_every_folder_on_the_way_to_a_prompt() -> None:
    # Otherwise a prompt file would be one that the watcher and the scan never find.
    found = 0
    for rel in every_path():
        if prompt_format(rel) is None:
            continue
        found += 1
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            assert may_hold_prompts("/".join(parts[:i])), (rel, parts[:i])
    assert found > 100


def test_a_scan_does_not_enter_hidden_or_material_folders_that_hold_no_prompts() -> None:
    prompt_folders = {rel.rsplit("/", 1)[0] for rel in every_path(4) if "/" in rel and prompt_format(rel)}
    on_the_way = {folder.rsplit("/", n)[0] for folder in prompt_folders for n in range(folder.count("/") + 1)}
    for folder in {"/".join(p) for n in (1, 2, 3) for p in itertools.product(PARTS, repeat=n)}:
        if "/." in "/" + folder or "/_" in "/" + folder:
            # entered only on the way to, or inside, a folder where a native format's prompts may be
            assert may_hold_prompts(folder) is (folder in on_the_way), folder


def test_every_native_folder_has_its_format_flag() -> None:
    assert set(FOLDER_FORMATS) == {"promptdeck"} | {fmt.name for fmt in FORMATS if fmt.folder is not None}
    assert FOLDER_FORMATS["promptdeck"] == "" and FOLDER_FORMATS["claude-skill"] == ".claude/skills/"
    for fmt in FORMATS:
        if fmt.folder is None:
            continue
        folder, kind, ending, nested = fmt.folder, fmt.name, fmt.ending, fmt.nested
        sample = folder.replace("*", "s") + ("" if ending.startswith("/") else "x") + ending.lstrip("/")
        assert prompt_format(sample.replace("//", "/")) == kind, sample
        deeper = folder.replace("*", "s") + "sub/x" + ending
        if "*" not in folder:
            assert (prompt_format(deeper) == kind) is nested, deeper


# -- folder_prefix ------------------------------------------------------------------------------------


def test_the_innermost_tool_folder_decides(tmp_path: Path) -> None:
    assert folder_prefix(tmp_path / ".codex" / "x" / ".claude" / "commands" / "git") == ".claude/commands/git/"
    assert folder_prefix(tmp_path / ".claude") == ".claude/"
    assert folder_prefix(tmp_path / ".github" / "workflows") == ""  # holds no prompts: a plain library
    assert folder_prefix(tmp_path / "plain") == ""


def test_a_tools_skill_folder_or_the_folder_holding_it_is_below_a_library_root_where_its_path_says(
        tmp_path: Path) -> None:
    assert folder_prefix(tmp_path / ".agents" / "skills") == ".agents/skills/"
    assert folder_prefix(tmp_path / ".agents") == ".agents/"
    assert folder_prefix(tmp_path / ".opencode" / "skills" / "git") == ".opencode/skills/git/"
    assert folder_prefix(tmp_path / ".claude" / "skills" / "git") == ".claude/skills/git/"
    assert folder_prefix(tmp_path / "skills") == ""  # a plain folder: its path says nothing


def test_skill_folder_of_names_where_a_skill_would_be() -> None:
    assert skill_folder_of(".claude/skills/git") == (".claude/skills/", "git")
    assert skill_folder_of(".claude/skills/git/refs/a.md") == (".claude/skills/", "git")
    assert skill_folder_of("skills/pdf/SKILL.md") == ("skills/", "pdf")
    assert skill_folder_of(".agents/skills/a") == (".agents/skills/", "a")
    for rel in (".claude/skills", ".claude/skills/", ".claude/skills/_shared/a", ".claude/skills/.system/x",
                "docs/skills/a", ".claude/commands/a.md", "skillsets/a"):
        assert skill_folder_of(rel) is None, rel
    assert [folder for folder, _ in SKILL_FOLDERS if folder.startswith(".")] == [
        folder for folder, _ in SKILL_FOLDERS if folder != "skills/"]


def test_a_link_to_a_tool_folder_is_read_in_its_format(tmp_path: Path) -> None:
    (tmp_path / ".gemini" / "commands").mkdir(parents=True)
    os.symlink(tmp_path / ".gemini" / "commands", tmp_path / "mine")
    assert folder_prefix(tmp_path / "mine") == ".gemini/commands/"
    assert folder_prefix(tmp_path / "mine", "cursor") == ".cursor/commands/"


# -- read_confined ------------------------------------------------------------------------------------


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    """tmp_path/lib, with a secret beside it in tmp_path/lib2 (a name the root's is a prefix of)."""
    root = write(tmp_path / "lib", {"ok.txt": "fine", "sub/in.txt": "inner"})
    write(tmp_path / "lib2", {"secret.txt": "secret"})
    return root


def test_a_file_inside_is_read(lib: Path) -> None:
    assert read_confined(str(lib), "ok.txt", 100) == b"fine"
    assert read_confined(str(lib) + "/", "sub/in.txt", 100) == b"inner"


def test_a_link_inside_the_root_is_followed(lib: Path) -> None:
    os.symlink(lib / "sub" / "in.txt", lib / "link.txt")
    os.symlink("sub", lib / "dirlink")
    assert read_confined(str(lib), "link.txt", 100) == b"inner"
    assert read_confined(str(lib), "dirlink/in.txt", 100) == b"inner"


@pytest.mark.parametrize("target", ["../lib2/secret.txt", "/etc/hostname", "/proc/self/environ"])
def test_a_link_out_of_the_root_is_refused_unread(lib: Path, target: str) -> None:
    os.symlink(target, lib / "out.txt")
    with pytest.raises(InvalidParams, match="a link that leads out of the library"):
        read_confined(str(lib), "out.txt", 100)


def test_a_path_next_to_the_root_with_its_name_as_prefix_is_outside(lib: Path) -> None:
    with pytest.raises(InvalidParams, match="leads out of the library"):
        read_confined(str(lib), "../lib2/secret.txt", 100)


def test_a_fifo_is_refused_without_waiting_for_a_writer(lib: Path) -> None:
    os.mkfifo(lib / "pipe.md")
    result: list[BaseException | bytes] = []

    def read() -> None:
        try:
            result.append(read_confined(str(lib), "pipe.md", 100))
        except BaseException as exc:
            result.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # unblock the thread before failing
        with open(lib / "pipe.md", "wb"):
            pass
        pytest.fail("read_confined waited on a FIFO")
    [outcome] = result
    assert isinstance(outcome, InvalidParams) and "not a regular file" in outcome.message


def test_a_device_linked_inside_is_refused(lib: Path) -> None:
    os.symlink("/dev/zero", lib / "zero.md")
    with pytest.raises(InvalidParams):
        read_confined(str(lib), "zero.md", 100)


def test_a_folder_or_a_missing_file_is_refused(lib: Path) -> None:
    with pytest.raises(InvalidParams, match="not a regular file"):
        read_confined(str(lib), "sub", 100)
    with pytest.raises(InvalidParams, match="'nope.txt' cannot be read"):
        read_confined(str(lib), "nope.txt", 100)


def test_a_refused_descriptor_is_closed(lib: Path) -> None:
    for rel in ("sub", "pipe"):
        if rel == "pipe":
            os.mkfifo(lib / "pipe")
        before = len(os.listdir("/proc/self/fd"))
        fd = os.open(lib / rel, os.O_RDONLY | os.O_NONBLOCK)
        with pytest.raises(InvalidParams, match=f"'{rel}' is not a regular file"):
            read_opened(fd, rel, 100)
        assert len(os.listdir("/proc/self/fd")) == before, rel


def test_the_size_limit_is_inclusive(lib: Path) -> None:
    (lib / "four.txt").write_bytes(b"1234")
    assert read_confined(str(lib), "four.txt", 4) == b"1234"
    with pytest.raises(InvalidParams, match="'four.txt' is larger than 3 bytes"):
        read_confined(str(lib), "four.txt", 3)


def test_a_file_that_grows_after_it_was_measured_is_held_to_the_limit(lib: Path) -> None:
    path = lib / "growing.txt"
    path.write_bytes(b"ab")
    fd = os.open(path, os.O_RDONLY)
    real_fstat = os.fstat

    class Grown:
        """Measure first, then let it grow: what a writer racing the read does."""

        def __call__(self, fd: int) -> os.stat_result:
            info = real_fstat(fd)
            path.write_bytes(b"ab" * 10)
            return info

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fstat", Grown())
        with pytest.raises(InvalidParams, match="larger than 10 bytes"):
            read_opened(fd, "growing.txt", 10)
    path.write_bytes(b"ab")
    fd = os.open(path, os.O_RDONLY)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fstat", Grown())
        assert read_opened(fd, "growing.txt", 20) == b"ab" * 10  # read on past what fstat said


# -- LibraryRoot: what a path argument may name -------------------------------------------------------


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = write(tmp_path / "lib", {"p.md": "a prompt", "_m/guide.txt": "material", "_m/deep/x.txt": "deep",
                                    "docs/notes.txt": "notes", ".env": "KEY=1", "_m/.hidden.txt": "h",
                                    ".claude/commands/c.md": "claude"})
    os.symlink(root / "p.md", root / "_m" / "to_prompt.txt")
    os.symlink(root / ".env", root / "_m" / "to_env.txt")
    os.symlink(root / "_m" / "guide.txt", root / "docs" / "to_material.txt")
    return root


@pytest.mark.parametrize("rel", ["_m/guide.txt", "_m/deep/x.txt"])
def test_material_may_be_named_without_a_pattern(library: Path, rel: str) -> None:
    assert LibraryRoot(library).readable(rel) == (library / rel).resolve()


@pytest.mark.parametrize(("rel", "pattern", "words"), [
    ("docs/notes.txt", None, "not in a material folder"),
    (".env", ANY, "is hidden"),
    ("_m/.hidden.txt", ANY, "is hidden"),
    ("p.md", ANY, "is a prompt file"),
    (".claude/commands/c.md", ANY, "is hidden"),
    ("_m/to_prompt.txt", ANY, "leads to a file that arguments may not name"),
    ("_m/to_env.txt", ANY, "leads to a file that arguments may not name"),
])
def test_what_a_path_argument_may_not_name(library: Path, rel: str, pattern: re.Pattern[str] | None,
                                           words: str) -> None:
    with pytest.raises(InvalidParams, match=words):
        LibraryRoot(library).readable(rel, pattern)


def test_a_pattern_opens_other_files_but_the_link_target_must_pass_too(library: Path) -> None:
    root = LibraryRoot(library)
    assert root.readable("docs/notes.txt", ANY) == (library / "docs" / "notes.txt").resolve()
    # a link into material from a folder a pattern opens: where it leads is material, so fine
    assert root.readable("docs/to_material.txt", ANY) == (library / "_m" / "guide.txt").resolve()


def test_files_offers_a_link_only_where_it_could_be_named(library: Path) -> None:
    files = LibraryRoot(library).files()
    assert "_m/guide.txt" in files and "docs/to_material.txt" in files
    assert "_m/to_prompt.txt" not in files and "_m/to_env.txt" not in files
    assert "p.md" not in files and not any(f.startswith(".") or "/." in f for f in files)
    # a folder's files first, then its subfolders', each sorted
    assert LibraryRoot(library).files(material_only=True) == ["_m/guide.txt", "_m/deep/x.txt"]


# -- LibraryRoot: the guard and files written on demand ----------------------------------------------


def test_the_guard_sees_every_prompt_file_read_with_the_bytes_read(library: Path) -> None:
    seen: list[tuple[str, str, bytes]] = []
    root = LibraryRoot(library, guard=lambda name, source, data: seen.append((name, source, data)))
    assert root.read_text("p.md") == "a prompt"
    assert root.read_text("_m/guide.txt") == "material"  # material: not shown
    root.resolve("_m/to_prompt.txt")  # a link to a prompt file: the prompt file is shown
    assert seen == [("p.md", "p.md", b"a prompt"), ("_m/to_prompt.txt", "p.md", b"a prompt")]


def test_the_guard_sees_the_skill_md_of_every_skill_a_file_lies_in(tmp_path: Path) -> None:
    write(tmp_path, {"skills/a/SKILL.md": "A", "skills/a/x.md": "x", "skills/a/in/SKILL.md": "I",
                     "skills/a/in/deep/y.md": "y", "skills/b/z.md": "z", ".claude/skills/c/SKILL.md": "C",
                     ".agents/skills/d/SKILL.md": "D", ".agents/skills/d/w.md": "w"})
    os.symlink("skills/a/x.md", tmp_path / "to_skill.txt")
    seen: list[tuple[str, str, bytes]] = []
    root = LibraryRoot(tmp_path, guard=lambda name, source, data: seen.append((name, source, data)))
    for rel in ("skills/a/x.md", "skills/a/in/deep/y.md", "skills/b/z.md", ".claude/skills/c/SKILL.md",
                ".agents/skills/d/w.md", "to_skill.txt"):
        root.read_text(rel)
    assert seen == [
        ("skills/a/x.md", "skills/a/SKILL.md", b"A"),
        ("skills/a/in/deep/y.md", "skills/a/SKILL.md", b"A"), ("skills/a/in/deep/y.md", "skills/a/in/SKILL.md", b"I"),
        (".claude/skills/c/SKILL.md", ".claude/skills/c/SKILL.md", b"C"),  # a prompt file and a skill's: once
        (".agents/skills/d/w.md", ".agents/skills/d/SKILL.md", b"D"),
        ("to_skill.txt", "skills/a/SKILL.md", b"A"),  # where a link leads counts
    ]
    seen.clear()
    root.resolve("skills/a/in/SKILL.md")
    assert seen == [("skills/a/in/SKILL.md", "skills/a/SKILL.md", b"A"), ("skills/a/in/SKILL.md",
                                                                          "skills/a/in/SKILL.md", b"I")]


def test_completion_offers_a_skills_files_only_where_the_guard_lets_them_be_read(tmp_path: Path) -> None:
    write(tmp_path, {"skills/open/SKILL.md": "o", "skills/open/x.txt": "x", "skills/shut/SKILL.md": "s",
                     "skills/shut/y.txt": "y", "docs/d.txt": "d"})

    def guard(name: str, source: str, data: bytes) -> None:
        if source.startswith("skills/shut/"):
            raise InvalidParams(f"file {name!r} does not exist in the library")

    assert LibraryRoot(tmp_path, guard=guard).files() == ["docs/d.txt", "skills/open/x.txt"]


def test_a_guard_that_refuses_stops_the_read(library: Path) -> None:
    def refuse(name: str, source: str, data: bytes) -> None:
        raise InvalidParams(f"file {name!r} does not exist in the library")

    root = LibraryRoot(library, guard=refuse)
    for rel in ("p.md", "_m/to_prompt.txt"):
        with pytest.raises(InvalidParams, match="does not exist"):
            root.read_bytes(rel)
        with pytest.raises(InvalidParams, match="does not exist"):
            root.resolve(rel)
    assert root.read_bytes("_m/guide.txt") == b"material"


def test_a_missing_file_may_be_written_on_first_need(library: Path) -> None:
    asked: list[str] = []

    def missing(rel: str) -> bool:
        asked.append(rel)
        if rel == "later/made.md":
            write(library, {rel: "made now"})
            return True
        return False

    root = LibraryRoot(library, missing=missing)
    assert root.read_text("later/made.md") == "made now"
    with pytest.raises(InvalidParams, match="does not exist in the library"):
        root.read_text("never.md")
    assert asked == ["later/made.md", "never.md"]


def test_a_missing_callback_claiming_a_file_it_did_not_write_is_not_believed(library: Path) -> None:
    with pytest.raises(InvalidParams, match="does not exist"):
        LibraryRoot(library, missing=lambda rel: True).read_text("ghost.md")


def test_text_must_be_utf8(library: Path) -> None:
    (library / "_m" / "latin.txt").write_bytes("café".encode("latin-1"))
    with pytest.raises(InvalidParams, match="not UTF-8 text"):
        LibraryRoot(library).read_text("_m/latin.txt")
