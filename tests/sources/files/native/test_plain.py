"""Cursor commands and Continue prompts read directly (sources/files/native/plain.py): the file as
written, what is typed appended, Continue's ``invokable`` and ``{{{ input }}}``."""

from __future__ import annotations

from pathlib import Path

from promptdeck.sources.files.native import META_FORMAT
from promptdeck.sources.files.native.plain import read_continue, read_cursor
from tests.support.native import build, problem, text


def test_a_cursor_command_is_the_whole_file_with_what_is_typed_appended() -> None:
    prompt = read_cursor(".cursor/commands/review.md", "---\nnot: front matter\n---\nReview {{ x }}\n")
    assert prompt.name == "review" and prompt.meta[META_FORMAT] == "cursor"
    assert text(prompt, arguments="fast") == "---\nnot: front matter\n---\nReview {{ x }}\n\nfast"
    assert text(prompt) == "---\nnot: front matter\n---\nReview {{ x }}"


def test_a_continue_prompt_is_one_only_when_invokable() -> None:
    body = "---\nname: Review\ndescription: d\ninvokable: true\n---\nReview {{{ input }}} now\n"
    prompt = read_continue(".continue/prompts/review.md", body)
    assert prompt is not None and prompt.title == "Review" and prompt.name == "review"
    assert text(prompt, input="this") == "Review this now"
    assert read_continue(".continue/prompts/review.md", "---\nname: Review\n---\nbody\n") is None


def test_a_continue_prompt_that_is_no_prompt_is_no_problem_either(tmp_path: Path) -> None:
    assert build(tmp_path, ".continue/prompts/x.md", "---\ninvokable: false\n---\nbody\n") == (None, [])


def test_a_malformed_file_is_a_problem_naming_the_file_and_line(tmp_path: Path) -> None:
    rel = ".continue/prompts/x.md"
    assert problem(tmp_path, rel, "---\nname: n\ninvokable: maybe\n---\nbody\n") == \
        (rel, 3, "invokable must be true or false")
