"""The prompt record (prompts/spec.py): frozen, changed only by ``replace`` (a copy whose caches start
afresh), its own copies of what it is given, and its listing entry per revision."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from promptdeck.prompts.arguments import make_argument
from promptdeck.prompts.composition import NO_USES, Uses
from promptdeck.prompts.spec import META_ARGUMENTS, Prompt, RenderContext
from promptdeck.protocol.content import Message
from promptdeck.protocol.revisions import LATEST, REVISIONS


def render(values: dict[str, Any], ctx: RenderContext) -> list[Message]:
    return []


def test_a_prompt_cannot_be_changed_in_place() -> None:
    prompt = Prompt("p", render, description="d")
    for field, value in (("description", "other"), ("tests", None), ("meta", {}), ("name", "q")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(prompt, field, value)
    assert prompt.description == "d"


def test_replace_is_a_changed_copy_whose_caches_start_afresh() -> None:
    topic = make_argument("topic", required=True)
    prompt = Prompt("p", render, arguments=(topic,), meta={"k": 1})
    assert prompt.descriptor(LATEST)["_meta"]["k"] == 1  # cached
    tone = make_argument("tone")
    changed = prompt.replace(arguments=(tone,), meta={"k": 2})
    assert changed is not prompt and changed.render is render and changed.name == "p"
    assert changed.argument("tone") is tone and changed.argument("topic") is None
    assert changed.descriptor(LATEST)["_meta"]["k"] == 2
    assert [a["name"] for a in changed.descriptor(LATEST)["arguments"]] == ["tone"]
    assert prompt.argument("topic") is topic and prompt.descriptor(LATEST)["_meta"]["k"] == 1
    with pytest.raises(ValueError, match="prompt name"):
        prompt.replace(name="no way")


def test_with_meta_adds_to_the_listing_and_keeps_everything_else() -> None:
    lazy = Prompt("p", render, composes=lambda: Uses(frozenset({"f"})), meta={"a": 1}, tags=frozenset({"t"}))
    more = lazy.with_meta({"b": 2})
    assert more.meta == {"a": 1, "b": 2} and lazy.meta == {"a": 1}
    assert more.tags == lazy.tags and more.composes is lazy.composes
    assert lazy.known_uses() is None and more.uses.files == {"f"} and lazy.known_uses() is None
    assert Prompt("q", render).uses is NO_USES


def test_a_prompt_keeps_its_own_copies_of_the_mappings_it_is_given() -> None:
    meta: dict[str, Any] = {"k": 1}
    completers: dict[str, Any] = {}
    prompt = Prompt("p", render, meta=meta, completers=completers)
    meta["k"], completers["x"] = 2, lambda value, filled: []
    assert prompt.meta == {"k": 1} and dict(prompt.completers) == {}


def test_prompts_are_compared_by_identity() -> None:
    one, two = Prompt("p", render), Prompt("p", render)
    assert one != two and one == one and len({one, two}) == 2


def test_the_listing_shows_per_revision_what_the_revision_has() -> None:
    prompt = Prompt("p", render, title="T", arguments=(make_argument("x"),), icons=({"src": "a.png"},))
    oldest = prompt.descriptor(REVISIONS["2024-11-05"])
    assert "title" not in oldest and "_meta" not in oldest and "icons" not in oldest
    latest = prompt.descriptor(LATEST)
    assert latest["title"] == "T" and META_ARGUMENTS in latest["_meta"] and latest["icons"] == [{"src": "a.png"}]
