"""A prompt file's ``arguments:`` as its front matter declares them, each problem at its line.

``check`` reports every independent mistake of a file in one run: a bad argument does not hide the
template's unknown variable below it. So when some argument is wrong, the file's templates are still
checked, against the names the list declares (``declared_arguments``). What a prompt is built with from its
arguments (``Declared``) is worked out once per argument list, which many files share.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ...prompts.arguments import MISSING, Argument, SpecError, parse_arguments
from ...prompts.spec import NO_MAPPING, NO_NAMES
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


class Declared:
    """What ``build_prompt`` works out from a prompt's arguments. Argument lists are shared between files
    (``arguments.parse_arguments``) and immutable, and so is this: one per list, not per file."""

    __slots__ = ("arguments", "known", "path_args", "paths", "optional")

    def __init__(self, arguments: tuple[Argument, ...]) -> None:
        #: the list itself, held so that its ``id`` (the key of ``_DECLARED``) stays its own
        self.arguments = arguments
        #: the names a template may use
        self.known = frozenset(a.name for a in arguments)
        paths = tuple(a for a in arguments if a.type == "path")
        #: each ``path`` argument's name and pattern (an empty mapping shared by all lists without one)
        self.path_args: Mapping[str, re.Pattern[str] | None] = {a.name: a.pattern for a in paths} or NO_MAPPING
        self.paths = paths
        #: what a client may leave out that has no default (``render_blocks``)
        self.optional = frozenset(a.name for a in arguments if not a.required and a.default is MISSING) or NO_NAMES


_DECLARED: dict[int, Declared] = {}
_DECLARED_MAX = 4096


def declared_of(arguments: tuple[Argument, ...]) -> Declared:
    """The ``Declared`` of ``arguments``: made once per list (by identity), kept while few lists are in use."""
    found = _DECLARED.get(id(arguments))
    if found is None or found.arguments is not arguments:
        if len(_DECLARED) >= _DECLARED_MAX:
            _DECLARED.clear()
        found = _DECLARED[id(arguments)] = Declared(arguments)
    return found
