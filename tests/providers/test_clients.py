"""Every example prompt, converted and sent by each provider's own SDK client to a local stand-in for its API
(tests/support/provider_api.py): the SDK takes the output as it is, and the request it sends carries it."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from anthropic import Anthropic
from google import genai
from openai import OpenAI

from promptdeck.protocol.errors import ConversionError
from promptdeck.providers import to_anthropic, to_gemini, to_openai, to_openai_responses
from tests.support.provider_api import ANSWER, GEMINI_MODEL, ProviderApi, provider_api


@pytest.fixture(scope="module")
def api() -> Iterator[ProviderApi]:
    with provider_api() as stand_in:
        yield stand_in


def _gemini_meaning(contents: list[dict[str, Any]]) -> list[genai.types.Content]:
    """Contents as the SDK reads them: the REST names (``inlineData``) and ours (``inline_data``) alike."""
    return [genai.types.Content.model_validate(content) for content in contents]


def test_every_example_through_every_sdk_client(api: ProviderApi, rendered: dict[str, dict[str, Any]]) -> None:
    openai = OpenAI(api_key="sk-test", base_url=f"{api.url}/v1", max_retries=0)
    anthropic = Anthropic(api_key="sk-ant-test", base_url=api.url, max_retries=0)
    gemini = genai.Client(api_key="g-test", http_options=genai.types.HttpOptions(base_url=api.url))
    sent = 0
    for name, result in rendered.items():
        messages = to_openai(result, system="S.")
        answer = openai.chat.completions.create(model="gpt-4.1-mini", messages=messages)  # type: ignore[arg-type]
        assert answer.choices[0].message.content == ANSWER
        assert api.take().body["messages"] == messages, name
        try:
            items = to_openai_responses(result)
        except ConversionError:
            assert name == "standup.transcribe"  # audio: tests/providers/test_conversions.py
        else:
            assert openai.responses.create(model="gpt-4.1-mini", input=items).output_text == ANSWER  # type: ignore[arg-type]
            assert api.take().body["input"] == items, name
        try:
            request = to_anthropic(result, system="S.")
        except ConversionError:
            assert name == "standup.transcribe"
        else:
            message = anthropic.messages.create(model="claude-sonnet-4-6", max_tokens=64, **request)
            assert message.content[0].text == ANSWER
            body = api.take().body
            assert {"system": body["system"], "messages": body["messages"]} == request, name
        request = to_gemini(result, system="S.")
        assert gemini.models.generate_content(model=GEMINI_MODEL, **request).text == ANSWER
        body = api.take().body
        assert _gemini_meaning(body["contents"]) == _gemini_meaning(request["contents"]), name
        assert body["systemInstruction"] == {"parts": [{"text": "S."}]}
        for content in body["contents"]:
            for part in content["parts"]:
                if "inlineData" in part:  # the bytes, once: not the base64 of our base64
                    assert base64.urlsafe_b64decode(part["inlineData"]["data"])[:4] in (b"\x89PNG", b"RIFF")
        sent += 1
    assert sent == len(rendered) == 11
