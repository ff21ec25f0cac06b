"""OpenAI's prompt objects, their messages made by the ``openai`` package's own Responses input types."""

from __future__ import annotations

import json

import pytest

from promptdeck.importers import openai_objects
from promptdeck.importers.model import ImportRefused
from tests.support.imports import openai_prompt_objects


def test_versions_typed_variables_settings_and_the_default_version() -> None:
    (prompt,) = openai_objects.read(json.dumps(openai_prompt_objects()).encode(), "openai.json")
    first, second = prompt.versions
    assert prompt.name == "summarize" and first.labels == [] and second.labels == ["production"]
    assert second.model == {"model": "gpt-4.1", "temperature": 0.3}
    assert second.arguments == [{"name": "days", "type": "integer", "default": 3},
                                {"name": "city", "required": True}]
    assert [m.text for m in second.messages] == ["You plan trips.", "A {{ days }}-day trip to {{ city }}."]


def test_an_image_in_a_message_is_named_and_a_wrong_type_refused() -> None:
    objects = openai_prompt_objects()
    objects["data"][0]["messages"][1]["content"].append({"type": "input_image", "image_url": "x"})
    (prompt,) = openai_objects.read(json.dumps(objects).encode(), "openai.json")
    assert "a 'input_image' part of a message (left out)" in prompt.versions[0].untranslated
    objects["data"][0]["messages"] = {"role": "user"}
    with pytest.raises(ImportRefused, match=r"prompt 'summarize': Expected `array`, got `object` - at `\$.messages`"):
        openai_objects.read(json.dumps(objects).encode(), "openai.json")
