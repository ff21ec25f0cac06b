"""Asking a person for a prompt's missing arguments: the elicitation form, and reading what it answers.

The form's fields are the arguments' own JSON Schema (``Argument.json_schema(form=True)``), so a form and
a listing never disagree about an argument. Both eras ask with it: the 2026-07-28 ``input_required``
result, and ``elicitation/create`` sent to a legacy session whose client can answer it.
"""

from __future__ import annotations

from typing import Any

from ..protocol.errors import InvalidParams
from .arguments import Argument, wire_text


def form(prompt: str, missing: list[Argument]) -> dict[str, Any]:
    """The ``elicitation/create`` params asking for ``missing``, typed from their declarations."""
    names = ", ".join(a.title or a.name for a in missing)
    return {
        "mode": "form",
        "message": f"The prompt {prompt!r} needs: {names}",
        "requestedSchema": {"type": "object", "properties": {a.name: a.json_schema(form=True) for a in missing},
                            "required": [a.name for a in missing]},
    }


def answered(answer: object, prompt: str) -> dict[str, str]:
    """The argument values an ``elicitation/create`` answer carries, as the strings the wire would have sent;
    ``InvalidParams`` when the person declined or cancelled, or the answer is not a form's."""
    if not isinstance(answer, dict) or answer.get("action") != "accept":
        action = answer.get("action") if isinstance(answer, dict) else None
        raise InvalidParams(f"prompt {prompt!r}: the arguments were not provided (the user chose {action!r})")
    content = answer.get("content") or {}
    if not isinstance(content, dict):
        raise InvalidParams(f"prompt {prompt!r}: the form answer's content must be an object")
    return {k: wire_text(v) for k, v in content.items()}
