"""The table of sources, and how INPUT is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdeck.importers import SOURCES, read
from promptdeck.importers.model import ImportRefused


def test_every_source_of_the_issue_is_in_the_table() -> None:
    assert list(SOURCES) == ["langfuse", "langsmith", "promptlayer", "openai", "humanloop"]


def test_an_unknown_source_a_missing_input_or_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ImportRefused, match="unknown source 'nope'"):
        read("nope", "x")
    with pytest.raises(ImportRefused, match="not a file"):
        read("langfuse", str(tmp_path / "missing.json"))
    (tmp_path / "real.json").write_text("[]")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    with pytest.raises(ImportRefused, match="link.json: not a file \\(or a symbolic link\\)"):
        read("openai", str(tmp_path / "link.json"))


def test_a_langsmith_manifest_is_named_by_its_file(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text('{"lc": 1, "type": "constructor", "id": ["PromptTemplate"], '
                                           '"kwargs": {"template": "{x}", "template_format": "f-string"}}')
    (prompt,) = read("langsmith", str(tmp_path / "summary.json"))
    assert prompt.name == "summary"
