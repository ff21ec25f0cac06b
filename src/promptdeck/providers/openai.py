"""A rendered prompt as OpenAI's two request formats take it: Chat Completions ``messages`` and Responses
``input`` items. Plain lists of dicts, checked in the tests against the ``openai`` SDK's own types
(``ChatCompletionMessageParam``, ``ResponseInputParam``); the SDK is never imported here."""

from __future__ import annotations

from typing import Any

from .turns import AUDIO_FORMATS, WEB_IMAGES, Part, check_system, data_uri, read, refuse, turns

CHAT = "OpenAI Chat Completions"
RESPONSES = "OpenAI Responses"


def _image(provider: str, part: Part) -> str:
    if part.mime_type not in WEB_IMAGES:
        refuse(provider, part, f"{part.what()} cannot be sent: OpenAI takes PNG, JPEG, GIF and WebP images")
    return data_uri(part)


def _text_only(provider: str, part: Part) -> str:
    """An assistant part's text: OpenAI's assistant messages carry text only."""
    if part.kind not in ("text", "document"):
        refuse(provider, part, f"{part.what()} cannot be sent in an assistant message: "
                               f"{provider} takes only text from the assistant")
    return part.text


def _pdf_name(part: Part) -> str:
    """The PDF's file name, ending in ``.pdf`` (OpenAI reads a file's type from its name)."""
    name = part.file_name()
    return name if name.lower().endswith(".pdf") else f"{name}.pdf"


def _chat_part(part: Part) -> dict[str, Any]:
    if part.kind in ("text", "document"):
        return {"type": "text", "text": part.text}
    if part.kind == "image":
        return {"type": "image_url", "image_url": {"url": _image(CHAT, part)}}
    if part.kind == "audio":
        audio_format = AUDIO_FORMATS.get(part.mime_type)
        if audio_format is None:
            refuse(CHAT, part, f"{part.what()} cannot be sent: input_audio takes WAV or MP3 only")
        return {"type": "input_audio", "input_audio": {"data": part.data, "format": audio_format}}
    if part.kind == "pdf":
        return {"type": "file", "file": {"filename": _pdf_name(part), "file_data": data_uri(part)}}
    refuse(CHAT, part, f"{part.what()} cannot be sent: a file part takes PDF only")


def to_openai(messages: Any, *, system: str | None = None) -> list[dict[str, Any]]:
    """The Chat Completions ``messages`` of a rendered prompt, for ``client.chat.completions.create``.

    Consecutive messages of one role make one message. Its ``content`` is a string when it holds one text,
    otherwise a list of parts: ``text`` (text, an embedded text resource's text, a link in words),
    ``image_url`` (a ``data:`` URI), ``input_audio`` (WAV or MP3) and ``file`` (a PDF). An assistant message
    carries text only. ``system``, when given, is a leading ``system`` message.
    """
    check_system(CHAT, system)
    out: list[dict[str, Any]] = [] if system is None else [{"role": "system", "content": system}]
    for turn in turns(read(messages, CHAT)):
        if turn.role == "assistant":
            content = [{"type": "text", "text": _text_only(CHAT, part)} for part in turn.parts]
        else:
            content = [_chat_part(part) for part in turn.parts]
        single = len(content) == 1 and content[0]["type"] == "text"
        out.append({"role": turn.role, "content": content[0]["text"] if single else content})
    return out


def _input_part(part: Part) -> dict[str, Any]:
    if part.kind in ("text", "document"):
        return {"type": "input_text", "text": part.text}
    if part.kind == "image":
        return {"type": "input_image", "image_url": _image(RESPONSES, part), "detail": "auto"}
    if part.kind == "pdf":
        return {"type": "input_file", "filename": _pdf_name(part), "file_data": data_uri(part)}
    if part.kind == "audio":
        refuse(RESPONSES, part, f"{part.what()} cannot be sent: a Responses input message takes no audio "
                                "(to_openai gives Chat Completions input_audio)")
    refuse(RESPONSES, part, f"{part.what()} cannot be sent: an input_file takes PDF only")


def to_openai_responses(messages: Any, *, system: str | None = None) -> list[dict[str, Any]]:
    """The Responses API ``input`` items of a rendered prompt, for ``client.responses.create``.

    Consecutive user messages make one item of ``input_text``, ``input_image`` (a ``data:`` URI) and
    ``input_file`` (a PDF) parts. Each assistant text is an item of its own whose ``content`` is the text:
    the SDK's types give an assistant's earlier output (``output_text``) only within an output message with
    an id and a status, which a prompt has not got. ``system``, when given, is a leading ``developer`` item.
    """
    check_system(RESPONSES, system)
    out: list[dict[str, Any]] = [] if system is None else [{"role": "developer", "content": system}]
    for turn in turns(read(messages, RESPONSES)):
        if turn.role == "assistant":
            out.extend({"role": "assistant", "content": _text_only(RESPONSES, part)} for part in turn.parts)
        else:
            out.append({"role": "user", "content": [_input_part(part) for part in turn.parts]})
    return out
