"""Codex CLI custom prompts read directly (sources/files/native/codex.py): the loose front matter Codex
reads, ``$1``..``$9`` and ``$ARGUMENTS`` by position, ``$NAME`` as required arguments, ``$$`` as text."""

from __future__ import annotations

from pathlib import Path

from promptdeck.sources.files.native import META_FORMAT
from promptdeck.sources.files.native.codex import loose_front_matter, read
from tests.support.native import problem, text


def test_positions_become_arguments_and_dollar_dollar_is_text() -> None:
    prompt = read(".codex/prompts/review.md", "---\ndescription: \"Review a file\"\n---\nReview $1 for $2 ($$)\n")
    assert prompt.name == "review" and prompt.description == "Review a file"
    assert [a.name for a in prompt.arguments] == ["arg1", "arg2"]
    assert text(prompt, arg1="a.py", arg2="bugs") == "Review a.py for bugs ($$)\n"
    assert prompt.meta[META_FORMAT] == "codex"


def test_named_placeholders_are_required_arguments() -> None:
    prompt = read(".codex/prompts/fix.md", "Fix $FILE at $LINE\n")
    assert [(a.name, a.required) for a in prompt.arguments] == [("FILE", True), ("LINE", True)]
    assert text(prompt, FILE="x.py", LINE="$FILE") == "Fix x.py at $FILE\n"


def test_the_front_matter_is_read_as_codex_reads_it_line_by_line() -> None:
    assert loose_front_matter("description: 'a: b'\n  indented: no\nnot a pair\nargument-hint: [x]") == \
        {"description": "a: b", "argument-hint": "[x]"}


def test_a_name_that_is_no_prompt_name_is_a_problem_naming_the_file(tmp_path: Path) -> None:
    rel = ".codex/prompts/no way.md"
    path, line, reason = problem(tmp_path, rel, "hello\n")
    assert path == rel and line is None and "no way" in reason


def test_a_front_matter_that_never_closes_is_a_problem_at_its_line(tmp_path: Path) -> None:
    rel = ".codex/prompts/x.md"
    assert problem(tmp_path, rel, "---\ndescription: d\nbody without a closing fence\n") == \
        (rel, 1, "front matter starts with '---' but has no closing '---' line")
