"""A rendered prompt for the Gemini API (providers/gemini.py): contents with user and model roles, text and
inline data parts under Gemini's own audio names, the system instruction in a config, and what Gemini does not
take inline refused naming the message."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from promptdeck.protocol.errors import ConversionError
from promptdeck.providers.gemini import to_gemini

DATA = base64.b64encode(b"bytes").decode()


def wire(role: str, content: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "content": content}


def test_contents_parts_and_the_system_instruction() -> None:
    out = to_gemini([
        wire("user", {"type": "text", "text": "transcribe"}),
        wire("user", {"type": "audio", "data": DATA, "mimeType": "audio/x-wav"}),
        wire("user", {"type": "resource", "resource": {"uri": "file:///r.pdf", "mimeType": "application/pdf",
                                                       "blob": DATA}}),
        wire("assistant", {"type": "text", "text": "ok"}),
    ], system="Be exact.")
    assert out == {
        "contents": [
            {"role": "user", "parts": [{"text": "transcribe"},
                                       {"inline_data": {"mime_type": "audio/wav", "data": DATA}},
                                       {"inline_data": {"mime_type": "application/pdf", "data": DATA}}]},
            {"role": "model", "parts": [{"text": "ok"}]}],
        "config": {"system_instruction": {"parts": [{"text": "Be exact."}]}}}


def test_without_a_system_there_is_no_config() -> None:
    assert to_gemini([wire("user", {"type": "image", "data": DATA, "mimeType": "image/heic"})]) == {
        "contents": [{"role": "user", "parts": [{"inline_data": {"mime_type": "image/heic", "data": DATA}}]}]}


@pytest.mark.parametrize(("content", "says"), [
    ({"type": "image", "data": DATA, "mimeType": "image/gif"},
     "Gemini: message 0 (user): an image (image/gif) cannot be sent: Gemini takes PNG, JPEG, WebP, HEIC and HEIF"),
    ({"type": "audio", "data": DATA, "mimeType": "audio/webm"}, "Gemini takes WAV, MP3, AIFF, AAC, OGG and FLAC"),
    ({"type": "resource", "resource": {"uri": "file:///x", "mimeType": "application/zip", "blob": DATA}},
     "inline data takes images, audio and PDF only"),
])
def test_what_gemini_does_not_take_inline_is_refused(content: dict[str, Any], says: str) -> None:
    with pytest.raises(ConversionError) as caught:
        to_gemini([wire("user", content)])
    assert says in str(caught.value) and caught.value.index == 0
