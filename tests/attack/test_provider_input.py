"""Bad input to the provider conversions: refused with a ``ConversionError`` that names the provider, the
message's index and role, and what it cannot carry; never a part silently dropped or a provider's 400 later."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Any

import pytest

from promptdeck.protocol.content import Audio, Image, assistant, resource, user
from promptdeck.protocol.errors import ConversionError, PromptdeckError
from promptdeck.providers import to_anthropic, to_gemini, to_openai, to_openai_responses
from tests.support.provider_sdk import CHECKS

CONVERSIONS: list[Callable[..., Any]] = [to_openai, to_openai_responses, to_anthropic, to_gemini]
NAMES = {to_openai: "OpenAI Chat Completions", to_openai_responses: "OpenAI Responses",
         to_anthropic: "Anthropic Messages", to_gemini: "Gemini"}
each = pytest.mark.parametrize("convert", CONVERSIONS, ids=lambda c: c.__name__)


def refused(convert: Callable[..., Any], messages: Any, start: str, **options: Any) -> ConversionError:
    with pytest.raises(ConversionError) as caught:
        convert(messages, **options)
    assert str(caught.value).startswith(f"{NAMES[convert]}: {start}"), str(caught.value)
    assert isinstance(caught.value, PromptdeckError) and isinstance(caught.value, ValueError)
    return caught.value


@each
def test_an_unknown_content_type_names_the_message(convert: Callable[..., Any]) -> None:
    messages = [{"role": "user", "content": {"type": "text", "text": "ok"}},
                {"role": "user", "content": {"type": "video", "data": "AAAA", "mimeType": "video/mp4"}}]
    error = refused(convert, messages, "message 1: not an MCP prompt message: Invalid value 'video' - at "
                                       "`$.content.type`")
    assert error.index == 1


@each
@pytest.mark.parametrize(("message", "says"), [
    ({"role": "system", "content": {"type": "text", "text": "x"}}, "Invalid enum value 'system' - at `$.role`"),
    ({"content": {"type": "text", "text": "x"}}, "Object missing required field `role`"),
    ({"role": "user", "content": {"type": "image", "data": "not base64!", "mimeType": "image/png"}},
     "Invalid base64 encoded string - at `$.content.data`"),
    ({"role": "user", "content": {"type": "text", "text": 7}}, "Expected `str`, got `int` - at `$.content.text`"),
    ({"role": "user", "content": {"type": "resource", "resource": {"uri": "a", "text": "t", "blob": "AA=="}}},
     "resource 'a' holds text or a blob, not both"),
    ("hello", "not an MCP prompt message: str"),
    (None, "not an MCP prompt message: NoneType"),
])
def test_a_malformed_message_is_refused_by_index(convert: Callable[..., Any], message: Any, says: str) -> None:
    error = refused(convert, [user("fine"), user("fine"), message], "message 2")
    assert says in str(error) and error.index == 2


@each
@pytest.mark.parametrize("given", ["just a string", b"bytes", 42, {"role": "user", "content": {}},
                                   {"description": "a result without messages"}])
def test_something_that_is_not_a_list_of_messages(convert: Callable[..., Any], given: Any) -> None:
    error = refused(convert, given, "expected a")
    assert error.index is None


@each
def test_system_must_be_a_string(convert: Callable[..., Any]) -> None:
    refused(convert, [user("x")], "system must be a string, not list", system=["a"])


@pytest.mark.parametrize("mime", ["audio/ogg", "audio/flac", "audio/webm"])
def test_chat_completions_takes_wav_and_mp3_only(mime: str) -> None:
    error = refused(to_openai, [user("Listen."), user(Audio(b"x", mime))], f"message 1 (user): audio ({mime}) "
                    "cannot be sent: input_audio takes WAV or MP3 only")
    assert error.index == 1


def test_audio_the_others_cannot_carry() -> None:
    messages = [user(Audio(b"x", "audio/wav"))]
    refused(to_openai_responses, messages, "message 0 (user): audio (audio/wav) cannot be sent: a Responses input "
                                           "message takes no audio")
    refused(to_anthropic, messages, "message 0 (user): audio (audio/wav) cannot be sent: the Messages API takes "
                                    "no audio")
    refused(to_gemini, [user(Audio(b"x", "audio/webm"))], "message 0 (user): audio (audio/webm) cannot be sent")


@each
@pytest.mark.parametrize("mime", ["image/bmp", "image/svg+xml", "image/tiff"])
def test_an_image_type_the_provider_does_not_take(convert: Callable[..., Any], mime: str) -> None:
    refused(convert, [user(Image(b"x", mime))], f"message 0 (user): an image ({mime}) cannot be sent")
    refused(convert, [user(resource("file:///a", mime, blob=b"x"))], f"message 0 (user): an image ({mime})")


@each
def test_an_image_or_audio_block_is_that_kind_whatever_its_type_says(convert: Callable[..., Any]) -> None:
    refused(convert, [user(Image(b"%PDF", "application/pdf"))], "message 0 (user): an image (application/pdf) "
                                                                 "cannot be sent")
    refused(convert, [user(Image(b"x", ""))], "message 0 (user): an image (no MIME type) cannot be sent")
    refused(convert, [user(Audio(b"x", "image/png"))], "message 0 (user): audio (image/png) cannot be sent")


def test_gif_is_for_openai_and_anthropic_and_heic_for_gemini() -> None:
    refused(to_gemini, [user(Image(b"x", "image/gif"))], "message 0 (user): an image (image/gif) cannot be sent")
    for convert in (to_openai, to_openai_responses, to_anthropic):
        refused(convert, [user(Image(b"x", "image/heic"))], "message 0 (user): an image (image/heic) cannot be sent")


@each
@pytest.mark.parametrize("mime", ["application/zip", "application/octet-stream", None, "text/plain"])
def test_a_blob_that_is_not_a_pdf_image_or_audio(convert: Callable[..., Any], mime: str | None) -> None:
    shown = mime or "application/octet-stream"
    refused(convert, [user(resource("file:///x.bin", mime, blob=b"\x00"))],
            f"message 0 (user): an embedded binary resource ({shown}) cannot be sent")


@pytest.mark.parametrize("convert", [to_openai, to_openai_responses, to_anthropic], ids=lambda c: c.__name__)
@pytest.mark.parametrize("content", [Image(b"x", "image/png"), resource("file:///a.pdf", "application/pdf", blob=b"%"),
                                     Audio(b"x", "audio/wav")], ids=["image", "pdf", "audio"])
def test_an_assistant_message_carries_text_only(convert: Callable[..., Any], content: Any) -> None:
    error = refused(convert, [user("Q"), assistant("A"), assistant(content)], "message 2 (assistant): ")
    if convert is not to_anthropic or not isinstance(content, Audio):
        assert "cannot be sent in an assistant message" in str(error)


def test_gemini_takes_an_image_from_the_model() -> None:
    """Gemini sends images back in a model turn (image editing in a chat), so it takes them there."""
    out = to_gemini([user("Draw."), assistant(Image(b"png", "image/png"))])
    CHECKS["to_gemini"](out)
    assert out["contents"][1] == {"role": "model", "parts": [{"inline_data": {"mime_type": "image/png",
                                                                              "data": "cG5n"}}]}


@each
def test_large_input_converts_in_linear_time(convert: Callable[..., Any]) -> None:
    """No size caps of our own (the providers' change, and their 400 names them); what is given is converted
    in one pass: an 8 MiB image and 5,000 messages, each in well under 3 s. The work is measured in this
    thread's CPU time: by the clock, a machine busy with other work (two test runs side by side) stretched
    a linear conversion past 3 s."""
    image = bytes(range(256)) * (8 * 4096)
    started = time.thread_time()
    out = convert([user(Image(image, "image/png"))])
    assert time.thread_time() - started < 3.0
    assert base64.b64encode(image).decode() in str(out)
    many = [user(f"line {i}") if i % 2 else assistant(f"reply {i}") for i in range(5000)]
    started = time.thread_time()
    out = convert(many)
    assert time.thread_time() - started < 3.0
    CHECKS[convert.__name__](out)
