"""Tests of prompts, as written: cases in promptfoo's vocabulary (``testing`` runs them).

A prompt's ``tests`` (front matter, or a ``NAME.tests.yaml`` beside another tool's file) is a list of cases::

    - description: greets by name         # optional
      vars: {name: Ada}                   # the arguments, as a client sends them
      message: 1                          # optional: assert on this message (from 1) instead of all of them
      assert:
        - {type: contains, value: Ada}
        - {type: not-regex, value: "\\bTODO\\b"}
    - vars: {}
      error: {code: -32602, message: missing}   # or ``error: -32602``: the render must fail so

``parse_tests`` turns that into ``PromptTests`` and the problems it has, each at a ``Where`` (a path into the
YAML, which the source that read it turns into a line: ``sources.files.tests``). ``Prompt.tests`` holds the
result; it is never part of a prompt's listing.

Regular expressions are compiled and run by the ``regex`` package with a timeout: the stdlib ``re`` cannot be
stopped once it backtracks, and an assertion is run on servers (the web page's checks) as well as in CI. A
pattern whose repetitions nest (``(a+)+``), the shape that backtracks without end, is refused at ``check``
too, so that the timeout is the second line, not the first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .arguments import Argument, wire_text
from .limits import MAX_OUTPUT_CHARS

#: The assertion types, each also taken with ``not-`` in front (``not-contains``), which passes when it fails.
TYPES = ("equals", "contains", "icontains", "contains-any", "contains-all", "icontains-any", "icontains-all",
         "starts-with", "regex", "is-json", "max-length")
#: The types whose value is a list of texts.
LISTS = frozenset({"contains-any", "contains-all", "icontains-any", "icontains-all"})
_CASE_KEYS = ("description", "vars", "assert", "message", "error")

#: Most cases in one prompt's tests, and assertions in one case.
MAX_CASES = 200
MAX_ASSERTS = 50
#: Longest ``value`` (all items of a list together), description and ``vars`` value, in characters.
MAX_VALUE_CHARS = 10_000
#: Longest regular expression.
MAX_PATTERN_CHARS = 1_000
#: Most problems reported of one prompt's tests.
MAX_PROBLEMS = 50

#: Where in a prompt's tests a problem is: (case index, key, assertion index, key), as deep as known.
Where = tuple[int | str, ...]


@dataclass(frozen=True, slots=True)
class Assertion:
    """One ``{type, value}``; ``kind`` is the type without ``not-``."""

    kind: str
    negated: bool
    value: Any
    index: int

    @property
    def type(self) -> str:
        return f"not-{self.kind}" if self.negated else self.kind

    def label(self) -> str:
        """How a report names it: ``assertion 2 (not-contains 'TODO')``."""
        shown = "" if self.value is None else " " + short(self.value)
        return f"assertion {self.index + 1} ({self.type}{shown})"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.value is not None:
            out["value"] = self.value
        return out


@dataclass(frozen=True, slots=True)
class Case:
    index: int
    description: str | None
    vars: Mapping[str, str]
    asserts: tuple[Assertion, ...]
    message: int | None = None
    #: the JSON-RPC code the render must fail with, and a part of its message
    error_code: int | None = None
    error_text: str | None = None

    def label(self) -> str:
        """How a report names it: its description, or ``case 3``."""
        return repr(self.description) if self.description else f"case {self.index + 1}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.description is not None:
            out["description"] = self.description
        out["vars"] = dict(self.vars)
        if self.message is not None:
            out["message"] = self.message
        if self.error_code is not None:
            out["error"] = {"code": self.error_code, **({"message": self.error_text} if self.error_text else {})}
        if self.asserts:
            out["assert"] = [a.to_json() for a in self.asserts]
        return out


@dataclass(frozen=True, slots=True)
class PromptTests:
    """A prompt's cases, and where they were written (``front matter`` or a sidecar file's path)."""

    cases: tuple[Case, ...]
    origin: str = "front matter"

    def to_json(self) -> list[dict[str, Any]]:
        return [case.to_json() for case in self.cases]


# -- reading -------------------------------------------------------------------------------------


def parse_tests(raw: object, arguments: Sequence[Argument], origin: str = "front matter") \
        -> tuple[PromptTests | None, list[tuple[str, Where]]]:
    """The tests ``raw`` (the loaded YAML of ``tests``) defines for a prompt taking ``arguments``, or None
    and every problem found, each with where it is."""
    problems: list[tuple[str, Where]] = []
    if not isinstance(raw, list):
        return None, [("tests must be a list of cases, each with vars and assert", ())]
    if len(raw) > MAX_CASES:
        return None, [(f"tests has {len(raw)} cases; at most {MAX_CASES} are allowed", ())]
    declared = {a.name for a in arguments}
    cases: list[Case] = []
    for i, item in enumerate(raw):
        case = _case(i, item, declared, problems)
        if case is not None:
            cases.append(case)
    if len(problems) > MAX_PROBLEMS:  # a file of thousands of mistakes is told of the first ones
        left = len(problems) - MAX_PROBLEMS
        problems = problems[:MAX_PROBLEMS] + [(f"… and {left} more problem{'s' * (left != 1)} in tests", ())]
    if problems:
        return None, problems
    return PromptTests(tuple(cases), origin), []


def _case(i: int, item: object, declared: set[str], problems: list[tuple[str, Where]]) -> Case | None:
    before = len(problems)

    def bad(message: str, *where: int | str) -> None:
        problems.append((f"test case {i + 1}: {message}", (i, *where)))

    if not isinstance(item, dict):
        bad("must be a mapping with vars and assert")
        return None
    for key in item:
        if key not in _CASE_KEYS:
            bad(f"unknown key {key!r} (known: {', '.join(_CASE_KEYS)})", str(key))
    description = item.get("description")
    if description is not None and (not isinstance(description, str) or len(description) > 200):
        bad("description must be text of at most 200 characters", "description")
    error_code, error_text = _expected_error(item.get("error"), bad)
    values = _vars(item.get("vars"), declared, error_code is not None, bad)
    message = item.get("message")
    if message is not None and (isinstance(message, bool) or not isinstance(message, int) or message < 1):
        bad("message must be a message's number, counting from 1", "message")
    raw_asserts = item.get("assert", [])
    asserts: list[Assertion] = []
    if not isinstance(raw_asserts, list):
        bad("assert must be a list of {type, value}", "assert")
    elif len(raw_asserts) > MAX_ASSERTS:
        bad(f"assert has {len(raw_asserts)} items; at most {MAX_ASSERTS} are allowed", "assert")
    else:
        for j, raw in enumerate(raw_asserts):
            found = _assertion(j, raw, lambda m, *w, j=j: bad(f"assertion {j + 1}: {m}", "assert", j, *w))
            if found is not None:
                asserts.append(found)
    if not raw_asserts and error_code is None:
        bad("has nothing to check: give assert, or error for a render that must fail")
    if error_code is not None and raw_asserts:
        bad("a case that expects an error has no text to assert on: give assert or error, not both", "assert")
    if len(problems) > before:
        return None
    return Case(i, description, values, tuple(asserts), message, error_code, error_text)


def _expected_error(raw: object, bad: Callable[..., None]) -> tuple[int | None, str | None]:
    if raw is None:
        return None, None
    code, text = (raw.get("code"), raw.get("message")) if isinstance(raw, dict) else (raw, None)
    if isinstance(raw, dict) and set(raw) - {"code", "message"}:
        bad("error takes code and message", "error")
    if isinstance(code, bool) or not isinstance(code, int):
        bad("error must be a JSON-RPC error code (-32602) or {code, message}", "error")
        return None, None
    if text is not None and (not isinstance(text, str) or len(text) > MAX_VALUE_CHARS):
        bad(f"error's message must be text of at most {MAX_VALUE_CHARS} characters", "error")
    return code, text if isinstance(text, str) else None


def _vars(raw: object, declared: set[str], expects_error: bool, bad: Callable[..., None]) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        bad("vars must map argument names to values", "vars")
        return {}
    out: dict[str, str] = {}
    for name, value in raw.items():
        if not isinstance(name, str):
            bad(f"vars key {name!r} is not an argument name", "vars")
            continue
        if name not in declared and not expects_error:  # a case may check that an unknown argument is refused
            known = ", ".join(sorted(declared)) or "none"
            bad(f"vars names {name!r}, which is not an argument of the prompt (it takes: {known})", "vars", name)
            continue
        if isinstance(value, dict | list) or value is None:
            bad(f"vars {name!r} must be a text, number or boolean, as a client sends it", "vars", name)
            continue
        text = wire_text(value)
        if len(text) > MAX_VALUE_CHARS:
            bad(f"vars {name!r} is longer than {MAX_VALUE_CHARS} characters", "vars", name)
            continue
        out[name] = text
    return out


def _assertion(j: int, raw: object, bad: Callable[..., None]) -> Assertion | None:
    if not isinstance(raw, dict) or "type" not in raw:
        bad("must be a mapping with type and value")
        return None
    unknown = set(raw) - {"type", "value"}
    if unknown:
        bad(f"unknown key {sorted(map(str, unknown))[0]!r} (known: type, value)", sorted(map(str, unknown))[0])
    kind = raw["type"]
    if not isinstance(kind, str):
        bad("type must be text", "type")
        return None
    negated = kind.startswith("not-")
    base = kind[4:] if negated else kind
    if base not in TYPES:
        import difflib

        close = difflib.get_close_matches(kind, [*TYPES, *(f"not-{t}" for t in TYPES)], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        bad(f"unknown assertion type {kind!r}{hint} (known: {', '.join(TYPES)}, and each with not-)", "type")
        return None
    value = raw.get("value")
    problem = _value_problem(base, value)
    if problem is not None:
        bad(f"{kind}: {problem}", "value")
        return None
    if unknown:
        return None
    return Assertion(base, negated, value, j)


def _value_problem(kind: str, value: object) -> str | None:
    """What is wrong with ``value`` for an assertion of ``kind``, or None."""
    if kind == "is-json":
        return None if value is None else "takes no value (a JSON schema is not checked here)"
    if kind == "max-length":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_OUTPUT_CHARS:
            return f"value must be a number of characters from 0 to {MAX_OUTPUT_CHARS}"
        return None
    if kind in LISTS:
        if not isinstance(value, list) or not value or not all(isinstance(v, str | int | float) and
                                                                not isinstance(v, bool) for v in value):
            return "value must be a list of texts"
        if sum(len(str(v)) for v in value) > MAX_VALUE_CHARS:
            return f"value is longer than {MAX_VALUE_CHARS} characters in all"
        return None
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        return "value must be text"
    if len(str(value)) > MAX_VALUE_CHARS:
        return f"value is {len(str(value))} characters long; at most {MAX_VALUE_CHARS} are allowed"
    if kind == "regex":
        return pattern_problem(str(value))
    return None


def pattern_problem(pattern: str) -> str | None:
    """Why the regular expression ``pattern`` is refused (too long, does not compile, repetitions nested so
    that a search may backtrack without end), or None."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"the regular expression is longer than {MAX_PATTERN_CHARS} characters"
    import regex

    try:
        regex.compile(pattern)
    except regex.error as exc:
        return f"the regular expression does not compile: {exc}"
    nested = _nested_repeat(pattern)
    if nested:
        return (f"the regular expression repeats a repeated part ({nested}), which can take exponential time "
                f"to fail; rewrite it without the nesting")
    return None


def _nested_repeat(pattern: str) -> str | None:
    """A description of the first place in ``pattern`` where a repetition without bound (``*``, ``+``,
    ``{n,}``) holds another one (``(a+)+``, ``(\\w*,?)*``), or None. Read from the stdlib's parse of the pattern
    (the ``regex`` package exposes none); a pattern only ``regex`` reads is left to its timeout."""
    import importlib

    # The stdlib's own regular expression parser (``sre_parse`` before 3.11, which now warns on import).
    parser: Any = importlib.import_module("re._parser")
    sre: Any = importlib.import_module("re._constants")

    def parts(arg: Any) -> Iterable[Any]:
        """The sub-patterns somewhere in an opcode's argument (a group's, a branch's, a lookaround's)."""
        if isinstance(arg, parser.SubPattern):
            yield arg
        elif isinstance(arg, tuple | list):
            for item in arg:
                yield from parts(item)

    def walk(items: Any, inside: bool) -> str | None:
        for op, arg in items:
            if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):  # a possessive one never backtracks: walked as a group
                low, high, body = arg
                endless = high == sre.MAXREPEAT
                if endless and inside:
                    return "a repetition inside a repetition"
                found = walk(body, inside or endless)
            else:
                found = next((f for sub in parts(arg) if (f := walk(sub, inside))), None)
            if found:
                return found
        return None

    try:
        tree = parser.parse(pattern)
    except Exception:  # noqa: BLE001 - syntax only ``regex`` knows: its timeout bounds it
        return None
    return walk(tree, False)




def short(value: object, limit: int = 80) -> str:
    """``value`` as a report shows it: its repr, cut to ``limit`` characters."""
    text = repr(value) if not isinstance(value, list) else "[" + ", ".join(repr(v) for v in value) + "]"
    return text if len(text) <= limit else text[:limit - 3] + "..."


__all__ = ["TYPES", "LISTS", "Assertion", "Case", "PromptTests", "Where", "parse_tests", "pattern_problem", "short",
           "MAX_CASES", "MAX_ASSERTS", "MAX_VALUE_CHARS", "MAX_PATTERN_CHARS"]
