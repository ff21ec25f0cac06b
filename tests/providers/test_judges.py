"""The SDK checks of tests/providers/sdk.py can fail: each refuses shapes its provider does not take, the
ones a loose check would let through among them (an extra key, a part inside a lazily validated iterable,
an extra key under a type whose own config ignores extras)."""

from __future__ import annotations

import binascii
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from tests.support.provider_sdk import check_anthropic, check_gemini, check_openai, check_openai_responses

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}


@pytest.mark.parametrize(("check", "wrong"), [
    (check_openai, [{"role": "user", "content": "x", "name_of": "extra key"}]),
    (check_openai, [{"role": "user", "content": [{"type": "text", "text": "x", "extra": 1}]}]),
    (check_openai, [{"role": "user", "content": [{"type": "image_url", "image_url": "data:image/png;base64,AA"}]}]),
    (check_openai, [{"role": "assistant", "content": [IMAGE]}]),
    (check_openai, [{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "A",
                                                                                         "format": "ogg"}}]}]),
    (check_openai, [{"role": "model", "content": "x"}]),
    (check_openai_responses, [{"role": "assistant", "content": [{"type": "output_text", "text": "x"}]}]),
    (check_openai_responses, [{"role": "user", "content": [{"type": "input_image",
                                                            "image_url": "data:image/png;base64,AA"}]}]),
    (check_openai_responses, [{"role": "user", "content": [{"type": "input_audio",
                                                            "input_audio": {"data": "A", "format": "wav"}}]}]),
    (check_anthropic, {"messages": [{"role": "user", "content": [{"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": "AAAA", "extra": 1}}]}]}),
    (check_anthropic, {"messages": [{"role": "user", "content": [{"type": "image", "source": {
        "type": "base64", "media_type": "image/bmp", "data": "AAAA"}}]}]}),
    (check_anthropic, {"messages": [{"role": "user", "content": [{"type": "document", "source": {
        "type": "text", "media_type": "text/x-python", "data": "x"}}]}]}),
    (check_anthropic, {"messages": [], "system": None}),
    (check_anthropic, {"messages": [], "model": "extra"}),
    (check_gemini, {"contents": [{"role": "user", "parts": [{"text": "x", "extra": 1}]}]}),
    (check_gemini, {"contents": [{"role": "user", "parts": [{"inline_data": {"mime_type": "image/png",
                                                                             "data": "not base64!"}}]}]}),
    (check_gemini, {"contents": [], "config": {"system_instructions": "x"}}),
])
def test_each_check_refuses_what_its_provider_does_not_take(check: Callable[[Any], None], wrong: Any) -> None:
    with pytest.raises((ValidationError, AssertionError, binascii.Error)):
        check(wrong)
