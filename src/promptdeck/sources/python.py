"""Prompts defined in Python: a decorated function's signature becomes the prompt's arguments.

    @server.prompt(title="Greet someone")
    def greet(name: str, tone: Literal["warm", "dry"] = "warm") -> str:
        '''Say hello to someone.'''
        return f"Say hello to {name} in a {tone} way."

``str``/``int``/``float``/``bool`` map to argument types, ``Literal[...]`` to an
enum, a default makes the argument optional, and ``Annotated[str, Arg(...)]``
adds a description, pattern, bounds, examples or ``type="path"``. The function
may be async, may take a ``RenderContext`` (any parameter annotated with it),
and returns a string (one user message), a ``Message``, or a list of them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin, get_type_hints

import msgspec

from ..prompts.arguments import ARG_TYPES, MISSING, Argument, SpecError, make_argument
from ..prompts.execution import CODE, LIGHT, check_output
from ..prompts.spec import Completer, Prompt, RenderContext
from ..protocol.content import Audio, Image, Message, Resource, ResourceLink, Text
from ..protocol.errors import InternalError
from . import Source

F = TypeVar("F", bound=Callable[..., Any])

_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


class Arg(msgspec.Struct, frozen=True, kw_only=True):
    """Extra facts about a Python prompt argument, given with ``Annotated[type, Arg(...)]``."""

    description: str | None = None
    title: str | None = None
    type: str | None = None
    pattern: str | None = None
    min: float | None = None
    max: float | None = None
    examples: tuple[str, ...] = ()


def _argument(param: inspect.Parameter, hint: Any) -> Argument:
    extra = Arg()
    if get_origin(hint) is Annotated:
        base, *metadata = get_args(hint)
        extra = next((m for m in metadata if isinstance(m, Arg)), extra)
        hint = base
    enum: list[Any] | None = None
    optional = False
    if get_origin(hint) is not None and type(None) in get_args(hint):
        optional = True
        rest = [a for a in get_args(hint) if a is not type(None)]
        hint = rest[0] if len(rest) == 1 else str
    if get_origin(hint) is Literal:
        enum = list(get_args(hint))
        kinds = {type(v) for v in enum}
        hint = kinds.pop() if len(kinds) == 1 else str
    kind = extra.type or _TYPES.get(hint)
    if kind is None or kind not in ARG_TYPES:
        raise SpecError(f"argument {param.name!r}: type {hint!r} is not one of str, int, float, bool, Literal")
    has_default = param.default is not inspect.Parameter.empty
    return make_argument(
        param.name, description=extra.description, title=extra.title, type=kind, enum=enum,
        required=not has_default and not optional,
        default=param.default if has_default else MISSING,
        pattern=extra.pattern, min=extra.min, max=extra.max, examples=extra.examples,
    )


def _normalize(result: Any, name: str) -> list[Message]:
    if isinstance(result, str):
        return [Message("user", Text(result))]
    if isinstance(result, Message):
        return [result]
    if isinstance(result, Text | Image | Audio | Resource | ResourceLink):
        return [Message("user", result)]
    if isinstance(result, list | tuple):
        out: list[Message] = []
        for item in result:
            out.extend(_normalize(item, name))
        return out
    raise InternalError(f"prompt {name!r} returned {type(result).__name__}; return str, Message or a list")


def prompt_from_function(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    tags: Iterable[str] = (),
    icons: Iterable[dict[str, Any]] = (),
    scopes: Iterable[str] = (),
    completers: dict[str, Completer] | None = None,
) -> Prompt:
    """Build a ``Prompt`` from a function; ``SpecError`` if its signature cannot be an argument list."""
    prompt_name = name or fn.__name__  # as the official SDK names them: the function's own name
    hints = get_type_hints(fn, include_extras=True)
    signature = inspect.signature(fn)
    arguments: list[Argument] = []
    ctx_param: str | None = None
    for param in signature.parameters.values():
        hint = hints.get(param.name, str)
        if hint is RenderContext:
            ctx_param = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise SpecError(f"prompt {prompt_name!r}: *args and **kwargs cannot be prompt arguments")
        if param.kind is param.POSITIONAL_ONLY:
            raise SpecError(f"prompt {prompt_name!r}: {param.name!r} is positional-only; arguments are passed "
                            f"by name")
        arguments.append(_argument(param, hint))
    is_async = inspect.iscoroutinefunction(fn)

    # Optional parameters without a default (``x: str | None``) get None when the client leaves them out.
    implicit_none = {a.name: None for a in arguments if not a.required and a.default is MISSING}

    def render(values: dict[str, Any], ctx: RenderContext) -> Any:
        kwargs = {**implicit_none, **values}
        if ctx_param is not None:
            kwargs[ctx_param] = ctx
        if is_async:
            return _render_async(fn, kwargs, prompt_name)
        return check_output(_normalize(fn(**kwargs), prompt_name), prompt_name)

    doc = inspect.getdoc(fn)
    return Prompt(
        prompt_name, render, title=title, description=description or doc, arguments=tuple(arguments),
        icons=tuple(icons), tags=frozenset(tags), scopes=frozenset(scopes),
        source=f"python:{fn.__module__}.{fn.__qualname__}",
        completers=completers or {}, work=LIGHT if is_async else CODE,
    )


async def _render_async(fn: Callable[..., Any], kwargs: dict[str, Any], name: str) -> list[Message]:
    return check_output(_normalize(await fn(**kwargs), name), name)


class PythonSource(Source):
    """Prompts registered with the ``prompt`` decorator, and completion hooks for any prompt."""

    def __init__(self) -> None:
        self._prompts: dict[str, Prompt] = {}
        self.completers: dict[tuple[str, str], Completer] = {}

    def prompt(self, name: str | None = None, *, title: str | None = None, description: str | None = None,
               tags: Iterable[str] = (), icons: Iterable[dict[str, Any]] = (),
               scopes: Iterable[str] = ()) -> Callable[[F], F]:
        def register(fn: F) -> F:
            built = prompt_from_function(fn, name=name, title=title, description=description, tags=tags,
                                         icons=icons, scopes=scopes)
            self._prompts[built.name] = built
            return fn

        return register

    def add(self, prompt: Prompt) -> None:
        self._prompts[prompt.name] = prompt

    def completer(self, prompt: str, argument: str) -> Callable[[Completer], Completer]:
        def register(fn: Completer) -> Completer:
            self.completers[(prompt, argument)] = fn
            return fn

        return register

    def prompts(self) -> list[Prompt]:
        return list(self._prompts.values())

    def has_prompts(self) -> bool:
        return bool(self._prompts)
