"""VS Code / Copilot prompt files read directly (sources/files/native/copilot.py): ``${input:name}`` and
editor variables as arguments, ``name:``, settings in ``_meta``, and problems at their lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdeck.protocol.errors import LineError
from promptdeck.sources.files.native import META_FORMAT, META_MODEL
from promptdeck.sources.files.native.copilot import read
from tests.support.native import problem, text


def test_inputs_and_editor_variables_become_arguments() -> None:
    prompt = read(".github/prompts/web/form.prompt.md",
                  "---\ndescription: A form\nmode: agent\ntools: [search]\n---\n"
                  "Make ${input:form-name:the form} in ${file}; ${input:form-name} again\n")
    assert prompt.name == "web.form" and prompt.description == "A form"
    assert [a.name for a in prompt.arguments] == ["form_name", "file"]
    assert text(prompt, form_name="signup", file="${file}") == "Make signup in ${file}; signup again\n"
    assert prompt.meta[META_FORMAT] == "copilot" and prompt.meta[META_MODEL] == {"mode": "agent", "tools": ["search"]}


def test_a_prompt_file_in_the_library_is_named_by_its_path_unless_name_says() -> None:
    assert read("a/b.prompt.md", "hi\n").name == "a.b"
    assert read("a/b.prompt.md", "---\nname: other\n---\nhi\n").name == "other"


def test_tools_that_are_no_list_of_names_and_an_input_twice_are_errors_at_their_lines() -> None:
    with pytest.raises(LineError, match="tools must be a list") as caught:
        read("x.prompt.md", "---\ndescription: d\ntools: 3\n---\nhi\n")
    assert caught.value.line == 3
    with pytest.raises(LineError, match="would both be the argument 'a_b'") as caught:
        read("x.prompt.md", "${input:a-b}\n${input:a_b}\n")
    assert caught.value.line == 2


def test_a_malformed_input_is_a_problem_naming_the_file_and_line(tmp_path: Path) -> None:
    rel = ".github/prompts/x.prompt.md"
    path, line, reason = problem(tmp_path, rel, "---\ndescription: d\n---\nfirst\nuse ${input:9bad}\n")
    assert (path, line) == (rel, 5) and "${input:9bad}" in reason
