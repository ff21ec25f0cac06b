"""What every reader of another tool's format shares: literal substitution plans, ``_meta``, the prompt.

Bodies of these formats are never Jinja templates: they may hold ``{{`` or ``{%`` as text, which must
come out as written. A reader cuts its body once, at load, into a plan of literal text and
placeholders; a render looks every placeholder up in one pass (so a value that itself looks like a
placeholder is never substituted again) and checks the total size before joining.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping
from typing import Any

from ....prompts.arguments import Argument, make_argument
from ....prompts.execution import LIGHT
from ....prompts.limits import MAX_OUTPUT_CHARS
from ....prompts.render import run_bounded
from ....prompts.sandbox import RenderLimitError
from ....prompts.spec import META_MODEL as META_MODEL
from ....prompts.spec import NAME_RE, Prompt, RenderContext
from ....protocol.content import Message, Text
from ....protocol.errors import LineError
from ..frontmatter import line_of_key, read_front_matter, split_front_matter

#: The format a prompt was read from, in its ``_meta`` (``promptdeck``'s own files carry none).
META_FORMAT = "promptdeck.dev/format"
#: Deepest nesting kept when front matter values are published: YAML is bounded to 32 levels already.
_MAX_JSON_DEPTH = 32


class Plan:
    """A body cut into ``[text, key, text, key, …, text]``: literal text and the placeholders between.

    ``keys`` are whatever the reader's ``resolve`` maps to text at render time.
    """

    __slots__ = ("parts",)

    def __init__(self, body: str, pattern: re.Pattern[str], key: Callable[[re.Match[str]], str | None]) -> None:
        parts: list[str] = []
        text_start = 0
        for match in pattern.finditer(body):
            found = key(match)
            if found is None:  # looks like a placeholder, is text in this format
                continue
            parts.append(body[text_start:match.start()])
            parts.append(found)
            text_start = match.end()
        parts.append(body[text_start:])
        self.parts = parts

    @property
    def keys(self) -> list[str]:
        return self.parts[1::2]

    def render(self, resolved: Mapping[str, str]) -> str:
        """The body with every placeholder replaced from ``resolved`` (a missing key: empty), in one pass,
        refused before joining if longer than the output limit."""
        parts = self.parts[:]
        for i in range(1, len(parts), 2):
            parts[i] = resolved.get(parts[i], "")
        if sum(map(len, parts)) > MAX_OUTPUT_CHARS:
            raise RenderLimitError(f"rendered text is longer than {MAX_OUTPUT_CHARS} characters")
        return "".join(parts)


class Markdown:
    """A Markdown prompt file split: its front matter (text and mapping), body, and where the body starts."""

    __slots__ = ("front", "meta", "body", "body_line")

    def __init__(self, text: str) -> None:
        front, self.body, self.body_line = split_front_matter(text)
        self.meta: dict[str, Any] = read_front_matter(front) if front is not None else {}
        self.front = front or ""

    def line(self, key: str) -> int | None:
        """The line of the top-level front matter ``key``."""
        return line_of_key(self.front, key)

    def text(self, key: str) -> str | None:
        """The text under ``key``, None when absent, ``LineError`` at its line when it is not text."""
        value = self.meta.get(key)
        if value is not None and not isinstance(value, str):
            raise LineError(f"{key} must be text", self.line(key))
        return value

    def body_line_of(self, offset: int) -> int:
        """The file's line of the character at ``offset`` in the body."""
        return self.body_line + self.body.count("\n", 0, offset)


def json_safe(value: Any, depth: int = 0) -> Any:
    """A front matter value as JSON can carry it: dates as ISO text, mapping keys as text."""
    if depth > _MAX_JSON_DEPTH:
        return None
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [json_safe(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): json_safe(v, depth + 1) for k, v in value.items()}
    return str(value)


def check_name(name: object, line: int | None, origin: str) -> str:
    """``name`` if it is a valid prompt name, else ``LineError`` saying where it came from."""
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise LineError(f"prompt name {name!r} ({origin}) is not valid: use letters, digits, '_', '-' and '.', "
                          f"at most 128", line)
    return name


def first_line(body: str) -> str | None:
    """The first non-blank line of a body: the description some tools show when none is given."""
    for line in body.splitlines():
        if line.strip() and line.strip() != "---":  # a front matter's fence that a tool sends as text
            return line.strip()
    return None


def _no_line(_key: str) -> int | None:
    return None


def text_prompt(name: str, rel: str, kind: str, plan: Plan, resolve: Callable[[Mapping[str, Any]], Mapping[str, str]],
                *, description: str | None, arguments: tuple[Argument, ...], settings: Mapping[str, Any],
                title: str | None = None, line: Callable[[str], int | None] = _no_line,
                scopes: frozenset[str] | None = None) -> Prompt:
    """A prompt of one user message: ``plan`` rendered with what ``resolve`` makes of the argument values.

    ``settings``: the file's other keys, published in ``_meta``; but ``scopes`` (a list, or one line of
    names), which restricts the prompt as in promptdeck's own files (``line`` finds a key's line), unless
    the reader found them itself (``scopes``)."""
    settings = dict(settings)
    found = pop_scopes(settings, line)
    scopes = found if scopes is None else scopes

    def render(values: dict[str, Any], ctx: RenderContext) -> list[Message]:
        def run() -> list[Message]:
            text = plan.render(resolve(values))
            return [Message("user", Text(text))] if text.strip() else []

        return run_bounded(run, ctx.prompt)  # type: ignore[no-any-return]

    meta: dict[str, Any] = {META_FORMAT: kind}
    if settings:
        meta[META_MODEL] = {str(k): json_safe(v) for k, v in settings.items()}
    return Prompt(name, render, title=title, description=description, arguments=arguments, source=rel, work=LIGHT,
                  scopes=scopes, meta=meta)


def pop_scopes(settings: dict[str, Any], line: Callable[[str], int | None]) -> frozenset[str]:
    """Take ``scopes`` (a list, or one line of names) out of a file's settings: who may see the prompt."""
    scopes = settings.pop("scopes", None) or []
    if isinstance(scopes, str):
        scopes = scopes.split()
    if not isinstance(scopes, list) or not all(isinstance(x, str) and x and " " not in x for x in scopes):
        raise LineError("scopes must be a list of scope names", line("scopes"))
    return frozenset(scopes)


_HINT_WORD = re.compile(r"\[([^\[\]]+)\]")
_MCP_ARGUMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def positional_arguments(count: int, named: list[str], hint: str | None, line: int | None, *,
                         first: int) -> tuple[Argument, ...]:
    """One optional MCP argument per word position, the first one numbered ``first`` (``$0`` or ``$1``):
    named by ``named`` (``-`` becomes ``_``), else by the ``[word]`` of ``hint`` at that position, else
    ``argN``. A hint word with choices (``[high|low]``) names nothing and offers its choices to completion."""
    words = [w.strip() for w in _HINT_WORD.findall(hint or "")]
    out: list[Argument] = []
    taken: set[str] = set()
    for i in range(count):
        number = i + first
        word = words[i] if i < len(words) else None
        choices = [c.strip() for c in word.split("|") if c.strip()] if word and "|" in word else []
        candidates = [named[i].replace("-", "_")] if i < len(named) else []
        if word and not choices:
            candidates.append(re.sub(r"[\s-]+", "_", word))
        candidates.append(f"arg{number}")
        wire = next((c for c in candidates if _MCP_ARGUMENT.match(c) and c not in taken), None)
        if wire is None or (i < len(named) and wire != candidates[0]):
            raise LineError(f"argument {named[i] if i < len(named) else number!r} gives the MCP argument name "
                              f"{candidates[0]!r}, which another argument has", line)
        taken.add(wire)
        what = named[i] if i < len(named) else word or f"word {number} of the arguments"
        out.append(make_argument(wire, description=f"{what} (${number})", examples=choices))
    return tuple(out)
