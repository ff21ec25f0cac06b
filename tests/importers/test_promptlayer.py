"""PromptLayer's template export, as its REST API documents it (tests/support/imports.py: no PromptLayer
client library installs here)."""

from __future__ import annotations

import json

import pytest

from promptdeck.importers import promptlayer
from promptdeck.importers.model import ImportRefused
from tests.support.imports import promptlayer_versions


def test_versions_release_labels_variables_and_model_settings() -> None:
    (prompt,) = promptlayer.read(json.dumps({"prompt_templates": promptlayer_versions()[::-1]}).encode(), "pl.json")
    first, second = prompt.versions
    assert prompt.name == "welcome-email" and (first.number, second.number) == ("1", "2")
    assert second.labels == ["prod"] and second.tags == ["email"] and second.message == "v2"
    assert second.model == {"provider": "openai", "name": "gpt-4o-mini", "temperature": 0.7}
    assert second.arguments == [{"name": "customer", "required": True}]
    assert second.messages[1].text == "Welcome aboard, {{ customer }}!"


def test_a_completion_in_jinja2_and_an_image_part() -> None:
    record = promptlayer_versions()[0]
    record["prompt_template"] = {"type": "completion", "template_format": "jinja2",
                                 "content": [{"type": "text", "text": "Hi {{ who }}"}, {"type": "image_url"}]}
    (prompt,) = promptlayer.read(json.dumps([record]).encode(), "pl.json")
    (version,) = prompt.versions
    assert version.messages[0].text == "Hi {{ who }}" and version.arguments[0]["name"] == "who"
    assert "a 'image_url' part of a message (left out)" in version.untranslated


def test_wrong_types_are_refused_naming_the_prompt() -> None:
    record = promptlayer_versions()[0]
    record["release_labels"] = "prod"
    with pytest.raises(ImportRefused, match=r"pl.json: prompt 'welcome-email': Expected `array`, got `str`"):
        promptlayer.read(json.dumps([record]).encode(), "pl.json")
