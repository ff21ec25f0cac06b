"""A plain prompt's precompiled render (prompts/plain.py) makes exactly what ``arguments.bind`` then each
template's render make, and answers None (for the general way to refuse in its own words) for every argument
those refuse: unknown, missing, of the wrong type or kind, too long, out of its choices, and a text over the
output cap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from promptdeck.prompts import plain as plain_module
from promptdeck.prompts.arguments import MAX_VALUE_LENGTH, bind
from promptdeck.prompts.plain import PlainRender
from promptdeck.prompts.spec import Prompt
from promptdeck.protocol.errors import InvalidParams
from promptdeck.sources.files.source import FileSource

PLAIN = """---
arguments:
  - {name: topic, required: true}
  - {name: note}
  - {name: count, type: integer, default: 3}
  - {name: tone, enum: [formal, casual], default: casual}
  - {name: flag, type: boolean, default: false}
---
About {{ topic }}, {{ tone }}: {{ flag }}.
assistant:
Tell me {{ count }} things about {{ topic }} ({{ note }}).
user:
{{ note }}
"""
JINJA = "---\narguments:\n  - {name: xs, required: true}\n---\n{% for x in xs %}{{ x }}{% endfor %}\n"


def _prompts(tmp_path: Path) -> dict[str, Prompt]:
    (tmp_path / "plain.md").write_text(PLAIN, encoding="utf-8")
    (tmp_path / "loop.md").write_text(JINJA, encoding="utf-8")
    source = FileSource(tmp_path)
    assert source.load(compile_all=True) == []
    return {p.name: p.parsed() for p in source.prompts()}


def _general(prompt: Prompt, given: dict[str, Any]) -> list[dict[str, Any]]:
    """What ``plain_render`` makes: ``bind``, then each template's render, blank messages left out."""
    assert prompt.plain is not None
    values = bind(prompt.arguments, given, prompt.name)
    texts = [(role, template.render(values)) for role, template in prompt.plain]
    return [{"role": role, "content": {"type": "text", "text": text}} for role, text in texts if text.strip()]


@pytest.mark.parametrize("given", [
    {"topic": "t", "note": "n"},
    {"topic": "<b>&amp;</b> {{ note }}", "note": "{% for x in y %}", "count": "7", "tone": "formal", "flag": "yes"},
    {"topic": "café ☕ \U0001f600", "note": "", "count": " 10 ", "flag": "0"},
    {"topic": "x" * MAX_VALUE_LENGTH, "note": "n"},
])
def test_it_makes_what_bind_and_the_templates_make(tmp_path: Path, given: dict[str, Any]) -> None:
    prompt = _prompts(tmp_path)["plain"]
    made = PlainRender.of(prompt)
    assert made is not None
    assert made.messages(given) == _general(prompt, given)


def test_a_message_that_renders_blank_is_left_out(tmp_path: Path) -> None:
    prompt = _prompts(tmp_path)["plain"]
    made = PlainRender.of(prompt)
    assert made is not None
    got = made.messages({"topic": "t", "note": " "})
    assert got is not None and [m["role"] for m in got] == ["user", "assistant"]
    assert got == _general(prompt, {"topic": "t", "note": " "})


@pytest.mark.parametrize("given", [
    {"topic": "t", "note": "n", "colour": "red"},   # unknown
    {"note": "n"},                                  # a required one missing
    {"topic": "t"},                                 # an optional one the text uses left out
    {"topic": 3, "note": "n"},                      # not a string on the wire
    {"topic": "x" * (MAX_VALUE_LENGTH + 1), "note": "n"},
    {"topic": "t", "note": "n", "count": "many"},   # not an integer
    {"topic": "t", "note": "n", "tone": "rude"},    # not one of its choices
    {"topic": "t", "note": "n", "flag": "maybe"},
])
def test_what_bind_or_a_template_refuses_it_leaves_to_the_general_way(tmp_path: Path, given: dict[str, Any]) -> None:
    prompt = _prompts(tmp_path)["plain"]
    made = PlainRender.of(prompt)
    assert made is not None
    assert made.messages(given) is None
    with pytest.raises(Exception) as caught:  # noqa: B017 - InvalidParams from bind, RenderFailure from a template
        _general(prompt, given)
    assert isinstance(caught.value, InvalidParams) or "undefined" in str(caught.value)


def test_a_text_over_the_output_cap_is_left_to_the_general_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prompt = _prompts(tmp_path)["plain"]
    made = PlainRender.of(prompt)
    assert made is not None
    monkeypatch.setattr(plain_module, "MAX_OUTPUT_CHARS", 100)
    assert made.messages({"topic": "t", "note": "n" * 60}) is not None
    assert made.messages({"topic": "t", "note": "n" * 101}) is None


def test_a_prompt_that_is_not_plain_has_none(tmp_path: Path) -> None:
    assert PlainRender.of(_prompts(tmp_path)["loop"]) is None
