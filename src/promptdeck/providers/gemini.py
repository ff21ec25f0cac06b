"""A rendered prompt as the Gemini API takes it: ``contents`` with ``parts`` (and a ``config`` holding the
system instruction when one is given), plain dicts checked in the tests against ``google-genai``'s own types
(``Content``, ``GenerateContentConfig``); the SDK is never imported here."""

from __future__ import annotations

from typing import Any

from .turns import AUDIO_FORMATS, Part, check_system, read, refuse, turns

GEMINI = "Gemini"

#: The inline types Gemini documents: images, audio (under its own names) and PDF.
IMAGES = frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"})
AUDIO = {"audio/aiff": "audio/aiff", "audio/aac": "audio/aac", "audio/ogg": "audio/ogg", "audio/flac": "audio/flac",
         **{mime: f"audio/{name}" for mime, name in AUDIO_FORMATS.items()}}


def _part(part: Part) -> dict[str, Any]:
    if part.kind in ("text", "document"):
        return {"text": part.text}
    mime = part.mime_type
    if part.kind == "image" and mime not in IMAGES:
        refuse(GEMINI, part, f"{part.what()} cannot be sent: Gemini takes PNG, JPEG, WebP, HEIC and HEIF images")
    if part.kind == "audio":
        if mime not in AUDIO:
            refuse(GEMINI, part, f"{part.what()} cannot be sent: Gemini takes WAV, MP3, AIFF, AAC, OGG and FLAC")
        mime = AUDIO[mime]
    if part.kind == "blob":
        refuse(GEMINI, part, f"{part.what()} cannot be sent: inline data takes images, audio and PDF only")
    return {"inline_data": {"mime_type": mime, "data": part.data}}


def to_gemini(messages: Any, *, system: str | None = None) -> dict[str, Any]:
    """The ``contents`` of a rendered prompt (and, with ``system``, a ``config`` holding it as the system
    instruction), for ``client.models.generate_content(model=…, **out)``.

    Consecutive messages of one role make one content, its role ``user`` or ``model`` (the assistant). Parts
    are ``text`` (text, an embedded text resource's text, a link in words) and ``inline_data`` (images,
    audio and PDFs, base64: the REST API's form, which the SDK decodes into bytes).
    """
    check_system(GEMINI, system)
    contents = [{"role": "model" if turn.role == "assistant" else "user", "parts": [_part(p) for p in turn.parts]}
                for turn in turns(read(messages, GEMINI))]
    if system is None:
        return {"contents": contents}
    return {"contents": contents, "config": {"system_instruction": {"parts": [{"text": system}]}}}
