"""Templates: Jinja2 in a sandbox, bounded in time and output, compiled once and lazily.

A template that only substitutes names (``Hello {{ name }}``) skips Jinja
entirely: it is split once at load and rendered with a join. Jinja itself is
imported only when a template needs it, and such a template compiles on first
use (or at load, when asked to validate) and is cached on the template.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..protocol.errors import InternalError, McpError
from . import composition
from .composition import TemplateUses, count_load, template_uses
from .limits import MAX_OUTPUT_CHARS, MAX_RENDER_SECONDS
from .sandbox import (
    RenderLimitError,
    check_call,
    check_concat,
    check_format,
    check_plus,
    constant_bombs,
    guard_filters,
)

if TYPE_CHECKING:
    from jinja2.environment import Template
    from jinja2.sandbox import SandboxedEnvironment


_SIMPLE = re.compile(r"\{\{-?\s*([A-Za-z_][A-Za-z0-9_]*)\s*-?\}\}")
_JINJA_MARK = re.compile(r"\{[{%#]")
_NEWLINES = re.compile(r"\r\n|\r")
_LITERALS = frozenset({"true", "false", "none", "True", "False", "None"})
#: Words a template that composes must hold (``composition.template_uses``): includes, imports, ``prompt()``,
#: ``read()``.
_COMPOSES = re.compile(r"include|import|prompt|read")

#: The deadline of the render on this thread, as ``at``: the per-thread state composition reads too.
_deadline = composition.state


class TemplateSyntax(Exception):
    """A template does not parse; ``lineno`` is relative to the template."""

    def __init__(self, message: str, lineno: int) -> None:
        super().__init__(message)
        self.message = message
        self.lineno = lineno


class EnvironmentSource(Protocol):
    """Whatever hands out the (lazily made) Jinja environment of a library."""

    @property
    def env(self) -> SandboxedEnvironment: ...


_environment_class: type[SandboxedEnvironment] | None = None
_undefined: type[Any] | None = None


def _undefined_class() -> type[Any]:
    """Jinja's ``StrictUndefined``, but false in a test: ``{% if mood %}`` on an optional argument the client
    left out is the branch not taken, as an author expects, where strict it failed every render that left it
    out (and ``check`` passed it). Printing it, comparing it or calling it still fails, naming the argument;
    names no argument declares are ``check``'s to refuse."""
    global _undefined
    if _undefined is None:
        from jinja2 import StrictUndefined

        class FalsyStrictUndefined(StrictUndefined):
            __slots__ = ()

            def __bool__(self) -> bool:  # type: ignore[override]  # strict fails here; we answer False
                return False

        _undefined = FalsyStrictUndefined
    return _undefined


def make_environment(globals_: Mapping[str, Any] | None = None, *, literal_reads: bool = False) \
        -> SandboxedEnvironment:
    """A sandboxed environment whose every call (``range``, filters, …) checks the render deadline. With
    ``literal_reads``, its ``read`` is told (``READ_LITERAL``) when a template wrote its path as a literal."""
    global _environment_class

    if _environment_class is None:
        from jinja2 import nodes
        from jinja2.sandbox import ImmutableSandboxedEnvironment
        from jinja2.visitor import NodeTransformer

        class GuardTree(NodeTransformer):
            """Route loops and ``~`` through guards that check the deadline and the output size."""

            def __init__(self, literal_reads: bool) -> None:
                self.literal_reads = literal_reads

            def visit_For(self, node: nodes.For) -> nodes.Node:  # noqa: N802 - the visitor's naming
                self.generic_visit(node)
                # Loops run no calls of their own, so nested loops over a precomputed range would
                # otherwise never look at the clock.
                node.iter = nodes.Call(nodes.Name(_LOOP_GUARD, "load"), [node.iter], [], None, None,
                                       lineno=node.lineno)
                return node

            def visit_Concat(self, node: nodes.Concat) -> nodes.Node:  # noqa: N802
                self.generic_visit(node)
                return nodes.Call(nodes.Name(_CONCAT_GUARD, "load"), list(node.nodes), [], None, None,
                                  lineno=node.lineno)

            def _partial(self, node: Any) -> nodes.Node:
                self.generic_visit(node)
                # A partial named by an expression is held to the library's rule for such names (material
                # folders only) when the render reaches it; a literal name was checked with the template.
                if not isinstance(node.template, nodes.Const):
                    node.template = nodes.Call(nodes.Name(_PARTIAL_GUARD, "load"), [node.template], [], None,
                                               None, lineno=node.lineno)
                return node  # type: ignore[no-any-return]

            visit_Include = visit_Import = visit_FromImport = _partial  # noqa: N815

            def visit_Call(self, node: nodes.Call) -> nodes.Node:  # noqa: N802
                self.generic_visit(node)
                # The read gate (``files.paths``): ``read`` reads a path an expression names under the strict
                # rule unless told the author wrote it here, as a literal string and nothing else. Any other
                # call (an expression, ``read`` under another name, spread arguments) keeps the strict rule.
                node.kwargs = [k for k in node.kwargs if k.key != READ_LITERAL]
                if self.literal_reads and isinstance(node.node, nodes.Name) and node.node.name == "read" \
                        and len(node.args) == 1 and isinstance(node.args[0], nodes.Const) \
                        and isinstance(node.args[0].value, str) \
                        and not node.kwargs and node.dyn_args is None and node.dyn_kwargs is None:
                    node.kwargs = [nodes.Keyword(READ_LITERAL, nodes.Const(True), lineno=node.lineno)]
                return node

        # Immutable: a template cannot grow a list in place (``l.extend(l)`` doubles it per call).
        class BoundedEnvironment(ImmutableSandboxedEnvironment):
            #: whether ``read("…")`` of a literal is marked so (``make_environment``)
            literal_reads = False

            # Intercepted operators go through call_binop at render time, where sizes are checked.
            intercepted_binops = frozenset({"**", "*", "+", "%"})

            def _parse(self, source: str, name: str | None, filename: str | None) -> Any:
                return GuardTree(self.literal_reads).visit(super()._parse(source, name, filename))

            def _compile(self, source: str, filename: str) -> Any:
                # Jinja's hook for turning its generated Python into code; see ``_compile_apart``.
                if len(source) <= COMPILE_APART_BYTES:
                    return super()._compile(source, filename)
                return _compile_apart(source, filename)

            def make_globals(self, d: Any) -> Any:
                # Jinja chains a template's globals to the environment's (a ChainMap), and every render copies
                # that into its context key by key in Python: about 5,000 instructions a global here, so each
                # template function (``read``, ``prompt``) made every render of the library slower. These
                # globals are all set in ``make_environment``, before any template is made: a plain dict holds
                # the same names and is copied in C.
                return {**self.globals, **(d or {})}

            def get_template(self, name: Any, parent: Any = None, globals: Any = None) -> Any:  # noqa: A002
                # Every include, import and from-import of a render comes here, also from a cached template:
                # counted, and its nesting measured, against the one composed render's bounds.
                _check_deadline()
                count_load(_template_depth())
                # A partial compiles on its first load, within the compile deadline as any template does.
                return _with_compile_deadline(
                    lambda: ImmutableSandboxedEnvironment.get_template(self, name, parent, globals))

            def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
                _check_deadline()
                args = check_call(__obj, args, kwargs)
                return super().call(__context, __obj, *args, **kwargs)

            def wrap_str_format(self, value: Any) -> Any:
                # Jinja hands out its own sandboxed str.format at attribute access; check widths there.
                wrapped = super().wrap_str_format(value)
                if wrapped is None:
                    return None
                template = value.__self__

                def checked(*args: Any, **kwargs: Any) -> Any:
                    check_format(template)
                    return wrapped(*args, **kwargs)

                return checked

            def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
                _check_deadline()
                if operator == "**" and isinstance(right, int | float) and abs(right) > 1000:
                    raise RenderLimitError("exponent larger than 1000 in a template")
                if operator == "*":
                    for seq, count in ((left, right), (right, left)):
                        if isinstance(seq, str | list | tuple) and isinstance(count, int) \
                                and len(seq) * count > MAX_OUTPUT_CHARS:
                            raise RenderLimitError("repetition longer than the output limit")
                elif operator == "+":
                    check_plus(left, right)
                elif operator == "%" and isinstance(left, str):
                    check_format(left)
                return super().call_binop(context, operator, left, right)

        _environment_class = BoundedEnvironment
    # optimized=False: Jinja would otherwise fold constant expressions (a huge format, a long
    # repetition) while compiling, where none of the checks above run.
    env = _environment_class(undefined=_undefined_class(), autoescape=False, keep_trailing_newline=False,
                             optimized=False, extensions=[_clocked_lexing()])
    env.literal_reads = literal_reads  # type: ignore[attr-defined]
    guard_filters(env.filters)
    env.globals.pop("lipsum", None)  # lorem ipsum of any length, made in one call
    env.globals[_LOOP_GUARD] = _guarded
    env.globals[_CONCAT_GUARD] = _concat
    env.globals[_PARTIAL_GUARD] = _no_dynamic_partials
    if globals_:
        env.globals.update(globals_)
    return env


_LOOP_GUARD = "_promptdeck_loop"
_CONCAT_GUARD = "_promptdeck_concat"
#: The check a partial named by an expression passes at render (the library sets its own: ``files.partials``).
PARTIAL_GUARD = _PARTIAL_GUARD = "_promptdeck_partial"
#: The keyword a ``read("…")`` of a literal string is given when its template compiles (and only then).
READ_LITERAL = "_promptdeck_literal"


def _no_dynamic_partials(name: object) -> object:
    raise RenderLimitError("this environment includes no partials named by an expression")


def _template_depth() -> int:
    """How many Jinja templates are rendering on this thread's stack: the rendered prompt's, the partials
    included in it, and the templates of prompts it composes (each is a ``root`` function of a module Jinja
    generated, which holds ``debug_info``). Walked only when a partial loads, never on a plain render."""
    import sys

    depth = 0
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "root" and "debug_info" in frame.f_globals:
            depth += 1
        frame = frame.f_back  # type: ignore[assignment]
    return depth

#: How much CPU time compiling one template may take: lexing, parsing and generating code run in Python on
#: whatever thread compiles (a render thread on a server), and a 1 MiB template takes about 6 s here.
#: CPU time, not time on the clock: a machine busy with other work stretches a compile several times over,
#: and a template ``check`` accepts on an idle machine must not be refused on a loaded one.
MAX_COMPILE_SECONDS = 20.0
#: The child compiler's clock bound, as a multiple of its CPU limit: only a machine this busy is waited for.
_APART_WALL_FACTOR = 10
#: Generated code larger than this is compiled by a child process (``_compile_apart``).
COMPILE_APART_BYTES = 256 * 1024
_compiling = threading.local()

#: The child's whole program: Python source in, its code object out (marshal: the same interpreter reads it).
#: It first limits its own CPU time to argv[2] seconds (the kernel stops it with SIGXCPU past them).
_COMPILER = ("import marshal, sys\n"
             "try:\n    import resource\nexcept ImportError:\n    resource = None\n"
             "if resource is not None:\n"
             "    resource.setrlimit(resource.RLIMIT_CPU, (int(sys.argv[2]), int(sys.argv[2]) + 1))\n"
             "sys.stdout.buffer.write(marshal.dumps(compile(sys.stdin.buffer.read(), sys.argv[1], 'exec')))\n")


@functools.cache
def _clocked_lexing() -> type:
    """A Jinja extension that looks at the compile deadline as the lexer hands out tokens. The parser
    pulls tokens one by one, so this bounds lexing and parsing, the bulk of a compile, in time."""
    from jinja2.ext import Extension

    class ClockedLexing(Extension):
        def filter_stream(self, stream: Any) -> Any:
            for n, token in enumerate(stream):
                if not n & 1023:
                    _check_compile_deadline()
                yield token

    return ClockedLexing


def _compile_too_long() -> RenderLimitError:
    return RenderLimitError(f"compiling the template took longer than {MAX_COMPILE_SECONDS:g} s of CPU time")


def _check_compile_deadline() -> None:
    limit = getattr(_compiling, "at", None)
    if limit is not None and time.thread_time() > limit:
        raise _compile_too_long()


def _compile_apart(source: str, filename: str) -> Any:
    """``compile(source)`` in a child process of this interpreter, within what is left of the deadline
    (whole seconds of the child's CPU time, at least one).

    CPython's ``compile`` holds the GIL for its whole run, 0.9 s for a 1 MB template's generated code
    here, and a thread cannot be stopped: on a server that stalled every other request meanwhile. A
    child compiles without holding our GIL and can be stopped; it runs nothing but ``compile``, isolated
    (``-I -S``) from the environment and site packages.
    """
    import marshal
    import math
    import signal
    import subprocess
    import sys

    limit = getattr(_compiling, "at", None)
    seconds = max(1, math.ceil(MAX_COMPILE_SECONDS if limit is None else limit - time.thread_time()))
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", _COMPILER, filename, str(seconds)],
                              input=source.encode(), capture_output=True, timeout=seconds * _APART_WALL_FACTOR,
                              check=False)
    except subprocess.TimeoutExpired:
        raise _compile_too_long() from None
    xcpu = getattr(signal, "SIGXCPU", None)  # POSIX: the signal its CPU limit stops it with
    if xcpu is not None and done.returncode == -xcpu:
        raise _compile_too_long()
    if done.returncode != 0:
        last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
        raise RenderLimitError(f"compiling the template failed: {last[0][:200]}")
    return marshal.loads(done.stdout)


def _with_compile_deadline(compile_: Callable[[], Any]) -> Any:
    """``compile_()`` with the compile deadline set on this thread (a template compiled inside another
    one's compile keeps the outer deadline)."""
    if getattr(_compiling, "at", None) is not None:
        return compile_()
    _compiling.at = time.thread_time() + MAX_COMPILE_SECONDS
    try:
        return compile_()
    finally:
        _compiling.at = None


def literal_calls(tree: Any) -> tuple[tuple[str, str, int], ...]:
    """Calls of a global function whose first argument is a literal string, e.g. ``read("a.md")``."""
    from jinja2 import nodes

    return tuple((call.node.name, call.args[0].value, call.lineno) for call in tree.find_all(nodes.Call)
                 if isinstance(call.node, nodes.Name) and call.args and isinstance(call.args[0], nodes.Const)
                 and isinstance(call.args[0].value, str))


def _concat(*parts: Any) -> str:
    """What ``~`` does (``str`` of each part, joined), once the total size is known to fit."""
    check_concat(parts)
    return "".join(part if isinstance(part, str) else str(part) for part in parts)


def _guarded(iterable: Any) -> Any:
    """Yield from ``iterable``, checking the render deadline every 256 items."""
    for n, item in enumerate(iterable):
        if not n & 255:
            _check_deadline()
        yield item


def _check_deadline() -> None:
    limit = getattr(_deadline, "at", None)
    if limit is not None and time.monotonic() > limit:
        raise RenderLimitError(f"rendering took longer than {MAX_RENDER_SECONDS} s")


#: For engines other than Jinja (dotpromptz's Handlebars) that promptdeck makes look at the clock: raises
#: ``RenderLimitError`` once the deadline ``run_bounded`` set on this thread has passed, else nothing.
check_deadline = _check_deadline


class TemplateText:
    """One template string: a fast substitution plan, or Jinja compiled on first use.

    Whether it is simple is known at once (``simple``); its plan is made on its first render. A large library
    holds a template per message and renders few of them: the plan (a list and a string per part) was about
    half of what a loaded prompt held."""

    __slots__ = ("source", "line", "literal_calls", "uses", "_plan", "_compiled", "_envs")

    def __init__(self, source: str, envs: EnvironmentSource, line: int = 1) -> None:
        self.source = source
        self.line = line
        self._envs = envs
        self._compiled: Template | None = None
        #: None: not simple (Jinja renders it); ``_UNPLANNED``: simple, its plan not made yet; else the plan
        self._plan: list[str] | tuple[()] | None = _UNPLANNED if _is_simple(source) else None
        #: (function, text, line) of each call like ``read("notes.md")``, known once compiled
        self.literal_calls: tuple[tuple[str, str, int], ...] = ()
        #: the partials, files and prompts it names (``composition.template_uses``), known once compiled
        self.uses: TemplateUses | None = None

    def _planned(self) -> list[str]:
        """The plan of a simple template, made now if not yet: literal text and names alternating,
        [text, name, text, name, text]. Like Jinja's lexer, literal text gets \\n for every newline sequence,
        and one trailing newline is dropped (keep_trailing_newline=False)."""
        plan = self._plan
        if plan:
            return plan
        plan = _SIMPLE.split(self.source)
        plan[::2] = [_NEWLINES.sub("\n", text) for text in plan[::2]]
        if plan[-1].endswith("\n"):
            plan[-1] = plan[-1][:-1]
        self._plan = plan  # two threads may both make it: equal lists, either is kept
        return plan

    @property
    def simple(self) -> bool:
        """Whether rendering is a join of text and values, with no Jinja to run."""
        return self._plan is not None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(_SIMPLE.findall(self.source)) if self._plan is not None else ()

    @property
    def plan(self) -> tuple[str, ...] | None:
        """When ``simple``, what ``render`` joins: literal text and names alternating (``prompts.plain``)."""
        return tuple(self._planned()) if self._plan is not None else None

    def compile(self) -> frozenset[str]:
        """Compile now and return the names the template reads from outside (``TemplateSyntax`` if bad)."""
        if self._plan is not None:
            return frozenset(self.names)
        from jinja2 import TemplateSyntaxError, meta

        env = self._envs.env

        def compile_() -> frozenset[str]:
            tree = env.parse(self.source)
            bomb = constant_bombs(tree)
            if bomb is not None:
                raise TemplateSyntax(bomb[0], bomb[1])
            self.literal_calls = literal_calls(tree)
            # Walked only for a template whose text could compose: most never name any of these.
            self.uses = template_uses(tree) if _COMPOSES.search(self.source) else None
            names = frozenset(meta.find_undeclared_variables(tree)) - set(env.globals)
            if self._compiled is None:
                self._compiled = env.from_string(tree)
            return names

        try:
            names: frozenset[str] = _with_compile_deadline(compile_)
        except TemplateSyntaxError as exc:
            raise TemplateSyntax(exc.message or str(exc), exc.lineno or 1) from None
        except TemplateSyntax:
            raise
        except RenderLimitError as exc:
            raise TemplateSyntax(str(exc), 1) from None
        except Exception as exc:  # unknown filters, bad constants, ...: the author's mistake, not a crash
            raise TemplateSyntax(f"{type(exc).__name__}: {exc}", getattr(exc, "lineno", None) or 1) from None
        return names

    def render(self, values: Mapping[str, Any]) -> str:
        plan = self._plan
        if plan is not None:
            if not plan:
                plan = self._planned()
            if len(plan) == 1:
                return plan[0]
            parts = plan[:]
            for i in range(1, len(plan), 2):
                try:
                    parts[i] = _to_text(values[plan[i]])
                except KeyError:
                    # Same words as Jinja's StrictUndefined, so both paths fail alike.
                    raise RenderFailure(f"'{plan[i]}' is undefined") from None
            if sum(map(len, parts)) > MAX_OUTPUT_CHARS:
                raise RenderLimitError(f"rendered text is longer than {MAX_OUTPUT_CHARS} characters")
            return "".join(parts)
        if self._compiled is None:
            self._compiled = _with_compile_deadline(lambda: self._envs.env.from_string(self.source))
        chunks: list[str] = []
        size = 0
        for chunk in self._compiled.generate(values):
            size += len(chunk)
            if size > MAX_OUTPUT_CHARS:
                raise RenderLimitError(f"rendered text is longer than {MAX_OUTPUT_CHARS} characters")
            chunks.append(chunk)
        return "".join(chunks)


#: ``TemplateText._plan`` of a simple template whose plan is not made yet: empty, so false, as no plan is.
_UNPLANNED: tuple[()] = ()
#: What a simple template may hold (``_is_simple``): substitutions, and the marks that make it Jinja's.
_SUBSTITUTION_OR_MARK = re.compile(_SIMPLE.pattern + r"|\{[{%#]")


def _is_simple(source: str) -> bool:
    """Whether ``source`` only substitutes names: no Jinja mark (``{{``, ``{%``, ``{#``) but in a substitution
    ``{{ name }}``, no whitespace control, no literal (Jinja reads ``true``/``none`` as values), and no brace
    next to a substitution (``{{{ x }}}`` is a syntax error in Jinja). One scan: a mark left where the text
    between substitutions meets (``{`` + ``{{ x }}`` + ``#``) has a brace next to a substitution."""
    if "-}}" in source or "{{-" in source:
        return False
    if "{" not in source:
        return True
    for match in _SUBSTITUTION_OR_MARK.finditer(source):
        name = match.group(1)
        if name is None or name in _LITERALS or source[match.start() - 1:match.start()] == "{" \
                or source[match.end():match.end() + 1] == "}":
            return False
    return True


class RenderFailure(Exception):
    """A fast-path template named an undefined value."""


def _to_text(value: Any) -> str:
    # Jinja prints values with str(); the fast path must print exactly the same.
    return value if isinstance(value, str) else str(value)


def run_bounded(fn: Callable[[], Any], prompt: str) -> Any:
    """Run ``prompt``'s render under the time limit; any fault becomes ``InternalError`` with a logged reason.

    ``McpError`` passes through: a missing file named by an argument is the client's -32602. A render nested
    in another (a composed prompt, ``composition``) keeps the outer one's deadline and budgets.
    """
    if composition.nesting and getattr(_deadline, "at", None) is not None:
        return _run_nested(fn, prompt)
    _deadline.at = time.monotonic() + MAX_RENDER_SECONDS
    try:
        return fn()
    except McpError:
        raise
    except Exception as exc:  # templates fail in many ways (Jinja, sandbox, filters); all are ours
        raise InternalError(f"prompt {prompt!r}: {type(exc).__name__}: {exc}") from exc
    finally:
        _deadline.at = None


composition.BOUNDED_CODE = run_bounded.__code__


def _run_nested(fn: Callable[[], Any], prompt: str) -> Any:
    try:
        return fn()
    except McpError:
        raise
    except Exception as exc:
        raise InternalError(f"prompt {prompt!r}: {type(exc).__name__}: {exc}") from exc


__all__ = ["TemplateText", "TemplateSyntax", "make_environment", "run_bounded", "check_deadline",
           "RenderLimitError", "MAX_RENDER_SECONDS", "PARTIAL_GUARD", "READ_LITERAL"]
