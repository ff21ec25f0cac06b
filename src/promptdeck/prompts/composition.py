"""What a prompt composes, and the bounds one composed render runs under (docs/prompt-files.md, Composition).

A template composes in two ways: a partial (``{% include %}``, ``{% import %}``, ``{% from … import %}``
of a library file) and another prompt (``prompt(NAME, **ARGUMENTS)`` in a template, or a role line
``user: {prompt: NAME}`` bringing its messages whole). ``Uses`` is what a prompt built from a file
composes by literal target, found when its templates compile; ``templates_uses`` reads it off a Jinja
syntax tree. The graph of the library (who uses whom) is made of these.

A composed render is one render: its nested renders share the outer one's deadline (``render.run_bounded``
sets it once per thread), the characters they make are counted against one budget (``spend``), and
nesting, of partials and of prompts together, stops at ``MAX_NESTING`` levels (``entering``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from .limits import MAX_OUTPUT_CHARS

#: How deep partials and composed prompts may nest in one render, the rendered prompt's own template being
#: level 0: ``a`` including ``_p.md`` that calls ``prompt("b")`` is two levels.
MAX_NESTING = 8
#: How many partials one composed render may load (a loop including a partial loads it once per item): past
#: this, an include bomb is stopped before the output limit or the deadline would stop it.
MAX_INCLUDES = 1000
#: How many renders of other prompts one render may make, counted by ``check`` over literal ``prompt()``
#: calls (each call site, times the count of a ``range(N)`` or literal list it loops over): a fan-out of
#: calls would otherwise pass ``check`` and fail every render at the deadline.
MAX_COMPOSED_RENDERS = 1000


class Call:
    """A literal ``prompt("NAME", …)`` call (or a role line ``{prompt: NAME}``) in a template: the name, the
    argument names given (None when they are not all literal, as with ``**values``), its line in the file,
    and how many times one render makes it as far as the template says (the loops of known length around it).
    (A plain class, not a NamedTuple, whose making costs the import about a millisecond.)"""

    __slots__ = ("name", "arguments", "line", "times")

    def __init__(self, name: str, arguments: frozenset[str] | None, line: int, times: int = 1) -> None:
        self.name = name
        self.arguments = arguments
        self.line = line
        self.times = times

    def at(self, line: int) -> Call:
        """The same call, at ``line`` (of the including file)."""
        return Call(self.name, self.arguments, line, self.times)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Call) and (self.name, self.arguments, self.line, self.times) == \
            (other.name, other.arguments, other.line, other.times)

    def __hash__(self) -> int:
        return hash((self.name, self.arguments, self.line, self.times))

    def __repr__(self) -> str:
        return f"Call({self.name!r}, {self.arguments!r}, {self.line}, {self.times})"


class Uses:
    """What a prompt built from a file composes, by literal target, once its templates are compiled.

    ``files``: library-relative paths of every file it pulls in: include/import/from targets (through the
    partials it includes, transitively) and ``read()`` targets. ``prompts``: the names of the prompts it
    composes by literal name (``prompt(…)`` and the role-line form). ``dynamic``: whether some target is
    an expression (a partial named by a variable, ``prompt(name)``, ``read(path)``), known only at render.
    ``calls``: each literal prompt call with its line, what ``check`` validates.
    """

    __slots__ = ("files", "prompts", "dynamic", "calls")

    def __init__(self, files: frozenset[str] = frozenset(), prompts: frozenset[str] = frozenset(),
                 dynamic: bool = False, calls: tuple[Call, ...] = ()) -> None:
        self.files = files
        self.prompts = prompts
        self.dynamic = dynamic
        self.calls = calls

    def __bool__(self) -> bool:
        return bool(self.files or self.prompts or self.dynamic)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Uses) and (self.files, self.prompts, self.dynamic, self.calls) == \
            (other.files, other.prompts, other.dynamic, other.calls)

    def __hash__(self) -> int:
        return hash((self.files, self.prompts, self.dynamic, self.calls))

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, "calls"):  # set once, in __init__
            raise AttributeError("Uses is immutable")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return f"Uses(files={sorted(self.files)}, prompts={sorted(self.prompts)}, dynamic={self.dynamic})"

    @staticmethod
    def union(parts: Iterable[Uses]) -> Uses:
        parts = [p for p in parts if p]
        if not parts:
            return NO_USES
        if len(parts) == 1:
            return parts[0]
        return Uses(frozenset().union(*(p.files for p in parts)), frozenset().union(*(p.prompts for p in parts)),
                    any(p.dynamic for p in parts), tuple(c for p in parts for c in p.calls))


#: A prompt that composes nothing (every prompt not built from a file, and most that are).
NO_USES = Uses()


class TemplateUses:
    """What one template's syntax tree names: partials, ``read()`` files and prompt calls by literal target
    (each with its line in the template), and whether any target is an expression."""

    __slots__ = ("partials", "reads", "calls", "dynamic")

    def __init__(self, partials: tuple[tuple[str, int], ...], reads: tuple[tuple[str, int], ...],
                 calls: tuple[Call, ...], dynamic: bool) -> None:
        self.partials = partials
        self.reads = reads
        self.calls = calls
        self.dynamic = dynamic


def template_uses(tree: Any) -> TemplateUses:
    """The ``TemplateUses`` of a parsed Jinja template."""
    from jinja2 import nodes

    partials: list[tuple[str, int]] = []
    reads: list[tuple[str, int]] = []
    calls: list[Call] = []
    dynamic = False
    times = _loop_counts(tree, nodes)
    for node in tree.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Call)):  # one walk
        if not isinstance(node, nodes.Call):
            target = node.template
            # ``{% include "x" ignore missing %}`` may name a file that is not there: known only at render.
            if isinstance(target, nodes.Const) and isinstance(target.value, str) \
                    and not getattr(node, "ignore_missing", False):
                partials.append((target.value, node.lineno))
            else:
                dynamic = True
            continue
        if not isinstance(node.node, nodes.Name) or node.node.name not in ("read", "prompt"):
            continue
        first = node.args[0] if node.args else None
        if not isinstance(first, nodes.Const) or not isinstance(first.value, str):
            dynamic = True
            continue
        if node.node.name == "read":
            reads.append((first.value, node.lineno))
        else:
            literal = node.dyn_args is None and node.dyn_kwargs is None and len(node.args) == 1
            calls.append(Call(first.value, frozenset(k.key for k in node.kwargs) if literal else None, node.lineno,
                              times.get(id(node), 1)))
    return TemplateUses(tuple(partials), tuple(reads), tuple(calls), dynamic)


def _loop_counts(tree: Any, nodes: Any) -> dict[int, int]:
    """For each call inside ``{% for %}`` loops of a length the template states (``range(N)`` with constant
    arguments, a literal list or tuple), how many times one render makes it: the product of those lengths.
    A loop over anything else counts once: its length is known only at render, which the deadline bounds."""
    counts: dict[int, int] = {}
    for loop in tree.find_all(nodes.For):
        length = _length(loop.iter, nodes)
        if length is None or length == 1:
            continue
        for body in loop.body:
            for call in body.find_all(nodes.Call):
                counts[id(call)] = counts.get(id(call), 1) * length
    return counts


def _length(iterable: Any, nodes: Any) -> int | None:
    # The sandbox wraps every loop's iterable in its guard (``render.GuardTree``): look through it.
    while isinstance(iterable, nodes.Call) and isinstance(iterable.node, nodes.Name) \
            and iterable.node.name.startswith("_promptdeck") and len(iterable.args) == 1:
        iterable = iterable.args[0]
    if isinstance(iterable, nodes.List | nodes.Tuple):
        return len(iterable.items)
    if isinstance(iterable, nodes.Call) and isinstance(iterable.node, nodes.Name) and iterable.node.name == "range" \
            and 0 < len(iterable.args) <= 3 and not iterable.kwargs \
            and all(isinstance(a, nodes.Const) and type(a.value) is int for a in iterable.args):
        try:
            return len(range(*(a.value for a in iterable.args)))
        except (ValueError, OverflowError):
            return None
    return None


# -- one composed render ----------------------------------------------------------------------------------

#: The render running on this thread: ``at`` is its deadline, set by ``render.run_bounded`` for the outermost
#: render (and read by ``render`` through this same object), None between renders; ``run`` its composition,
#: made when it first composes. A render that composes nothing sets nothing here but the deadline it always set.
state = _state = threading.local()
#: How many composed renders are nested in others right now, in any thread (``entering``): while there are
#: none, ``render.run_bounded`` need not look at this thread's state to know that its render is the outermost.
nesting = 0
_counting = threading.Lock()
#: ``render.run_bounded``'s code, whose ``prompt`` names the render on a thread's stack (set by ``render``).
BOUNDED_CODE: object = None


class CompositionError(Exception):
    """A composed render went past a bound, or composed what it may not; becomes -32603 (``run_bounded``)."""


class _Run:
    """The state of one composed render, made when it first composes (most renders never do). ``key`` is the
    render's deadline (``state.at``, a float made for it): a state made for an earlier render is not this one's."""

    __slots__ = ("key", "chain", "spent", "loads")

    def __init__(self, key: float | None, root: str) -> None:
        self.key = key
        self.chain = [root]
        self.spent = 0
        self.loads = 0


def _run() -> _Run:
    current = getattr(_state, "at", None)
    run: _Run | None = getattr(_state, "run", None)
    if run is None or run.key is not current:
        run = _state.run = _Run(current, _outermost())
    return run


def _outermost() -> str:
    """The prompt of the outermost ``run_bounded`` on this thread's stack: read there once a render composes,
    so that a render that does not pays nothing to keep it."""
    import sys

    found = "?"
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is BOUNDED_CODE:
            found = frame.f_locals.get("prompt", found)
        frame = frame.f_back  # type: ignore[assignment]
    return found


def chain() -> list[str]:
    """The prompts being rendered on this thread, outermost first."""
    return _run().chain


class entering:  # lower case: used as a function, ``with entering(name):``
    """A nested render of prompt ``name`` inside the current one: refused past ``MAX_NESTING`` levels (partials
    counted in ``partial_depth``) and when ``name`` is already being rendered (a cycle, named with its chain)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        global nesting
        names = chain()
        if self.name in names:
            raise CompositionError("prompt cycle: " + " → ".join([*names[names.index(self.name):], self.name]))
        if len(names) > MAX_NESTING:
            raise CompositionError(f"composition nests deeper than {MAX_NESTING} levels: "
                                   + " → ".join([*names, self.name]))
        names.append(self.name)
        with _counting:
            nesting += 1

    def __exit__(self, *exc: object) -> None:
        global nesting
        with _counting:
            nesting -= 1
        chain().pop()


def spend(chars: int) -> None:
    """Count ``chars`` of text a nested render made against the one output budget of the composed render."""
    run = _run()
    run.spent += chars
    if run.spent > MAX_OUTPUT_CHARS:
        raise CompositionError(f"the composed render is longer than {MAX_OUTPUT_CHARS} characters")


def count_load(depth: int) -> None:
    """A partial is loaded at nesting ``depth`` (templates on the stack): refused past ``MAX_INCLUDES`` loads
    in this render, or past ``MAX_NESTING`` levels with the prompts nested around it."""
    run = _run()
    run.loads += 1
    if run.loads > MAX_INCLUDES:
        raise CompositionError(f"the render included more than {MAX_INCLUDES} partials")
    if depth > MAX_NESTING:
        raise CompositionError(f"partials nest deeper than {MAX_NESTING} levels")


__all__ = ["MAX_COMPOSED_RENDERS", "MAX_INCLUDES", "MAX_NESTING", "NO_USES", "Call", "CompositionError",
           "TemplateUses", "Uses", "template_uses"]
