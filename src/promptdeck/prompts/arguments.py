"""Typed prompt arguments: declared in front matter or a Python signature, sent as strings.

An ``Argument`` knows how to turn the string a client sends into the declared
type and to check it, so ``prompts/get`` does one precompiled check per value.
"""

from __future__ import annotations

import marshal
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import msgspec

from ..protocol.errors import InvalidParams

ArgType = Literal["string", "integer", "number", "boolean", "path"]
ARG_TYPES: tuple[ArgType, ...] = ("string", "integer", "number", "boolean", "path")
_TRUE = frozenset({"true", "yes", "1", "on"})
_FALSE = frozenset({"false", "no", "0", "off"})
#: Longest argument value accepted, in characters: bounds rendering work per request.
MAX_VALUE_LENGTH = 1_000_000
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class SpecError(ValueError):
    """An argument declaration is wrong; the loader adds the file and line."""


class Argument(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    description: str | None = None
    title: str | None = None
    required: bool = False
    type: ArgType = "string"
    enum: tuple[Any, ...] | None = None
    default: Any = MISSING
    pattern: re.Pattern[str] | None = None
    min: float | None = None
    max: float | None = None
    examples: tuple[str, ...] = ()
    #: the description clients see: the author's text plus type, choices and default
    wire_description: str | None = None

    def convert(self, raw: object) -> Any:
        """The typed value for ``raw`` (a string from the wire), or ``InvalidParams`` naming the rule."""
        if not isinstance(raw, str):
            raise self._bad(f"must be a string on the wire, got {type(raw).__name__}")
        if len(raw) > MAX_VALUE_LENGTH:
            raise self._bad(f"is longer than {MAX_VALUE_LENGTH} characters")
        value: Any
        kind = self.type
        if kind == "string" or kind == "path":
            value = raw
            if self.min is not None and len(raw) < self.min:
                raise self._bad(f"must be at least {_num(self.min)} characters long")
            if self.max is not None and len(raw) > self.max:
                raise self._bad(f"must be at most {_num(self.max)} characters long")
            if kind == "path":
                _check_relative_path(self, raw)
        elif kind == "boolean":
            lowered = raw.strip().lower()
            if lowered in _TRUE:
                value = True
            elif lowered in _FALSE:
                value = False
            else:
                raise self._bad(f"must be true or false, got {raw!r}")
        else:
            try:
                value = int(raw.strip()) if kind == "integer" else float(raw.strip())
            except ValueError:
                raise self._bad(f"must be {'an integer' if kind == 'integer' else 'a number'}, "
                                f"got {_short(raw)}") from None
            if kind == "number" and not math.isfinite(value):
                raise self._bad(f"must be a finite number, got {_short(raw)}")
            if self.min is not None and value < self.min:
                raise self._bad(f"must be at least {_num(self.min)}, got {_num(value)}")
            if self.max is not None and value > self.max:
                raise self._bad(f"must be at most {_num(self.max)}, got {_num(value)}")
        if self.enum is not None and value not in self.enum:
            choices = ", ".join(str(c) for c in self.enum)
            raise self._bad(f"must be one of {choices}; got {_short(raw)}")
        if self.pattern is not None and not self.pattern.fullmatch(raw):
            raise self._bad(f"must match the pattern {self.pattern.pattern!r}; got {_short(raw)}")
        return value

    def _bad(self, rule: str) -> InvalidParams:
        return InvalidParams(f"argument {self.name!r} {rule}", {"argument": self.name})

    def json_schema(self, *, form: bool = False) -> dict[str, Any]:
        """The argument as JSON Schema, the one mapping from a declaration to a schema.

        As published under the prompt's ``_meta`` (and a tool's input schema): every rule it has. With
        ``form``, as a field of an elicitation form, which takes primitive schemas only: an enum's values
        as the text the wire carries, the title a person reads, bounds, and no pattern, default or
        examples (a form may not carry them)."""
        schema: dict[str, Any]
        if form and self.enum is not None:
            schema = {"type": "string", "enum": [wire_text(value) for value in self.enum]}
        else:
            schema = {"type": "string" if self.type == "path" else self.type}
        if self.type == "path" and not form:
            schema["format"] = "path"
        if form and self.title:
            schema["title"] = self.title
        if self.description:
            schema["description"] = self.description
        if self.enum is not None and not form:
            schema["enum"] = list(self.enum)
        if form:
            if self.enum is None:
                number = self.type in ("integer", "number")
                bounds = ("minimum", "maximum") if number else ("minLength", "maxLength")
                for bound, value in zip(bounds, (self.min, self.max), strict=True):
                    if value is not None and self.type != "boolean":
                        schema[bound] = value if number else int(value)
            return schema
        if self.default is not MISSING:
            schema["default"] = self.default
        if self.pattern is not None:
            # JSON Schema patterns search; ours must match the whole value: anchor it for clients.
            schema["pattern"] = f"^(?:{self.pattern.pattern})$"
        bounds = ("minLength", "maxLength") if self.type in ("string", "path") else ("minimum", "maximum")
        if self.min is not None:
            schema[bounds[0]] = _int_if_whole(self.min)
        if self.max is not None:
            schema[bounds[1]] = _int_if_whole(self.max)
        if self.examples:
            schema["examples"] = list(self.examples)
        return schema


def wire_text(value: object) -> str:
    """A value as the text an argument carries on the wire (arguments are strings): ``true``/``false`` for a
    boolean, a list joined by commas."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def _check_relative_path(arg: Argument, raw: str) -> None:
    # The file itself is checked when it is read; refusing escapes here gives a clear -32602 early.
    if not raw or raw.startswith(("/", "\\")) or ".." in re.split(r"[\\/]", raw) or "\x00" in raw:
        raise arg._bad(f"must be a relative path inside the library, got {_short(raw)}")


def _short(raw: str) -> str:
    return repr(raw if len(raw) <= 40 else raw[:37] + "...")


def _num(value: float) -> str:
    return str(_int_if_whole(value))


def _int_if_whole(value: float) -> float | int:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _describe(arg: Argument) -> str | None:
    """Mirror type, choices and default into the description for clients that show nothing else."""
    hints: list[str] = []
    if arg.enum is not None:
        hints.append("one of: " + ", ".join(value_text(v) for v in arg.enum))
    elif arg.type != "string":
        kind = {"path": "a file path in the library"}.get(arg.type, arg.type)
        if arg.min is not None or arg.max is not None:
            if arg.type in ("integer", "number"):
                lo = _num(arg.min) if arg.min is not None else ""
                hi = _num(arg.max) if arg.max is not None else ""
                kind += f" {lo}..{hi}"
        hints.append(kind)
    if arg.default is not MISSING:
        shown = " ".join(value_text(arg.default).split())
        hints.append(f"default: {shown if len(shown) <= 40 else shown[:37] + '...'}")
    if not hints:
        return arg.description
    suffix = "(" + "; ".join(hints) + ")"
    return f"{arg.description} {suffix}" if arg.description else suffix


def value_text(value: Any) -> str:
    """A value as a client would type it: JSON's ``true``/``false``, a whole float without its ``.0``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(_int_if_whole(value)) if isinstance(value, float) else str(value)


def make_argument(
    name: str,
    *,
    description: str | None = None,
    title: str | None = None,
    required: bool | None = None,
    type: ArgType = "string",
    enum: Sequence[Any] | None = None,
    default: Any = MISSING,
    pattern: str | None = None,
    min: float | None = None,
    max: float | None = None,
    examples: Sequence[Any] = (),
) -> Argument:
    """Build and check one argument declaration; ``SpecError`` says what is wrong."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise SpecError(f"argument name {name!r} must be letters, digits and _ (not starting with a digit)")
    if type not in ARG_TYPES:
        raise SpecError(f"argument {name!r}: type must be one of {', '.join(ARG_TYPES)}, got {type!r}")
    for key, text in (("description", description), ("title", title)):
        if text is not None and not isinstance(text, str):
            raise SpecError(f"argument {name!r}: {key} must be text")
    if required is not None and not isinstance(required, bool):
        raise SpecError(f"argument {name!r}: required must be true or false")
    compiled = None
    if pattern is not None:
        if not isinstance(pattern, str):
            raise SpecError(f"argument {name!r}: pattern must be text")
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise SpecError(f"argument {name!r}: pattern {pattern!r} is not a valid regular expression: {exc}") \
                from None
    for key, bound in (("min", min), ("max", max)):
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int | float)):
            raise SpecError(f"argument {name!r}: {key} must be a number")
    if min is not None and max is not None and min > max:
        raise SpecError(f"argument {name!r}: min {min} is greater than max {max}")
    if not isinstance(examples, Sequence) or isinstance(examples, str):
        raise SpecError(f"argument {name!r}: examples must be a list")
    probe = Argument(name=name, type=type, pattern=compiled, min=min, max=max)
    enum_values: tuple[Any, ...] | None = None
    if enum is not None:
        if not isinstance(enum, Sequence) or isinstance(enum, str) or not enum:
            raise SpecError(f"argument {name!r}: enum must be a non-empty list")
        enum_values = tuple(_coerce(probe, v, "enum value") for v in enum)
    converted_default = MISSING
    if default is not MISSING and default is not None:
        converted_default = _coerce(probe, default, "default")
        if enum_values is not None and converted_default not in enum_values:
            raise SpecError(f"argument {name!r}: default {default!r} is not one of the enum values")
        if required:
            raise SpecError(f"argument {name!r}: a required argument cannot have a default")
    arg = Argument(
        name=name, description=description, title=title,
        required=bool(required) and converted_default is MISSING,
        type=type,
        enum=enum_values, default=converted_default, pattern=compiled, min=min, max=max,
        examples=tuple(str(value_text(e)) for e in examples),
    )
    msgspec.structs.force_setattr(arg, "wire_description", _describe(arg))
    return arg


def _coerce(arg: Argument, value: Any, what: str) -> Any:
    """Check a value written in YAML or Python (enum entry, default) against the argument's own rules."""
    raw = value_text(value) if isinstance(value, bool | int | float) else value
    if not isinstance(raw, str):
        raise SpecError(f"argument {arg.name!r}: {what} {value!r} must be a scalar")
    try:
        return arg.convert(raw)
    except InvalidParams as exc:
        raise SpecError(f"{what} {value!r}: {exc.message}") from None


#: Parsed argument lists by their YAML's value (``_declaration``): libraries repeat the same lists in many files,
#: and Arguments are immutable, so files can share one tuple (less time to load, less memory to hold).
_PARSED: dict[bytes | str, tuple[Argument, ...]] = {}
_PARSED_MAX = 4096


def _declaration(raw: Any) -> bytes | str:
    """A key equal for two YAML values only when they are equal and of the same types (``1``, ``1.0``, ``true``
    and ``"1"`` apart): ``marshal`` writes exactly that, at half what ``repr`` costs (repr was a sixth of a
    prompt's build in a large library). A value marshal cannot write (a YAML date) is keyed by its ``repr``."""
    try:
        return marshal.dumps(raw, 0)  # version 0: no references or interning marks, only the value
    except ValueError:
        return repr(raw)


def parse_arguments(raw: object) -> tuple[Argument, ...]:
    """Arguments from the front matter's ``arguments`` list."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise SpecError("arguments must be a list of {name, description, required, ...}")
    key = _declaration(raw)
    cached = _PARSED.get(key)
    if cached is None:
        cached = _parse_arguments(raw)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[key] = cached
    return cached


#: Arguments by their YAML's value (``_declaration``), as ``_PARSED`` keeps lists: files whose lists differ (a
#: description naming its file) still declare most arguments alike, and each file held its own copy of each (an
#: Argument, its wire description, its enum: about 600 bytes for an argument with four choices).
_ITEMS: dict[bytes | str, Argument] = {}


def _argument(item: dict[Any, Any]) -> Argument:
    key = _declaration(item)
    cached = _ITEMS.get(key)
    if cached is None:
        cached = make_argument(**{str(k): v for k, v in item.items()})
        if len(_ITEMS) >= _PARSED_MAX:
            _ITEMS.clear()
        _ITEMS[key] = cached
    return cached


def _parse_arguments(raw: list[Any]) -> tuple[Argument, ...]:
    known = {"name", "description", "title", "required", "type", "enum", "default", "pattern",
             "min", "max", "examples"}
    args: list[Argument] = []
    seen: set[str] = set()
    for item in raw:
        if not isinstance(item, dict) or "name" not in item:
            raise SpecError(f"each argument needs at least a name, got {item!r}")
        unknown = sorted(set(item) - known)
        if unknown:
            import difflib

            close = difflib.get_close_matches(str(unknown[0]), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise SpecError(f"argument {item['name']!r}: unknown key {unknown[0]!r}{hint} "
                            f"(known: {', '.join(sorted(known))})")
        arg = _argument(item)
        if arg.name in seen:
            raise SpecError(f"argument {arg.name!r} is declared twice")
        seen.add(arg.name)
        args.append(arg)
    return tuple(args)


def bind(arguments: tuple[Argument, ...], given: Mapping[str, object] | None, prompt: str) -> dict[str, Any]:
    """Check and convert the arguments a client sent; apply defaults; refuse unknown ones."""
    values: dict[str, Any] = {}
    given = given or {}
    declared = {a.name for a in arguments}
    unknown = [k for k in given if k not in declared]
    if unknown:
        names = ", ".join(repr(k) for k in sorted(unknown))
        expected = ", ".join(sorted(declared)) or "none"
        raise InvalidParams(f"prompt {prompt!r} has no argument {names} (it takes: {expected})",
                            {"prompt": prompt, "unknown": sorted(unknown)})
    missing: list[str] = []
    for arg in arguments:
        raw = given.get(arg.name, MISSING)
        if raw is MISSING:
            if arg.default is not MISSING:
                values[arg.name] = arg.default
            elif arg.required:
                missing.append(arg.name)
            continue
        try:
            values[arg.name] = arg.convert(raw)
        except InvalidParams as exc:
            exc.message = f"prompt {prompt!r}: {exc.message}"
            exc.args = (exc.message,)
            raise
    if missing:
        names = ", ".join(repr(m) for m in missing)
        raise InvalidParams(f"prompt {prompt!r} is missing required argument {names}",
                            {"prompt": prompt, "missing": missing})
    return values
