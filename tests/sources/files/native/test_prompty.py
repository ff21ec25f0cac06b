"""Microsoft Prompty files read directly (sources/files/native/prompty.py): inputs as typed arguments,
role lines as messages, Jinja run in the library's sandbox, and problems at their lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdeck.protocol.content import Text
from promptdeck.protocol.errors import LineError
from promptdeck.sources.files.native import META_FORMAT, META_MODEL
from promptdeck.sources.files.native.prompty import read
from tests.support.native import library, messages, problem

DOC = """---
name: Summarize
description: Summarize a text
model:
  api: chat
inputs:
  text:
    type: string
    required: true
  words:
    type: integer
    default: 50
---
system:
Summarize in {{ words }} words.

user:
{{ text }}{{ extra }}
"""


def test_inputs_roles_and_model(tmp_path: Path) -> None:
    prompt = read(library(tmp_path), "docs/summarize.prompty", DOC)
    assert prompt.name == "docs.summarize" and prompt.title == "Summarize"
    assert [(a.name, a.required, a.type) for a in prompt.arguments] == \
        [("text", True, "string"), ("words", False, "integer"), ("extra", False, "string")]
    assert prompt.meta[META_FORMAT] == "prompty"
    assert prompt.meta[META_MODEL] == {"model": {"api": "chat"}, "roles": ["system", "user"]}
    found = messages(prompt, text="{{ words }}", words="10")
    assert [m.role for m in found] == ["user", "user"]
    assert [m.content.text for m in found if isinstance(m.content, Text)] == \
        ["Summarize in 10 words.", "{{ words }}"]


def test_inputs_as_a_list_of_named_inputs(tmp_path: Path) -> None:
    prompt = read(library(tmp_path), "a.prompty",
                  "---\ninputs:\n  - name: topic\n    description: what\n---\nAbout {{ topic }}\n")
    assert [(a.name, a.description) for a in prompt.arguments] == [("topic", "what")]


def test_an_input_with_an_unknown_key_is_an_error_at_the_inputs_line(tmp_path: Path) -> None:
    with pytest.raises(LineError) as caught:
        read(library(tmp_path), "a.prompty", "---\ndescription: d\ninputs:\n  x:\n    colour: red\n---\n{{ x }}\n")
    assert caught.value.line == 3 and "unknown key 'colour'" in str(caught.value)


def test_a_template_format_other_than_jinja2_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LineError, match="only jinja2"):
        read(library(tmp_path), "a.prompty", "---\ntemplate: mustache\n---\nhi\n")


def test_a_malformed_template_is_a_problem_naming_the_file_and_line(tmp_path: Path) -> None:
    rel = "bad.prompty"
    path, line, reason = problem(tmp_path, rel, "---\ndescription: d\n---\nuser:\nfine\n{% if %}\n")
    assert (path, line) == (rel, 6) and reason.startswith("template error")
