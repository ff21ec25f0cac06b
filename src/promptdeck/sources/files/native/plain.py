"""Plain Markdown commands: Cursor's (``.cursor/commands/*.md``) and Continue's (``.continue/prompts/*.md``).

Neither tool substitutes placeholders in the text: what the user types after the command goes to the
model with it. Over MCP that is one optional argument, added after the body (docs/native-formats.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ....prompts.arguments import make_argument
from ....prompts.spec import Prompt
from ....protocol.errors import LineError
from ._common import Markdown, Plan, check_name, first_line, text_prompt

_NOTHING = re.compile(r"(?!)")
#: Continue's older prompt files put the user's input where ``{{{ input }}}`` is.
_INPUT = re.compile(r"\{\{\{\s*input\s*\}\}\}")
APPEND = "$+"
INPUT = "$I"


def _appended(argument: str, values: Mapping[str, Any]) -> dict[str, str]:
    given = str(values.get(argument, ""))
    return {APPEND: f"\n\n{given}" if given else "", INPUT: given}


def read_cursor(rel: str, text: str) -> Prompt:
    """``.cursor/commands/review.md`` is ``review``; the whole file is the text (Cursor reads no front matter)."""
    name = check_name(rel[len(".cursor/commands/"):-len(".md")], None, f"from the path {rel}")
    plan = Plan(text.rstrip("\n"), _NOTHING, lambda m: None)
    plan.parts += [APPEND, ""]
    argument = make_argument("arguments", description="text to add after the command")
    return text_prompt(name, rel, "cursor", plan, lambda values: _appended("arguments", values),
                       description=first_line(text), arguments=(argument,), settings={})


def read_continue(rel: str, text: str) -> Prompt | None:
    """``.continue/prompts/review.md`` is ``review``, titled by its ``name:``; only an ``invokable: true`` file
    is a slash command in Continue, so any other is no prompt (None)."""
    doc = Markdown(text)
    name = check_name(rel[len(".continue/prompts/"):-len(".md")], None, f"from the path {rel}")
    title = doc.text("name")
    description = doc.text("description")
    invokable = doc.meta.get("invokable", False)
    if not isinstance(invokable, bool):
        raise LineError("invokable must be true or false", doc.line("invokable"))
    if not invokable:
        return None
    body = doc.body.rstrip("\n")
    plan = Plan(body, _INPUT, lambda m: INPUT)
    if not plan.keys:
        plan.parts += [APPEND, ""]
    settings = {k: v for k, v in doc.meta.items() if k not in ("name", "description")}
    argument = make_argument("input", description="text to add to the prompt (what follows the slash command)")
    return text_prompt(name, rel, "continue", plan, lambda values: _appended("input", values),
                       description=description or first_line(body), arguments=(argument,), settings=settings,
                       title=title, line=doc.line)
