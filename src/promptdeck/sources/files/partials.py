"""Partials: the library files templates include and import (``{% include %}``, ``{% import %}``,
``{% from … import %}``), read through the same confinement as ``read()`` (docs/prompt-files.md,
Composition).

A partial is a material file of the library: any file that is not a prompt file (so a ``.md`` in a folder
whose name starts with ``_``, such as ``_partials/``, or a ``.j2``/``.txt`` anywhere), not hidden, UTF-8,
of at most ``MAX_PARTIAL_BYTES``; inside the root once its links are followed, a regular file (never a
FIFO or a device), and another prompt's source file never, by its name or by where a link leads. A
partial named by an expression (``{% include "_partials/" ~ tone ~ ".md" %}``) is checked when the render
reaches it and must lie in a material folder, as a ``path`` argument without a pattern must.

``check`` reads every literal target when it compiles the template that names it (``analyze``): a
missing or refused file, a syntax error in the partial (at its own line too), a ``read()`` of the
partial that would fail, an include cycle, nesting deeper than ``MAX_NESTING`` and an include bomb are
the including template's problems, at its line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...prompts.composition import MAX_INCLUDES, MAX_NESTING, Call, template_uses
from ...prompts.spec import Offered
from ...protocol.errors import InvalidParams
from .paths import LibraryRoot, Origin, is_prompt_path

if TYPE_CHECKING:  # for type checking only: making a Protocol class costs the import about a millisecond
    from typing import Protocol

    from jinja2.sandbox import SandboxedEnvironment

    class TemplateFolder(Protocol):
        """What composing needs of a library (``library.TemplateFolder``, which imports this module)."""

        root: LibraryRoot
        lookup: Callable[[str], Offered | None] | None

        @property
        def env(self) -> SandboxedEnvironment: ...


#: The largest partial: a template that big is already a lot to compile (``render.MAX_COMPILE_SECONDS``).
MAX_PARTIAL_BYTES = 256 * 1024
_ANY = re.compile(".*", re.DOTALL)


class PartialProblem(Exception):
    """A literal partial that a render could not use: the message names it (and its line when inside it)."""


class Partial:
    """What ``check`` learnt of one partial and all it includes."""

    __slots__ = ("files", "calls", "dynamic", "loads", "height")

    def __init__(self, files: frozenset[str], calls: tuple[Call, ...], dynamic: bool, loads: int,
                 height: int) -> None:
        self.files = files
        self.calls = calls
        self.dynamic = dynamic
        #: how many partials one render of it loads (itself not counted), loops aside
        self.loads = loads
        #: how many levels of partials lie below it
        self.height = height


def _refuse(name: str, dynamic: bool) -> None:
    """The rules on a partial's name itself (where its links lead is held to the same in ``read_partial``)."""
    parts = name.split("/") if isinstance(name, str) else []
    if ".." in parts or name.startswith("/"):
        raise InvalidParams(f"partial {name!r} must be a relative path that stays inside the library")
    if any(part.startswith(".") for part in parts):
        raise InvalidParams(f"partial {name!r} is hidden; templates include material files only")
    if isinstance(name, str) and is_prompt_path(name):
        raise InvalidParams(f"partial {name!r} is a prompt file; include its text with prompt({_stem(name)!r}) "
                            "instead, or move the shared part to a material folder such as _partials/")
    if dynamic and not any(part.startswith("_") for part in parts[:-1]):
        raise InvalidParams(f"partial {name!r} is named by an expression and is not in a material folder (one "
                            "whose name starts with '_'); name it literally, or move it to such a folder")


def _stem(rel: str) -> str:
    return rel.rsplit(".", 1)[0].replace("/", ".")


def read_partial(library: TemplateFolder, name: str, dynamic: bool = False) -> str:
    """The text of the partial ``name``, or ``InvalidParams`` saying why it may not be one."""
    if not isinstance(name, str):
        raise InvalidParams(f"a partial is named by text, got {type(name).__name__}")
    _refuse(name, dynamic)
    root = library.root
    try:
        # The read gate: inside the root, not hidden nor a prompt file where links lead, the access rule; an
        # expression's partial in a material folder only (``_refuse`` says so in a partial's own words first).
        real = root.gate(name, Origin.EXPRESSION if dynamic else Origin.TYPED, _ANY)
    except InvalidParams as exc:
        raise InvalidParams(exc.message.replace("file ", "partial ", 1).replace("arguments may not", "a template "
                                                                                  "may not include"),
                            exc.data, detail=exc.detail) from None
    _refuse(root.below(real), dynamic)
    try:
        return root.read_text(name, MAX_PARTIAL_BYTES)
    except InvalidParams as exc:
        raise InvalidParams(exc.message.replace("file ", "partial ", 1), exc.data, detail=exc.detail) from None


def dynamic_partial(library: TemplateFolder) -> Callable[[object], object]:
    """The render-time check of a partial named by an expression (``render.PARTIAL_GUARD``)."""

    def check(name: object) -> object:
        names = name if isinstance(name, list | tuple) else [name]
        for one in names:
            if not isinstance(one, str):
                raise InvalidParams(f"a partial is named by text, got {type(one).__name__}")
            _refuse(one, True)
        return name

    return check


_loader_class: type | None = None


def make_loader(library: TemplateFolder) -> Any:
    """A Jinja loader of ``library``'s partials; a partial changed since it was compiled is read again."""
    global _loader_class
    if _loader_class is None:
        from jinja2 import BaseLoader, TemplateNotFound

        class PartialLoader(BaseLoader):
            def __init__(self, library: TemplateFolder) -> None:
                self.library = library

            def get_source(self, environment: Any, template: str) -> tuple[str, str, Callable[[], bool]]:
                try:
                    text = read_partial(self.library, template)
                except InvalidParams as exc:
                    if "does not exist" in exc.message:
                        raise TemplateNotFound(template, exc.message) from None
                    raise
                root = self.library.root
                path = os.path.join(str(root.root), template)
                seen = _stamp(path)

                def uptodate() -> bool:
                    if _stamp(path) != seen:
                        return False
                    # Compiled once, but its access rule is the reading prompt's (a skill's file may be
                    # restricted): asked again on every load, as ``read()`` asks on every read.
                    root.gate(template, Origin.LITERAL)
                    return True

                return text, template, uptodate

        _loader_class = PartialLoader
    return _loader_class(library)


def _stamp(path: str) -> tuple[str, int, int] | None:
    """Where ``path`` leads, and that file's change time and size: a partial whose stamp moved is read again."""
    try:
        real = os.path.realpath(path)
        info = os.stat(real)
    except OSError:
        return None
    return real, info.st_mtime_ns, info.st_size


def analyze(library: TemplateFolder, name: str, chain: tuple[str, ...], memo: dict[str, Partial]) -> Partial:
    """What a render of the literal partial ``name`` pulls in, checked; ``chain``: the including files, the
    prompt file first. ``PartialProblem`` for the first problem found, naming the partial and its line."""
    if name in chain:
        raise PartialProblem("include cycle: " + " → ".join([*chain[chain.index(name):], name]))
    if len(chain) >= MAX_NESTING:
        raise PartialProblem(f"partials nest deeper than {MAX_NESTING} levels: " + " → ".join([*chain, name]))
    known = memo.get(name)
    if known is not None:
        if len(chain) + known.height >= MAX_NESTING:
            raise PartialProblem(f"partials nest deeper than {MAX_NESTING} levels below "
                                 + " → ".join([*chain, name]))
        return known
    try:
        text = read_partial(library, name)
    except InvalidParams as exc:
        raise PartialProblem(exc.detail or exc.message) from None
    from jinja2 import TemplateSyntaxError

    try:
        tree = library.env.parse(text, name, name)
    except TemplateSyntaxError as exc:
        raise PartialProblem(f"partial {name!r} line {exc.lineno}: {exc.message}") from None
    except Exception as exc:  # the compile bounds, an odd constant: the partial's fault, at its first line
        raise PartialProblem(f"partial {name!r}: {type(exc).__name__}: {exc}") from None
    found = template_uses(tree)
    files = {name}
    calls = list(found.calls)
    dynamic = found.dynamic
    for path, line in found.reads:
        try:
            library.root.gate(path, Origin.LITERAL)
        except InvalidParams as exc:
            raise PartialProblem(f"partial {name!r} line {line}: read({path!r}): {exc.detail or exc.message}") \
                from None
        files.add(path)
    loads = height = 0
    for target, line in found.partials:
        try:
            inner = analyze(library, target, (*chain, name), memo)
        except PartialProblem as exc:
            if str(exc).startswith(("include cycle", "partials nest", "includes load")):
                raise
            raise PartialProblem(f"partial {name!r} line {line}: {exc}") from None
        files |= inner.files
        calls += inner.calls
        dynamic = dynamic or inner.dynamic
        loads += 1 + inner.loads
        height = max(height, 1 + inner.height)
        if loads > MAX_INCLUDES:
            raise PartialProblem(f"includes load more than {MAX_INCLUDES} partials in one render (an include "
                                 f"bomb): {' → '.join([*chain, name])}")
    memo[name] = result = Partial(frozenset(files), tuple(calls), dynamic, loads, height)
    return result
