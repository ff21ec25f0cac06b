"""``check --graph`` as text (cli/graph_text.py): prompts with what they use and what uses them, then files
with who uses them and whom a change reaches."""

from __future__ import annotations

from pathlib import Path

from promptdeck.cli.graph_text import graph_lines
from promptdeck.sources.files.source import FileSource
from tests.support.libraries import composed_library


def lines_of(folder: Path) -> list[str]:
    source = FileSource(folder)
    assert source.load(compile_all=True) == []
    return graph_lines({prompt.name: prompt for prompt in source.prompts()})


def test_the_composed_library(tmp_path: Path) -> None:
    assert lines_of(composed_library(tmp_path)) == [
        "prompts:",
        "  few-shot  (few-shot.md)",
        "    used by review",
        "  review  (review.md)",
        "    uses prompt few-shot",
        "    uses prompt rules",
        "    uses file _partials/lists.j2",
        "  rules  (rules.md)",
        "    uses file _partials/tone.md",
        "    used by review",
        "files:",
        "  _partials/lists.j2",
        "    used by review",
        "  _partials/tone.md",
        "    used by rules",
        "    a change reaches review, rules",
    ]


def test_a_library_that_composes_nothing_lists_prompts_only(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("hello\n")
    (tmp_path / "b.md").write_text("---\narguments:\n  - name: which\n---\n"
                                   '{% include "_partials/" ~ which ~ ".md" %}\n')
    assert lines_of(tmp_path) == ["prompts:", "  a  (a.md)", "  b  (b.md)",
                                  "    uses parts named by an expression (known at render)"]
