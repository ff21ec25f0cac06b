"""Claude Code commands and skills read directly (sources/files/native/claude.py): names from the path or
``name:``, ``$ARGUMENTS``/``$N``/``$name`` as arguments, what is appended, and problems at their lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdeck.protocol.errors import LineError
from promptdeck.sources.files.native import META_FORMAT, META_MODEL
from promptdeck.sources.files.native.claude import read_command, read_skill
from tests.support.native import problem, text


def test_a_command_is_named_by_its_path_and_takes_its_words_by_position() -> None:
    prompt = read_command(".claude/commands/git/fix.md",
                          "---\ndescription: Fix an issue\nmodel: opus\n---\nFix $0 with $1 ($ARGUMENTS)\n")
    assert prompt.name == "git.fix" and prompt.description == "Fix an issue"
    assert [a.name for a in prompt.arguments] == ["arg0", "arg1"]
    assert text(prompt, arg0="#12", arg1="care") == "Fix #12 with care (#12 care)\n"
    assert prompt.meta[META_FORMAT] == "claude-command" and prompt.meta[META_MODEL] == {"model": "opus"}


def test_a_command_without_placeholders_gets_what_was_typed_appended() -> None:
    prompt = read_command(".claude/commands/review.md", "Review the change.\n")
    assert [a.name for a in prompt.arguments] == ["arguments"] and prompt.description == "Review the change."
    assert text(prompt, arguments="carefully") == "Review the change.\n\nARGUMENTS: carefully"
    assert text(prompt) == "Review the change."


def test_named_arguments_and_a_value_that_looks_like_a_placeholder_is_sent_as_typed() -> None:
    prompt = read_command(".claude/commands/x.md", "---\narguments: [issue, tone]\n---\n$issue in a $tone way\n")
    assert [a.name for a in prompt.arguments] == ["issue", "tone"]
    assert text(prompt, issue="$tone", tone="{{ x }}") == "$tone in a {{ x }} way\n"


def test_a_skill_is_named_by_its_folder_or_its_name_and_scoped_as_the_skill() -> None:
    prompt = read_skill(".claude/skills/pdf/SKILL.md", "---\ndescription: Fill forms\n---\nFill $ARGUMENTS\n")
    assert prompt.name == "pdf" and prompt.meta[META_FORMAT] == "claude-skill"
    named = read_skill("skills/pdf/SKILL.md", "---\nname: pdf-forms\ndescription: d\n---\nbody\n")
    assert named.name == "pdf-forms"


def test_an_argument_hint_that_is_no_text_is_an_error_at_its_line() -> None:
    with pytest.raises(LineError) as caught:
        read_command(".claude/commands/x.md", "---\ndescription: d\nargument-hint: {a: 1}\n---\n$0\n")
    assert caught.value.line == 3 and "argument-hint must be text" in str(caught.value)


def test_a_malformed_file_is_a_problem_naming_the_file_and_line(tmp_path: Path) -> None:
    rel = ".claude/commands/bad.md"
    assert problem(tmp_path, rel, "---\ndescription: d\narguments: [a, a]\n---\n$a\n") == \
        (rel, 3, "arguments names a name twice")
    path, line, reason = problem(tmp_path, rel, "---\ndescription: [unclosed\n---\nbody\n")
    assert path == rel and line == 2 and reason
