"""Google dotprompt files read directly (sources/files/native/dotprompt.py), with dotpromptz: Picoschema
inputs as arguments, Handlebars bodies, partials from the library, and problems at their lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdeck.sources.files.native import META_FORMAT, META_MODEL
from promptdeck.sources.files.native.dotprompt import partial_path, read
from tests.support.native import library, problem, text

pytest.importorskip("dotpromptz")


def test_inputs_settings_and_a_handlebars_body(tmp_path: Path) -> None:
    prompt = read(library(tmp_path), "docs/brief.prompt",
                  "---\nmodel: googleai/gemini-2.0-flash\ndescription: A brief\ninput:\n  schema:\n"
                  "    topic: string, the subject\n    tone?: string\n---\nWrite about {{topic}}"
                  "{{#if tone}} in a {{tone}} tone{{/if}}.\n")
    assert prompt.name == "docs.brief" and prompt.description == "A brief"
    assert [(a.name, a.required) for a in prompt.arguments] == [("topic", True), ("tone", False)]
    assert prompt.meta[META_FORMAT] == "dotprompt"
    assert prompt.meta[META_MODEL] == {"model": "googleai/gemini-2.0-flash"}
    assert text(prompt, topic="{{tone}}", tone="dry") == "Write about {{tone}} in a dry tone."


def test_without_an_input_schema_each_name_used_is_an_optional_argument(tmp_path: Path) -> None:
    prompt = read(library(tmp_path), "a.prompt", "Hello {{name}}, {{#if x}}x{{/if}}\n")
    assert [(a.name, a.required) for a in prompt.arguments] == [("name", False)]


def test_partials_are_the_librarys_files(tmp_path: Path) -> None:
    lib = library(tmp_path, {partial_path("sig"): "-- {{who}}"})
    prompt = read(lib, "a.prompt", "---\ninput:\n  schema:\n    who: string\n---\nHi\n{{> sig}}\n")
    assert text(prompt, who="me").endswith("-- me")
    assert partial_path("sig") in prompt.uses.files


def test_a_malformed_file_is_a_problem_naming_the_file_and_line(tmp_path: Path) -> None:
    rel = "bad.prompt"
    path, line, reason = problem(tmp_path, rel, "---\ndescription: d\ninput: [\n---\nbody\n")
    assert path == rel and line is not None and line >= 2 and reason
    path, line, reason = problem(tmp_path, rel, "---\ndescription: d\n---\n{{#if x}}never closed\n")
    assert (path, line) == (rel, 4) and reason.startswith("template error")
