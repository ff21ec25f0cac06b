"""Codex CLI custom prompts: ``.codex/prompts/*.md``, as Codex reads ``~/.codex/prompts``.

Codex reads a small front matter of its own (``key: value`` lines; ``description`` and ``argument-hint``)
rather than YAML, and expands one of two kinds of placeholders: named ones (``$FILE``: capitals, digits
and ``_``), each of which Codex requires, or else ``$1``…``$9`` and ``$ARGUMENTS``. ``$$`` stays as
written in both. How each becomes an MCP argument is in docs/native-formats.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ....prompts.arguments import make_argument
from ....prompts.spec import Prompt
from ..frontmatter import split_front_matter
from ._common import Plan, check_name, first_line, positional_arguments, text_prompt

_NAMED = re.compile(r"(?<!\$)\$([A-Z][A-Z0-9_]*)")
_POSITIONAL = re.compile(r"\$\$|\$([1-9])|\$ARGUMENTS")
ALL = "$A"
RAW_ARGUMENT = "arguments"


def loose_front_matter(front: str) -> dict[str, str]:
    """Codex's reading of a front matter: each ``key: value`` line, quotes around the value dropped;
    other lines ignored. Nothing here is refused, as Codex refuses nothing."""
    out: dict[str, str] = {}
    for line in front.splitlines():
        key, colon, value = line.partition(":")
        if not colon or not key.strip() or line[:1].isspace():
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[key.strip()] = value
    return out


def read(rel: str, text: str) -> Prompt:
    """``.codex/prompts/review.md`` is ``review`` (Codex's ``/prompts:review``)."""
    name = check_name(rel[len(".codex/prompts/"):-len(".md")], None, f"from the path {rel}")
    front, body, _ = split_front_matter(text)
    meta = loose_front_matter(front or "")
    description = meta.get("description") or first_line(body)
    hint = meta.get("argument-hint", meta.get("argument_hint"))
    settings = {k: v for k, v in meta.items() if k != "description"}
    named = list(dict.fromkeys(n for n in _NAMED.findall(body) if n != "ARGUMENTS"))
    if named:
        plan = Plan(body, _NAMED, lambda m: None if m.group(1) == "ARGUMENTS" else m.group(1))
        arguments = tuple(make_argument(n, description=f"${n}", required=True) for n in named)
        return text_prompt(name, rel, "codex", plan, lambda values: {k: str(v) for k, v in values.items()},
                           description=description, arguments=arguments, settings=settings)
    plan = Plan(body, _POSITIONAL, lambda m: None if m.group(0) == "$$" else m.group(1) or ALL)
    count = max((int(k) for k in plan.keys if k != ALL), default=0)
    if count == 0:
        if ALL not in plan.keys:  # no placeholder: Codex sends the file as it is
            return text_prompt(name, rel, "codex", plan, lambda values: {}, description=description, arguments=(),
                               settings=settings)
        argument = make_argument(RAW_ARGUMENT, description=hint or "the words after the command ($ARGUMENTS)")
        return text_prompt(name, rel, "codex", plan, lambda values: {ALL: str(values.get(RAW_ARGUMENT, ""))},
                           description=description, arguments=(argument,), settings=settings)
    arguments = positional_arguments(count, [], hint, None, first=1)
    wire = [a.name for a in arguments]

    def resolve(values: Mapping[str, Any]) -> dict[str, str]:
        words = [str(values.get(n, "")) for n in wire]
        while words and not words[-1]:
            words.pop()
        out = {str(i + 1): word for i, word in enumerate(words)}
        out[ALL] = " ".join(words)
        return out

    return text_prompt(name, rel, "codex", plan, resolve, description=description, arguments=arguments,
                       settings=settings)
