"""A prompt's rendering with its arguments as holes (export/shapes.py): an argument only substituted stays a
hole, one the rendering does more with is fixed to a value and noted, an optional one's absence checked, text
that is not text noted, and a prompt that renders with no values at all refused naming it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from promptdeck.export.shapes import LEFT_OUT, Hole, ShapeError, sample_values, shape_of, shown_value
from promptdeck.export.writers import export
from promptdeck.prompts.arguments import Argument
from promptdeck.prompts.spec import Prompt
from promptdeck.protocol.content import assistant, user


def _python(name: str, fn: Any, *arguments: Argument) -> Prompt:
    return Prompt(name, lambda values, ctx: fn(**values), arguments=arguments)


def test_an_argument_only_substituted_is_a_hole_and_one_branched_on_is_fixed() -> None:
    text = Argument(name="text", required=True)
    loud = Argument(name="loud", type="boolean", default=False)
    prompt = _python("p", lambda text, loud=False: [user(f"Say {text.upper() if loud else text}.")], text, loud)
    shape = shape_of(prompt)
    assert [a.name for a in shape.holes] == ["text"]
    assert shape.fixed == {"loud": False}
    assert shape.text({"text": "<T>"}) == "Say <T>."
    assert any("'loud' is fixed to False" in note for note in shape.notes)


def test_a_filter_or_arithmetic_on_an_argument_fixes_it() -> None:
    word = Argument(name="word", required=True)
    count = Argument(name="count", type="integer", default=2, min=1, max=5)
    prompt = _python("p", lambda word, count=2: [user(f"{word.upper()} x{count * 2}")], word, count)
    shape = shape_of(prompt)
    assert shape.holes == [] and set(shape.fixed) == {"word", "count"}


def test_an_optional_argument_whose_absence_changes_the_text_is_noted() -> None:
    topic = Argument(name="topic")
    prompt = _python("p", lambda topic=None: [user("About " + topic if topic else "About anything")], topic)
    shape = shape_of(prompt)
    assert [a.name for a in shape.holes] == ["topic"]
    assert any("leaving out 'topic'" in note for note in shape.notes)


def test_roles_and_content_that_is_not_text() -> None:
    from promptdeck.protocol.content import Image

    name = Argument(name="name", required=True)
    prompt = _python("p", lambda name: [user(f"Hi {name}"), assistant("Hello!"), user(Image(b"x", "image/png"))],
                     name)
    shape = shape_of(prompt)
    assert [role for role, _ in shape.messages] == ["user", "assistant"]
    assert "an image message is left out" in shape.notes
    (written,) = export([prompt], "claude-code")
    assert "the assistant's messages become part of the user's text" in written.warnings
    (prompty,) = export([prompt], "prompty")
    assert prompty.text.endswith("user:\nHi {{name}}\n\nassistant:\nHello!\n")


def test_a_prompt_that_never_renders_is_refused_naming_it() -> None:
    def broken(**values: Any) -> Any:
        raise RuntimeError("always")

    with pytest.raises(ShapeError, match="prompt 'broken' does not render with its arguments' samples"):
        shape_of(_python("broken", broken, Argument(name="x", required=True)))


def test_an_async_prompt_is_shaped_as_a_sync_one() -> None:
    async def later(name: str) -> Any:
        await asyncio.sleep(0)
        return [user(f"Dear {name},")]

    shape = shape_of(Prompt("letter", lambda values, ctx: later(**values),
                            arguments=(Argument(name="name", required=True),)))
    assert shape.messages == [("user", ["Dear ", Hole("name"), ","])]


def test_a_left_out_argument_is_rendered_without_and_not_fixed() -> None:
    extra = Argument(name="extra")
    shape = shape_of(_python("p", lambda extra=None: [user("Base" + (f" {extra}" if extra else ""))], extra),
                     leave_out=("extra",))
    assert shape.holes == [] and shape.fixed == {} and shape.left_out == ["extra"]
    assert shape.text({}) == "Base" and repr(LEFT_OUT) == "LEFT_OUT"


def test_samples_and_shown_values() -> None:
    assert sample_values(Argument(name="n", type="integer", min=3, max=9, default=4)) == [4, 3, 9, 6]
    assert sample_values(Argument(name="c", enum=("a", "b", "c", "d"))) == ["a", "b", "c"]
    assert sample_values(Argument(name="b", type="boolean")) == [True, False]
    assert sample_values(Argument(name="s", examples=("ex",)))[0] == "ex"
    assert shown_value("") == "empty text" and shown_value(3) == "3"
    long = shown_value("x" * 100)
    assert len(long) == 38 and long.endswith("…'")
