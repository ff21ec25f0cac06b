"""What ``Prompts`` gives back: a rendered prompt (``Rendered``) and a prompt's listing (``PromptListing``).

Both are plain values, the same whatever the source. ``messages`` are the ``messages`` of the
``prompts/get`` result, as JSON values (``{"role": "user", "content": {"type": "text", ...}}``), so they
can be logged, cached or handed to any code that reads MCP. The settings for the model come from the
prompt's listing ``_meta`` (``promptdeck.dev/model``): a promptdeck file's ``model:`` front matter, or
another format's own (a dotprompt's ``model`` and ``config``, a Prompty ``model:`` section, ...), as
written. A store's version and label come from there too (``promptdeck.dev/version``, ``/label``), but those of
a render come from its ``prompts/get`` result's ``_meta`` (with ``/rollout``: the rollout that chose it): during a
rollout a render may be of another version than the listing's (``server.handlers.served_meta``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

#: Where a prompt's listing carries what Prompts reads of it (sources.files.native, sources.store.catalog).
META_MODEL = "promptdeck.dev/model"
META_VERSION = "promptdeck.dev/version"
META_LABEL = "promptdeck.dev/label"
META_ROLLOUT = "promptdeck.dev/rollout"


@dataclass(frozen=True, slots=True)
class PromptListing:
    """A prompt as ``prompts/list`` shows it: what it takes (``arguments``: name, description, required, ...
    as listed), what it is for, and the settings for the model it was written for."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[Mapping[str, Any], ...] = ()
    model: Mapping[str, Any] | None = None
    version: int | str | None = None
    label: str | None = None
    #: the listing's whole ``_meta``
    meta: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_wire(cls, entry: Mapping[str, Any]) -> PromptListing:
        """From a ``prompts/list`` entry (JSON values)."""
        meta = entry.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        model = meta.get(META_MODEL)
        version = meta.get(META_VERSION)
        label = meta.get(META_LABEL)
        arguments = entry.get("arguments")
        arguments = arguments if isinstance(arguments, list | tuple) else ()  # JSON's lists, or msgspec's tuples
        return cls(name=str(entry.get("name")), title=_text(entry.get("title")),
                   description=_text(entry.get("description")),
                   arguments=tuple(a for a in arguments if isinstance(a, dict)),
                   model=model if isinstance(model, dict) else None,
                   version=_version(version),
                   label=_text(label), meta=meta)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _version(value: object) -> int | str | None:
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


class Rendered(msgspec.Struct, frozen=True):
    """A rendered prompt: the messages to send to the model, and where they came from.

    ``stale`` is True when the source could not be reached and a fallback (a folder, or the cache of an
    earlier sync) rendered it instead.

    A frozen ``msgspec.Struct`` rather than a frozen dataclass: one is made per render, and a frozen
    dataclass's ``__init__`` (``object.__setattr__`` per field) cost ~1.8 µs of it, this 0.15 µs (issue 42).
    """

    name: str
    #: the ``messages`` of the ``prompts/get`` result, as JSON values
    messages: list[dict[str, Any]]
    description: str | None = None
    #: the version rendered (a store's version number; None for a folder, or a server that does not say)
    version: int | str | None = None
    #: the store label it was rendered from (None for a folder)
    label: str | None = None
    #: the prompt's settings for the model (``model:`` front matter, or another format's equivalent)
    model: Mapping[str, Any] | None = None
    stale: bool = False
    #: where it was rendered from: the folder, store URL or MCP server URL (a fallback's, when stale)
    source: str = ""
    #: the number of the store's rollout that chose this version (None: the label's own version was rendered)
    rollout: int | None = None

    @classmethod
    def of_result(cls, name: str, result: Mapping[str, Any], listing: PromptListing, stale: bool, source: str,
                  label: str | None = None) -> Rendered:
        """A ``prompts/get`` ``result`` (JSON values) of the prompt ``listing`` lists. The version, label and
        rollout are the ones the result's ``_meta`` names, which is what was rendered; the listing's (else
        ``label``) only for a result that names none (a folder's, a server that does not say)."""
        meta = result.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        version = _version(meta.get(META_VERSION))
        rollout = meta.get(META_ROLLOUT)
        model = meta.get(META_MODEL)  # a rollout's version names its own (the listing's is the label's)
        return cls(name, result["messages"], result.get("description"),
                   version if version is not None else listing.version,
                   _text(meta.get(META_LABEL)) or listing.label or label,
                   model if isinstance(model, dict) else listing.model, stale, source,
                   rollout if isinstance(rollout, int) and not isinstance(rollout, bool) else None)

    def with_messages(self, messages: list[dict[str, Any]], stale: bool) -> Rendered:
        """This render's origin (name, version, label, model, source, rollout) with other ``messages``: a plain
        prompt's renders are made so from one made once (``Prompts``), with the same fields ``of_result`` gives."""
        return Rendered(self.name, messages, self.description, self.version, self.label, self.model, stale,
                        self.source, self.rollout)

    def text(self) -> str:
        """The text of every message (text blocks, and embedded text resources), blank-line separated."""
        parts: list[str] = []
        for message in self.messages:
            content = message.get("content")
            if not isinstance(content, dict):
                continue
            if content.get("type") == "text":
                parts.append(str(content.get("text", "")))
            elif content.get("type") == "resource":
                resource = content.get("resource")
                if isinstance(resource, dict) and isinstance(resource.get("text"), str):
                    parts.append(resource["text"])
        return "\n\n".join(parts)

    # -- the model providers' request formats ---------------------------------------------------
    # Each is ``promptdeck.providers``' function of the same name (docs/providers.md), imported on first use:
    # a render imports nothing for them.

    def to_openai(self, *, system: str | None = None) -> list[dict[str, Any]]:
        """The Chat Completions ``messages`` (``providers.to_openai``)."""
        from ..providers import to_openai

        return to_openai(self.messages, system=system)

    def to_openai_responses(self, *, system: str | None = None) -> list[dict[str, Any]]:
        """The Responses API ``input`` items (``providers.to_openai_responses``)."""
        from ..providers import to_openai_responses

        return to_openai_responses(self.messages, system=system)

    def to_anthropic(self, *, system: str | None = None) -> dict[str, Any]:
        """``{"system": …, "messages": […]}`` for the Messages API (``providers.to_anthropic``)."""
        from ..providers import to_anthropic

        return to_anthropic(self.messages, system=system)

    def to_gemini(self, *, system: str | None = None) -> dict[str, Any]:
        """``{"contents": […]}`` for ``generate_content`` (``providers.to_gemini``)."""
        from ..providers import to_gemini

        return to_gemini(self.messages, system=system)
