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
    budget = ProbeBudget()
    for i, item in enumerate(raw):
        case = _case(i, item, declared, problems, budget)
        if case is not None:
            cases.append(case)
    if len(problems) > MAX_PROBLEMS:  # a file of thousands of mistakes is told of the first ones
        left = len(problems) - MAX_PROBLEMS
        problems = problems[:MAX_PROBLEMS] + [(f"… and {left} more problem{'s' * (left != 1)} in tests", ())]
    if problems:
        return None, problems
    return PromptTests(tuple(cases), origin), []


def _case(i: int, item: object, declared: set[str], problems: list[tuple[str, Where]],
          budget: ProbeBudget) -> Case | None:
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
            found = _assertion(j, raw, lambda m, *w, j=j: bad(f"assertion {j + 1}: {m}", "assert", j, *w), budget)
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


def _assertion(j: int, raw: object, bad: Callable[..., None], budget: ProbeBudget) -> Assertion | None:
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
    problem = _value_problem(base, value, budget)
    if problem is not None:
        bad(f"{kind}: {problem}", "value")
        return None
    if unknown:
        return None
    return Assertion(base, negated, value, j)


def _value_problem(kind: str, value: object, budget: ProbeBudget) -> str | None:
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
        return pattern_problem(str(value), budget)
    return None


def pattern_problem(pattern: str, budget: ProbeBudget | None = None) -> str | None:
    """Why the regular expression ``pattern`` is refused (too long, does not compile, slow to fail on a text
    made to make it backtrack: ``slow_on``), or None. ``budget``: the probing time left to the tests it is in."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"the regular expression is longer than {MAX_PATTERN_CHARS} characters"
    import regex

    try:
        regex.compile(pattern)
    except regex.error as exc:
        return f"the regular expression does not compile: {exc}"
    return slow_on(pattern, budget)


#: How long the probes of one regular expression may take together, and the length of each text probed: the
#: engine that runs the tests judges the pattern, on texts far shorter than a render may be.
PROBE_SECONDS = 0.25
PROBE_CHARS = 2_000
#: How long the probes of one prompt's tests may take in all: a file of thousands of patterns is refused
#: rather than checked for minutes (the web page's check runs this on text a caller sent).
PROBE_BUDGET_SECONDS = 3.0


class ProbeBudget:
    """What is left of ``PROBE_BUDGET_SECONDS`` for one prompt's tests."""

    __slots__ = ("left",)

    def __init__(self, seconds: float = PROBE_BUDGET_SECONDS) -> None:
        self.left = seconds


def slow_on(pattern: str, budget: ProbeBudget | None = None) -> str | None:
    """Why ``pattern`` is refused as one that backtracks catastrophically, or None: the ``regex`` engine (the
    one ``testing`` runs) searches texts made of the pattern's own characters (``_probe_texts``) with a
    timeout, and a pattern that needs more than ``PROBE_SECONDS`` for them all would spend a run's time on
    a text of its kind. The engine and its timeout are the judge, not an analysis of the pattern."""
    import time

    import regex

    compiled = regex.compile(pattern)
    budget = budget if budget is not None else ProbeBudget()
    if budget.left <= 0:
        return (f"not checked: the regular expressions of these tests took more than {PROBE_BUDGET_SECONDS:g} s "
                f"to check; use fewer or simpler ones")
    started = time.monotonic()
    limit = min(PROBE_SECONDS, budget.left)
    try:
        for text in _probe_texts(pattern):
            compiled.search(text, timeout=max(0.001, limit - (time.monotonic() - started)))
    except TimeoutError:
        shown = short(text[:12] + "…" + text[-2:], 40)
        return (f"the regular expression takes longer than {limit:g} s to fail on a text of {len(text)} characters "
                f"like {shown}: it backtracks catastrophically (overlapping alternatives or nested repetitions, "
                f"e.g. (a|aa)* or (a+)+b); rewrite it so that each character can be matched only one way")
    finally:
        budget.left -= time.monotonic() - started
    return None


def _probe_texts(pattern: str) -> Iterable[str]:
    """Texts that make a backtracking engine try every way a pattern has to match: a run of one of its
    characters, or of two of them in turn, after one of its literal runs (or nothing), ended by a character
    it does not expect."""
    alphabet, runs = _pattern_parts(pattern)
    singles = alphabet[:8]
    pumps = singles + [a + b for i, a in enumerate(singles[:4]) for b in singles[i + 1:4]]
    for prefix in ["", *runs[:2]]:
        for pump in pumps:
            yield prefix + pump * (PROBE_CHARS // len(pump)) + "\x00"


def _pattern_parts(pattern: str) -> tuple[list[str], list[str]]:
    """(characters the pattern matches, first seen first, with a letter, a digit and a space after them; its
    literal runs, longest first), read from the stdlib's parse of it (``regex`` exposes none); a pattern only
    ``regex`` reads gives its own letters, digits and punctuation."""
    import importlib

    # The stdlib's own regular expression parser (``sre_parse`` before 3.11, which now warns on import).
    parser: Any = importlib.import_module("re._parser")
    sre: Any = importlib.import_module("re._constants")
    stand_in = {sre.CATEGORY_DIGIT: "0", sre.CATEGORY_SPACE: " ", sre.CATEGORY_WORD: "a",
                sre.CATEGORY_NOT_DIGIT: "a", sre.CATEGORY_NOT_SPACE: "a", sre.CATEGORY_NOT_WORD: "-"}
    chars: dict[str, None] = {}
    runs: list[str] = []

    def walk(items: Any) -> None:
        run = ""
        for op, arg in items:
            if op is sre.LITERAL:
                chars.setdefault(chr(arg))
                run += chr(arg)
                continue
            if run:
                runs.append(run)
            run = ""
            if op is sre.IN:
                for kind, value in arg:
                    if kind is sre.LITERAL:
                        chars.setdefault(chr(value))
                    elif kind is sre.RANGE:
                        chars.setdefault(chr(value[0]))
                    elif kind is sre.CATEGORY and value in stand_in:
                        chars.setdefault(stand_in[value])
            elif op is sre.ANY:
                chars.setdefault("a")
            else:
                for sub in _parts(arg, parser.SubPattern):
                    walk(sub)
        if run:
            runs.append(run)

    try:
        walk(parser.parse(pattern))
    except Exception:  # noqa: BLE001 - syntax only ``regex`` knows: its own characters stand in
        chars.update(dict.fromkeys(c for c in pattern if c.isalnum() or c in " ,.;:-_/"))
    for usual in "a0 ":
        chars.setdefault(usual)
    return list(chars), sorted(dict.fromkeys(runs), key=len, reverse=True)


def _parts(arg: Any, kind: type) -> Iterable[Any]:
    """The sub-patterns somewhere in an opcode's argument (a group's, a branch's, a repetition's)."""
    if isinstance(arg, kind):
        yield arg
    elif isinstance(arg, tuple | list):
        for item in arg:
            yield from _parts(item, kind)


def short(value: object, limit: int = 80) -> str:
    """``value`` as a report shows it: its repr, cut to ``limit`` characters."""
    text = repr(value) if not isinstance(value, list) else "[" + ", ".join(repr(v) for v in value) + "]"
    return text if len(text) <= limit else text[:limit - 3] + "..."


__all__ = ["TYPES", "LISTS", "Assertion", "Case", "PromptTests", "Where", "parse_tests", "pattern_problem", "slow_on",
           "ProbeBudget", "short",
           "MAX_CASES", "MAX_ASSERTS", "MAX_VALUE_CHARS", "MAX_PATTERN_CHARS"]
