"""Running prompts' tests (``testcases``): each case rendered as ``prompts/get`` renders it, its assertions
checked on the text. See ``testcases`` for what a case holds.

``run_tests`` renders each case as ``prompts/get`` does (arguments bound, the render bounded in time and size)
and checks each assertion on the text: every message's text joined by a blank line, or one message's with
``message: N``. Its ``Report`` names prompt, case and assertion for every failing case, and is what
``promptdeck test``, ``publish``, the web page and a label that requires passing tests all read.

Regular expressions run in the ``regex`` package with a timeout (``REGEX_SECONDS``): the stdlib ``re`` cannot
be stopped once it backtracks, and tests run on servers (the web page's checks) as well as in CI.

A run is bounded as a whole: its deadline is looked at before each case and each assertion, and a search is
given no more than the time the run has left. A server also stops a run whose client went away or that it is
shutting down (``stopping``): a run on a thread sees its ``threading.Event`` at the same points, and the cases
left fail as not run, so a run holds its thread (and a server's slot for it) only while someone waits for it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..protocol.content import Message, Resource, Text
from ..protocol.errors import McpError
from .testcases import LISTS, Assertion, Case, short

if TYPE_CHECKING:
    from .spec import Offered, Prompt

#: How long one regular expression may search the rendered text.
REGEX_SECONDS = 0.5
#: How long a whole test run may take; cases left when it is over fail as not run.
RUN_SECONDS = 120.0

#: The stop of the run on this thread, if one was set (``stopping``).
_local = threading.local()


class stopping:  # lower case: used as a function, ``with stopping(event):``
    """Runs on this thread inside the block stop once ``event`` is set (the client left, the server stops),
    whoever started them: the web page's checks, a save's tests, a label's required tests."""

    __slots__ = ("event", "_before")

    def __init__(self, event: threading.Event) -> None:
        self.event = event
        self._before: threading.Event | None = None

    def __enter__(self) -> threading.Event:
        self._before = getattr(_local, "stop", None)
        _local.stop = self.event
        return self.event

    def __exit__(self, *exc: object) -> None:
        _local.stop = self._before


class _Bound:
    """When a run must end: its deadline, and the stop it was given (or the thread's)."""

    __slots__ = ("deadline", "stop")

    def __init__(self, deadline: float | None, stop: threading.Event | None) -> None:
        self.deadline = deadline
        self.stop = stop if stop is not None else getattr(_local, "stop", None)

    def over(self) -> str | None:
        """Why the run must end now, or None."""
        if self.stop is not None and self.stop.is_set():
            return "not run: the test run was stopped (its client went away, or the server is stopping)"
        if self.deadline is not None and time.monotonic() > self.deadline:
            return "not run: the test run took longer than its time limit"
        return None

    def left(self) -> float:
        """How long one search may take now: ``REGEX_SECONDS``, or less when the run has less left."""
        if self.deadline is None:
            return REGEX_SECONDS
        return max(0.01, min(REGEX_SECONDS, self.deadline - time.monotonic()))


# -- running -------------------------------------------------------------------------------------


@dataclass(slots=True)
class AssertionResult:
    assertion: Assertion
    passed: bool
    message: str

    def to_json(self) -> dict[str, Any]:
        return {**self.assertion.to_json(), "passed": self.passed, "message": self.message}


@dataclass(slots=True)
class CaseResult:
    case: Case
    passed: bool
    #: a failure of the case as a whole (the render failed, or did not fail as expected), or None
    problem: str | None = None
    asserts: list[AssertionResult] = field(default_factory=list)

    def failure(self, prompt: str) -> str | None:
        """None if it passed; else one line naming the prompt, the case and each assertion that failed."""
        if self.passed:
            return None
        head = f"prompt {prompt!r}, {self.case.label()}"
        if self.problem:
            return f"{head}: {self.problem}"
        return f"{head}: " + "; ".join(f"{r.assertion.label()}: {r.message}" for r in self.asserts if not r.passed)

    def to_json(self, prompt: str) -> dict[str, Any]:
        out: dict[str, Any] = {"case": self.case.index + 1, "description": self.case.description,
                               "passed": self.passed}
        if self.problem:
            out["problem"] = self.problem
        if not self.passed:
            out["message"] = self.failure(prompt)
        out["asserts"] = [r.to_json() for r in self.asserts]
        return out


@dataclass(slots=True)
class PromptResult:
    prompt: str
    cases: list[CaseResult]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.cases)

    def failures(self) -> list[str]:
        return [line for case in self.cases if (line := case.failure(self.prompt)) is not None]

    def to_json(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "passed": self.passed, "cases": [c.to_json(self.prompt) for c in self.cases]}


@dataclass(slots=True)
class Report:
    """What a test run found, per prompt (those with tests), per case, per assertion."""

    prompts: list[PromptResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(p.passed for p in self.prompts)

    @property
    def cases(self) -> int:
        return sum(len(p.cases) for p in self.prompts)

    @property
    def failed_cases(self) -> int:
        return sum(1 for p in self.prompts for c in p.cases if not c.passed)

    def failures(self) -> list[str]:
        return [line for p in self.prompts for line in p.failures()]

    def summary(self) -> str:
        n, bad = self.cases, self.failed_cases
        counted = f"{len(self.prompts)} prompt{'s' * (len(self.prompts) != 1)}"
        return f"{n - bad} of {n} test case{'s' * (n != 1)} passed in {counted}" + (f"; {bad} failed" if bad else "")

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "cases": self.cases, "failed": self.failed_cases,
                "prompts": [p.to_json() for p in self.prompts]}


def run_tests(prompts: Iterable[Offered], names: Sequence[str] | None = None, *,
              lookup: Callable[[str], Offered] | None = None, seconds: float = RUN_SECONDS,
              details: bool = True, stop: threading.Event | None = None) -> Report:
    """Run the tests of ``prompts`` (a ``Catalog``, or any prompts; for a principal, its ``view``), or only of
    those called ``names`` (found by ``lookup``, a catalog's ``require``: an unknown name is its
    ``InvalidParams``). Prompts without tests are left out of the report. Blocking: call it off an event loop.

    Each render is bounded as a ``prompts/get``'s is; the run as a whole by ``seconds`` and by ``stop`` (or
    the thread's, ``stopping``), looked at before each case and each assertion: the cases left then fail as
    not run. ``details``: say why a render failed internally (the ``detail`` a server keeps for
    its log), as the library's author at a terminal may know; a server answering a client passes False."""
    if names:
        find = lookup if lookup is not None else _finder(prompts)
        chosen = [find(name) for name in dict.fromkeys(names)]
    else:
        chosen = list(prompts)
    bound = _Bound(time.monotonic() + seconds, stop)
    report = Report()
    for offered in chosen:
        prompt = offered.parsed()
        tests = prompt.tests
        if tests is None:
            continue
        report.prompts.append(PromptResult(prompt.name, [_run_case(prompt, case, bound, details)
                                                      for case in tests.cases]))
    return report


def _finder(prompts: Iterable[Offered]) -> Callable[[str], Offered]:
    from .catalog import unknown_prompt

    by_name = {p.name: p for p in prompts}

    def find(name: str) -> Offered:
        if name not in by_name:
            raise unknown_prompt(name, list(by_name))
        return by_name[name]

    return find


def run_case(prompt: Prompt, case: Case, deadline: float | None = None, details: bool = True) -> CaseResult:
    """Render ``prompt`` with the case's vars and check its assertions (or its expected error), within
    ``deadline`` (a ``time.monotonic()``) and the thread's stop (``stopping``)."""
    return _run_case(prompt, case, _Bound(deadline, None), details)


def _run_case(prompt: Prompt, case: Case, bound: _Bound, details: bool) -> CaseResult:
    over = bound.over()
    if over is not None:
        return CaseResult(case, False, over)
    try:
        messages = render_for_test(prompt, case.vars)
    except McpError as exc:
        why = f" ({exc.detail})" if details and exc.detail else ""
        if case.error_code is None:
            return CaseResult(case, False, f"the render failed: error {exc.code}: {exc.message}{why}")
        if exc.code != case.error_code:
            return CaseResult(case, False, f"expected error {case.error_code}, got error {exc.code}: "
                                           f"{exc.message}{why}")
        if case.error_text is not None and case.error_text not in exc.message:
            return CaseResult(case, False, f"expected error {case.error_code} with {short(case.error_text)} in "
                                           f"its message, got {short(exc.message)}")
        return CaseResult(case, True)
    if case.error_code is not None:
        return CaseResult(case, False, f"expected error {case.error_code}, but the prompt rendered")
    if case.message is not None and case.message > len(messages):
        return CaseResult(case, False, f"message {case.message} asked for; the prompt rendered {len(messages)}")
    text = message_text(messages, case.message)
    results: list[AssertionResult] = []
    for assertion in case.asserts:
        over = bound.over()
        if over is not None:  # fifty slow searches in one case would otherwise each take their time
            results.append(AssertionResult(assertion, False, over))
            continue
        results.append(AssertionResult(assertion, *evaluate(assertion, text, bound.left())))
    return CaseResult(case, all(r.passed for r in results), None, results)


def render_for_test(prompt: Prompt, given: Mapping[str, str]) -> list[Message]:
    """``prompt``'s messages for ``given`` as a ``prompts/get`` has them: bound, bounded, checked in size;
    ``McpError`` (-32602 for bad arguments, -32603 for a failed render) otherwise."""
    import asyncio
    import inspect

    from .arguments import bind
    from .execution import check_output, run_render
    from .spec import RenderContext

    values = bind(prompt.arguments, dict(given), prompt.name)
    rendered = run_render(lambda: prompt.render(values, RenderContext(prompt.name)), prompt.name, prompt.work)
    if inspect.isawaitable(rendered):  # an async render (or one run in the render threads): no loop runs here
        rendered = asyncio.run(_awaited(rendered))
    if not isinstance(rendered, list):
        raise McpError(f"prompt {prompt.name!r}: its render gave no messages", code=-32603)
    return check_output(rendered, prompt.name)


async def _awaited(pending: Any) -> Any:
    return await pending


def message_text(messages: Sequence[Message], number: int | None = None) -> str:
    """The text assertions see: each message's text (a text block's, an embedded text resource's), joined by
    a blank line; or message ``number``'s alone (from 1)."""
    chosen = messages if number is None else [messages[number - 1]]
    return "\n\n".join(_text_of(m) for m in chosen)


def _text_of(message: Message) -> str:
    content = message.content
    if isinstance(content, Text):
        return content.text
    if isinstance(content, Resource):
        return content.resource.text or ""
    return ""


def evaluate(assertion: Assertion, text: str, seconds: float = REGEX_SECONDS) -> tuple[bool, str]:
    """(passed, why) of ``assertion`` on ``text``, a search given at most ``seconds``."""
    try:
        held, what = _holds(assertion.kind, assertion.value, text, seconds)
    except TimeoutError:
        return False, f"the regular expression took longer than {seconds:.2g} s on the text; simplify it"
    passed = held != assertion.negated
    if passed:
        return True, "passed"
    return False, f"expected the text {'not ' if assertion.negated else ''}{what}; it was {short(text)}"


def _holds(kind: str, value: Any, text: str, seconds: float) -> tuple[bool, str]:
    if kind == "equals":
        return text == str(value), f"to equal {short(value)}"
    if kind == "contains":
        return str(value) in text, f"to contain {short(value)}"
    if kind == "icontains":
        return str(value).casefold() in text.casefold(), f"to contain {short(value)} (any case)"
    if kind == "starts-with":
        return text.startswith(str(value)), f"to start with {short(value)}"
    if kind in LISTS:
        fold = kind.startswith("i")
        hay = text.casefold() if fold else text
        found = [(str(v).casefold() if fold else str(v)) in hay for v in value]
        how = "any" if kind.endswith("any") else "all"
        return (any(found) if how == "any" else all(found)), \
            f"to contain {'one' if how == 'any' else 'all'} of {short(value)}{' (any case)' if fold else ''}"
    if kind == "regex":
        return _search(str(value), text, seconds), f"to match /{short(value)[1:-1]}/"
    if kind == "is-json":
        try:
            json.loads(text)
        except ValueError:
            return False, "to be JSON"
        return True, "to be JSON"
    if kind == "max-length":
        return len(text) <= int(value), f"to be at most {value} characters long (it has {len(text)})"
    raise ValueError(f"unknown assertion type {kind!r}")  # parse_tests lets none through


def _search(pattern: str, text: str, seconds: float) -> bool:
    """Whether ``pattern`` matches somewhere in ``text``; ``TimeoutError`` past ``seconds``."""
    import regex

    return regex.search(pattern, text, timeout=seconds) is not None


__all__ = ["Report", "PromptResult", "CaseResult", "AssertionResult", "run_tests", "run_case", "evaluate",
           "message_text", "render_for_test", "stopping", "REGEX_SECONDS", "RUN_SECONDS"]
