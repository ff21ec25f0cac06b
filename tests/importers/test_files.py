"""Where a source's prompt name puts its file, and the file a version is written as."""

from __future__ import annotations

import pytest

from promptdeck.importers.build import make_version
from promptdeck.importers.files import file_text, path_for
from promptdeck.importers.model import ImportRefused


@pytest.mark.parametrize("name", ["../../etc/passwd", "/etc/passwd", "a/../b", "a//b", ".hidden", "_partial",
                                  "a\\b", "a\x00b", "line\nbreak", "x" * 201, "a/./b", "???"])
def test_a_name_unsafe_as_a_path_is_refused(name: str) -> None:
    with pytest.raises(ImportRefused, match="nothing was written"):
        path_for(name, "in.json")


def test_folders_are_kept_and_other_characters_mapped_with_a_note() -> None:
    assert path_for("support/triage", "x") == ("support/triage.md", None)
    assert path_for("Team A/bot: v2", "x") == ("Team-A/bot-v2.md", "its name is mapped to 'Team-A.bot-v2'")


def test_the_file_has_front_matter_and_role_lines_after_the_first_user_message() -> None:
    version = make_version("1", [("user", "{{a}}"), ("assistant", "ok")], "mustache", model={"name": "m"},
                           tags=["t"], description="d")
    assert file_text(version) == ("---\ndescription: d\ntags:\n- t\nmodel:\n  name: m\narguments:\n- name: a\n"
                                  "  required: true\n---\n{{ a }}\n\nassistant:\nok\n")
    first_assistant = make_version("1", [("assistant", "hi")], "mustache")
    assert file_text(first_assistant) == "---\n---\nassistant:\nhi\n"
