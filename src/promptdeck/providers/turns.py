"""What every provider conversion reads: a rendered prompt's MCP messages, as parts grouped into turns.

The input is what ``prompts/get`` gives, in any of the forms an application holds it: promptdeck's own
``Message`` objects (what ``Client.get_prompt`` decodes), the same messages as JSON (wire dicts, from any
server or from a file), or the whole result (anything with ``messages``). Wire dicts are decoded into the
one content model (``protocol.content``), so a provider sees one shape and a malformed message is refused
here, naming its index, rather than by the provider's API.

A ``Part`` is one content block reduced to what a provider can be given: text (a text block, or a link in
the words older MCP revisions give it), an embedded text resource (``document``), or binary data (an image,
audio, a PDF, or another blob) with its MIME type. Consecutive messages of one role make one ``Turn``: MCP
carries one block per message, while every provider's message holds a list of parts.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, NoReturn
from urllib.parse import unquote, urlsplit

import msgspec

from ..protocol.content import Audio, Content, Image, Message, Resource, ResourceLink, Role, Text, link_text
from ..protocol.errors import ConversionError

Kind = Literal["text", "document", "image", "audio", "pdf", "blob"]

#: MIME types that name one audio format under several spellings, by the name OpenAI's ``input_audio`` uses.
AUDIO_FORMATS = {
    "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/vnd.wave": "wav",
    "audio/mpeg": "mp3", "audio/mp3": "mp3",
}
#: The image types OpenAI and Anthropic both take (PNG, JPEG, GIF, WebP).
WEB_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


@dataclass(frozen=True, slots=True)
class Part:
    """One MCP content block as a conversion sees it."""

    index: int  #: the position of the MCP message it came from
    role: Role
    kind: Kind
    text: str = ""  #: text and document: the text
    mime_type: str = ""  #: the MIME type, lower-cased and without parameters (document: as the resource says)
    data: str = ""  #: binary kinds: base64, as every provider takes it
    uri: str = ""  #: document, pdf and blob: the resource's URI

    def what(self) -> str:
        """The part in words, for an error."""
        names = {"text": "text", "document": "an embedded text resource", "image": "an image", "audio": "audio",
                 "pdf": "a PDF", "blob": "an embedded binary resource"}
        if self.kind in ("text", "document"):
            return names[self.kind]
        return f"{names[self.kind]} ({self.mime_type or 'no MIME type'})"

    def file_name(self) -> str:
        """A file name for the part: the last segment of its URI's path, else the URI itself."""
        split = urlsplit(self.uri)
        return unquote(split.path.rstrip("/").rpartition("/")[2]) or self.uri or "file"


class Turn(NamedTuple):
    role: Role
    parts: list[Part]


def refuse(provider: str, part: Part, reason: str) -> NoReturn:
    """Raise the error for ``part``, naming its message and role."""
    raise ConversionError(provider, part.index, reason, role=part.role)


def media_type(mime: str | None) -> str:
    """``mime`` lower-cased, without parameters, with the common misspelling ``image/jpg`` corrected."""
    bare = (mime or "").split(";", 1)[0].strip().lower()
    return "image/jpeg" if bare == "image/jpg" else bare


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _blob(index: int, role: Role, mime: str, data: bytes, uri: str) -> Part:
    """An embedded blob, sorted by its MIME type into the kinds the block types have."""
    kind: Kind
    if mime.startswith("image/"):
        kind = "image"
    elif mime.startswith("audio/"):
        kind = "audio"
    elif mime == "application/pdf":
        kind = "pdf"
    else:
        kind = "blob"
    return Part(index, role, kind, mime_type=mime, data=_b64(data), uri=uri)


def part_of(index: int, message: Message) -> Part:
    """The part one message holds: an image or audio block is that kind whatever its MIME type says (a
    provider that does not take the type refuses it), an embedded blob the kind its MIME type names."""
    content: Content = message.content
    role = message.role
    if isinstance(content, Text):
        return Part(index, role, "text", text=content.text)
    if isinstance(content, ResourceLink):
        return Part(index, role, "text", text=link_text(content))
    if isinstance(content, Image | Audio):
        kind: Kind = "image" if isinstance(content, Image) else "audio"
        return Part(index, role, kind, mime_type=media_type(content.mime_type), data=_b64(content.data))
    assert isinstance(content, Resource)
    inner = content.resource
    if inner.blob is None:
        return Part(index, role, "document", text=inner.text or "", mime_type=media_type(inner.mime_type),
                    uri=inner.uri)
    return _blob(index, role, media_type(inner.mime_type) or "application/octet-stream", inner.blob, inner.uri)


def _items(messages: Any, provider: str) -> list[Any]:
    """The messages of ``messages``: a sequence of them, or a result holding them under ``messages``."""
    if isinstance(messages, Mapping):
        if "messages" not in messages:
            raise ConversionError(provider, None, "expected a prompts/get result or a list of messages; "
                                  f"got a mapping without 'messages' (keys: {sorted(map(str, messages))[:8]})")
        messages = messages["messages"]
    elif not isinstance(messages, list | tuple) and hasattr(messages, "messages"):
        messages = messages.messages
    if isinstance(messages, str | bytes | bytearray | Mapping) or not isinstance(messages, Iterable):
        raise ConversionError(provider, None, f"expected a list of MCP prompt messages, got {type(messages).__name__}")
    return list(messages)


def read(messages: Any, provider: str) -> list[Part]:
    """The parts of ``messages`` (see the module docstring), one per message, in order; text that is empty or
    only whitespace is left out (it says nothing to a model, and Anthropic and Gemini refuse it)."""
    parts: list[Part] = []
    for index, item in enumerate(_items(messages, provider)):
        if isinstance(item, Mapping):
            try:
                item = msgspec.convert(dict(item), Message)
            except msgspec.ValidationError as error:
                raise ConversionError(provider, index, f"not an MCP prompt message: {error}") from None
        elif not isinstance(item, Message):
            raise ConversionError(provider, index, f"not an MCP prompt message: {type(item).__name__}")
        part = part_of(index, item)
        if part.kind in ("text", "document") and not part.text.strip():
            continue
        parts.append(part)
    return parts


def turns(parts: list[Part]) -> list[Turn]:
    """``parts`` grouped into turns: consecutive parts of one role make one turn."""
    out: list[Turn] = []
    for part in parts:
        if out and out[-1].role == part.role:
            out[-1].parts.append(part)
        else:
            out.append(Turn(part.role, [part]))
    return out


def data_uri(part: Part) -> str:
    """The part's data as a ``data:`` URI, the form OpenAI takes inline images and files in."""
    return f"data:{part.mime_type};base64,{part.data}"


def check_system(provider: str, system: object) -> None:
    if system is not None and not isinstance(system, str):
        raise ConversionError(provider, None, f"system must be a string, not {type(system).__name__}")
