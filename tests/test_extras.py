"""The command that adds an optional extra (extras.py): the pip of the Python running now, relative when it
is below the clone, with a cd to the clone from anywhere else."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from promptdeck import extras
from promptdeck.extras import install_command, needs

#: the clone the promptdeck under test is imported from (this worktree's, with PYTHONPATH=src)
SOURCE_CLONE = Path(extras.__file__).resolve().parents[2]


def test_from_the_clone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SOURCE_CLONE)
    command = install_command("http")
    assert not command.startswith("cd ")
    assert command.endswith(" install -e '.[http]'")
    runner = shlex.split(command)[0]
    assert (SOURCE_CLONE / runner).exists() or os.path.exists(runner)


def test_from_elsewhere_it_goes_to_the_clone_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    command = install_command("oauth")
    assert command.startswith(f"cd {shlex.quote(str(SOURCE_CLONE))} && ")
    assert command.endswith(" install -e '.[oauth]'")


def test_needs_names_what_and_the_extra() -> None:
    message = needs("serving over HTTP", "http")
    assert message.startswith("serving over HTTP needs the http extra: ")
    assert message.endswith(install_command("http"))
