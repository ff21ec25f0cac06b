"""LangSmith Prompt Hub commits, made by LangSmith's schemas and LangChain's own serializer (``dumpd``)."""

from __future__ import annotations

import json

import pytest

from promptdeck.importers import langsmith
from promptdeck.importers.model import ImportRefused
from tests.support.imports import langsmith_commits, langsmith_manifest


def test_commits_become_versions_in_order_and_a_tag_a_label() -> None:
    (joke,) = langsmith.read(json.dumps(langsmith_commits()).encode(), "joke.json")
    assert joke.name == "joke" and [v.number for v in joke.versions] == ["a1b2c3d4e5f6", "f6e5d4c3b2a1"]
    first, second = joke.versions
    assert first.labels == [] and second.labels == ["prod"]
    assert [a["name"] for a in second.arguments] == ["style", "topic"]  # the placeholder is no argument
    assert second.messages[0].text.startswith("You tell {{ style }} jokes; braces look like ")
    assert "the message placeholder 'history' (messages given at run time)" in second.untranslated


def test_a_manifest_alone_is_named_by_the_file_and_keeps_partial_variables_as_defaults() -> None:
    (prompt,) = langsmith.read(json.dumps(langsmith_manifest()).encode(), "summary.json", "summary")
    (version,) = prompt.versions
    assert prompt.name == "summary"
    assert version.arguments == [{"name": "words", "required": True}, {"name": "text", "required": True},
                                 {"name": "lang", "default": "en"}]


def test_a_sequence_with_a_model_keeps_the_models_settings() -> None:
    sequence = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "runnable", "RunnableSequence"],
                "kwargs": {"first": langsmith_manifest(), "last": {
                    "lc": 1, "type": "constructor", "id": ["langchain", "chat_models", "openai", "ChatOpenAI"],
                    "kwargs": {"model_name": "gpt-4o", "temperature": 0.1, "openai_api_key": {"lc": 1}}}}}
    (prompt,) = langsmith.read(json.dumps(sequence).encode(), "x.json", "x")
    assert prompt.versions[0].model == {"class": "ChatOpenAI", "model_name": "gpt-4o", "temperature": 0.1}


def test_something_that_is_not_a_prompt_template_is_refused() -> None:
    with pytest.raises(ImportRefused, match="x.json: prompt 'x' commit 0: a ChatOpenAI is not a prompt template"):
        langsmith.read(json.dumps({"lc": 1, "type": "constructor", "id": ["ChatOpenAI"], "kwargs": {}}).encode(),
                       "x.json", "x")
    with pytest.raises(ImportRefused, match="'manifest': expected an object, not str"):
        langsmith.read(json.dumps([{"repo": "x", "manifest": "no"}]).encode(), "x.json")
