"""Skills in the versioned store (docs/store.md, docs/skills.md): publish records every file of a skill as a
version of its path, a label serves its skills as the folder would, a label move or rollback changes them
at once, a broken skill is refused at its file and line, replicas follow, and the store commands name skills.

Against SQLite and a real PostgreSQL cluster (``store_url``), through the real command line; the served side
is ``StoreSource`` in process, compared with a ``FileSource`` over the very folder published.
"""
# ruff: noqa: F811 - the store fixtures, imported from test_database, are parameters here

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from promptdeck.prompts.skills import Skill
from promptdeck.protocol.errors import InvalidParams
from promptdeck.sources.files.source import FileSource
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.schema import SCHEMA_VERSION
from promptdeck.sources.store.source import StoreSource
from tests.support.cli import pd
from tests.support.files import skill_md, write
from tests.support.postgres import new_database
from tests.support.store_schema import as_schema_4

PNG = bytes(range(256)) * 3 + b"\x89PNG\r\n\x1a\n\x00binary"

#: A library with a skill in each kind of place: a tool's hidden skill folder, the shared one, the top-level
#: one; a nested skill, a scoped one, a binary file, a script whose type its bytes decide, hidden files and
#: __pycache__ (no part of a skill), and a link inside a skill.
SKILLS: dict[str, str | bytes] = {
    "hello.md": "---\ndescription: Say hello\n---\nHello!\n",
    ".claude/skills/git/SKILL.md": skill_md("git", "Git workflow"),
    ".claude/skills/git/references/branches.md": "# Branches\n\nmain and topic branches.\n",
    ".claude/skills/git/.env": "TOKEN=hidden\n",
    ".agents/skills/deploy/SKILL.md": skill_md("deploy", "Deploy", "metadata:\n  promptdeck-scopes: ops\n"),
    ".agents/skills/deploy/scripts/run": "#!/bin/sh\necho deploying\n",
    ".agents/skills/deploy/scripts/blob": b"\x00\x01\x02 not text",
    "skills/pdf/SKILL.md": skill_md("pdf", "PDFs"),
    "skills/pdf/logo.png": PNG,
    "skills/pdf/forms/SKILL.md": skill_md("forms", "PDF forms"),
    "skills/pdf/forms/fill.md": "Fill the form.\n",
    "skills/pdf/__pycache__/x.cpython-311.pyc": b"\x00compiled",
    "skills/pdf/.cache/state": "hidden\n",
}


def make_library(root: Path, files: Mapping[str, str | bytes] = SKILLS) -> Path:
    write(root, dict(files))
    (root / "skills" / "pdf" / "logo-link.png").symlink_to("logo.png")  # a link inside the skill: its bytes
    return root


def served(source: StoreSource | FileSource) -> dict[tuple[str, ...], tuple[object, ...]]:
    """Everything a client learns of each skill: its entry (URIs, front matter, digests, sizes), scopes, MIME
    types, folders, and the bytes of every file."""
    return {path: (skill.entry(), skill.scopes, [(f.path, f.mime_type) for f in skill.files], skill.folders,
                   [source.read_skill_file(skill, f.path) for f in skill.files])
            for path, skill in source.skills().items()}


def folder_served(root: Path) -> dict[tuple[str, ...], tuple[object, ...]]:
    source = FileSource(root)
    assert source.load() == []
    return served(source)


def loaded(url: str, label: str = "production") -> StoreSource:
    source = StoreSource(url, label)
    assert list(source.load()) == []
    return source


def wait_for(condition: Callable[[], bool], seconds: float = 20) -> None:
    event = threading.Event()
    for _ in range(int(seconds * 20)):
        if condition():
            return
        event.wait(0.05)
    raise AssertionError("timed out")


# -- publish and serve ---------------------------------------------------------------------------------


def test_a_label_serves_exactly_the_skills_the_published_folder_serves(store_url: str, tmp_path: Path) -> None:
    folder = make_library(tmp_path / "lib")
    published = pd("publish", str(folder), "--store", store_url, "--label", "production").stdout
    assert ".claude/skills/git/references/branches.md" in published and "skills/pdf/logo-link.png" in published
    source = loaded(store_url)
    try:
        assert sorted(source.skills()) == [("deploy",), ("git",), ("pdf",), ("pdf", "forms")]
        assert served(source) == folder_served(folder)
        pdf = source.skills()["pdf",]
        assert pdf.file("logo.png") is not None and pdf.file("logo.png").mime_type == "image/png"  # type: ignore[union-attr]
        assert source.skills()["deploy",].scopes == frozenset({"ops"})
        assert {f.path: f.mime_type for f in source.skills()["deploy",].files}["scripts/run"] == "text/plain"
    finally:
        source.close()
    everything = pd("history", "--store", store_url).stdout
    assert ".env" not in everything and "__pycache__" not in everything and ".cache" not in everything


def test_listed_digests_are_the_stores_own_and_a_file_is_served_only_with_the_bytes_they_promise(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A skill's files are not hashed again when served: the store keeps each by its SHA-256. Only a SKILL.md
    (read for its front matter) and a file whose type its bytes decide are read to list them. A digest
    another tool wrote wrong is listed as written, and its file is then never served."""
    url = f"sqlite:///{tmp_path}/s.db"
    pd("publish", str(make_library(tmp_path / "lib")), "--store", url, "--label", "production")
    import promptdeck.sources.files.skills as skills_module
    from promptdeck.sources.files.paths import read_confined

    read: list[str] = []

    def counted(top: str, rel: str, limit: int) -> bytes:
        read.append(rel)
        return read_confined(top, rel, limit)

    monkeypatch.setattr(skills_module, "read_confined", counted)
    source = loaded(url)
    try:
        assert sorted(read) == ["SKILL.md", "SKILL.md", "SKILL.md", "forms/SKILL.md", "scripts/blob", "scripts/run"]
    finally:
        source.close()
    monkeypatch.undo()

    fake = "0" * 64
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute("INSERT INTO blobs (digest, data) SELECT ?, b.data FROM files f JOIN blobs b ON b.digest = "
                     "f.digest WHERE f.path = 'skills/pdf/logo.png'", (fake,))
        conn.execute("UPDATE files SET digest = ? WHERE path = 'skills/pdf/logo.png'", (fake,))
    source = loaded(url)
    try:
        pdf = source.skills()["pdf",]
        assert pdf.file("logo.png").digest == "sha256:" + fake  # type: ignore[union-attr]
        with pytest.raises(InvalidParams):
            source.read_skill_file(pdf, "logo.png")
        assert source.read_skill_file(pdf, "logo-link.png") == PNG  # its own row, its right digest
    finally:
        source.close()


def digests(skills: Mapping[tuple[str, ...], Skill]) -> dict[str, str]:
    return {skill.file_uri(f.path): f.digest for skill in skills.values() for f in skill.files}


def test_a_label_move_and_a_rollback_swap_the_served_skills_at_once(store_url: str, tmp_path: Path) -> None:
    folder = make_library(tmp_path / "lib")
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    first = folder_served(folder)
    source = loaded(store_url)
    seen: list[dict[str, str]] = []
    source.attach(lambda: seen.append(digests(source.skills())))  # what the server reads once told of a move
    try:
        before = dict(source.skills())
        (folder / ".claude/skills/git/references/branches.md").write_text("# Branches\n\nOnly main.\n")
        shutil.rmtree(folder / "skills/pdf/forms")  # a nested skill gone, with its folder
        (folder / "skills/pdf/logo.png").write_bytes(PNG[::-1])
        write(folder, {"skills/new/SKILL.md": skill_md("new", "A new skill")})
        pd("publish", str(folder), "--store", store_url, "--label", "production")
        wait_for(lambda: bool(seen))
        assert served(source) == folder_served(folder)
        assert seen[0] == digests(source.skills())  # swapped before the server was told
        assert seen[0]["skill://git/references/branches.md"] != digests(before)["skill://git/references/branches.md"]
        assert "skill://pdf/forms/SKILL.md" not in seen[0] and "forms" not in source.skills()["pdf",].folders
        # A snapshot taken before the move still reads the bytes it listed (from the store, by digest).
        assert source.read_skill_file(before["pdf",], "logo.png") == PNG
        assert source.read_skill_file(before["pdf", "forms"], "fill.md") == b"Fill the form.\n"

        pd("rollback", "production", "--store", store_url)
        wait_for(lambda: len(seen) == 2)
        assert served(source) == first
        assert seen[1] == digests(before)
    finally:
        source.close()


def test_a_broken_skill_is_refused_at_its_file_and_line_and_the_label_keeps_serving(store_url: str,
                                                                                    tmp_path: Path) -> None:
    folder = make_library(tmp_path / "lib")
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    good = folder_served(folder)
    (folder / "skills/pdf/SKILL.md").write_text("---\nname: pdfs\ndescription: PDFs\n---\nBody\n")
    (folder / "skills/pdf/notes.md").write_text("a new file of the broken skill\n")
    (folder / "hello.md").write_text("---\ndescription: Say hello\n---\nHello, changed!\n")
    refused = pd("publish", str(folder), "--store", store_url, "--label", "production", check=False)
    assert refused.returncode == 1
    assert "skills/pdf/SKILL.md:2: name 'pdfs' does not match the skill's folder 'pdf'" in refused.stdout
    assert "nothing published: 1 problem in 1 file" in refused.stderr
    assert "publish 2" not in pd("history", "--store", store_url).stdout
    source = loaded(store_url)
    try:
        assert served(source) == good
    finally:
        source.close()


def test_a_stored_skill_that_breaks_keeps_its_last_good_version(tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    """Another tool writes a broken SKILL.md straight into the store (no check) and moves the label: the
    server logs the problem and goes on serving the skill as it last was, with the bytes it listed."""
    url = f"sqlite:///{tmp_path}/s.db"
    folder = make_library(tmp_path / "lib")
    pd("publish", str(folder), "--store", url, "--label", "production")
    good = folder_served(folder)
    source = loaded(url)
    moved = threading.Event()
    source.attach(moved.set)
    try:
        with Store(url) as store:
            store.publish_file("skills/pdf/SKILL.md", b"---\nname: other\n---\nNo description.\n", None,
                               author="tool", message="broken", label="production")
        assert moved.wait(20)
        assert served(source) == good
        assert "skills/pdf/SKILL.md" in caplog.text and "does not match the skill's folder" in caplog.text
    finally:
        source.close()


def test_replicas_on_postgresql_follow_a_label_and_serve_the_same_skills(postgres: str, tmp_path: Path) -> None:
    url = new_database(postgres)
    folder = make_library(tmp_path / "lib")
    pd("publish", str(folder), "--store", url, "--label", "production")
    replicas = [loaded(url) for _ in range(3)]
    moved = [threading.Event() for _ in replicas]
    try:
        for replica, event in zip(replicas, moved, strict=True):
            replica.attach(event.set)
        (folder / "skills/pdf/forms/fill.md").write_text("Fill the form, twice.\n")
        pd("publish", str(folder), "--store", url, "--label", "production")
        assert all(event.wait(20) for event in moved)
        expected = folder_served(folder)
        assert all(served(replica) == expected for replica in replicas)
    finally:
        for replica in replicas:
            replica.close()


def test_skills_off_serves_none_and_reads_none(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    pd("publish", str(make_library(tmp_path / "lib")), "--store", url, "--label", "production")
    source = StoreSource(url, skills=False)
    try:
        source.load()
        assert source.skills() == {}
    finally:
        source.close()


# -- the store commands ----------------------------------------------------------------------------


def test_history_diff_label_and_export_of_skills(store_url: str, tmp_path: Path) -> None:
    folder = make_library(tmp_path / "lib")
    pd("publish", str(folder), "--store", store_url, "--label", "production", "-m", "first")
    (folder / ".claude/skills/git/references/branches.md").write_text("# Branches\n\nOnly main.\n")
    (folder / "skills/pdf/logo.png").write_bytes(PNG[::-1])
    shutil.rmtree(folder / "skills/pdf/forms")
    pd("publish", str(folder), "--store", store_url, "--label", "staging", "-m", "second")

    by_uri = pd("history", "skill://git", "--store", store_url).stdout.splitlines()
    assert [line.split("  ")[:2] for line in by_uri] == [
        [".claude/skills/git/references/branches.md v2", "skill git"],
        [".claude/skills/git/SKILL.md v1", "skill git"],
        [".claude/skills/git/references/branches.md v1", "skill git"]]
    assert by_uri[0].endswith("second  [staging]") and by_uri[1].endswith("[production, staging]")
    assert pd("history", ".claude/skills/git", "--store", store_url).stdout.splitlines() == by_uri
    nested = pd("history", "skills/pdf", "--store", store_url).stdout
    assert "skills/pdf/forms/SKILL.md v2  skill pdf/forms, deleted  publish 2" in nested
    assert "skills/pdf/logo.png v1  skill pdf  publish 1" in nested
    one = pd("history", "skill://pdf/forms/fill.md", "--store", store_url).stdout.splitlines()
    assert [line.split("  ")[:2] for line in one] == [["skills/pdf/forms/fill.md v2", "skill pdf/forms, deleted"],
                                                      ["skills/pdf/forms/fill.md v1", "skill pdf/forms"]]

    text = pd("diff", "skill://git/references/branches.md", "1", "--store", store_url).stdout
    assert text == ("--- .claude/skills/git/references/branches.md@1\n+++ .claude/skills/git/references/branches.md@2\n"
                    "@@ -1,3 +1,3 @@\n # Branches\n \n-main and topic branches.\n+Only main.\n")
    assert pd("diff", "skills/pdf/logo.png", "1", "2", "--store", store_url).stdout == \
        "Binary files skills/pdf/logo.png@1 and skills/pdf/logo.png@2 differ\n"
    whole = pd("diff", "skill://pdf", "1", "--store", store_url, check=False)
    assert whole.returncode == 1 and "skill://pdf is a skill's folder of several files" in whole.stderr
    unknown = pd("history", "skill://nope", "--store", store_url, check=False)
    assert unknown.returncode == 1 and "no skill or skill file 'skill://nope' in the store" in unknown.stderr

    assert pd("label", "skill://git/references/branches.md@2", "production", "--store", store_url).stdout == \
        "label production: skill://git/references/branches.md is at version 2\n"
    exported = tmp_path / "out"
    pd("export", str(exported), "--store", store_url, "--label", "production")
    assert (exported / ".claude/skills/git/references/branches.md").read_text() == "# Branches\n\nOnly main.\n"
    assert (exported / "skills/pdf/logo.png").read_bytes() == PNG  # the rest of production stayed
    assert (exported / "skills/pdf/logo-link.png").read_bytes() == PNG  # a link, kept as the file it led to
    assert not (exported / ".claude/skills/git/.env").exists() and not (exported / "skills/pdf/__pycache__").exists()
    assert FileSource(exported).load() == []  # the export is a library whose skills check
    staged = tmp_path / "staged"
    pd("export", str(staged), "--store", store_url, "--label", "staging")
    assert {p: digest for p, digest in digests(FileSource_skills(staged)).items()} == \
        digests(FileSource_skills(folder))


def FileSource_skills(root: Path) -> Mapping[tuple[str, ...], Skill]:  # noqa: N802 - reads as what it gives
    source = FileSource(root)
    source.load()
    return source.skills()


def test_a_publish_that_changes_only_a_skill_checks_the_skills(tmp_path: Path) -> None:
    """An unchanged store, a skill folder added: the store had none of its files, so the check reads skills
    (and refuses a bad one) even though no prompt changed."""
    url = f"sqlite:///{tmp_path}/s.db"
    folder = tmp_path / "lib"
    write(folder, {"hello.md": "Hello!\n"})
    pd("publish", str(folder), "--store", url, "--label", "production")
    write(folder, {".agents/skills/tool/SKILL.md": "---\nname: tool\n---\nNo description.\n"})
    refused = pd("publish", str(folder), "--store", url, check=False)
    assert refused.returncode == 1 and ".agents/skills/tool/SKILL.md:1: SKILL.md gives no description" in \
        refused.stdout
    (folder / ".agents/skills/tool/SKILL.md").write_text(skill_md("tool", "A tool"))
    assert pd("publish", str(folder), "--store", url).stdout.splitlines() == [
        "publish 2: 1 file changed", "  .agents/skills/tool/SKILL.md"]
    data = (folder / ".agents/skills/tool/SKILL.md").read_bytes()
    with Store(url) as store:
        assert store.reads.latest()[".agents/skills/tool/SKILL.md"].digest == hashlib.sha256(data).hexdigest()


def test_a_schema_3_store_is_refused_until_upgraded_and_then_serves_the_skills_it_holds(tmp_path: Path) -> None:
    """Schema 4 marks the files of skill folders. A store of schema 3 (whose publishes may hold a top-level
    ``skills/`` folder's files already) is refused with the command to run; ``store upgrade`` marks what it
    holds, so its label's skills are served without a new publish."""
    url = f"sqlite:///{tmp_path}/s.db"
    folder = make_library(tmp_path / "lib")
    pd("publish", str(folder), "--store", url, "--label", "production")
    with sqlite3.connect(tmp_path / "s.db") as conn:  # what schema 3 had
        as_schema_4(conn)
        conn.execute("DROP INDEX position_files_skills")
        conn.execute("ALTER TABLE position_files DROP COLUMN skill")
        conn.execute("UPDATE promptdeck_schema SET version = 3")
    refused = pd("history", "--store", url, check=False)
    assert refused.returncode == 1 and "has schema 3: run `promptdeck store upgrade" in refused.stderr
    assert f"upgraded the store from schema 3 to {SCHEMA_VERSION}" in pd("store", "upgrade", url).stdout
    source = loaded(url)
    try:
        assert served(source) == folder_served(folder)
    finally:
        source.close()
