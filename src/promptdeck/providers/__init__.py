"""A rendered prompt in the request formats of the model providers (docs/providers.md).

``to_openai`` (Chat Completions ``messages``), ``to_openai_responses`` (Responses ``input``),
``to_anthropic`` (Messages ``{"system", "messages"}``) and ``to_gemini`` (``{"contents", "config"}``) each
take the messages ``prompts/get`` gives (promptdeck's ``Message`` objects, the same as JSON dicts, or a
whole result) and give plain lists and dicts of JSON values. No provider's SDK is imported: an application
passes the output to whichever client it uses. What a format cannot carry is a ``ConversionError`` naming
the message at fault, never something silently dropped.
"""

from __future__ import annotations

from ..protocol.errors import ConversionError
from .anthropic import to_anthropic
from .gemini import to_gemini
from .openai import to_openai, to_openai_responses

__all__ = ["ConversionError", "to_anthropic", "to_gemini", "to_openai", "to_openai_responses"]
