"""A library folder as templates see it (sources/files/library.py): ``read()`` of library files, the access
rule for a prompt file a template reads (a problem of the reading file when its readers could not all see
it), a prompt file's scopes, path completion, and what ``check`` warns of for the read gate."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from promptdeck.prompts.spec import Prompt, RenderContext
from promptdeck.protocol.content import Text
from promptdeck.protocol.errors import InvalidParams
from promptdeck.sources.files.library import file_scopes, read_gate_warnings
from promptdeck.sources.files.source import FileSource
from tests.support.libraries import prompt_folder


def source_of(root: Path, files: dict[str, str]) -> FileSource:
    source = FileSource(prompt_folder(root, files))
    source.load(compile_all=True)
    return source


def rendered_text(prompt: Prompt, **values: Any) -> str:
    result = prompt.render(values, RenderContext(prompt.name))
    messages = result if isinstance(result, list) else asyncio.run(result)  # type: ignore[arg-type]
    content = messages[0].content
    assert isinstance(content, Text)
    return content.text


def named(source: FileSource, name: str) -> Prompt:
    return next(p for p in source.prompts() if p.name == name)


def test_file_scopes() -> None:
    assert file_scopes("a.md", b"---\nscopes: [hr, it]\n---\nx") == frozenset({"hr", "it"})
    assert file_scopes("a.md", b"no front matter") == frozenset()
    assert file_scopes("a.md", b"---\nscopes: [\n---\nx") is None  # unreadable: a template may not read it
    assert file_scopes("a.md", b"\xff\xfe") is None
    assert file_scopes("notes.txt", b"---\nscopes: [hr]\n---\n") == frozenset()  # not a prompt file


def test_read_of_material_and_the_access_rule(tmp_path: Path) -> None:
    files = {
        "_m/rules.txt": "Be kind.",
        "hr.md": "---\nscopes: [hr]\n---\nPayroll secrets\n",
        "literal.md": '{{ read("hr.md") }}\n',
        "typed.md": "---\narguments:\n  - {name: f, type: path, pattern: '.*'}\n---\n{{ read(f) }}\n",
        "hr-reader.md": '---\nscopes: [hr]\n---\n{{ read("_m/rules.txt") }} {{ read("hr.md") }}\n',
    }
    source = FileSource(prompt_folder(tmp_path, files))
    [problem] = source.load(compile_all=True)
    # Checked where it is written: an unscoped prompt may not carry hr.md to everyone.
    assert str(problem) == ("literal.md:1: read('hr.md'): hr.md is a prompt restricted to hr; a prompt seen by "
                            "everyone may not read it, as its readers could not all see it")
    assert rendered_text(named(source, "hr-reader")) == "Be kind. ---\nscopes: [hr]\n---\nPayroll secrets\n"
    assert rendered_text(named(source, "typed"), f="_m/rules.txt") == "Be kind."
    with pytest.raises(InvalidParams) as refused:
        rendered_text(named(source, "typed"), f="hr.md")  # an argument never names a prompt file, whoever asks
    assert refused.value.message == ("prompt 'typed': argument 'f': file 'hr.md' is a prompt file; arguments may "
                                     "name material only")


def test_path_completion_lists_material_files_below_the_prefix(tmp_path: Path) -> None:
    source = source_of(tmp_path, {
        "_m/a.txt": "a", "_m/b.txt": "b", "other/c.txt": "c",
        "pick.md": "---\narguments:\n  - {name: f, type: path}\n  - {name: g, type: path, pattern: 'other/.*'}\n"
                   "---\n{{ f }} {{ g }}\n"})
    prompt = named(source, "pick")
    assert sorted(prompt.completers["f"]("_m/", {})) == ["_m/a.txt", "_m/b.txt"]  # type: ignore[arg-type]
    assert list(prompt.completers["g"]("", {})) == ["other/c.txt"]  # type: ignore[arg-type]


def test_check_warns_of_a_path_without_pattern_and_a_link_the_gate_refuses(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    library = tmp_path / "lib"
    source = source_of(library, {"pick.md": "---\narguments:\n  - {name: f, type: path}\n---\n{{ f }}\n"})
    os.symlink(outside, library / "escape.txt")
    warnings = read_gate_warnings(source.library.root, source.prompts())
    assert warnings[0].startswith("pick.md: warning: path argument 'f' has no pattern")
    assert warnings[1].startswith("escape.txt: warning: a link the read gate refuses, so no prompt can read it")
    assert len(warnings) == 2
