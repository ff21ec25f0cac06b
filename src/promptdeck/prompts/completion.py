"""Argument completion for ``completion/complete``: enum, examples, default, library files, hooks."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import islice
from typing import Any

from ..protocol.errors import InternalError, InvalidParams
from .arguments import MISSING, _show
from .spec import Completer, Prompt

MAX_VALUES = 100
#: How many suggestions a hook may offer before we stop asking it for more.
MAX_CANDIDATES = 10_000


def complete(prompt: Prompt, argument: object, value: object, context: Mapping[str, Any] | None,
             hook: Completer | None = None) -> dict[str, Any]:
    """The ``completion`` object: at most 100 values, best first, with ``total`` and ``hasMore``.

    ``hook``, when given, replaces the prompt's own suggestions for this argument.
    """
    if not isinstance(argument, str):
        raise InvalidParams('"argument.name" must be a string')
    if not isinstance(value, str):
        raise InvalidParams('"argument.value" must be a string')
    arg = prompt.argument(argument)
    if arg is None:
        raise InvalidParams(f"prompt {prompt.name!r} has no argument {argument!r}",
                            {"prompt": prompt.name, "argument": argument})
    filled = {k: v for k, v in (context or {}).items() if isinstance(k, str) and isinstance(v, str)}
    hook = hook or prompt.completers.get(argument)
    candidates: list[str]
    if hook is not None:
        try:
            candidates = [str(c) for c in islice(hook(value, filled), MAX_CANDIDATES)]
        except Exception as exc:  # a user hook may fail in any way; the client gets a generic error
            raise InternalError(f"completer for {prompt.name}/{argument} failed: {exc!r}") from exc
    else:
        candidates = [_show(v) for v in arg.enum] if arg.enum is not None else []
        candidates += arg.examples
        if arg.default is not MISSING:
            candidates.append(_show(arg.default))
    seen: set[str] = set()
    exact: list[str] = []
    loose: list[str] = []
    folded = value.casefold()
    for c in candidates:
        if c in seen:
            continue
        seen.add(c)
        if c.startswith(value):
            exact.append(c)
        elif c.casefold().startswith(folded):
            loose.append(c)
    matches = exact + loose
    result: dict[str, Any] = {"values": matches[:MAX_VALUES], "total": len(matches),
                              "hasMore": len(matches) > MAX_VALUES}
    return result
