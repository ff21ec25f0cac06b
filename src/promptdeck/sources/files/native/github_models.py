"""GitHub Models prompt files (``*.prompt.yml``): one YAML document with ``messages`` and ``{{name}}`` holes.

The file is what ``gh models run``/``eval`` and GitHub's Models tab read: ``name`` (a display name, the
title here), ``description``, ``model``, ``modelParameters``, ``responseFormat``/``jsonSchema``,
``messages`` (role and content), and for evaluations ``testData`` (rows of values) and ``evaluators``
(which judge the model's answer). It is loaded with promptdeck's own bounded YAML reader (aliases and deep
nesting refused) and cut, like every other tool's format, into a literal substitution plan per message: gh
models replaces ``{{key}}`` (no blanks inside) and leaves every other text as written. How it maps to MCP,
and why evaluators are kept rather than run, is in docs/native-formats.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ....prompts.arguments import make_argument, wire_text
from ....prompts.execution import LIGHT
from ....prompts.limits import MAX_OUTPUT_CHARS
from ....prompts.render import run_bounded
from ....prompts.sandbox import RenderLimitError
from ....prompts.spec import Prompt, RenderContext
from ....prompts.testcases import MAX_CASES, MAX_VALUE_CHARS, parse_tests
from ....protocol.content import Message, Text
from ....protocol.errors import LineError
from ..frontmatter import load_yaml_file
from ..tests import lines_in
from ._common import META_FORMAT, META_MODEL, Plan, check_name, json_safe, pop_scopes

FORMAT = "github-models"
ENDING = ".prompt.yml"
#: What gh models fills: ``{{key}}`` with nothing else inside. A key that is no MCP argument name (``{{a-b}}``)
#: is left as text here, as gh models leaves a key its test data does not give.
PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")
#: The roles gh models sends (any case); MCP prompts have no system role: a system message is sent as the user's.
ROLES = ("system", "user", "assistant")
_PARAMETERS = {"maxTokens": int, "temperature": float, "topP": float}
_RESPONSE_FORMATS = ("text", "json_object", "json_schema")
_STRING_CHECKS = ("equals", "contains", "startsWith", "endsWith")


def read(rel: str, text: str) -> Prompt:
    """``docs/summarize.prompt.yml`` is ``docs.summarize``; its ``name:`` is the title."""
    stem = rel[:-len(ENDING)] if rel.endswith(ENDING) else rel.rpartition(".prompt.")[0]  # or .prompt.yaml
    name = check_name(stem.replace("/", "."), None, f"from the path {rel}")
    data = load_yaml_file(text, "file")
    if not isinstance(data, dict):
        raise LineError("a GitHub Models prompt file is a mapping (name, model, messages, ...)", 1)

    def line(*where: int | str) -> int | None:
        [found] = lines_in(text, [where], 1)
        return found

    title, description = _text(data, "name", line), _text(data, "description", line)
    _text(data, "model", line)
    _parameters(data.get("modelParameters"), line)
    _response_format(data, line)
    roles, plans = _messages(data.get("messages"), line)
    names = list(dict.fromkeys(key for plan in plans for key in plan.keys))
    arguments = tuple(make_argument(n, description=f"fills {{{{{n}}}}}", required=True) for n in names)
    _evaluators(data.get("evaluators"), line)
    cases, _ = cases_of(data.get("testData"), names, line)
    tests, problems = parse_tests(cases, arguments, origin=f"testData of {rel}") if cases else (None, [])
    if problems:  # made here from rows already checked: a bound of the tests' own, at testData
        raise LineError(f"testData: {problems[0][0]}", line("testData"))

    def render(values: dict[str, Any], ctx: RenderContext) -> list[Message]:
        given = {n: str(values.get(n, "")) for n in names}

        def run() -> list[Message]:
            # Every message's length is known before any is made: many messages each repeating a long value
            # are refused before they take the memory.
            size = sum(len(p) if i % 2 == 0 else len(given.get(p, "")) for plan in plans
                       for i, p in enumerate(plan.parts))
            if size > MAX_OUTPUT_CHARS:
                raise RenderLimitError(f"rendered text is longer than {MAX_OUTPUT_CHARS} characters")
            out = []
            for role, plan in zip(roles, plans, strict=True):
                rendered = plan.render(given)
                if rendered.strip():
                    out.append(Message("assistant" if role == "assistant" else "user", Text(rendered)))
            return out

        return run_bounded(run, ctx.prompt)  # type: ignore[no-any-return]

    settings: dict[str, Any] = {str(k): json_safe(v) for k, v in data.items()
                                if k not in ("name", "description", "messages")}
    scopes = pop_scopes(settings, lambda key: line(key))
    if any(role != "user" for role in roles):
        settings["roles"] = roles
    meta: dict[str, Any] = {META_FORMAT: FORMAT}
    if settings:
        meta[META_MODEL] = settings
    # A ``name:`` that is the prompt's own name is no title: what ``export --to github-models`` writes for
    # a prompt without one.
    return Prompt(name, render, title=None if title == name else title, description=description,
                  arguments=arguments, source=rel, work=LIGHT, scopes=scopes, meta=meta, tests=tests)


def _text(data: Mapping[str, Any], key: str, line: Any) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise LineError(f"{key} must be text", line(key))
    return value


def _parameters(raw: object, line: Any) -> None:
    if raw is None:
        return
    if not isinstance(raw, dict):
        raise LineError("modelParameters must be a mapping (temperature, maxTokens, topP)", line("modelParameters"))
    for key, kind in _PARAMETERS.items():
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or (kind is int and
                                                                             not isinstance(value, int)):
            what = "a whole number" if kind is int else "a number"
            raise LineError(f"modelParameters.{key} must be {what}", line("modelParameters", key))


def _response_format(data: Mapping[str, Any], line: Any) -> None:
    kind = data.get("responseFormat")
    if kind is not None and kind not in _RESPONSE_FORMATS:
        raise LineError(f"responseFormat must be one of {', '.join(_RESPONSE_FORMATS)}", line("responseFormat"))
    schema = data.get("jsonSchema")
    if schema is not None and not isinstance(schema, str):
        raise LineError("jsonSchema must be a JSON text (gh models reads no YAML mapping there)", line("jsonSchema"))
    if kind == "json_schema" and schema is None:
        raise LineError("responseFormat json_schema needs a jsonSchema", line("responseFormat"))


def _messages(raw: object, line: Any) -> tuple[list[str], list[Plan]]:
    if not isinstance(raw, list) or not raw:
        raise LineError("messages must be a list of {role, content}", line("messages") or 1)
    roles: list[str] = []
    plans: list[Plan] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise LineError(f"message {i + 1} must be a mapping with role and content", line("messages", i))
        role, content = item.get("role"), item.get("content")
        if not isinstance(role, str) or role.lower() not in ROLES:
            raise LineError(f"message {i + 1}: role must be one of {', '.join(ROLES)}", line("messages", i, "role"))
        if not isinstance(content, str):
            raise LineError(f"message {i + 1}: content must be text", line("messages", i, "content"))
        roles.append(role.lower())
        plans.append(Plan(content, PLACEHOLDER, lambda m: m.group(1)))
    return roles, plans


def _evaluators(raw: object, line: Any) -> None:
    if raw is None:
        return
    if not isinstance(raw, list):
        raise LineError("evaluators must be a list", line("evaluators"))
    for i, item in enumerate(raw):
        where = ("evaluators", i)
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise LineError(f"evaluator {i + 1} must be a mapping with a name", line(*where))
        kinds = [k for k in ("string", "llm", "uses") if item.get(k) is not None]
        if len(kinds) != 1:
            raise LineError(f"evaluator {item['name']!r} needs one of string, llm or uses", line(*where))
        check = item.get("string")
        if check is not None and (not isinstance(check, dict) or len(check) != 1
                                  or next(iter(check)) not in _STRING_CHECKS
                                  or not isinstance(next(iter(check.values())), str)):
            raise LineError(f"evaluator {item['name']!r}: string takes one of {', '.join(_STRING_CHECKS)}, "
                            f"with a text", line(*where, "string"))
        if item.get("uses") is not None and not isinstance(item["uses"], str):
            raise LineError(f"evaluator {item['name']!r}: uses must be text", line(*where, "uses"))
        if item.get("llm") is not None and not isinstance(item["llm"], dict):
            raise LineError(f"evaluator {item['name']!r}: llm must be a mapping", line(*where, "llm"))


def cases_of(raw: object, names: Sequence[str], line: Any = None) -> tuple[list[dict[str, Any]], list[str]]:
    """promptdeck's test cases made of ``testData`` (one per row that can be one), and why each other row is
    not one. A row's values for the prompt's placeholders become the case's vars, and the case checks that
    each non-empty value is in the rendered text (what a render can check; the evaluators judge the model's
    answer). Keys that fill no placeholder (``expected``) stay in the file's settings for ``gh models eval``."""
    if raw is None:
        return [], []
    if not isinstance(raw, list) or not all(isinstance(row, dict) for row in raw):
        raise LineError("testData must be a list of mappings of values", line("testData") if line else None)
    cases: list[dict[str, Any]] = []
    left: list[str] = []
    for i, row in enumerate(raw):
        if len(cases) == MAX_CASES:
            left.append(f"testData rows {i + 1} to {len(raw)} are not tests: at most {MAX_CASES} are")
            break
        values = {k: row[k] for k in names if k in row}
        missing = [k for k in names if k not in row]
        unfit = [k for k, v in values.items() if isinstance(v, dict | list) or v is None
                 or len(wire_text(v)) > MAX_VALUE_CHARS]
        if missing or unfit or not values:
            why = (f"it gives no value for {', '.join(map(repr, missing))}" if missing else
                   f"its value for {unfit[0]!r} is not a text of at most {MAX_VALUE_CHARS} characters" if unfit
                   else "the messages have no placeholder to check")
            left.append(f"testData row {i + 1} is not a test: {why}")
            continue
        texts = [wire_text(v) for v in values.values()]
        asserts = [{"type": "contains", "value": t} for t in dict.fromkeys(texts) if t][:50]
        if not asserts:
            left.append(f"testData row {i + 1} is not a test: its values are empty")
            continue
        cases.append({"description": f"testData row {i + 1}", "vars": {k: wire_text(v) for k, v in values.items()},
                      "assert": asserts})
    return cases, left


def warnings(prompt: Prompt) -> list[str]:
    """What ``check`` says of a prompt read from this format: the testData rows that are no test, and each
    evaluator, which judges the model's answer and so is kept (for ``gh models eval`` and export), not run."""
    settings = prompt.meta.get(META_MODEL)
    if prompt.meta.get(META_FORMAT) != FORMAT or not isinstance(settings, dict):
        return []
    _, out = cases_of(settings.get("testData"), [a.name for a in prompt.arguments])
    for item in settings.get("evaluators") or []:
        kind = ("string " + " ".join(f"{k} {v!r}" for k, v in item["string"].items()) if item.get("string")
                else f"uses {item['uses']}" if item.get("uses") else "llm")
        out.append(f"evaluator {item['name']!r} ({kind}) judges the model's answer, not the rendered prompt: "
                   f"kept for gh models eval, not run by promptdeck's tests")
    return out


__all__ = ["ENDING", "FORMAT", "PLACEHOLDER", "ROLES", "read", "cases_of", "warnings"]

