"""A prompt file's ``arguments:`` as declared (sources/files/declared.py): each argument's problem at its own
line, a name declared twice at its second line, and the names a broken list declares kept for checking the
templates in the same run."""

from __future__ import annotations

from typing import Any

import yaml

from promptdeck.protocol.errors import PromptFileError
from promptdeck.sources.files.declared import argument_line, declared_arguments

FRONT = """description: x
arguments:
  - name: topic
    required: true
  - {name: pages, type: integr}
  - name: "tone"
    enum: plain
  - {name: topic}
"""


def declared(front: str) -> tuple[Any, bool, list[PromptFileError]]:
    errors: list[PromptFileError] = []
    arguments, ok = declared_arguments(front, yaml.safe_load(front)["arguments"], "p.md", errors)
    return arguments, ok, errors


def test_argument_lines_in_block_and_flow_style() -> None:
    # Lines of the file: its front matter starts below the opening ``---``, on line 2.
    assert argument_line(FRONT, "topic") == 4
    assert argument_line(FRONT, "topic", last=True) == 9
    assert argument_line(FRONT, "pages") == 6
    assert argument_line(FRONT, "tone") == 7
    assert argument_line(FRONT, "top") is None  # a prefix of a name is not the name


def test_a_good_list_is_parsed() -> None:
    arguments, ok, errors = declared("arguments:\n  - {name: a, required: true}\n  - {name: b, type: integer}\n")
    assert ok and errors == []
    assert [(a.name, a.required, a.type) for a in arguments] == [("a", True, "string"), ("b", False, "integer")]


def test_every_problem_at_its_line_and_the_names_kept() -> None:
    arguments, ok, errors = declared(FRONT)
    assert not ok
    assert [(error.line, error.reason.split(":")[0]) for error in errors] == [
        (6, "argument 'pages'"), (7, "argument 'tone'"), (9, "argument 'topic' is declared twice")]
    assert "integr" in errors[0].reason and errors[0].path == "p.md"
    assert [a.name for a in arguments] == ["topic", "pages", "tone"]  # the templates are checked against these


def test_a_list_that_is_not_a_list_names_nothing() -> None:
    arguments, ok, errors = declared("x: 1\narguments: {name: a}\n")
    assert (arguments, ok) == (None, False)
    [error] = errors
    assert error.line == 3 and error.path == "p.md"
    assert error.reason.startswith("arguments must be a list of {name, description, required, ...}")
