"""A prompt file's ``arguments:`` as its front matter declares them, each problem at its line.

``check`` reports every independent mistake of a file in one run: a bad argument does not hide the
template's unknown variable below it. So when some argument is wrong, the file's templates are still
checked, against the names the list declares (``declared_arguments``).
"""

from __future__ import annotations

import re

from ...prompts.arguments import Argument, SpecError, parse_arguments
from ...protocol.errors import PromptFileError
from .frontmatter import line_of_key


def argument_line(front: str, name: str, *, last: bool = False) -> int | None:
    """Line of the argument declaration ``name: NAME`` (block or flow style; the last one if asked)."""
    declared = re.compile(rf"(?:^|[\s{{,-])name:\s*(?:{re.escape(name)}|\"{re.escape(name)}\"|'{re.escape(name)}')"
                          rf"\s*(?:$|[,}}])")
    found = [i + 2 for i, line in enumerate(front.splitlines()) if declared.search(line)]
    return (found[-1] if last else found[0]) if found else None


def declared_arguments(front: str, raw: object, rel: str, errors: list[PromptFileError]) \
        -> tuple[tuple[Argument, ...] | None, bool]:
    """(the arguments of ``raw``, the front matter's ``arguments``; True) when they are right. Else every
    argument's problem is added to ``errors``, each at its line, and the arguments are the names the list
    declares, each a plain string argument, to check the templates against (False); None when ``raw`` is
    not a list, so names nothing."""
    def problem(exc: SpecError, last: bool = False) -> None:
        found = re.search(r"argument '([^']+)'", str(exc))
        line = argument_line(front, found.group(1), last=last) if found else None
        errors.append(PromptFileError(rel, str(exc), line or line_of_key(front, "arguments")))

    try:
        return parse_arguments(raw), True
    except SpecError as exc:
        if not isinstance(raw, list):
            problem(exc)
            return None, False
        first, before = exc, len(errors)
    seen: dict[str, None] = {}  # in order: the names a template is checked against
    for item in raw:  # one by one, so that each argument's problem is found
        try:
            parse_arguments([item])
        except SpecError as exc:
            problem(exc)
        name = item.get("name") if isinstance(item, dict) else None
        if isinstance(name, str) and name in seen:
            problem(SpecError(f"argument {name!r} is declared twice"), last=True)
        if isinstance(name, str):
            seen[name] = None
    if len(errors) == before:  # a problem of the list as a whole
        problem(first)
    return tuple(Argument(name=name) for name in seen), False
