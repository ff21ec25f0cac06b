"""The exception tree: one error for what a reader of a file's text refuses at a line (issue 39, item 7)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from promptdeck.protocol.errors import LibraryError, LineError, PromptdeckError, PromptFileError
from promptdeck.sources.files.blocks import validate_icons
from promptdeck.sources.files.frontmatter import read_front_matter, split_front_matter
from promptdeck.sources.files.library import TemplateFolder
from promptdeck.sources.files.native import Native, build, claude, codex, gemini
from promptdeck.sources.files.source import stage_file

# Each reader of a file's text, given text it refuses, and the line it names (1-based in the file).
REFUSALS: list[tuple[str, Callable[[], object], int | None]] = [
    ("front matter never closed", lambda: split_front_matter("---\nname: x\n"), 1),
    ("front matter that is not YAML", lambda: read_front_matter("a: [\n"), 3),
    ("a message block's field", lambda: validate_icons("not a list"), None),
    ("a Gemini command", lambda: gemini.read(".gemini/commands/x.toml", "a = 1\nb = \n"), 2),
    ("a Codex prompt's front matter", lambda: codex.read(".codex/prompts/x.md", "---\nx: 1\n"), 1),
    ("a Claude command's front matter",
     lambda: claude.read_command(".claude/commands/x.md", "---\nname: [\n---\nhi\n"), 3),
]


@pytest.mark.parametrize(("what", "read", "line"), REFUSALS, ids=[what for what, _, _ in REFUSALS])
def test_every_reader_of_a_files_text_refuses_with_the_one_line_error(what: str, read: Callable[[], object],
                                                                     line: int | None) -> None:
    with pytest.raises(LineError) as caught:
        read()
    assert type(caught.value) is LineError, what  # no reader has its own kind: none is told apart by a caller
    assert caught.value.line == line
    # Part of the tree, and a ValueError as the text given was wrong; not a LibraryError, which has a path.
    assert isinstance(caught.value, PromptdeckError) and isinstance(caught.value, ValueError)
    assert not isinstance(caught.value, LibraryError)


def test_a_line_error_becomes_the_files_problem_at_that_line(tmp_path: Path) -> None:
    staged = stage_file("review.md", b"---\nname: review\n")
    assert staged == [("front matter starts with '---' but has no closing '---' line", 1)]
    prompt, problems = build(TemplateFolder(tmp_path), ".gemini/commands/x.toml", Native("gemini", "a = 1\nb = \n"))
    assert prompt is None and [(p.path, p.line) for p in problems] == [(".gemini/commands/x.toml", 2)]
    assert isinstance(problems[0], PromptFileError)
