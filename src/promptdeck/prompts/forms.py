"""Asking a person for a prompt's missing arguments: the elicitation form, and reading what it answers.

The form's fields are the arguments' own JSON Schema (``Argument.json_schema(form=True)``), so a form and
a listing never disagree about an argument. Both eras ask with it: the 2026-07-28 ``input_required``
result, and ``elicitation/create`` sent to a legacy session whose client can answer it (2025-06-18 on).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..protocol.errors import InvalidParams
from .arguments import MISSING, Argument, wire_text


def missing(arguments: Iterable[Argument], given: Mapping[str, object]) -> list[Argument]:
    """The required arguments without a default that ``given`` leaves out: what a form asks for."""
    return [a for a in arguments if a.required and a.default is MISSING and a.name not in given]


def form(prompt: str, missing: list[Argument], *, modes: bool = True) -> dict[str, Any]:
    """The ``elicitation/create`` params asking for ``missing``, typed from their declarations. ``modes``: the
    revision names the elicitation's mode (2025-11-25 on; 2025-06-18 has form mode only, and no field for it)."""
    names = ", ".join(a.title or a.name for a in missing)
    params: dict[str, Any] = {"mode": "form"} if modes else {}
    params["message"] = f"The prompt {prompt!r} needs: {names}"
    params["requestedSchema"] = {"type": "object", "properties": {a.name: a.json_schema(form=True) for a in missing},
                                 "required": [a.name for a in missing]}
    return params


def answered(answer: object, prompt: str, asked: list[Argument] | None = None, *,
             partial: bool = False) -> dict[str, str]:
    """The argument values an ``elicitation/create`` answer carries, as the strings the wire would have sent;
    ``InvalidParams`` when the person declined or cancelled, or the answer is not a form's.

    With ``asked`` (the fields of the form this answer is known to answer) the content is held to that form:
    every field asked for, each a JSON value of its field's type, and no other field. Each value then meets
    the argument's own rules where it is bound, as a value sent in ``arguments`` does. Both eras hold their
    answers to their forms here, so what one refuses the other does, in the same words. ``partial``: a field
    left out is not an error (a 2026-07-28 retry is asked again for it, as its spec would have it, rather
    than refused: the legacy question cannot be asked again within its request)."""
    if not isinstance(answer, dict) or answer.get("action") != "accept":
        action = answer.get("action") if isinstance(answer, dict) else None
        if asked is not None:
            raise unanswered(prompt, asked, f"the user chose {action!r}")
        raise InvalidParams(f"prompt {prompt!r}: the arguments were not provided (the user chose {action!r})")
    content = answer.get("content") or {}
    if not isinstance(content, dict):
        raise InvalidParams(f"prompt {prompt!r}: the form answer's content must be an object")
    if asked is None:
        return {k: wire_text(v) for k, v in content.items()}
    fields = {a.name: a for a in asked}
    values: dict[str, str] = {}
    for name, value in content.items():
        field = fields.get(name)
        if field is None:
            raise InvalidParams(f"prompt {prompt!r}: the form answer has {name!r}, which the form did not ask for",
                                {"prompt": prompt, "unknown": [name]})
        values[name] = _field_text(prompt, field, value)
    left_out = [a for a in asked if a.name not in values]
    if left_out and not partial:
        raise unanswered(prompt, left_out, "the form answer left it out")
    return values


def unanswered(prompt: str, asked: list[Argument], why: str) -> InvalidParams:
    """The error of a request whose form did not bring ``asked``: the missing-argument error of a client that
    was not asked (its message and data), and ``why``."""
    names = [a.name for a in asked]
    return InvalidParams(f"prompt {prompt!r} is missing required argument {', '.join(map(repr, names))} ({why})",
                         {"prompt": prompt, "missing": names})


#: The JSON types a form field of each argument type takes (an enum's field is a string, whatever its type).
_FIELD_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "path": (str,), "integer": (int, float),
                                             "number": (int, float), "boolean": (bool,)}


def _field_text(prompt: str, field: Argument, value: object) -> str:
    """A form answer's value as its argument's wire text, once it is a JSON value of the field's type."""
    kind = "string" if field.enum is not None else field.type
    fits = isinstance(value, _FIELD_TYPES[kind]) and (kind == "boolean" or not isinstance(value, bool))
    if fits and kind == "integer" and isinstance(value, float):
        fits = value.is_integer()  # JSON Schema's integer is a number without a fraction (1.0 is one)
        value = int(value) if fits else value
    if not fits:
        shown = "null" if value is None else type(value).__name__
        raise InvalidParams(f"prompt {prompt!r}: argument {field.name!r} must be a {kind} in the form answer, "
                            f"not {shown}", {"prompt": prompt, "argument": field.name})
    return wire_text(value)
