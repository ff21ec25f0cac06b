"""``export --to promptfoo``: a library's prompts and their tests as a promptfoo project (docs/export.md).

Each prompt becomes a file under ``prompts/``: ``NAME.txt`` for a prompt of one user message, else
``NAME.json``, a chat (a list of ``{role, content}``), which promptfoo sends as the conversation. Its arguments
become Nunjucks holes (``{{ name }}``), and text that Nunjucks would read is kept in ``{% raw %}``.

``promptfooconfig.yaml`` lists every prompt (``file://`` path, labelled with its name) and every test case,
each limited to its prompt (``prompts: [NAME]``), with the vars of the case plus the defaults promptdeck
applies. Its provider is promptfoo's ``echo``, which answers with the prompt itself: ``promptfoo eval`` then
checks the rendered prompt as ``promptdeck test`` does, offline (a chat prompt's tests carry a ``transform``
that turns echo's JSON back into the text promptdeck checks); put a real model there, and drop those
transforms, to check what it answers instead. promptdeck's ``max-length`` is promptfoo's ``javascript``
(``output.length <= N``); a case that expects an error has no promptfoo form and is left out, with a warning.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from ..prompts.arguments import MISSING, wire_text
from ..prompts.spec import Prompt
from ..prompts.testcases import Assertion, Case
from .shapes import Shape

CONFIG = "promptfooconfig.yaml"
_NUNJUCKS_SYNTAX = re.compile(r"\{\{|\{%|\{#|%\}|\}\}|#\}")
#: The JSON schema promptfoo publishes for this file, named at its top for editors.
_SCHEMA_LINE = "# yaml-language-server: $schema=https://promptfoo.dev/config-schema.json\n"


def _literal(text: str) -> str:
    # Text is text: what looks like Nunjucks is kept from being read as such.
    return "{% raw %}" + text + "{% endraw %}" if _NUNJUCKS_SYNTAX.search(text) else text


def prompt_file(shape: Shape) -> tuple[str, str, list[str]]:
    """(path, text, warnings) of ``shape``'s prompt as promptfoo reads it."""
    messages = [(role, "".join(_literal(p) if isinstance(p, str) else "{{ " + p.name + " }}" for p in parts))
                for role, parts in shape.messages]
    name = shape.prompt.name
    if len(messages) == 1 and messages[0][0] == "user":
        return f"prompts/{name}.txt", messages[0][1], []  # as rendered: no newline added
    chat = json.dumps([{"role": role, "content": text} for role, text in messages], indent=2, ensure_ascii=False)
    return f"prompts/{name}.json", chat + "\n", []


def _assertion(assertion: Assertion) -> dict[str, Any]:
    if assertion.kind == "max-length":
        sign = ">" if assertion.negated else "<="
        return {"type": "javascript", "value": f"output.length {sign} {int(assertion.value)}"}
    out: dict[str, Any] = {"type": assertion.type}
    value = assertion.value
    # promptfoo renders an assertion's value as a Nunjucks template with the vars, as it does the prompt.
    if isinstance(value, str):
        out["value"] = _literal(value)
    elif isinstance(value, list):
        out["value"] = [_literal(v) if isinstance(v, str) else v for v in value]
    elif value is not None:
        out["value"] = value
    return out


def _case(prompt: Prompt, case: Case, several: bool, warnings: list[str]) -> dict[str, Any] | None:
    if case.error_code is not None:
        warnings.append(f"test {case.label()} expects error {case.error_code}, which promptfoo cannot check; "
                        f"left out")
        return None
    values = {a.name: wire_text(a.default) for a in prompt.arguments
              if a.default is not MISSING and a.name not in case.vars}
    out: dict[str, Any] = {}
    if case.description:
        out["description"] = case.description
    out["vars"] = {**values, **case.vars}
    out["prompts"] = [prompt.name]
    out["metadata"] = {"promptdeckCase": case.index + 1}  # which case of the prompt's tests this is
    out["assert"] = [_assertion(a) for a in case.asserts]
    if several:
        # The echo provider answers a chat with its JSON: back to the text promptdeck's assertions read (all
        # messages' joined by a blank line, or message N's). A real model answers text: drop it there.
        if case.message is not None:
            transform = f"JSON.parse(output)[{case.message - 1}].content"
        else:
            transform = 'JSON.parse(output).map((m) => m.content).join("\\n\\n")'
        out["options"] = {"transform": transform}
    return out


def config(files: Iterable[tuple[Shape, str]]) -> tuple[str, dict[str, list[str]]]:
    """The text of ``promptfooconfig.yaml`` for the shapes given with the path of each one's prompt file, and
    the warnings about each prompt's tests by its name."""
    import yaml  # not at import time: the CLI imports the export modules for their list of targets

    prompts: list[dict[str, str]] = []
    tests: list[dict[str, Any]] = []
    warned: dict[str, list[str]] = {}
    for shape, path in files:
        prompt = shape.prompt
        prompts.append({"id": f"file://{path}", "label": prompt.name})
        if prompt.tests is None:
            continue
        several = path.endswith(".json")  # a chat file
        fixed = {name for name in shape.fixed if any(name in c.vars for c in prompt.tests.cases)}
        warnings = warned.setdefault(prompt.name, [])
        for name in sorted(fixed):
            warnings.append(f"argument {name!r} is fixed in the prompt file; the tests' values for it are not used")
        for case in prompt.tests.cases:
            found = _case(prompt, case, several, warnings)
            if found is not None:
                tests.append(found)
    document = {
        "description": "Exported by promptdeck: each prompt's tests, checked against the prompt itself (echo)",
        "prompts": prompts,
        "providers": ["echo"],
        "tests": tests,
    }
    return _SCHEMA_LINE + yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=1000), warned
