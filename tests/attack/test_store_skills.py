"""Hostile skills on their way into and out of the versioned store: a path that climbs out, a link that leads
out, a 100 MB file, 10,000 files, and rows another tool wrote into the database. Nothing leaves the
library or the server's private folder, nothing past a cap is read, and the problem is said at its file.

Through the real ``promptdeck publish`` and ``StoreSource``, on SQLite (the checks are the same code for
PostgreSQL, whose publish and serving the store's own tests cover).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from promptdeck.sources.store.database import Store
from promptdeck.sources.store.folder import read_library
from promptdeck.sources.store.model import StoreError, is_safe_path
from promptdeck.sources.store.source import StoreSource
from tests.support.files import skill_md, write


def pd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True, timeout=300)


def published(tmp_path: Path) -> tuple[Path, str]:
    folder, url = tmp_path / "lib", f"sqlite:///{tmp_path}/s.db"
    write(folder, {"hello.md": "Hello!\n", "skills/pdf/SKILL.md": skill_md("pdf"), "skills/pdf/a.md": "A\n"})
    done = pd("publish", str(folder), "--store", url, "--label", "production")
    assert done.returncode == 0, done.stderr
    return folder, url


def refused(folder: Path, url: str) -> str:
    before = pd("history", "--store", url).stdout
    done = pd("publish", str(folder), "--store", url, "--label", "production")
    assert done.returncode == 1 and "nothing published" in done.stderr, (done.stdout, done.stderr)
    assert pd("history", "--store", url).stdout == before
    return done.stdout


@pytest.mark.parametrize("path", [
    "skills/pdf/../../../etc/passwd", ".claude/skills/../../x", ".claude/skills/x/../../../y",
    ".agents/skills/x/.git/config", ".agents/skills/.hidden/SKILL.md", ".agents/skills/x", "skills/x//y",
    "/abs/skills/x/y", "skills\\x\\y", ".claude/skills/x/a\0b"])
def test_a_path_that_is_no_skill_files_path_is_never_stored(path: str, tmp_path: Path) -> None:
    assert not is_safe_path(path)
    with Store(f"sqlite:///{tmp_path}/s.db", create=True) as store, pytest.raises(StoreError):
        store.publish({path: b"x"}, {}, author="a", message="m")


def test_rows_another_tool_wrote_never_leave_the_private_folder(tmp_path: Path) -> None:
    _, url = published(tmp_path)
    escape = tmp_path / "escaped"
    with sqlite3.connect(tmp_path / "s.db") as conn:
        position = conn.execute("SELECT MAX(id) FROM positions").fetchone()[0]
        digest = conn.execute("SELECT digest FROM files WHERE path = 'skills/pdf/a.md'").fetchone()[0]
        for bad in (f"skills/pdf/../../../../../../{escape}", "skills/pdf/.git/config", ".claude/skills/pdf/../../x"):
            conn.execute("INSERT INTO files (path, version, publish, digest) VALUES (?, 1, 1, ?)", (bad, digest))
            conn.execute("INSERT INTO position_files (position, path, version) VALUES (?, ?, 1)", (position, bad))
    source = StoreSource(url)
    try:
        source.load()
        written = {p.relative_to(source.files.folder).as_posix() for p in Path(source.files.folder).rglob("*")}
        assert not escape.exists() and not any(".git" in p or ".." in p for p in written)
        assert [f.path for f in source.skills()["pdf",].files] == ["SKILL.md", "a.md"]
    finally:
        source.close()


def test_a_link_out_of_a_skill_is_refused_at_its_file(tmp_path: Path) -> None:
    folder, url = published(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2\n")
    (folder / "skills/pdf/leak.txt").symlink_to(secret)
    (folder / "notes.txt").write_text("inside the library, outside the skill\n")
    (folder / "skills/pdf/side.txt").symlink_to(folder / "notes.txt")
    out = refused(folder, url)
    assert "skills/pdf/leak.txt: is a link that leads out of the skill" in out
    assert "skills/pdf/side.txt: is a link that leads out of the skill" in out
    assert "hunter2" not in pd("history", "--store", url).stdout


def test_a_link_to_a_scoped_skills_file_is_not_stored_as_a_copy_for_everyone(tmp_path: Path) -> None:
    folder, url = published(tmp_path)
    write(folder, {"skills/payroll/SKILL.md": skill_md("payroll", "Pay", "metadata:\n  promptdeck-scopes: hr\n"),
                   "skills/payroll/rates.csv": "A,10\n"})
    (folder / "_material").mkdir()
    (folder / "_material" / "rates.csv").symlink_to(folder / "skills/payroll/rates.csv")
    done = pd("publish", str(folder), "--store", url)
    assert done.returncode == 1
    assert "_material/rates.csv is a link to skills/payroll/rates.csv, a file of the skill of " \
           "skills/payroll/SKILL.md, which scopes restrict" in done.stderr


def test_a_100_mb_file_is_refused_by_the_caps_and_never_read(tmp_path: Path) -> None:
    folder, url = published(tmp_path)
    big = folder / "skills/pdf/big.bin"
    with big.open("wb") as fh:
        fh.truncate(100 * 1024 * 1024)  # sparse: takes no disk, and would take 100 MB of memory to read
    tracemalloc.start()
    try:
        left_out: list[str] = []
        files = read_library(folder, left_out=left_out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert left_out == ["skills/pdf"] and not any(p.startswith("skills/pdf/") for p in files)
    assert peak < 5 * 1024 * 1024
    out = refused(folder, url)
    assert "skills/pdf/big.bin: is larger than 10485760 bytes (the limit for one file of a skill)" in out


def test_10000_files_are_refused_by_the_caps_after_the_first_few_hundred(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    folder, url = published(tmp_path)
    many = folder / "skills/pdf/many"
    many.mkdir()
    for i in range(10_000):
        (many / f"f{i:05}.txt").write_bytes(b"x")
    opened: list[str] = []
    import promptdeck.sources.store.folder as folder_module
    from promptdeck.sources.files.paths import read_confined

    def counted(root: str, rel: str, limit: int) -> bytes:
        opened.append(rel)
        return read_confined(root, rel, limit)

    monkeypatch.setattr(folder_module, "read_confined", counted)
    left_out: list[str] = []
    read_library(folder, left_out=left_out)
    monkeypatch.undo()
    assert left_out == ["skills/pdf"] and opened == []
    started = time.monotonic()
    out = refused(folder, url)
    assert "skills/pdf: holds more than 512 files" in out
    assert time.monotonic() - started < 60


def test_a_fifo_in_a_skill_is_refused_and_never_opened(tmp_path: Path) -> None:
    folder, url = published(tmp_path)
    os.mkfifo(folder / "skills/pdf/pipe")
    assert "skills/pdf/pipe: is not a regular file (a FIFO, socket or device)" in refused(folder, url)
