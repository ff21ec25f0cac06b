"""The command as the user typed it (cli/program.py), for every hint that says what to type next."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest

from promptdeck.cli.program import command_line, program, word


def test_python_dash_m(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["/x/promptdeck/__main__.py", "ls"])
    monkeypatch.setattr(sys, "orig_argv", ["/opt/my python/bin/python3", "-m", "promptdeck", "ls"])
    assert program() == "'/opt/my python/bin/python3' -m promptdeck"


def test_a_relative_path_is_kept_as_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [".venv/bin/promptdeck", "ls"])
    assert program() == ".venv/bin/promptdeck"


def test_an_absolute_path_found_on_path_is_said_by_name(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    binary = tmp_path / "bin" / "promptdeck"
    binary.parent.mkdir()
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(binary)])
    monkeypatch.setenv("PATH", str(binary.parent))
    assert program() == "promptdeck"
    monkeypatch.setenv("PATH", os.defpath)  # not the one PATH finds: the path as typed
    assert program() == str(binary)


def test_command_lines_quote_each_word(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [".venv/bin/promptdeck"])
    line = command_line("serve", "my prompts", "it's")
    assert line == ".venv/bin/promptdeck serve 'my prompts' 'it'\"'\"'s'"
    assert shlex.split(line)[1:] == ["serve", "my prompts", "it's"]


@pytest.mark.parametrize("text", ["promptdeck serve ./x", "it's", "say $HOME", 'a "quoted" word', "back\\slash"])
def test_word_is_one_shell_word_that_keeps_the_text(text: str) -> None:
    assert shlex.split(word(text)) == [text]
    if not any(c in text for c in '"$`\\!'):
        assert word(text) == f'"{text}"'
