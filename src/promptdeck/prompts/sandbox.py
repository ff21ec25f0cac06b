"""Size checks made before the sandbox's C-level operations allocate.

Jinja's sandbox stops templates from reaching Python internals, but not from
asking a C function for a huge string in one step: ``'x'.ljust(10**9)``,
``s|replace('', s)``, ``'%0999999999d'|format(1)``, or ``~``/``+`` doubling a
string inside a loop. Each such step is checked here against the output limit
from the sizes of its operands, before it runs, and refused with a
``RenderLimitError`` rather than allocated. Steps that cannot grow their input
(``upper``, ``trim``, ``sort``, …) are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

from .limits import MAX_OUTPUT_CHARS

#: Most groups ``batch`` and ``slice`` may make: the sandbox's own ceiling for ``range``.
MAX_GROUPS = 100_000


class RenderLimitError(Exception):
    """A render ran out of time or would produce too much text."""


def room(size: int, what: str) -> None:
    """Refuse a step whose result would hold ``size`` characters or items."""
    if size > MAX_OUTPUT_CHARS:
        raise RenderLimitError(f"{what} would be longer than the output limit of {MAX_OUTPUT_CHARS} characters")


def _number(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return 0  # not a count: the C function rejects it without allocating
    room(value, what)
    return value


#: What follows a ``%`` (and its ``(key)``, if any): flags, width, precision and length, before the conversion.
_PERCENT_SPEC = re.compile(r"[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?")
_FIELD = re.compile(r"\{[^{}]*\}")
_NESTED = re.compile(r"\{[^{}]*\{")
_DIGITS = re.compile(r"\d+")


def _width_ok(digits: str) -> None:
    if len(digits) > 9 or int(digits) > MAX_OUTPUT_CHARS:
        room(MAX_OUTPUT_CHARS + 1, f"a format width of {digits[:12]}")


def _percent_specs(template: str) -> Iterator[tuple[str | None, str | None]]:
    """(width, precision) of each conversion in a ``%`` template, read as Python reads it: ``%%`` is a
    percent sign, and a mapping key ``(name)``, whose parentheses may nest, comes before the flags (a
    width after a key, ``%(a)0999999999d``, must be found as surely as one without)."""
    at = template.find("%")
    while at != -1:
        at += 1
        if template.startswith("%", at):
            at = template.find("%", at + 1)
            continue
        if template.startswith("(", at):
            depth = 0
            for end in range(at, len(template)):
                depth += {"(": 1, ")": -1}.get(template[end], 0)
                if depth == 0:
                    break
            at = end + 1  # an unclosed key leaves nothing to read: Python refuses such a format
        spec = _PERCENT_SPEC.match(template, at)
        assert spec is not None  # every part of the pattern is optional
        yield spec.group(1), spec.group(2)
        # past the conversion character, which may itself be a "%" ("%5%" is a padded percent sign)
        at = template.find("%", spec.end() + 1)


def check_format(template: object) -> None:
    """Refuse ``%`` and ``str.format`` templates whose widths or precisions exceed the limit.

    A width taken from the arguments (``%*d``, ``{:{}}``) cannot be checked here, so it is refused.
    """
    if not isinstance(template, str):
        return
    for groups in _percent_specs(template):
        for group in groups:
            if group == "*":
                raise RenderLimitError("'*' widths are not allowed in template formats")
            if group is not None:
                _width_ok(group)
    fields = template.replace("{{", "").replace("}}", "")
    if _NESTED.search(fields):
        raise RenderLimitError("nested fields are not allowed in template formats")
    for field in _FIELD.findall(fields):
        for digits in _DIGITS.findall(field.partition(":")[2]):
            _width_ok(digits)


def _text_length(value: Any) -> int:
    return len(value) if isinstance(value, str) else len(str(value))


def check_replace(s: Any, old: Any, new: Any, count: Any = None) -> None:
    text, old, new = str(s), str(old), str(new)
    hits = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
        hits = min(hits, count)
    room(len(text) + hits * (len(new) - len(old)), "replace")


def check_concat(parts: Iterable[Any]) -> None:
    room(sum(_text_length(part) for part in parts), "joining these strings")


def check_plus(left: Any, right: Any) -> None:
    if isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple):
        room(len(left) + len(right), "'+'")


# -- filters ------------------------------------------------------------------------------------------


def _guarded_filter(original: Callable[..., Any], check: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` with ``check`` run on its own arguments first (after any context Jinja passes)."""
    passes_context = hasattr(original, "jinja_pass_arg")

    def guarded(*args: Any, **kwargs: Any) -> Any:
        head, rest = (args[:1], args[1:]) if passes_context else ((), args)
        replaced = check(*rest, **kwargs)
        if replaced is not None:  # the check materialised an iterable: pass on what it read
            rest = (replaced, *rest[1:])
        return original(*head, *rest, **kwargs)

    if passes_context:
        guarded.jinja_pass_arg = original.jinja_pass_arg  # type: ignore[attr-defined]
    return guarded


def _check_join(value: Any, d: Any = "", attribute: Any = None) -> list[Any]:
    items = list(value)
    if attribute is None:
        room(sum(_text_length(item) for item in items) + _text_length(d) * max(len(items) - 1, 0), "join")
    return items


def _check_indent(s: Any, width: Any = 4, first: bool = False, blank: bool = False) -> None:
    pad = len(width) if isinstance(width, str) else _number(width, "indent")
    text = str(s)
    room(len(text) + (text.count("\n") + 1) * pad, "indent")


def _check_wordwrap(s: Any, width: Any = 79, break_long_words: bool = True, wrapstring: Any = None,
                    break_on_hyphens: bool = True) -> None:
    text = str(s)
    breaks = len(text) // max(width if isinstance(width, int) and width > 0 else 1, 1) + text.count(" ")
    room(len(text) + breaks * len(str(wrapstring or "\n")), "wordwrap")


def _check_groups(value: Any, count: Any = 1, fill_with: Any = None) -> None:
    if isinstance(count, int) and count > MAX_GROUPS:
        raise RenderLimitError(f"more than {MAX_GROUPS} groups")


FILTER_CHECKS: Mapping[str, Callable[..., Any]] = {
    "replace": check_replace,
    "format": lambda value, *args, **kwargs: check_format(str(value)),
    "center": lambda value, width=80: room(len(str(value)) + _number(width, "center"), "center"),
    "indent": _check_indent,
    "join": _check_join,
    "wordwrap": _check_wordwrap,
    "batch": _check_groups,
    "slice": _check_groups,
}


def guard_filters(filters: dict[str, Callable[..., Any]]) -> None:
    """Put the size checks in front of the filters that can grow their input (in place)."""
    for name, check in FILTER_CHECKS.items():
        if name in filters:
            filters[name] = _guarded_filter(filters[name], check)
    if "sum" in filters:
        filters["sum"] = _linear_sum(filters["sum"])


def _linear_sum(original: Callable[..., Any]) -> Callable[..., Any]:
    """``sum`` that adds sequences by chaining: one by one, each step copies the growing total,
    which is quadratic in time even when the result is small."""
    from jinja2.filters import make_attrgetter

    def linear_sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
        items = list(iterable)
        if attribute is not None:
            items = list(map(make_attrgetter(environment, attribute), items))
        if isinstance(start, list | tuple):
            room(len(start) + sum(len(item) if isinstance(item, str | list | tuple) else 1 for item in items),
                 "sum")
            return type(start)(chain(start, *items))
        return original(environment, items, start=start)

    linear_sum.jinja_pass_arg = original.jinja_pass_arg  # type: ignore[attr-defined]
    return linear_sum


# -- str methods called from a template ---------------------------------------------------------------


def _width(s: str, width: Any = 0, *_: Any) -> None:
    room(len(s) + _number(width, "padding"), "padding")


STR_METHOD_CHECKS: Mapping[str, Callable[..., Any]] = {
    "ljust": _width, "rjust": _width, "center": _width, "zfill": _width,
    "expandtabs": lambda s, tabsize=8: room(len(s) + s.count("\t") * _number(tabsize, "expandtabs"),
                                            "expandtabs"),
    "replace": check_replace,
    "join": lambda s, items: room(sum(map(_text_length, items)) + len(s) * max(len(items) - 1, 0), "join"),
    "format": lambda s, *args, **kwargs: check_format(s),
    "format_map": lambda s, *args: check_format(s),
}


def check_call(obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Check a call a template makes; returns the arguments to call with (an iterable read once)."""
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, str):
        check = STR_METHOD_CHECKS.get(getattr(obj, "__name__", ""))
        if check is not None:
            if obj.__name__ == "join" and args:
                args = (list(args[0]), *args[1:])
            # Jinja adds its own _loop_vars/_block_vars, which the method never sees.
            check(owner, *args, **{k: v for k, v in kwargs.items() if not k.startswith("_")})
    return args


# -- constant bombs, found when a template compiles --------------------------------------------------


def constant_bombs(tree: Any) -> tuple[str, int] | None:
    """The first step of ``tree`` whose operands are all constants and that would break a limit, as
    (reason, line); so ``promptdeck check`` reports it rather than the first render finding it."""
    from jinja2 import nodes

    def const(node: Any) -> tuple[bool, Any]:
        return (True, node.value) if isinstance(node, nodes.Const) else (False, None)

    def constants(items: Iterable[Any]) -> list[Any] | None:
        values = []
        for item in items:
            known, value = const(item)
            if not known:
                return None
            values.append(value)
        return values

    for node in tree.find_all((nodes.Filter, nodes.Call, nodes.Mul, nodes.Mod, nodes.Pow, nodes.Add)):
        try:
            if isinstance(node, nodes.Filter) and node.name in FILTER_CHECKS and node.node is not None:
                args = constants([node.node, *node.args])
                kwargs = constants(k.value for k in node.kwargs)
                if args is not None and kwargs is not None:
                    FILTER_CHECKS[node.name](*args, **{str(k.key): v for k, v in zip(node.kwargs, kwargs, strict=True)})
            elif isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr):
                owner = constants([node.node.node])
                args = constants(node.args)
                check = STR_METHOD_CHECKS.get(node.node.attr)
                if owner and isinstance(owner[0], str) and args is not None and check is not None:
                    check(owner[0], *args)
            elif isinstance(node, nodes.BinExpr):
                operands = constants([node.left, node.right])
                if operands is not None:
                    left, right = operands
                    if isinstance(node, nodes.Mod) and isinstance(left, str):
                        check_format(left)
                    elif isinstance(node, nodes.Pow) and isinstance(right, int | float) and abs(right) > 1000:
                        raise RenderLimitError("exponent larger than 1000 in a template")
                    elif isinstance(node, nodes.Mul):
                        for seq, count in ((left, right), (right, left)):
                            if isinstance(seq, str | list | tuple) and isinstance(count, int):
                                room(len(seq) * count, "repetition")
        except RenderLimitError as exc:
            return str(exc), node.lineno
        except (TypeError, ValueError):
            continue  # not a call the checks understand; the render will say what is wrong
    return None
