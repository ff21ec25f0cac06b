"""Argument completion for ``completion/complete``: enum, examples, default, library files, hooks."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Iterable, Mapping
from itertools import islice
from typing import Any

from ..protocol.errors import InternalError, InvalidParams, McpError
from .arguments import MISSING, value_text
from .spec import Completer, Prompt

MAX_VALUES = 100
#: How many suggestions a hook may offer before we stop asking it for more.
MAX_CANDIDATES = 10_000
#: How long an async completer may take before the request is answered with an error.
HOOK_SECONDS = 10.0


class Suggestions(list[str]):
    """What a completer returns when it has chosen and ordered the values itself (another server's
    answer): they are served as they are, not filtered by the typed prefix, with the hook's ``total``
    and ``has_more``."""

    def __init__(self, values: Iterable[str], total: int | None = None, has_more: bool = False) -> None:
        super().__init__(values)
        self.total = total
        self.has_more = has_more


def complete(prompt: Prompt, argument: object, value: object, context: Mapping[str, Any] | None,
             hook: Completer | None = None) -> dict[str, Any] | Awaitable[dict[str, Any]]:
    """The ``completion`` object: at most 100 values, best first, with ``total`` and ``hasMore``; an
    awaitable of it when the completer is async.

    ``hook``, when given, replaces the prompt's own suggestions for this argument.
    """
    if not isinstance(argument, str):
        raise InvalidParams('"argument.name" must be a string')
    if not isinstance(value, str):
        raise InvalidParams('"argument.value" must be a string')
    arg = prompt.argument(argument)
    if arg is None:  # "did you mean", as for a prompt's name: a typo is the likely cause
        from .catalog import close_names

        suggestions = close_names(argument, [a.name for a in prompt.arguments])
        hint = f"; did you mean {' or '.join(map(repr, suggestions))}?" if suggestions else \
            f" (it takes: {', '.join(a.name for a in prompt.arguments) or 'none'})"
        raise InvalidParams(f"prompt {prompt.name!r} has no argument {argument!r}{hint}",
                            {"prompt": prompt.name, "argument": argument, "suggestions": suggestions})
    filled = {k: v for k, v in (context or {}).items() if isinstance(k, str) and isinstance(v, str)}
    hook = hook or prompt.completers.get(argument)
    if hook is None:
        candidates = [value_text(v) for v in arg.enum] if arg.enum is not None else []
        candidates += arg.examples
        if arg.default is not MISSING:
            candidates.append(value_text(arg.default))
        return _ranked(candidates, value)
    where = f"completer for {prompt.name}/{argument}"
    try:
        found = hook(value, filled)
        if inspect.isawaitable(found):
            return _awaited(found, value, where)
        return _ranked(_taken(found), value)
    except McpError:  # the hook's own answer to the client (another server's -32602, say)
        raise
    except Exception as exc:  # a user hook may fail in any way; the client gets a generic error
        raise InternalError(f"{where} failed: {exc!r}") from exc


async def _awaited(pending: Awaitable[Iterable[str]], value: str, where: str) -> dict[str, Any]:
    # Here, not at the top: this module is on the stdio start-up path, which runs without asyncio (~10 ms
    # and ssl, socket, subprocess with it; issue 29). Only an async completer gets here, on a running loop.
    import asyncio

    try:
        async with asyncio.timeout(HOOK_SECONDS):
            found = await pending
        return _ranked(_taken(found), value)
    except McpError:
        raise
    except TimeoutError:
        raise InternalError(f"{where} did not answer within {HOOK_SECONDS:g} s") from None
    except Exception as exc:
        raise InternalError(f"{where} failed: {exc!r}") from exc


def _taken(found: Iterable[str]) -> list[str]:
    if isinstance(found, Suggestions):
        return Suggestions((str(c) for c in found[:MAX_CANDIDATES]), found.total, found.has_more)
    return [str(c) for c in islice(found, MAX_CANDIDATES)]


def _ranked(candidates: list[str], value: str) -> dict[str, Any]:
    """At most ``MAX_VALUES`` of the candidates that start with ``value``: exact case first, then any case."""
    if isinstance(candidates, Suggestions):
        values = candidates[:MAX_VALUES]
        total = candidates.total if (candidates.total or 0) >= len(values) else len(candidates)
        return {"values": values, "total": total, "hasMore": candidates.has_more or len(candidates) > MAX_VALUES}
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
    return {"values": matches[:MAX_VALUES], "total": len(matches), "hasMore": len(matches) > MAX_VALUES}
