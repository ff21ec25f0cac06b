"""One version made from a source's messages: roles mapped, templates translated, variables made arguments.

Every source module calls ``make_version`` with what it read, so roles, arguments and what is named as
untranslated are decided in one place for all of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .model import Message, Version
from .syntax import translate

#: Roles as the sources write them, as promptdeck has them; "system" is kept for the note below.
ROLES = {"user": "user", "human": "user", "system": "system", "developer": "system", "assistant": "assistant",
         "ai": "assistant", "model": "assistant"}
#: Types as the sources name them, as promptdeck's arguments have them (``prompts/arguments.py``).
TYPES = {"str": "string", "string": "string", "int": "integer", "integer": "integer", "float": "number",
         "number": "number", "bool": "boolean", "boolean": "boolean"}


def make_version(number: str, messages: Sequence[tuple[str, str]], syntax: str | Sequence[str], *,
                 types: Mapping[str, str] | None = None, defaults: Mapping[str, Any] | None = None,
                 declared: Sequence[str] = (), model: Mapping[str, Any] | None = None,
                 labels: Sequence[str] = (), tags: Sequence[str] = (), description: str | None = None,
                 message: str = "", untranslated: Sequence[str] = ()) -> Version:
    """``messages``: (role as the source writes it, template in ``syntax``, or in the syntax of its place in
    the list ``syntax``). ``types``: a variable's type as
    the source names it; ``defaults``: values the source fills in itself; ``declared``: variables the
    source lists, whether or not the text uses them."""
    out = Version(number, [], model=dict(model or {}), labels=list(labels), tags=list(tags),
                  description=description, message=message, untranslated=list(untranslated))
    variables: list[str] = []
    for index, (role, text) in enumerate(messages):
        translated = translate(text, syntax if isinstance(syntax, str) else syntax[index])
        mapped = ROLES.get(role.lower())
        if mapped is None:
            out.untranslated.append(f"a message of role {role!r} (kept as the user's)")
            mapped = "user"
        elif mapped == "system":
            note = "its system message (a user message here: MCP prompts have user and assistant messages only)"
            if note not in out.untranslated:
                out.untranslated.append(note)
            mapped = "user"
        out.messages.append(Message(mapped, translated.text, text))
        out.untranslated += [u for u in translated.untranslated if u not in out.untranslated]
        variables += [v for v in translated.variables if v not in variables]
    variables += [v for v in declared if v not in variables and v.isidentifier()]
    for name in variables:
        argument: dict[str, Any] = {"name": name}
        kind = TYPES.get(str((types or {}).get(name, "")).lower())
        if kind is not None and kind != "string":
            argument["type"] = kind
        if defaults is not None and name in defaults:
            argument["default"] = defaults[name]
        else:
            argument["required"] = True
        out.arguments.append(argument)
    return out
