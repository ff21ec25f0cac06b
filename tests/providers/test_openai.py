"""A rendered prompt for OpenAI (providers/openai.py), in both request formats: Chat Completions messages (a
string for one text, parts otherwise) and Responses input items, and what each cannot take refused naming the
message and role."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from promptdeck.protocol.errors import ConversionError
from promptdeck.providers.openai import to_openai, to_openai_responses

PNG = base64.b64encode(b"\x89PNG fake").decode()
PDF = base64.b64encode(b"%PDF-1.4").decode()


def wire(role: str, content: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "content": content}


MIXED = [
    wire("user", {"type": "text", "text": "see"}),
    wire("user", {"type": "image", "data": PNG, "mimeType": "image/png"}),
    wire("user", {"type": "resource", "resource": {"uri": "file:///docs/report", "mimeType": "application/pdf",
                                                   "blob": PDF}}),
    wire("assistant", {"type": "text", "text": "one"}),
    wire("assistant", {"type": "text", "text": "two"}),
]


def test_chat_completions() -> None:
    assert to_openai(MIXED, system="Be brief.") == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [
            {"type": "text", "text": "see"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            {"type": "file", "file": {"filename": "report.pdf", "file_data": f"data:application/pdf;base64,{PDF}"}}]},
        {"role": "assistant", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}]
    assert to_openai([wire("user", {"type": "text", "text": "hi"})]) == [{"role": "user", "content": "hi"}]
    audio = to_openai([wire("user", {"type": "audio", "data": PNG, "mimeType": "audio/mpeg"})])
    assert audio[0]["content"] == [{"type": "input_audio", "input_audio": {"data": PNG, "format": "mp3"}}]


def test_responses() -> None:
    assert to_openai_responses(MIXED, system="Be brief.") == [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": [
            {"type": "input_text", "text": "see"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
            {"type": "input_file", "filename": "report.pdf", "file_data": f"data:application/pdf;base64,{PDF}"}]},
        {"role": "assistant", "content": "one"},
        {"role": "assistant", "content": "two"}]


@pytest.mark.parametrize(("convert", "message", "says"), [
    (to_openai, wire("user", {"type": "audio", "data": PNG, "mimeType": "audio/ogg"}),
     "OpenAI Chat Completions: message 0 (user): audio (audio/ogg) cannot be sent: input_audio takes WAV or MP3"),
    (to_openai, wire("assistant", {"type": "image", "data": PNG, "mimeType": "image/png"}),
     "message 0 (assistant): an image (image/png) cannot be sent in an assistant message"),
    (to_openai, wire("user", {"type": "image", "data": PNG, "mimeType": "image/bmp"}),
     "OpenAI takes PNG, JPEG, GIF and WebP images"),
    (to_openai, wire("user", {"type": "resource", "resource": {"uri": "x:y", "blob": PDF}}),
     "a file part takes PDF only"),
    (to_openai_responses, wire("user", {"type": "audio", "data": PNG, "mimeType": "audio/wav"}),
     "OpenAI Responses: message 0 (user): audio (audio/wav) cannot be sent: a Responses input message takes no audio"),
    (to_openai_responses, wire("user", {"type": "resource", "resource": {"uri": "x:y", "blob": PDF}}),
     "an input_file takes PDF only"),
])
def test_what_a_format_cannot_take_is_refused(convert: Any, message: dict[str, Any], says: str) -> None:
    with pytest.raises(ConversionError) as caught:
        convert([message])
    assert says in str(caught.value)


def test_a_system_that_is_not_text_is_refused() -> None:
    with pytest.raises(ConversionError, match="OpenAI Responses: system must be a string, not list"):
        to_openai_responses([], system=["x"])  # type: ignore[arg-type]
