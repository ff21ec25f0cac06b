"""Claude Code commands (``.claude/commands/**/*.md``) and skills (``.claude/skills/NAME/SKILL.md``).

Both are Markdown with optional YAML front matter, and Claude Code substitutes the same placeholders in
both: ``$ARGUMENTS`` (everything typed after the command), ``$ARGUMENTS[N]`` and ``$N`` (the N-th word,
from 0), and ``$name`` for the names listed in ``arguments:``. How each becomes an MCP argument is in
docs/native-formats.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ....prompts.arguments import make_argument
from ....prompts.skills import SkillSpecError, skill_scopes
from ....prompts.spec import Prompt
from ....protocol.errors import LineError
from ..frontmatter import key_line
from ._common import Markdown, Plan, check_name, first_line, positional_arguments, text_prompt

#: ``$ARGUMENTS[N]``, ``$ARGUMENTS``, ``$N`` (one digit: ``$100`` is a price, not the 100th word), ``$name``.
_TOKEN = re.compile(r"\$ARGUMENTS(?:\[(\d+)\])?|\$([0-9])(?![0-9])|\$([A-Za-z_][A-Za-z0-9_-]*)")
_ARG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
#: Positions that become MCP arguments: ``$0`` to ``$9``.
MAX_POSITIONS = 10
ALL = "$A"  # the key of $ARGUMENTS in a plan
APPEND = "$+"  # where a body without placeholders gets "ARGUMENTS: …"
RAW_ARGUMENT = "arguments"  # the one MCP argument of a command that takes no words by position


def read_command(rel: str, text: str) -> Prompt:
    """``.claude/commands/a/b.md`` is the prompt ``a.b``."""
    stem = rel[len(".claude/commands/"):-len(".md")]
    name = check_name(stem.replace("/", "."), None, f"from the path {rel}")
    return _read(rel, text, "claude-command", name, name_key=None)


def read_skill(rel: str, text: str) -> Prompt:
    """``.claude/skills/NAME/SKILL.md`` (or ``skills/NAME/SKILL.md``) is the prompt ``NAME``, or the ``name:``
    its front matter gives. Its scopes are the skill's (``prompts.skills.skill_scopes``): a skill hidden from
    someone is hidden as a prompt too."""
    folder = rel.split("/")[-2]
    return _read(rel, text, "claude-skill", folder, name_key="name")


def _read(rel: str, text: str, kind: str, name: str, name_key: str | None) -> Prompt:
    doc = Markdown(text)
    meta, body, line = doc.meta, doc.body, doc.line
    scopes = None
    if kind == "claude-skill":
        try:
            scopes = skill_scopes(meta)
        except SkillSpecError as exc:
            raise LineError(str(exc), key_line(doc.front, exc.key)) from None
    if name_key is not None and name_key in meta:
        name = check_name(meta[name_key], line(name_key), f"{name_key}: in the front matter")
    else:
        name = check_name(name, None, f"from the path {rel}")
    description = doc.text("description") or first_line(body)
    hint = _hint(meta.get("argument-hint"), line("argument-hint"))
    named = _named(meta.get("arguments"), line("arguments"))
    plan = Plan(body, _TOKEN, lambda match: _key(match, named))
    used = plan.keys
    positions = max([len(named), *(int(k[1:]) + 1 for k in used if k[0] == "#" and int(k[1:]) < MAX_POSITIONS)])
    if not used:  # Claude Code then adds what was typed at the end
        plan.parts = [plan.parts[0].rstrip("\n"), APPEND, ""]
    settings = {k: v for k, v in meta.items() if k not in ("description", name_key)}
    if positions == 0:
        argument = make_argument(RAW_ARGUMENT, description=hint or "the text after the command ($ARGUMENTS)")

        def resolve_raw(values: Mapping[str, Any]) -> dict[str, str]:
            given = str(values.get(RAW_ARGUMENT, ""))
            return {ALL: given, APPEND: f"\n\nARGUMENTS: {given}" if given else ""}

        return text_prompt(name, rel, kind, plan, resolve_raw, description=description, arguments=(argument,),
                           settings=settings, line=line, scopes=scopes)
    arguments = positional_arguments(positions, named, hint, line("arguments"), first=0)
    wire = [a.name for a in arguments]

    def resolve(values: Mapping[str, Any]) -> dict[str, str]:
        words = [str(values.get(n, "")) for n in wire]
        while words and not words[-1]:
            words.pop()
        out = {f"#{i}": word for i, word in enumerate(words)}
        out.update((f"@{n}", words[i]) for i, n in enumerate(named) if i < len(words))
        out[ALL] = " ".join(words)
        return out

    return text_prompt(name, rel, kind, plan, resolve, description=description, arguments=arguments,
                       settings=settings, line=line, scopes=scopes)


def _key(match: re.Match[str], named: list[str]) -> str | None:
    index, digit, word = match.groups()
    if word is not None:
        return f"@{word}" if word in named else None
    if digit is not None:
        return f"#{digit}"
    if index is not None:
        return f"#{int(index)}" if len(index) < 6 else "#-"  # far past any word given: empty
    return ALL


def _hint(raw: object, line: int | None) -> str | None:
    """``argument-hint`` as text. Unquoted, ``[pr-number]`` is a YAML list of one word: Claude Code shows it
    as the words, so it is read back as ``[pr-number]``; anything else that is not text is refused."""
    if raw is None or isinstance(raw, str):
        return raw
    if isinstance(raw, list) and all(isinstance(word, str) for word in raw):
        return " ".join(f"[{word}]" for word in raw)
    raise LineError("argument-hint must be text: quote it (argument-hint: \"[name] [value]\")", line)


def _named(raw: object, line: int | None) -> list[str]:
    """The names of ``arguments:`` (a list, or one line of words), in order."""
    if raw is None:
        return []
    names = raw.split() if isinstance(raw, str) else raw
    if not isinstance(names, list) or not all(isinstance(n, str) and _ARG_NAME.match(n) for n in names):
        raise LineError("arguments must be a list of names (letters, digits, '_' and '-')", line)
    if len(set(names)) != len(names):
        raise LineError("arguments names a name twice", line)
    return names
