"""A plain prompt's render, precompiled: its arguments' checks and its messages' joins made once per prompt.

A plain prompt (``Prompt.plain``: text messages that only substitute names) renders to what ``arguments.bind``
then ``TemplateText.render`` of each message make (``server.handlers.plain_render``), but that way pays, on
every render, for what never changes: the set of declared names, each argument's type dispatch, each
template's plan. ``PlainRender.of(prompt)`` works those out once; ``messages(given)`` then checks and joins.

Every check stays. Unknown names are refused against a frozen set of the declared ones; a plain string
argument (no length, choices or pattern) is checked as ``Argument.convert`` checks one (a ``str`` on the wire,
at most ``MAX_VALUE_LENGTH`` characters), and any other goes through ``Argument.convert`` itself; defaults fill
what was left out. No deadline is kept and no clock read, as in ``plain_render``: a join of literal text and
``str`` of converted values cannot loop, and its size is capped. Whatever is wrong (a bad value, a missing or
unknown name, a text over ``MAX_OUTPUT_CHARS``) makes ``messages`` answer None, never raise: the caller then
takes the general way, which refuses it in its own words, so the errors are the ones ``prompts/get`` gives.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..protocol.errors import InvalidParams
from .arguments import MAX_VALUE_LENGTH, MISSING, Argument
from .limits import MAX_OUTPUT_CHARS
from .spec import Prompt

#: how an argument is checked: a plain string by two tests here, anything else by ``Argument.convert``
_STRING, _CONVERT = 0, 1


class PlainRender:
    """A plain prompt's arguments and messages, made ready to check and join (``of``)."""

    __slots__ = ("declared", "checks", "parts")

    def __init__(self, declared: frozenset[str], checks: tuple[tuple[str, int, Argument], ...],
                 parts: tuple[tuple[str, tuple[str, ...], tuple[tuple[int, str], ...]], ...]) -> None:
        self.declared = declared
        #: (name, how checked, the argument) of each declared argument, in declared order
        self.checks = checks
        #: (role, the plan: literal text and names alternating, (position, name) of each name) of each message
        self.parts = parts

    @classmethod
    def of(cls, prompt: Prompt) -> PlainRender | None:
        """The precompiled render of ``prompt``; None when it is not plain."""
        plain = prompt.plain
        if plain is None:
            return None
        checks = tuple((a.name, _STRING if _plain_string(a) else _CONVERT, a) for a in prompt.arguments)
        parts = []
        for role, template in plain:
            plan = template.plan
            if plan is None:
                return None
            parts.append((role, plan, tuple((i, plan[i]) for i in range(1, len(plan), 2))))
        return cls(frozenset(a.name for a in prompt.arguments), checks, tuple(parts))

    def messages(self, given: Mapping[str, object]) -> list[dict[str, Any]] | None:
        """The ``prompts/get`` messages for the arguments ``given`` (as sent: strings); None when anything is
        wrong with them, for the general way to refuse."""
        if not self.declared.issuperset(given):
            return None
        values: dict[str, Any] = {}
        for name, how, argument in self.checks:
            raw = given.get(name, MISSING)
            if raw is MISSING:
                if argument.default is not MISSING:
                    values[name] = argument.default
                elif argument.required:
                    return None
            elif how == _STRING:
                if type(raw) is not str or len(raw) > MAX_VALUE_LENGTH:
                    return None
                values[name] = raw
            else:
                try:
                    values[name] = argument.convert(raw)
                except InvalidParams:
                    return None
        out = []
        for role, plan, names in self.parts:
            texts = list(plan)
            for at, name in names:
                value = values.get(name, MISSING)
                if value is MISSING:  # an optional argument left out that the text uses: refused there
                    return None
                texts[at] = value if type(value) is str else str(value)  # str(), as Jinja prints a value
            text = "".join(texts)
            if len(text) > MAX_OUTPUT_CHARS:
                return None
            if text.strip():  # as the general way: a message whose text renders blank is left out
                out.append({"role": role, "content": {"type": "text", "text": text}})
        return out


def _plain_string(argument: Argument) -> bool:
    """A string argument with nothing more to check than ``convert`` checks of every string."""
    return (argument.type == "string" and argument.min is None and argument.max is None and argument.enum is None
            and argument.pattern is None)
