"""A rendered prompt for Anthropic's Messages API (providers/anthropic.py): blocks by kind, turns by role, a
prefill's trailing whitespace removed, and what the API cannot take refused naming the message and role."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from promptdeck.protocol.errors import ConversionError
from promptdeck.providers.anthropic import to_anthropic

PNG = base64.b64encode(b"\x89PNG fake").decode()
PDF = base64.b64encode(b"%PDF-1.4").decode()


def wire(role: str, content: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "content": content}


def test_blocks_turns_and_the_system() -> None:
    out = to_anthropic([
        wire("user", {"type": "text", "text": "look"}),
        wire("user", {"type": "image", "data": PNG, "mimeType": "image/png"}),
        wire("user", {"type": "resource", "resource": {"uri": "file:///a.py", "mimeType": "text/x-python",
                                                       "text": "print(1)"}}),
        wire("user", {"type": "resource", "resource": {"uri": "file:///r.pdf", "mimeType": "application/pdf",
                                                       "blob": PDF}}),
        wire("assistant", {"type": "text", "text": "Sure:  \n"}),
    ], system="Be brief.")
    assert out == {"system": "Be brief.", "messages": [
        {"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "print(1)"},
             "title": "file:///a.py"},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
             "title": "file:///r.pdf"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Sure:"}]}]}  # a prefill ends without spaces


def test_no_system_no_key() -> None:
    assert to_anthropic([wire("user", {"type": "text", "text": "hi"})]) == {
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}


@pytest.mark.parametrize(("message", "says"), [
    (wire("user", {"type": "audio", "data": PNG, "mimeType": "audio/wav"}),
     "Anthropic Messages: message 0 (user): audio (audio/wav) cannot be sent: the Messages API takes no audio"),
    (wire("user", {"type": "image", "data": PNG, "mimeType": "image/tiff"}),
     "message 0 (user): an image (image/tiff) cannot be sent: Anthropic takes PNG, JPEG, GIF and WebP images"),
    (wire("assistant", {"type": "image", "data": PNG, "mimeType": "image/png"}),
     "message 0 (assistant): an image (image/png) cannot be sent in an assistant message"),
    (wire("user", {"type": "resource", "resource": {"uri": "file:///x.zip", "mimeType": "application/zip",
                                                    "blob": PDF}}),
     "an embedded binary resource (application/zip) cannot be sent: a document takes PDF or text only"),
])
def test_what_the_api_cannot_take_is_refused(message: dict[str, Any], says: str) -> None:
    with pytest.raises(ConversionError, match=says.replace("(", r"\(").replace(")", r"\)")):
        to_anthropic([message])
