"""What a client command's TARGET is (cli/targets.py): one line saying what it must be and what to type
instead, for a folder, a URL without its scheme, a file that is not a program or a command not found."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from promptdeck.cli.targets import WHAT, target_problem


@pytest.fixture(autouse=True)
def typed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [".venv/bin/promptdeck"])


def test_urls_and_commands_that_exist_pass() -> None:
    assert target_problem("http://127.0.0.1:8000/mcp") is None
    assert target_problem(f"{sys.executable} -m promptdeck serve .") is None
    assert target_problem("sh -c true") is None


def test_a_folder_gets_the_command_that_serves_it(tmp_path: Path) -> None:
    problem, code = target_problem(str(tmp_path), "get") or ("", 0)
    assert code == 2
    assert problem == (f"{str(tmp_path)!r} is a folder: {WHAT}; for its prompts, give the command that serves it: "
                       f'.venv/bin/promptdeck get ".venv/bin/promptdeck serve {tmp_path}"')


def test_a_url_without_its_scheme_is_guessed() -> None:
    assert target_problem("localhost:8000/mcp") == (
        f"'localhost:8000/mcp' is no command: {WHAT}; did you mean http://localhost:8000/mcp?", 2)
    assert target_problem("[::1]:8000") is not None


def test_files_and_commands_that_cannot_run(tmp_path: Path) -> None:
    prompt = tmp_path / "a.md"
    prompt.write_text("x")
    assert target_problem(str(prompt)) == (f"{str(prompt)!r} is a file that is not a program: {WHAT}", 2)
    assert target_problem("no-such-command-here --x") == (
        f"no command 'no-such-command-here' is found on PATH: {WHAT}", 2)
    assert target_problem(f"{tmp_path}/missing --x") == (f"'{tmp_path}/missing' does not exist: {WHAT}", 2)
    assert target_problem('unclosed "quote') == (
        f"TARGET 'unclosed \"quote' is not one command line (No closing quotation); {WHAT}", 2)
    assert target_problem("   ") == (f"TARGET is empty: {WHAT}", 2)
