"""Humanloop ``.prompt`` files, as Humanloop's docs show them (tests/support/imports.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdeck.importers import humanloop
from promptdeck.importers.model import ImportRefused
from tests.support.imports import HUMANLOOP_PROMPT


def test_a_folder_of_prompt_files_with_their_paths_as_names(tmp_path: Path) -> None:
    (tmp_path / "support").mkdir()
    (tmp_path / "support" / "answer.prompt").write_text(HUMANLOOP_PROMPT)
    (tmp_path / "plain.prompt").write_text("Tell me about {{ topic }}.\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "x.prompt").write_text("hidden")
    (tmp_path / "linked.prompt").symlink_to(tmp_path / "plain.prompt")
    plain, answer = humanloop.read(str(tmp_path), "hl")
    assert (plain.name, answer.name) == ("plain", "support/answer")
    (version,) = answer.versions
    assert [(m.role, m.text) for m in version.messages] == [
        ("user", "You are a friendly assistant for {{ company }}."), ("user", "{{ question }}")]
    assert version.model == {"model": "gpt-4o", "temperature": 0.7, "max_tokens": -1, "provider": "openai",
                             "endpoint": "chat"}
    assert [a["name"] for a in version.arguments] == ["company", "question"]
    assert plain.versions[0].messages[0].text == "Tell me about {{ topic }}."


def test_a_front_matter_that_is_not_a_mapping_is_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "bad.prompt").write_text("---\n- a\n---\nhi\n")
    with pytest.raises(ImportRefused, match="hl/bad.prompt: its front matter is not a mapping"):
        humanloop.read(str(tmp_path), "hl")
