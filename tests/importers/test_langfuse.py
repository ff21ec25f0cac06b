"""Langfuse's prompts API JSON, made by Langfuse's own SDK types (tests/support/imports.py)."""

from __future__ import annotations

import json
import re

import pytest

from promptdeck.importers import langfuse
from promptdeck.importers.model import ImportRefused
from tests.support.imports import langfuse_records


def test_versions_labels_config_and_chat_messages_are_read_in_order() -> None:
    records = langfuse_records()
    triage, greet = langfuse.read(json.dumps(list(reversed(records))).encode(), "lf.json")
    assert greet.name == "greet" and [v.number for v in greet.versions] == ["1", "2"]
    newest = greet.versions[1]
    assert newest.labels == ["production"]  # "latest" is Langfuse's own, moved by itself
    assert newest.model == {"model": "gpt-4o", "temperature": 0.2} and newest.tags == ["onboarding"]
    assert newest.message == "warmer"
    assert [a["name"] for a in newest.arguments] == ["name", "team"]
    assert newest.messages[0].text == "Hello {{ name }}, welcome to {{ team }}."
    assert triage.name == "support/triage" and [m.role for m in triage.versions[0].messages] == ["user", "user"]
    assert any("system message" in note for note in triage.versions[0].untranslated)


def test_an_export_wrapped_in_data_and_a_placeholder_message_are_read() -> None:
    record = langfuse_records()[2]
    record["prompt"].append({"type": "placeholder", "name": "history"})
    (prompt,) = langfuse.read(json.dumps({"data": [record]}).encode(), "lf.json")
    assert "the message placeholder 'history' (messages given at run time)" in prompt.versions[0].untranslated


@pytest.mark.parametrize(("change", "error"), [
    ({"prompt": 5}, "lf.json: prompt 'greet': Expected `str | array`, got `int` - at `$.prompt`"),
    ({"version": "2"}, "Expected `int`, got `str` - at `$.version`"),
    ({"type": "text", "prompt": []}, "a 'text' prompt with messages"),
])
def test_a_record_of_the_wrong_shape_is_refused_naming_the_prompt(change: dict[str, object], error: str) -> None:
    record = {**langfuse_records()[0], **change}
    with pytest.raises(ImportRefused, match=re.escape(error)):
        langfuse.read(json.dumps([record]).encode(), "lf.json")


def test_a_version_given_twice_is_refused() -> None:
    record = langfuse_records()[0]
    with pytest.raises(ImportRefused, match="prompt 'greet' has version 1 twice"):
        langfuse.read(json.dumps([record, record]).encode(), "lf.json")
