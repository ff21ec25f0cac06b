"""The providers' own SDK types as judges of a conversion's output.

The ``openai`` and ``anthropic`` request types are TypedDicts: pydantic validates them strictly with extra
keys forbidden, and the parts under an ``Iterable`` (which pydantic checks only as they are iterated) are
iterated here. What comes back must equal what went in, so nothing was coerced, and no key was dropped where
a type's own config lets extra keys through. ``google-genai``'s types are pydantic models that forbid extra
keys themselves; what they hold must be the output, its base64 data decoded into the bytes it stands for.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from anthropic.types import MessageParam
from google.genai import types as genai
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputParam
from pydantic import ConfigDict, TypeAdapter

_FORBID = ConfigDict(extra="forbid")
CHAT = TypeAdapter(list[ChatCompletionMessageParam], config=_FORBID)
RESPONSES = TypeAdapter(ResponseInputParam, config=_FORBID)
ANTHROPIC = TypeAdapter(list[MessageParam], config=_FORBID)


def materialize(value: Any) -> Any:
    """``value`` with every lazily validated iterable iterated (which validates it) into a list."""
    if isinstance(value, Mapping):
        return {key: materialize(item) for key, item in value.items()}
    if isinstance(value, list | tuple | Iterator) or type(value).__name__ == "ValidatorIterator":
        return [materialize(item) for item in value]
    return value


def _strict(adapter: TypeAdapter[Any], out: Any) -> None:
    assert materialize(adapter.validate_python(out, strict=True)) == out


def check_openai(out: list[dict[str, Any]]) -> None:
    _strict(CHAT, out)


def check_openai_responses(out: list[dict[str, Any]]) -> None:
    _strict(RESPONSES, out)


def check_anthropic(out: dict[str, Any]) -> None:
    assert set(out) <= {"system", "messages"} and "messages" in out
    _strict(ANTHROPIC, out["messages"])
    if "system" in out:
        assert isinstance(out["system"], str)


def check_gemini(out: dict[str, Any]) -> None:
    assert set(out) <= {"contents", "config"} and "contents" in out
    for content in out["contents"]:
        model = genai.Content.model_validate(content)
        assert model.model_dump(exclude_none=True) == _raw(content)
    if "config" in out:
        config = genai.GenerateContentConfig.model_validate(out["config"])
        assert config.model_dump(mode="json", exclude_none=True) == out["config"]


def _raw(content: dict[str, Any]) -> dict[str, Any]:
    """``content`` with its inline data as the bytes the base64 stands for, as the SDK's ``Blob`` holds them (it
    dumps them to JSON in the URL-safe alphabet, so the JSON dump is not compared)."""
    parts = [{"inline_data": {**part["inline_data"], "data": base64.b64decode(part["inline_data"]["data"],
                                                                            validate=True)}}
             if "inline_data" in part else part for part in content["parts"]]
    return {**content, "parts": parts}


CHECKS: dict[str, Callable[[Any], None]] = {"to_openai": check_openai, "to_openai_responses": check_openai_responses,
          "to_anthropic": check_anthropic, "to_gemini": check_gemini}
