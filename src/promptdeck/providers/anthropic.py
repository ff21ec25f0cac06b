"""A rendered prompt as Anthropic's Messages API takes it: ``{"system": …, "messages": […]}``, plain dicts
checked in the tests against the ``anthropic`` SDK's own types (``MessageParam`` and its blocks); the SDK is
never imported here."""

from __future__ import annotations

from typing import Any

from .turns import WEB_IMAGES, Part, check_system, read, refuse, turns

ANTHROPIC = "Anthropic Messages"


def _assistant_block(part: Part) -> dict[str, Any]:
    if part.kind not in ("text", "document"):
        refuse(ANTHROPIC, part, f"{part.what()} cannot be sent in an assistant message: "
                                "only the user sends images and documents")
    return {"type": "text", "text": part.text}


def _user_block(part: Part) -> dict[str, Any]:
    if part.kind == "text":
        return {"type": "text", "text": part.text}
    if part.kind == "document":
        # Plain-text documents take text/plain only: the resource's own type (text/x-python, …) is dropped,
        # its URI kept as the title the model sees.
        return {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": part.text},
                "title": part.uri}
    if part.kind == "image":
        if part.mime_type not in WEB_IMAGES:
            refuse(ANTHROPIC, part, f"{part.what()} cannot be sent: Anthropic takes PNG, JPEG, GIF and WebP images")
        return {"type": "image", "source": {"type": "base64", "media_type": part.mime_type, "data": part.data}}
    if part.kind == "pdf":
        return {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": part.data},
                "title": part.uri}
    if part.kind == "audio":
        refuse(ANTHROPIC, part, f"{part.what()} cannot be sent: the Messages API takes no audio")
    refuse(ANTHROPIC, part, f"{part.what()} cannot be sent: a document takes PDF or text only")


def to_anthropic(messages: Any, *, system: str | None = None) -> dict[str, Any]:
    """The ``messages`` (and ``system``) of a rendered prompt, for ``client.messages.create(**out, …)``.

    Consecutive messages of one role make one message (the API would join them into one turn anyway), its
    ``content`` a list of blocks: ``text`` (text, a link in words), ``image`` (base64), ``document`` (a PDF,
    base64, or an embedded text resource as a plain-text document titled with its URI). An assistant message
    carries text only, an embedded text resource as its text; a prompt ending with one (a prefill) has the
    trailing whitespace of its last text removed, as the API refuses it. ``system`` is left out unless given:
    MCP prompts have no system role.
    """
    check_system(ANTHROPIC, system)
    out: list[dict[str, Any]] = []
    for turn in turns(read(messages, ANTHROPIC)):
        block = _assistant_block if turn.role == "assistant" else _user_block
        out.append({"role": turn.role, "content": [block(part) for part in turn.parts]})
    if out and out[-1]["role"] == "assistant":
        # A prompt ending with the assistant's words prefills the answer, and the API refuses a prefill ending in
        # whitespace ("final assistant content cannot end with trailing whitespace"). Blank text is gone already.
        last = out[-1]["content"][-1]
        last["text"] = last["text"].rstrip()
    return {"messages": out} if system is None else {"system": system, "messages": out}
