"""Templates: Jinja2 in a sandbox, bounded in time and output, compiled once and lazily.

A template that only substitutes names (``Hello {{ name }}``) skips Jinja
entirely: it is split once at load and rendered with a join, which keeps a
100,000-prompt library loading in seconds. Anything else compiles on first
use (or at load, when asked to validate) and is cached on the template.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import StrictUndefined, TemplateSyntaxError, UndefinedError
from jinja2.environment import Template
from jinja2.exceptions import SecurityError, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from ..protocol.errors import InternalError, McpError

MAX_RENDER_SECONDS = 2.0
MAX_OUTPUT_CHARS = 4 * 1024 * 1024

_SIMPLE = re.compile(r"\{\{-?\s*([A-Za-z_][A-Za-z0-9_]*)\s*-?\}\}")
_JINJA_MARK = re.compile(r"\{[{%#]")

_deadline = threading.local()


class RenderLimitError(TemplateError):
    """A render ran out of time or produced too much text."""


class BoundedEnvironment(SandboxedEnvironment):
    """The sandbox, plus a deadline checked on every call a template makes (``range``, filters, …)."""

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        limit = getattr(_deadline, "at", None)
        if limit is not None and time.monotonic() > limit:
            raise RenderLimitError(f"rendering took longer than {MAX_RENDER_SECONDS} s")
        return super().call(__context, __obj, *args, **kwargs)


def make_environment(globals_: Mapping[str, Any] | None = None) -> BoundedEnvironment:
    env = BoundedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)
    if globals_:
        env.globals.update(globals_)
    return env


class TemplateText:
    """One template string: a fast substitution plan, or Jinja compiled on first use."""

    __slots__ = ("source", "line", "_plan", "_compiled", "_env")

    def __init__(self, source: str, env: BoundedEnvironment, line: int = 1) -> None:
        self.source = source
        self.line = line
        self._env = env
        self._compiled: Template | None = None
        self._plan: list[str] | None = None
        stripped = _SIMPLE.sub("", source)
        if not _JINJA_MARK.search(stripped) and "-}}" not in source and "{{-" not in source:
            # Alternate literal text and names: [text, name, text, name, text].
            self._plan = _SIMPLE.split(source)
            if self._plan[-1].endswith("\n"):
                # Jinja drops one trailing newline (keep_trailing_newline=False); do the same.
                self._plan[-1] = self._plan[-1][:-1]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._plan[1::2]) if self._plan is not None else ()

    def compile(self) -> frozenset[str]:
        """Compile now and return the names the template reads from outside.

        Raises ``TemplateSyntaxError`` with a line relative to this template.
        """
        if self._plan is not None:
            return frozenset(self.names)
        from jinja2 import meta

        tree = self._env.parse(self.source)
        if self._compiled is None:
            self._compiled = self._env.from_string(tree)
        return frozenset(meta.find_undeclared_variables(tree)) - set(self._env.globals)

    def render(self, values: Mapping[str, Any]) -> str:
        plan = self._plan
        if plan is not None:
            if len(plan) == 1:
                return plan[0]
            parts = plan[:]
            for i in range(1, len(plan), 2):
                try:
                    parts[i] = _to_text(values[plan[i]])
                except KeyError:
                    raise UndefinedError(f"'{plan[i]}' is undefined") from None
            return "".join(parts)
        if self._compiled is None:
            self._compiled = self._env.from_string(self.source)
        chunks: list[str] = []
        size = 0
        for chunk in self._compiled.generate(values):
            size += len(chunk)
            if size > MAX_OUTPUT_CHARS:
                raise RenderLimitError(f"rendered text is longer than {MAX_OUTPUT_CHARS} characters")
            chunks.append(chunk)
        return "".join(chunks)


def _to_text(value: Any) -> str:
    # Jinja prints values with str(); the fast path must print exactly the same.
    return value if isinstance(value, str) else str(value)


def run_bounded(fn: Callable[[], Any], what: str) -> Any:
    """Run a render under the time limit; template faults become ``InternalError`` with a logged reason."""
    _deadline.at = time.monotonic() + MAX_RENDER_SECONDS
    try:
        return fn()
    except McpError:
        raise
    except (TemplateError, SecurityError, ValueError, TypeError, ArithmeticError, LookupError,
            RecursionError) as exc:
        raise InternalError(f"{what}: {type(exc).__name__}: {exc}") from exc
    finally:
        _deadline.at = None


__all__ = ["BoundedEnvironment", "TemplateText", "TemplateSyntaxError", "make_environment", "run_bounded",
           "RenderLimitError", "MAX_RENDER_SECONDS"]
