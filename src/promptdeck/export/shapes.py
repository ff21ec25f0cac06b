"""A prompt's rendering with its arguments left as holes: what exporting to another format writes.

Other tools' prompt formats substitute argument values into fixed text
(``$1``, ``${input:name}``, ``{{args}}``); promptdeck's prompts are templates and
Python functions. ``shape_of`` finds out which arguments a prompt only
substitutes: it renders the prompt with a unique marker for each argument, then
checks that putting real values where the markers are gives exactly what
rendering with those values gives. An argument the rendering does more with (a
branch on it, a filter, arithmetic, a file it names) cannot be a hole: it is
fixed to one value, and the exporter says so.

Leaving out an optional argument is checked the same way: the other formats
substitute an empty text for a value not given, and a prompt that renders
differently without it gets a note. An optional argument without a default that
cannot be a hole is left out (``Shape.left_out``), as rendering without it leaves
out whatever depends on it; only the others are fixed to a value, never to a
made-up sample text for one that has none.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..prompts.arguments import MISSING, Argument
from ..prompts.spec import Prompt, RenderContext
from ..protocol.content import Message, Resource, ResourceLink, Role, Text
from ..protocol.errors import PromptdeckError


@dataclass(frozen=True)
class Hole:
    """Where an argument's value goes."""

    name: str


Part = str | Hole


@dataclass
class Shape:
    """A prompt's messages as text with holes, and what could not be kept."""

    prompt: Prompt
    #: (role, parts) per message; non-text content is described in ``notes``, not kept
    messages: list[tuple[Role, list[Part]]]
    #: the arguments that stay holes, in declaration order
    holes: list[Argument]
    #: arguments that could not be holes, with the value the text was rendered with
    fixed: dict[str, Any] = field(default_factory=dict)
    #: what the shape changes or leaves out, in words, for the exporter's warning
    notes: list[str] = field(default_factory=list)
    #: optional arguments without a default that could not be holes: the text is rendered without them
    left_out: list[str] = field(default_factory=list)

    def text(self, fill: Mapping[str, str], *, joiner: str = "\n\n") -> str:
        """Every message's text, joined, with each hole filled by ``fill[name]``."""
        return joiner.join(self.message_text(parts, fill) for _, parts in self.messages)

    @staticmethod
    def message_text(parts: list[Part], fill: Mapping[str, str]) -> str:
        return "".join(part if isinstance(part, str) else fill[part.name] for part in parts)


class ShapeError(PromptdeckError):
    """A prompt that cannot be rendered at all, even with every argument fixed."""


class _LeftOut:
    def __repr__(self) -> str:
        return "LEFT_OUT"


#: the value in ``shape_of``'s fixed arguments of one that is left out of the render
LEFT_OUT: Any = _LeftOut()


def fixed_value(prompt: Prompt, arg: Argument, others: Mapping[str, Any]) -> Any:
    """What an argument that cannot be a hole is rendered with, the others being ``others``: for an
    optional one without a default, ``LEFT_OUT`` (as a client that does not give it) when the prompt
    renders without it, else empty text (what the other formats put in for it) when that renders; else
    its default or first sample."""
    if not arg.required and arg.default is MISSING:
        for value in (LEFT_OUT, "") if arg.type in ("string", "path") else (LEFT_OUT,):
            try:
                _render(prompt, {**others, arg.name: value})
            except Exception:  # noqa: BLE001 - its template needs it after all (docs/prompt-files.md)
                continue
            return value
    return sample_values(arg)[0]


def shown_value(value: Any) -> str:
    """A value in a warning, which is one line: a long one cut short."""
    if value == "":
        return "empty text"
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:36] + "…" + shown[-1]


def _values(prompt: Prompt, fixed: Mapping[str, Any]) -> dict[str, Any]:
    """Every argument's value for a trial render: ``fixed``'s, else its first sample."""
    return {**{a.name: sample_values(a)[0] for a in prompt.arguments}, **fixed}


def shape_of(prompt: Prompt, leave_out: tuple[str, ...] = ()) -> Shape:
    """The prompt as text with holes (see the module's docstring); the arguments in ``leave_out`` are
    left out from the start (a format with no place for them), with no note here."""
    fixed: dict[str, Any] = dict.fromkeys(leave_out, LEFT_OUT)
    candidates = list(prompt.arguments)
    # A path names a file the prompt reads: a marker names no file, so it is fixed from the start.
    for arg in candidates:
        if arg.type == "path" and arg.name not in fixed:
            fixed[arg.name] = fixed_value(prompt, arg, _values(prompt, fixed))
    while True:
        holes = [a for a in candidates if a.name not in fixed]
        markers = {a.name: f"PDHOLE{secrets.token_hex(6)}X" for a in holes}
        try:
            marked = _render(prompt, {**fixed, **markers})
        except Exception:  # noqa: BLE001 - any failure means some argument is more than text
            if not holes:
                raise ShapeError(f"prompt {prompt.name!r} does not render with its arguments' samples") from None
            for culprit in _refusing(prompt, holes, markers, fixed):
                fixed[culprit.name] = fixed_value(prompt, culprit, _values(prompt, fixed))
            continue
        messages, notes = _split(marked, markers)
        wrong = _not_substituted(prompt, messages, holes, fixed)
        if not wrong:
            break
        for arg in wrong:
            fixed[arg.name] = fixed_value(prompt, arg, _values(prompt, fixed))
    left_out = [name for name, value in fixed.items() if value is LEFT_OUT]
    shape = Shape(prompt, messages, holes, {k: v for k, v in fixed.items() if v is not LEFT_OUT}, notes=notes,
                  left_out=left_out)
    for arg in holes:
        if not arg.required and arg.default is MISSING and not _absence_is_empty(shape, arg):
            shape.notes.append(f"leaving out {arg.name!r} renders differently there (it becomes empty text)")
    for name, value in fixed.items():
        if name not in leave_out:
            what = "left out" if value is LEFT_OUT else f"fixed to {shown_value(value)}"
            shape.notes.append(f"argument {name!r} is {what}: the prompt does more with it than put its value "
                               "in the text")
    return shape


def _render(prompt: Prompt, values: Mapping[str, Any]) -> list[Message]:
    rendered = prompt.render({k: v for k, v in values.items() if v is not LEFT_OUT}, RenderContext(prompt.name))
    if inspect.isawaitable(rendered):
        return asyncio.run(_awaited(rendered))
    return list(rendered)


async def _awaited(pending: Any) -> list[Message]:
    return list(await pending)


def _split(messages: list[Message], markers: Mapping[str, str]) -> tuple[list[tuple[Role, list[Part]]], list[str]]:
    """Messages as parts, the markers made holes; content that is not text becomes a note."""
    by_marker = {marker: name for name, marker in markers.items()}
    out: list[tuple[Role, list[Part]]] = []
    notes: list[str] = []
    for message in messages:
        content = message.content
        if isinstance(content, Text):
            text = content.text
        elif isinstance(content, Resource) and content.resource.text is not None:
            text = content.resource.text  # an embedded text resource: its text is kept, its URI is not
            notes.append(f"the embedded resource {content.resource.uri} is kept as plain text")
        elif isinstance(content, ResourceLink):
            text = f"{content.title or content.name}: {content.uri}"
            notes.append(f"the resource link {content.uri} is kept as text")
        else:
            kind = type(content).__name__.lower()
            notes.append(f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind} message is left out")
            continue
        out.append((message.role, _parts(text, by_marker)))
    return out, notes


def _parts(text: str, by_marker: Mapping[str, str]) -> list[Part]:
    parts: list[Part] = []
    rest = text
    while True:
        found = [(rest.find(marker), marker) for marker in by_marker if marker in rest]
        if not found:
            break
        at, marker = min(found)
        if at:
            parts.append(rest[:at])
        parts.append(Hole(by_marker[marker]))
        rest = rest[at + len(marker):]
    if rest:
        parts.append(rest)
    return parts


def _not_substituted(prompt: Prompt, messages: list[tuple[Role, list[Part]]], holes: list[Argument],
                     fixed: Mapping[str, Any]) -> list[Argument]:
    """The holes whose real values do not render as their text put in the holes would.

    Each hole is tried alone, the others at their first sample, so that a branch on one argument
    is not blamed on another; then all together, for arguments that act only in combination.
    """
    if not holes:
        return []
    base = {a.name: sample_values(a)[0] for a in holes}
    wrong = []
    for arg in holes:
        marker = f"PDHOLE{secrets.token_hex(6)}X"
        try:
            alone, _ = _split(_render(prompt, {**fixed, **base, arg.name: marker}), {arg.name: marker})
        except Exception:  # noqa: BLE001 - refused as text: not a hole
            wrong.append(arg)
            continue
        others = {k: v for k, v in base.items() if k != arg.name}
        if any(_differs(prompt, alone, {arg.name: value}, {**fixed, **others}) for value in sample_values(arg)):
            wrong.append(arg)
    if wrong:
        return wrong
    if _differs(prompt, messages, base, fixed):
        return [next((a for a in holes if a.type != "string"), holes[0])]
    return []


def _differs(prompt: Prompt, messages: list[tuple[Role, list[Part]]], values: Mapping[str, Any],
             fixed: Mapping[str, Any]) -> bool:
    try:
        real = _render(prompt, {**fixed, **values})
    except Exception:  # noqa: BLE001 - a value the prompt refuses: then the hole does not hold
        return True
    texts = {name: _as_text(value) for name, value in values.items()}
    predicted = [(role, Shape.message_text(parts, texts)) for role, parts in messages]
    actual, _ = _split(real, {})
    return predicted != [(role, Shape.message_text(parts, {})) for role, parts in actual]


def _absence_is_empty(shape: Shape, arg: Argument) -> bool:
    values = {a.name: sample_values(a)[0] for a in shape.holes if a.name != arg.name}
    try:
        real = _render(shape.prompt, {**shape.fixed, **values})
    except Exception:  # noqa: BLE001
        return False
    texts = {name: _as_text(value) for name, value in values.items()}
    texts[arg.name] = ""
    actual, _ = _split(real, {})
    return [(role, Shape.message_text(parts, texts)) for role, parts in shape.messages] == \
        [(role, Shape.message_text(parts, {})) for role, parts in actual]


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _refusing(prompt: Prompt, holes: list[Argument], markers: Mapping[str, str],
              fixed: Mapping[str, Any]) -> list[Argument]:
    """The holes a render fails on when each alone holds its marker (at least one)."""
    samples = {a.name: sample_values(a)[0] for a in holes}
    refusing = []
    for arg in holes:
        try:
            _render(prompt, {**fixed, **samples, arg.name: markers[arg.name]})
        except Exception:  # noqa: BLE001
            refusing.append(arg)
    # None fails alone: they fail together; give up the typed ones first, then the first.
    return refusing or [next((a for a in holes if a.type != "string"), holes[0])]


def sample_values(arg: Argument) -> list[Any]:
    """Values to check a hole with, the first one also what a fixed argument is rendered with."""
    if arg.enum is not None:
        return list(arg.enum[:3])
    first: list[Any] = [] if arg.default is MISSING else [arg.default]
    if arg.type == "integer":
        low = int(arg.min) if arg.min is not None else 1
        high = int(arg.max) if arg.max is not None else low + 2
        pool: list[Any] = [low, high, (low + high) // 2]
    elif arg.type == "number":
        low_f = arg.min if arg.min is not None else 0.5
        pool = [low_f, arg.max if arg.max is not None else low_f + 2.25]
    elif arg.type == "boolean":
        pool = [True, False]
    else:
        pool = [*arg.examples, "sample text", "another, longer sample value"]
    return list(dict.fromkeys(itertools.chain(first, pool)))
