"""Every content kind and every example prompt, converted for each provider and judged by that provider's
own SDK types (tests/providers/sdk.py), and read back: each part must carry what its MCP block carried."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from google.genai import types as genai

from promptdeck import Annotations, Audio, Image, Message, ResourceLink, Text, assistant, resource, user
from promptdeck.client.types import RenderedPrompt
from promptdeck.protocol.content import link_text, messages_to_wire
from promptdeck.protocol.revisions import LATEST
from promptdeck.providers import to_anthropic, to_gemini, to_openai, to_openai_responses
from promptdeck.server.app import PromptServer
from promptdeck.server.legacy import LegacySession
from promptdeck.server.outcome import Answer, Pending
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES
from tests.support.modern import get_prompt
from tests.support.provider_sdk import CHECKS

CONVERSIONS: list[Callable[..., Any]] = [to_openai, to_openai_responses, to_anthropic, to_gemini]
PNG = (EXAMPLES / "_material" / "diagram.png").read_bytes()
WAV = (EXAMPLES / "_material" / "standup.wav").read_bytes()
PDF = b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"
LINK = ResourceLink("https://example.com/spec", "spec", title="The spec", description="what to follow")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


#: One user message of each kind every provider takes, then an assistant's text, link and text resource.
EVERY_KIND = [
    user("Read these."),
    user(Image(PNG, "image/png")),
    user(Image(b"\xff\xd8\xff", "image/jpeg", Annotations(audience=("user",)))),
    user(resource("file:///src/app.py", "text/x-python", text="print('hi')\n")),
    user(resource("file:///docs/brief.pdf", "application/pdf", blob=PDF)),
    user(resource("file:///img/logo.webp", "image/webp", blob=b"RIFF\x00WEBP")),
    user(LINK),
    assistant("Read."),
    assistant(LINK),
    assistant(resource("untitled:note", text="a note")),
    user("Now answer."),
]


def wire(messages: list[Message]) -> list[dict[str, Any]]:
    return messages_to_wire(messages, LATEST)


# -- reading a conversion's output back ---------------------------------------------------------------
# Each gives (role, kind, payload) per part: kind "text" with the text, else the MIME type and the raw bytes.

View = list[tuple[str, str, Any]]


def _data_uri(uri: str) -> tuple[str, bytes]:
    head, _, data = uri.partition(",")
    assert head.startswith("data:") and head.endswith(";base64")
    return head[5:-7], base64.b64decode(data, validate=True)


def read_openai(out: list[dict[str, Any]]) -> View:
    view: View = []
    for message in out:
        content = message["content"]
        parts: list[dict[str, Any]] = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for part in parts:
            if part["type"] in ("text", "input_text"):
                view.append((message["role"], "text", part["text"]))
            elif part["type"] == "image_url":
                view.append((message["role"], *_data_uri(part["image_url"]["url"])))
            elif part["type"] == "input_image":
                view.append((message["role"], *_data_uri(part["image_url"])))
            elif part["type"] == "input_audio":
                mime = {"wav": "audio/wav", "mp3": "audio/mpeg"}[part["input_audio"]["format"]]
                view.append((message["role"], mime, base64.b64decode(part["input_audio"]["data"])))
            else:
                file = part["file"] if part["type"] == "file" else part
                view.append((message["role"], *_data_uri(file["file_data"])))
    return view


def read_anthropic(out: dict[str, Any]) -> View:
    view: View = []
    for message in out["messages"]:
        for block in message["content"]:
            source = block.get("source", {})
            if block["type"] == "text" or source.get("type") == "text":
                view.append((message["role"], "text", block.get("text", source.get("data"))))
            else:
                view.append((message["role"], source["media_type"], base64.b64decode(source["data"])))
    return view


def read_gemini(out: dict[str, Any]) -> View:
    view: View = []
    for content in out["contents"]:
        role = {"user": "user", "model": "assistant"}[content["role"]]
        for part, parsed in zip(content["parts"], genai.Content.model_validate(content).parts or [], strict=True):
            if "text" in part:
                view.append((role, "text", part["text"]))
            else:
                # The SDK's own Blob holds the raw bytes: base64 given once, not twice.
                assert parsed.inline_data is not None and parsed.inline_data.data is not None
                view.append((role, part["inline_data"]["mime_type"], parsed.inline_data.data))
    return view


READERS: dict[str, Callable[[Any], View]] = {
    "to_openai": read_openai, "to_openai_responses": read_openai, "to_anthropic": read_anthropic,
    "to_gemini": read_gemini}


def expected(messages: list[Message]) -> View:
    """What a conversion must carry of ``messages``: texts (a text resource's text, a link in words) and data."""
    view: View = []
    for message in messages:
        content = message.content
        if isinstance(content, Text):
            item: tuple[str, Any] = ("text", content.text)
        elif isinstance(content, ResourceLink):
            item = ("text", link_text(content))
        elif isinstance(content, Image | Audio):
            item = (content.mime_type, content.data)
        elif content.resource.blob is None:
            item = ("text", content.resource.text)
        else:
            item = (content.resource.mime_type or "", content.resource.blob)
        if item[0] != "text" or item[1].strip():
            view.append((message.role, *item))
    return view


def convert_and_check(convert: Callable[..., Any], messages: Any, **options: Any) -> Any:
    out = convert(messages, **options)
    CHECKS[convert.__name__](out)
    msgspec.json.encode(out)  # plain JSON values only: no bytes, no SDK objects
    return out


# -- every kind ---------------------------------------------------------------------------------------


def test_every_kind_becomes_the_part_each_sdk_types_and_carries_it() -> None:
    for convert in (to_openai, to_anthropic, to_gemini):
        messages = [m for m in EVERY_KIND if convert is not to_anthropic or "webp" not in str(m)]
        out = convert_and_check(convert, messages)
        assert READERS[convert.__name__](out) == expected(messages), convert.__name__
    out = convert_and_check(to_openai_responses, EVERY_KIND)
    assert read_openai(out) == expected(EVERY_KIND)


@pytest.mark.parametrize("convert", CONVERSIONS, ids=lambda c: c.__name__)
def test_wire_dicts_and_objects_convert_alike(convert: Callable[..., Any]) -> None:
    """The same messages as JSON (any server's prompts/get) and as promptdeck's objects give the same request."""
    messages = [m for m in EVERY_KIND if convert is not to_anthropic or "webp" not in str(m)]
    as_json = msgspec.json.decode(msgspec.json.encode({"messages": wire(messages)}))
    assert convert(as_json) == convert(as_json["messages"]) == convert(messages) == convert(tuple(messages))


def test_consecutive_messages_of_one_role_make_one_turn() -> None:
    assert [m["role"] for m in to_openai(EVERY_KIND)] == ["user", "assistant", "user"]
    assert [m["role"] for m in to_anthropic(EVERY_KIND)["messages"]] == ["user", "assistant", "user"]
    assert [c["role"] for c in to_gemini(EVERY_KIND)["contents"]] == ["user", "model", "user"]
    # Responses: one user item of parts, then one item per assistant text (a string, as the SDK types it).
    items = to_openai_responses(EVERY_KIND)
    assert [i["role"] for i in items] == ["user", "assistant", "assistant", "assistant", "user"]
    assert items[1:4] == [{"role": "assistant", "content": t} for t in ("Read.", link_text(LINK), "a note")]


def test_the_part_shapes_are_the_ones_decided() -> None:
    """The decisions docs/providers.md's table states, pinned part by part."""
    chat = to_openai(EVERY_KIND)
    parts = chat[0]["content"]
    assert parts[0] == {"type": "text", "text": "Read these."}
    assert parts[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64(PNG)}"}}
    assert parts[3] == {"type": "text", "text": "print('hi')\n"}
    assert parts[4] == {"type": "file", "file": {"filename": "brief.pdf",
                                                 "file_data": f"data:application/pdf;base64,{b64(PDF)}"}}
    assert parts[6] == {"type": "text", "text": "The spec: https://example.com/spec (what to follow)"}
    assert chat[2] == {"role": "user", "content": "Now answer."}  # one text: a string
    responses = to_openai_responses(EVERY_KIND)[0]["content"]
    assert responses[1] == {"type": "input_image", "image_url": f"data:image/png;base64,{b64(PNG)}", "detail": "auto"}
    assert responses[4] == {"type": "input_file", "filename": "brief.pdf",
                            "file_data": f"data:application/pdf;base64,{b64(PDF)}"}
    claude = to_anthropic([m for m in EVERY_KIND if "webp" not in str(m)])["messages"]
    assert claude[0]["content"][1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                   "data": b64(PNG)}}
    assert claude[0]["content"][3] == {"type": "document", "title": "file:///src/app.py", "source": {
        "type": "text", "media_type": "text/plain", "data": "print('hi')\n"}}
    assert claude[0]["content"][4] == {"type": "document", "title": "file:///docs/brief.pdf", "source": {
        "type": "base64", "media_type": "application/pdf", "data": b64(PDF)}}
    assert claude[1]["content"][2] == {"type": "text", "text": "a note"}  # an assistant's resource: text
    gemini = to_gemini(EVERY_KIND)["contents"]
    assert gemini[0]["parts"][1] == {"inline_data": {"mime_type": "image/png", "data": b64(PNG)}}
    assert gemini[0]["parts"][4] == {"inline_data": {"mime_type": "application/pdf", "data": b64(PDF)}}


@pytest.mark.parametrize(("uri", "filename"), [
    ("file:///docs/brief.pdf", "brief.pdf"), ("untitled:report", "report.pdf"), ("https://x.test/a/Q3%20plan.PDF",
                                                                                 "Q3 plan.PDF"),
    ("https://x.test/get?id=7", "get.pdf"), ("urn:isbn:0451450523", "isbn:0451450523.pdf")])
def test_a_pdf_for_openai_is_named_from_its_uri(uri: str, filename: str) -> None:
    messages = [user(resource(uri, "application/pdf", blob=PDF))]
    assert convert_and_check(to_openai, messages)[0]["content"][0]["file"]["filename"] == filename
    assert convert_and_check(to_openai_responses, messages)[0]["content"][0]["filename"] == filename


@pytest.mark.parametrize(("mime", "chat_format", "gemini_type"), [
    ("audio/wav", "wav", "audio/wav"), ("audio/x-wav", "wav", "audio/wav"), ("audio/mpeg", "mp3", "audio/mp3"),
    ("audio/mp3", "mp3", "audio/mp3")])
def test_audio_is_input_audio_for_chat_and_inline_data_for_gemini(mime: str, chat_format: str,
                                                                  gemini_type: str) -> None:
    for content in (Audio(WAV, mime), resource("file:///a/rec", mime, blob=WAV)):
        messages = [user(content), user("Transcribe it.")]
        chat = convert_and_check(to_openai, messages)
        assert chat[0]["content"][0] == {"type": "input_audio", "input_audio": {"data": b64(WAV),
                                                                                "format": chat_format}}
        gemini = convert_and_check(to_gemini, messages)
        assert gemini["contents"][0]["parts"][0] == {"inline_data": {"mime_type": gemini_type, "data": b64(WAV)}}


@pytest.mark.parametrize("mime", ["audio/ogg", "audio/flac", "audio/aac", "audio/aiff"])
def test_gemini_takes_the_audio_types_it_documents(mime: str) -> None:
    out = convert_and_check(to_gemini, [user(Audio(b"\x00\x01", mime))])
    assert out["contents"][0]["parts"] == [{"inline_data": {"mime_type": mime, "data": b64(b"\x00\x01")}}]


@pytest.mark.parametrize("mime", ["image/png", "image/jpeg", "image/gif", "image/webp", "image/jpg", "IMAGE/PNG"])
def test_the_image_types_openai_and_anthropic_take(mime: str) -> None:
    messages = [user(Image(b"img", mime))]
    normal = {"image/jpg": "image/jpeg"}.get(mime.lower(), mime.lower())
    chat = convert_and_check(to_openai, messages)
    assert chat[0]["content"][0]["image_url"]["url"] == f"data:{normal};base64,{b64(b'img')}"
    convert_and_check(to_openai_responses, messages)
    claude = convert_and_check(to_anthropic, messages)
    assert claude["messages"][0]["content"][0]["source"]["media_type"] == normal


def test_a_prefill_for_anthropic_ends_without_whitespace() -> None:
    """Anthropic refuses a final assistant text ending in whitespace; only that one text loses it."""
    messages = [user("Name a colour.\n"), assistant("Blue \n"), user("Another?\n"), assistant("The colour is \n"),
                assistant(resource("untitled:tail", text="  Red, or\n\n"))]
    out = convert_and_check(to_anthropic, messages)["messages"]
    assert [b["text"] for m in out for b in m["content"]] == [
        "Name a colour.\n", "Blue \n", "Another?\n", "The colour is \n", "  Red, or"]
    assert to_openai(messages)[-1]["content"][-1]["text"] == "  Red, or\n\n"  # the others take it as it is
    ending_with_user = convert_and_check(to_anthropic, messages[:3])["messages"]
    assert ending_with_user[-1]["content"][-1]["text"] == "Another?\n"


def test_blank_text_is_left_out_and_a_blank_prompt_is_empty() -> None:
    messages = [user("   \n"), user(resource("untitled:x", text="")), user("real"), assistant("")]
    for convert in CONVERSIONS:
        out = convert_and_check(convert, messages)
        assert READERS[convert.__name__](out) == [("user", "text", "real")]
        assert READERS[convert.__name__](convert_and_check(convert, [user(" ")])) == []


def test_system_is_where_each_provider_takes_it_and_absent_by_default() -> None:
    messages = [user("Hi.")]
    assert convert_and_check(to_openai, messages, system="Be brief.")[0] == {"role": "system",
                                                                             "content": "Be brief."}
    assert convert_and_check(to_openai_responses, messages, system="Be brief.")[0] == {
        "role": "developer", "content": "Be brief."}
    assert convert_and_check(to_anthropic, messages, system="Be brief.")["system"] == "Be brief."
    config = convert_and_check(to_gemini, messages, system="Be brief.")["config"]
    assert genai.GenerateContentConfig.model_validate(config).system_instruction == genai.Content(
        parts=[genai.Part(text="Be brief.")])
    assert to_openai(messages) == [{"role": "user", "content": "Hi."}]
    assert to_openai_responses(messages) == [{"role": "user", "content": [{"type": "input_text", "text": "Hi."}]}]
    assert to_anthropic(messages) == {"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi."}]}]}
    assert to_gemini(messages) == {"contents": [{"role": "user", "parts": [{"text": "Hi."}]}]}


# -- the example library, as prompts/get gives it ------------------------------------------------------


#: What a provider cannot carry of an example, and says so: Anthropic and the Responses API take no audio.
CANNOT = {
    ("to_anthropic", "standup.transcribe"): "Anthropic Messages: message 0 (user): audio (audio/wav) cannot be sent",
    ("to_openai_responses", "standup.transcribe"):
        "OpenAI Responses: message 0 (user): audio (audio/wav) cannot be sent",
}


@pytest.mark.parametrize("convert", CONVERSIONS, ids=lambda c: c.__name__)
def test_every_example_prompt_converts_for_every_provider(convert: Callable[..., Any],
                                                          rendered: dict[str, dict[str, Any]]) -> None:
    for name, result in rendered.items():
        decoded = msgspec.convert(result, RenderedPrompt)  # what promptdeck's Client gives
        refusal = CANNOT.get((convert.__name__, name))
        if refusal:
            for given in (result, decoded, result["messages"]):
                with pytest.raises(ValueError) as caught:
                    convert(given)
                assert str(caught.value).startswith(refusal)
            continue
        out = convert_and_check(convert, result)
        assert READERS[convert.__name__](out) == expected(list(decoded.messages)), name
        # The same from the decoded objects, a bare list of wire messages, and a tuple of objects.
        assert convert(decoded) == convert(result["messages"]) == convert(decoded.messages) == out, name
        assert convert_and_check(convert, result, system="S.") != out


def test_the_examples_cover_every_kind_a_prompt_holds(rendered: dict[str, dict[str, Any]]) -> None:
    kinds = {m["content"]["type"] for r in rendered.values() for m in r["messages"]}
    assert kinds == {"text", "image", "audio", "resource", "resource_link"}
    assert {m["role"] for r in rendered.values() for m in r["messages"]} == {"user", "assistant"}


def test_a_2026_07_28_result_converts_as_a_2025_11_25_one(rendered: dict[str, dict[str, Any]]) -> None:
    """The 2026-07-28 envelope (resultType, _meta) around the same messages changes nothing."""
    server = PromptServer()
    server.add_folder(EXAMPLES)
    session = LegacySession(server, lambda message: None)
    for index, (name, legacy) in enumerate(rendered.items()):
        outcome = session.handle_bytes(msgspec.json.encode(get_prompt(index, name, EXAMPLE_ARGS[name])),
                                       lambda message: None)
        answer = asyncio.run(_settled(outcome)) if isinstance(outcome, Pending) else outcome
        assert isinstance(answer, Answer)
        modern = msgspec.json.decode(answer.data)["result"]
        assert modern["resultType"] == "complete" and modern["messages"] == legacy["messages"]
        for convert in CONVERSIONS:
            if (convert.__name__, name) not in CANNOT:
                assert convert(modern) == convert(legacy), (convert.__name__, name)


async def _settled(pending: Pending) -> Answer | None:
    return await pending
