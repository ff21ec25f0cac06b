"""The bounds promptdeck puts around Google's ``dotpromptz``, which has none of its own (issue 28).

dotpromptz's Handlebars engine is pure Python and recursive: inline partials that each include the last
ten times make a 900-byte file render gigabytes, and partials that include themselves twice spend
minutes making nothing. Its async API wants an event loop, and its helpers include ``log``, which prints
to standard output (the MCP channel on stdio). What it lacks is added here, as a thin layer:

- every piece of text the engine renders is counted against the output limit, and the render deadline
  is looked at on each step, through a wrapper around the engine's one recursive render function (the
  engine calls it by its module name for every block, partial and loop item, so one wrapper sees all);
- a partial's indentation, which repeats per line, is counted before it is applied;
- the rendered text is checked before dotpromptz splits it into messages with a regular expression
  that is quadratic in unclosed ``<<<dotprompt:section`` markers;
- ``json`` keeps its indent to 10, as JavaScript's ``JSON.stringify`` does; ``log`` writes nothing;
- its coroutines run on an event loop of their own: in the calling thread, or, when that thread runs a
  loop already (where ``asyncio.run`` refuses), on a thread of their own, waited for as long as the
  render's own bounds let it run.

The engine is imported only when a library holds a ``.prompt`` file (about half a second).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ....prompts.limits import MAX_OUTPUT_CHARS
from ....prompts.render import check_deadline
from ....prompts.sandbox import RenderLimitError
from ....protocol.errors import LineError

T = TypeVar("T")
#: JSON.stringify's largest indent; the ``json`` helper's is clamped to it, so it cannot pad without end.
_MAX_JSON_INDENT = 10
#: What dotpromptz's media and section markers start with: its splitting regex scans the rest of the line
#: for ``>>>`` once per unclosed one.
_MARKER = "<<<dotprompt:"

_log = logging.getLogger("promptdeck.dotprompt")
_installed = threading.Lock()
_state = threading.local()


class _Budget:
    """What one render has produced so far: ``spent`` characters, and the text of the renders in progress."""

    __slots__ = ("spent", "nested")

    def __init__(self) -> None:
        self.spent = 0
        #: per render call in progress, the characters its inner render calls returned
        self.nested: list[int] = []

    def spend(self, chars: int) -> None:
        self.spent += chars
        if self.spent > MAX_OUTPUT_CHARS:
            raise RenderLimitError(f"rendered text is longer than {MAX_OUTPUT_CHARS} characters")


def library() -> Any:
    """``dotpromptz``, with the bounds above installed in its engine (once)."""
    try:
        import dotpromptz
        import dotpromptz_handlebars._render as engine
    except ImportError:
        from ....extras import needs  # the command that works from a clone: not on PyPI

        raise LineError(needs("reading dotprompt files", "dotprompt"),
                          1) from None
    with _installed:
        if not getattr(engine, "_promptdeck_bounded", False):
            _bound(engine)
    return dotpromptz


def _bound(engine: Any) -> None:
    # dotpromptz is pinned below 0.3; a later engine without these names is refused rather than run unbounded.
    if not all(callable(getattr(engine, name, None)) for name in ("_render", "_apply_indent")):
        raise LineError("this version of dotpromptz is not supported: promptdeck cannot bound its renders", 1)
    render: Callable[..., str] = engine._render
    indent: Callable[[str, str], str] = engine._apply_indent

    def counted(nodes: Any, **env: Any) -> str:
        budget: _Budget | None = getattr(_state, "budget", None)
        if budget is None:  # a render that is not promptdeck's (tests using dotpromptz directly)
            return render(nodes, **env)
        check_deadline()
        budget.nested.append(0)
        try:
            text = render(nodes, **env)
        finally:
            inner = budget.nested.pop()
        # Only what this call added to what its inner calls returned is new: the text, once.
        budget.spend(max(0, len(text) - inner))
        if budget.nested:
            budget.nested[-1] += len(text)
        else:
            _check_markers(text)
        return text

    def indented(text: str, prefix: str) -> str:
        budget: _Budget | None = getattr(_state, "budget", None)
        if budget is not None and prefix and budget.spent + text.count("\n") * len(prefix) > MAX_OUTPUT_CHARS:
            raise RenderLimitError(f"rendered text is longer than {MAX_OUTPUT_CHARS} characters")
        return indent(text, prefix)

    engine._render = counted
    engine._apply_indent = indented
    engine._promptdeck_bounded = True


def _check_markers(text: str) -> None:
    """Refuse text on which dotpromptz's marker regex would scan more than the output limit.

    Each marker start not closed by ``>>>`` later on its line costs a scan to the line's end."""
    if _MARKER not in text:
        return
    cost = 0
    for line in text.split("\n"):
        if _MARKER in line:
            tail = line[line.rfind(">>>") + 3:] if ">>>" in line else line
            cost += tail.count(_MARKER) * len(tail)
    if cost > MAX_OUTPUT_CHARS:
        raise RenderLimitError("rendered text holds too many unclosed <<<dotprompt: markers")


def bounded(run: Callable[[], T]) -> T:
    """``run`` (a dotpromptz render on this thread) with its output counted against the limit."""
    _state.budget = _Budget()
    try:
        return run()
    finally:
        _state.budget = None


def complete(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of a dotpromptz coroutine, on an event loop of its own (call it through ``anywhere``).

    Configured with no resolvers and no store, dotpromptz waits on nothing, but anyio (which it uses to
    resolve schemas) insists on a running loop."""
    import asyncio

    return asyncio.run(coroutine)


def anywhere(work: Callable[[], T]) -> T:
    """``work()`` in this thread, or on a thread of its own when this one runs an event loop, where
    ``asyncio.run`` refuses (a store's check on the server's loop). Waiting for it is bounded as ``work`` is:
    its renders by ``run_bounded``'s deadline, its parsing by the file's size."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return work()
    with ThreadPoolExecutor(1, thread_name_prefix="promptdeck-dotprompt") as own:
        return own.submit(work).result()


def engine(dotpromptz: Any, partials: dict[str, str] | None = None) -> Any:
    """A ``Dotprompt`` with its unbounded helpers replaced; ``partials``: the library's, by name."""
    from dotpromptz.helpers import json_helper

    def json(params: list[Any], options: Any) -> Any:
        indent = options.hash.get("indent")
        if indent is not None:
            try:
                options.hash["indent"] = max(0, min(int(indent), _MAX_JSON_INDENT))
            except (TypeError, ValueError):
                pass  # json_helper reads a non-number as no indent
        return json_helper(params, options)

    def log(params: list[Any], options: Any) -> str:
        _log.debug("dotprompt log: %s", " ".join(map(str, params)))
        return ""

    return dotpromptz.Dotprompt(helpers={"json": json, "log": log}, partials=partials)


#: ``{{`` and a run of blanks: dotpromptz's partial-finding regex backtracks over such a run in cubic time.
_BLANK_TAG = re.compile(r"\{\{[\s~#]{17}")


def check_tags(body: str) -> int | None:
    """The offset in ``body`` of a tag that opens with more than 16 blanks, or None."""
    found = _BLANK_TAG.search(body)
    return found.start() if found else None
