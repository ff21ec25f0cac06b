"""Real git repositories for tests, made with the ``git`` binary in a temporary folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: git without the user's or the machine's configuration, with a fixed author.
_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "ana",
        "GIT_AUTHOR_EMAIL": "ana@example.com", "GIT_COMMITTER_NAME": "ana", "GIT_COMMITTER_EMAIL": "ana@example.com"}


def git(folder: Path, *args: str) -> str:
    """Run ``git`` in ``folder``; its output (a failure fails the test)."""
    done = subprocess.run(["git", *args], cwd=folder, env=_ENV, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def prompt(name: str, text: str) -> str:
    """A promptdeck prompt file's text."""
    return f"---\nname: {name}\ndescription: the {name} prompt\n---\n{text}\n"


def repository(folder: Path, files: dict[str, str], *, ignore_base: bool = True) -> Path:
    """A git repository at ``folder`` with ``files`` (path -> text) committed on ``main``; ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q", "-b", "main")
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    if ignore_base:
        (folder / ".gitignore").write_text(".promptdeck-base\n")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "first")
    return folder
