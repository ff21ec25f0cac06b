"""Prompts inside prompts: ``prompt(NAME, **ARGUMENTS)`` in a template, the role line ``user: {prompt: NAME,
arguments: {…}}``, and what ``check`` refuses of them library-wide (docs/prompt-files.md, Composition).

A composed prompt is one of the same library (a folder's, or the same label of a store), rendered with the
arguments given, bound and checked as a client's ``prompts/get`` would be (``arguments.bind``): values are
sent as a client sends them, as text. It is rendered inside the composing render (``composition``: one
deadline, one output budget, ``MAX_NESTING`` levels, no cycle) and only when everyone who may see the
composing prompt may see it (``access.covers``): else it is, to the client, a prompt that is not there.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ...prompts.access import covers, reader_scopes, shown_scopes
from ...prompts.arguments import bind
from ...prompts.catalog import close_names
from ...prompts.composition import MAX_COMPOSED_RENDERS, MAX_NESTING, Call, chain, entering, spend
from ...prompts.spec import Prompt, RenderContext
from ...protocol.content import Message, Text
from ...protocol.errors import InternalError, InvalidParams, PromptFileError

if TYPE_CHECKING:
    from .partials import TemplateFolder

log = logging.getLogger("promptdeck.render")


def _wire(prompt: str, name: str, arguments: Mapping[str, Any]) -> dict[str, str]:
    """The arguments as a client sends them: text (a number as its digits, a boolean as true/false)."""
    out: dict[str, str] = {}
    for key, value in arguments.items():
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            out[key] = value if isinstance(value, str) else str(value)
        elif value is not None:
            str(value)  # an undefined value (StrictUndefined) says which name it is, as anywhere in a template
            raise InvalidParams(f"prompt {prompt!r}: prompt({name!r}): argument {key!r} must be text, a number or "
                                f"true/false, got {type(value).__name__}", {"prompt": prompt, "composed": name})
    return out


def render_composed(library: TemplateFolder, name: object, arguments: Mapping[str, Any]) -> list[Message]:
    """The messages of the prompt ``name`` of ``library`` rendered with ``arguments``, inside the current render."""
    outer = chain()[-1]
    if not isinstance(name, str):
        str(name)  # an undefined value (StrictUndefined) says which name it is, as anywhere in a template
        raise InvalidParams(f"prompt {outer!r}: prompt() takes the name of a prompt, got {type(name).__name__}")
    absent = f"prompt {outer!r}: prompt({name!r}): no prompt {name!r} in the library"
    offered = library.lookup(name) if library.lookup is not None else None
    if offered is None:
        raise InvalidParams(absent, {"prompt": outer, "composed": name})
    reader = reader_scopes()
    if not covers(reader, offered.scopes):
        raise InvalidParams(absent, {"prompt": outer, "composed": name}, detail=(
            f"{name!r} is restricted to {shown_scopes(offered.scopes)}; {outer!r}, seen by {shown_scopes(reader)}, "
            "may not compose it, as its readers could not all see it"))
    target = offered.parsed()  # a stored prompt's file is parsed only once it may be composed
    with entering(name):
        try:
            values = bind(target.arguments, _wire(outer, name, arguments), name)
        except InvalidParams as exc:
            raise InvalidParams(f"prompt {outer!r}: prompt({name!r}): {exc.message}",
                                {"prompt": outer, "composed": name}) from None
        try:
            rendered = target.render(values, RenderContext(name))
        except InternalError as exc:  # the reason, for the log, says where in the composition it failed
            raise InternalError(f"prompt {outer!r}: prompt({name!r}): {exc.detail}") from exc
        except InvalidParams as exc:
            raise InvalidParams(f"prompt {outer!r}: prompt({name!r}): {exc.message}", exc.data,
                                detail=exc.detail) from None
        if not isinstance(rendered, list):
            if inspect.iscoroutine(rendered):
                rendered.close()
            raise InvalidParams(absent, {"prompt": outer, "composed": name},
                                detail=f"{name!r} renders asynchronously (a prompt written in Python); only "
                                       "prompts that render at once compose")
    spend(sum(len(m.content.text) for m in rendered if isinstance(m.content, Text)))
    return rendered


def composed_text(library: TemplateFolder, name: object, arguments: Mapping[str, Any]) -> str:
    """``prompt(NAME, **ARGUMENTS)`` in a template: the text messages of the prompt, joined by blank lines."""
    messages = render_composed(library, name, arguments)
    return "\n\n".join(m.content.text for m in messages if isinstance(m.content, Text))


def composition_problems(prompts: Iterable[Prompt], shown: Mapping[str, str] | None = None) -> list[PromptFileError]:
    """What ``check`` refuses in how the ``prompts`` of one library compose each other, each at the line of
    the composing call: an unknown prompt or argument, a missing required argument, a prompt that may be
    seen more widely than one it composes, and a cycle (once, with its chain). ``shown``: a prompt's source
    as the user knows it."""
    by_name: dict[str, Prompt] = {}
    for prompt in prompts:
        by_name.setdefault(prompt.name, prompt)
    where = shown or {}
    problems: list[PromptFileError] = []
    edges: dict[str, list[Call]] = {}
    for prompt in by_name.values():
        uses = prompt.uses
        if not uses.calls:
            continue
        path = where.get(prompt.source, prompt.source)
        edges[prompt.name] = list(uses.calls)
        for call in uses.calls:
            target = by_name.get(call.name)
            if target is None:
                close = close_names(call.name, list(by_name), limit=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                problems.append(PromptFileError(path, f"prompt({call.name!r}): no prompt {call.name!r} in the "
                                                      f"library{hint}", call.line))
                continue
            if not covers(prompt.scopes, target.scopes):
                problems.append(PromptFileError(path, (
                    f"prompt {prompt.name!r}, seen by {shown_scopes(prompt.scopes)}, composes {call.name!r}, "
                    f"restricted to {shown_scopes(target.scopes)}: it would show {call.name!r} to principals who "
                    f"may not see it; restrict {prompt.name!r} as narrowly, or compose another prompt"), call.line))
            if call.arguments is None:
                continue
            declared = {a.name for a in target.arguments}
            unknown = sorted(call.arguments - declared)
            if unknown:
                problems.append(PromptFileError(path, (
                    f"prompt({call.name!r}): {call.name!r} has no argument "
                    f"{', '.join(repr(u) for u in unknown)} (it takes: {', '.join(sorted(declared)) or 'none'})"),
                    call.line))
            missing = [a.name for a in target.arguments if a.required and a.name not in call.arguments]
            if missing:
                problems.append(PromptFileError(path, f"prompt({call.name!r}) is missing required argument "
                                                      f"{', '.join(repr(m) for m in missing)}", call.line))
    problems += _cycles(edges, by_name, where)
    problems += _fan_outs(edges, by_name, where)
    return problems


def _fan_outs(edges: dict[str, list[Call]], by_name: Mapping[str, Prompt],
              where: Mapping[str, str]) -> list[PromptFileError]:
    """Each prompt whose one render would render other prompts more than ``MAX_COMPOSED_RENDERS`` times, by
    its literal calls (``Call.times`` each, and what each callee renders in turn), at its first call: such a
    fan-out fails every render at the deadline. A cycle counts as nothing more here: it is refused as one."""
    counted: dict[str, int] = {}
    active: set[str] = set()

    def renders(name: str) -> int:
        if name in counted:
            return counted[name]
        if name in active:
            return 0
        active.add(name)
        total = 0
        for call in edges.get(name, ()):
            if call.name in by_name:
                total += call.times * (1 + renders(call.name))
                if total > MAX_COMPOSED_RENDERS:
                    break  # past the bound already: no need to count the rest (it may be astronomical)
        active.discard(name)
        counted[name] = total
        return total

    problems: list[PromptFileError] = []
    for name in sorted(edges):
        count = renders(name)
        if count > MAX_COMPOSED_RENDERS:
            source = by_name[name].source
            problems.append(PromptFileError(where.get(source, source), (
                f"prompt {name!r} would render other prompts more than {MAX_COMPOSED_RENDERS} times in one render "
                "(its prompt() calls, times their loops, and theirs in turn); no render of it could finish"),
                edges[name][0].line))
    return problems


def _cycles(edges: dict[str, list[Call]], by_name: Mapping[str, Prompt],
            where: Mapping[str, str]) -> list[PromptFileError]:
    """Each cycle of literal prompt calls once, at the call that closes it, with its chain."""
    problems: list[PromptFileError] = []
    done: set[str] = set()
    reported: set[frozenset[str]] = set()

    def visit(name: str, path: list[str]) -> None:
        for call in edges.get(name, ()):
            if call.name in path:
                loop = [*path[path.index(call.name):], call.name]
                key = frozenset(loop)
                if key not in reported:
                    reported.add(key)
                    source = by_name[name].source
                    problems.append(PromptFileError(where.get(source, source),
                                                    "prompt cycle: " + " → ".join(loop), call.line))
            elif len(path) > MAX_NESTING and call.name in edges:
                key = frozenset(path)
                if key not in reported:
                    reported.add(key)
                    source = by_name[name].source
                    problems.append(PromptFileError(where.get(source, source), (
                        f"composition nests deeper than {MAX_NESTING} levels: " + " → ".join([*path, call.name])),
                        call.line))
            elif call.name in edges and call.name not in done:
                visit(call.name, [*path, call.name])
        done.add(name)

    for name in sorted(edges):
        if name not in done:
            visit(name, [name])
    return problems
