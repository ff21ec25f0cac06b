"""Gemini CLI commands read directly (sources/files/native/gemini.py): TOML, ``{{args}}``, what is
appended without it, and TOML problems at their lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdeck.protocol.errors import LineError
from promptdeck.sources.files.native import META_FORMAT, META_MODEL
from promptdeck.sources.files.native.gemini import read
from tests.support.native import problem, text


def test_a_command_is_named_by_its_path_and_args_is_substituted_once() -> None:
    prompt = read(".gemini/commands/git/commit.toml",
                  'description = "Commit"\nprompt = "Commit {{args}} now"\nmodel = "pro"\n')
    assert prompt.name == "git.commit" and prompt.description == "Commit"
    assert [a.name for a in prompt.arguments] == ["args"]
    assert text(prompt, args="{{args}}") == "Commit {{args}} now"
    assert prompt.meta[META_FORMAT] == "gemini" and prompt.meta[META_MODEL] == {"model": "pro"}


def test_without_args_the_command_line_is_appended_as_gemini_does() -> None:
    prompt = read(".gemini/commands/git/commit.toml", 'prompt = "Commit"\n')
    assert text(prompt, args="all") == "Commit\n\n/git:commit all"
    assert text(prompt) == "Commit"


def test_a_command_without_a_prompt_or_with_one_that_is_no_text_is_an_error() -> None:
    with pytest.raises(LineError, match="needs a prompt"):
        read(".gemini/commands/x.toml", 'description = "d"\n')
    with pytest.raises(LineError) as caught:
        read(".gemini/commands/x.toml", 'description = "d"\nprompt = 3\n')
    assert caught.value.line == 2


def test_a_malformed_file_is_a_problem_naming_the_file_and_line(tmp_path: Path) -> None:
    rel = ".gemini/commands/bad.toml"
    path, line, reason = problem(tmp_path, rel, 'description = "d"\nprompt = "unclosed\n')
    assert (path, line) == (rel, 2) and reason.startswith("not valid TOML")
