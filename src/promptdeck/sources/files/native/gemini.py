"""Gemini CLI custom commands: ``.gemini/commands/**/*.toml``, read with the standard library's ``tomllib``.

A command is a TOML table with ``prompt`` (required) and ``description``; ``{{args}}`` in the prompt is
what the user typed after the command. Gemini names ``git/commit.toml`` ``/git:commit``; an MCP prompt
name holds no ':', so it is ``git.commit`` here (docs/native-formats.md).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from typing import Any

from ....prompts.arguments import make_argument
from ....prompts.spec import Prompt
from ....protocol.errors import LineError
from ._common import Plan, check_name, text_prompt

_ARGS = re.compile(r"\{\{args\}\}")
_AT_LINE = re.compile(r"at line (\d+)")
ARGS = "$A"
APPEND = "$+"


#: Nesting that ``_deep_line`` names as too deep; tomllib itself gives up somewhere past 300 levels.
_MAX_DEPTH = 100


def _deep_line(text: str) -> int | None:
    """The line where ``[`` and ``{`` first open more than ``_MAX_DEPTH`` levels, counting brackets only
    (brackets in strings too: this only points at a line of a file that already failed)."""
    depth = 0
    for number, line in enumerate(text.splitlines(), 1):
        for char in line:
            depth += 1 if char in "[{" else -1 if char in "]}" else 0
            if depth > _MAX_DEPTH:
                return number
    return None


def _line(text: str, key: str) -> int | None:
    found = re.search(rf"^[ \t]*{re.escape(key)}[ \t]*=", text, re.MULTILINE)
    return text.count("\n", 0, found.start()) + 1 if found else None


def read(rel: str, text: str) -> Prompt:
    """``.gemini/commands/git/commit.toml`` is ``git.commit`` (Gemini's ``/git:commit``)."""
    stem = rel[len(".gemini/commands/"):-len(".toml")]
    gemini_name = stem.replace("/", ":")
    name = check_name(stem.replace("/", "."), None, f"from the path {rel}")
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = _AT_LINE.search(str(exc))
        # "at end of document": the last line is where the file stops short.
        line = int(at.group(1)) if at else text.rstrip("\n").count("\n") + 1
        raise LineError(f"not valid TOML: {exc}", line) from None
    except RecursionError:
        # tomllib reads each nested array or inline table with one more call of itself and has no limit of its
        # own: a file nested a few hundred deep runs out of Python's stack, one of thousands would not stop
        # sooner. The stack is back where it was here, so the file is a problem and the reading goes on.
        raise LineError(f"not valid TOML here: arrays or tables nested deeper than {_MAX_DEPTH} levels",
                          _deep_line(text)) from None
    body = table.get("prompt")
    if body is None:
        raise LineError("a Gemini command needs a prompt = \"...\"")
    if not isinstance(body, str):
        raise LineError("prompt must be text", _line(text, "prompt"))
    description = table.get("description")
    if description is not None and not isinstance(description, str):
        raise LineError("description must be text", _line(text, "description"))
    plan = Plan(body, _ARGS, lambda m: ARGS)
    appended = not plan.keys
    if appended:  # Gemini then adds what the user typed, command and all, after a blank line
        plan.parts += [APPEND, ""]

    def resolve(values: Mapping[str, Any]) -> dict[str, str]:
        given = str(values.get("args", ""))
        return {ARGS: given, APPEND: f"\n\n/{gemini_name} {given}" if given else ""}

    argument = make_argument("args", description="the text after the command ({{args}})")
    settings = {k: v for k, v in table.items() if k not in ("prompt", "description")}
    return text_prompt(name, rel, "gemini", plan, resolve, description=description, arguments=(argument,),
                       settings=settings, line=lambda key: _line(text, key))
