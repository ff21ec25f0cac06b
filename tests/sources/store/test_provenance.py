"""sources/store/provenance.py: a folder's git commit, branch and dirtiness, read with the git binary; no git,
no repository, no commit: none, never an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdeck.sources.store.provenance import Provenance, provenance
from tests.support.git import git, prompt, repository


def test_a_work_tree_gives_its_commit_and_branch_and_whether_it_is_dirty(tmp_path: Path) -> None:
    folder = repository(tmp_path / "repo", {"a.md": prompt("a", "A")})
    commit = git(folder, "rev-parse", "HEAD").strip()
    assert provenance(folder) == Provenance(commit, "main", False)
    (folder / ".promptdeck-base").write_text("production 1\n")  # ours, and ignored or not: no change of the library
    (folder / ".gitignore").unlink()
    git(folder, "commit", "-qam", "no ignore")
    assert provenance(folder) == Provenance(git(folder, "rev-parse", "HEAD").strip(), "main", False)
    (folder / "b.md").write_text("new")
    assert provenance(folder) is not None and provenance(folder).dirty  # type: ignore[union-attr]
    assert Provenance("0123456789abcdef0123", None, True).text() == "git 0123456789ab (detached), dirty"


def test_a_folder_below_the_root_is_dirty_by_its_own_files(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", {"prompts/a.md": prompt("a", "A"), "src/app.py": "x = 1\n"})
    (root / "src" / "app.py").write_text("x = 2\n")
    found = provenance(root / "prompts")
    assert found is not None and found.branch == "main" and not found.dirty
    git(root, "checkout", "-q", "--detach")
    assert provenance(root / "prompts").branch is None  # type: ignore[union-attr]


def test_no_repository_no_commit_no_git_give_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert provenance(tmp_path) is None
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    assert provenance(empty) is None
    folder = repository(tmp_path / "repo", {"a.md": "A"})
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert provenance(folder) is None


def test_a_repository_cannot_make_git_run_its_command(tmp_path: Path) -> None:
    folder = repository(tmp_path / "repo", {"a.md": "A"})
    ran = tmp_path / "ran"
    git(folder, "config", "core.fsmonitor", f"touch {ran}; false")
    assert provenance(folder) is not None and not ran.exists()
