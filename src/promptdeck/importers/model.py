"""What every importer turns its input into: prompts with their versions, in a form no source owns.

A source module (``langfuse``, ``langsmith``, ``promptlayer``, ``openai_objects``, ``humanloop``) reads its
tool's input into ``Imported`` records; ``files`` writes a version as a promptdeck prompt file, and
``targets`` puts them in a folder or a store. Reading checks everything before anything is written: a
hostile input (too large, too deep, of the wrong types) is one ``ImportRefused`` naming the input and
the prompt, and nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec

from ..protocol.errors import LibraryError

#: The most an input (a file, or one fetched answer) may hold, and how many prompts and versions it may give.
MAX_INPUT_BYTES = 32 * 1024 * 1024
MAX_PROMPTS = 10_000
MAX_VERSIONS = 1_000
#: The most one version's text may hold (a promptdeck prompt file's limit, ``files.source``).
MAX_TEXT_BYTES = 1024 * 1024

T = TypeVar("T")


class ImportRefused(LibraryError):
    """The input cannot be imported; nothing was written. The message names the input and the prompt."""


@dataclass
class Message:
    """One message of a version: its role as the source has it, and its template in promptdeck's Jinja."""

    role: str
    text: str
    #: the text as the source wrote it (written as literal text if its translation does not check)
    original: str = ""


@dataclass
class Version:
    """One version of a prompt as its source numbers it, with what promptdeck keeps of it."""

    number: str
    messages: list[Message]
    #: the arguments, as promptdeck's front matter declares them (``name`` and ``type``, ``default``, ...)
    arguments: list[dict[str, Any]] = field(default_factory=list)
    #: the model settings (``model:`` in the front matter)
    model: dict[str, Any] = field(default_factory=dict)
    labels: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    description: str | None = None
    #: the source's commit message, kept as the store version's message
    message: str = ""
    #: what could not be translated (template syntax, roles, parts), each said once
    untranslated: list[str] = field(default_factory=list)


@dataclass
class Imported:
    """One prompt of the source, under its source's name, with its versions oldest first."""

    name: str
    versions: list[Version]


def refuse(where: str, message: str) -> ImportRefused:
    return ImportRefused(f"{where}: {message}")


def decode_json(data: bytes, where: str) -> Any:
    """``data`` as JSON, within the size bound; nesting too deep for the parser is refused, not raised."""
    if len(data) > MAX_INPUT_BYTES:
        raise refuse(where, f"the input is larger than {MAX_INPUT_BYTES} bytes")
    try:
        return json.loads(data)
    except RecursionError:
        raise refuse(where, "the input is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise refuse(where, f"not JSON ({exc})") from None


def typed(value: Any, kind: type[T], where: str) -> T:
    """``value`` checked against ``kind`` (a msgspec struct or type); a field of the wrong type is refused,
    named by its path (``$.versions[2].prompt``)."""
    try:
        return msgspec.convert(value, kind, strict=True)
    except msgspec.ValidationError as exc:
        raise refuse(where, str(exc)) from None
    except RecursionError:
        raise refuse(where, "the input is nested too deeply") from None


def items(value: Any, where: str, *keys: str) -> list[Any]:
    """The records of an input that is a list of them, one of them, or an object holding them under one of
    ``keys`` (``{"data": [...]}``); at most ``MAX_PROMPTS * MAX_VERSIONS`` of them."""
    for key in keys:
        if isinstance(value, dict) and isinstance(value.get(key), list):
            value = value[key]
            break
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise refuse(where, f"expected an object or a list of objects, not {type(value).__name__}")
    if len(value) > MAX_PROMPTS * 10:
        raise refuse(where, f"more than {MAX_PROMPTS * 10} records")
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise refuse(where, f"record {index} is {type(item).__name__}, not an object")
    return value


def name_of(record: dict[str, Any], key: str, where: str, index: int) -> str:
    name = record.get(key)
    if not isinstance(name, str) or not name.strip():
        raise refuse(where, f"record {index} has no {key!r} text")
    return name


def in_order(by_name: Mapping[str, list[T]], where: str, order: Callable[[T], Any], number: Callable[[T], object],
             version: Callable[[T], Version]) -> list[Imported]:
    """Each prompt's records (a source's versions of it, in any order) as its ``Imported`` versions, oldest
    first by ``order``; a version ``number`` given twice is refused, naming it. Held to the bounds."""
    out = []
    for name, records in by_name.items():
        ordered = sorted(records, key=order)
        seen: set[object] = set()
        for record in ordered:
            if number(record) in seen:
                raise refuse(where, f"prompt {name!r} has version {number(record)} twice")
            seen.add(number(record))
        out.append(Imported(name, [version(record) for record in ordered]))
    return bounded(out, where)


def bounded(prompts: list[Imported], where: str) -> list[Imported]:
    """The prompts, held to the bounds on how many and how large."""
    if len(prompts) > MAX_PROMPTS:
        raise refuse(where, f"more than {MAX_PROMPTS} prompts")
    for prompt in prompts:
        if len(prompt.versions) > MAX_VERSIONS:
            raise refuse(where, f"prompt {prompt.name!r} has more than {MAX_VERSIONS} versions")
        for version in prompt.versions:
            size = sum(len(m.text.encode("utf-8", "surrogatepass")) for m in version.messages)
            if size > MAX_TEXT_BYTES:
                raise refuse(where, f"prompt {prompt.name!r} version {version.number} is larger than "
                             f"{MAX_TEXT_BYTES} bytes")
    return prompts
