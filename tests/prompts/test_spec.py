"""A prompt as the server knows it (prompts/spec.py): its name rule, its listing entry in full and as each
revision shows it, its arguments by name, progress reports and what it composes."""

from __future__ import annotations

from typing import Any

import pytest

from promptdeck.prompts.arguments import make_argument
from promptdeck.prompts.spec import META_ARGUMENTS, META_TAGS, Prompt, RenderContext, for_revision
from promptdeck.protocol.content import Message, user
from promptdeck.protocol.revisions import R2024_11_05, R2025_06_18, R2025_11_25


def render(args: dict[str, Any], ctx: RenderContext) -> list[Message]:
    return [user(f"hello {args.get('who', '')}")]


def full() -> Prompt:
    return Prompt("greet", render, title="Greet", description="Says hello",
                  arguments=(make_argument("who", title="Who", description="whom to greet", required=True),),
                  icons=({"src": "https://example.com/i.png"},), tags=frozenset({"b", "a"}),
                  meta={"promptdeck.dev/version": 3})


@pytest.mark.parametrize("name", ["a", "code-review", "v1.2_x", "_hidden", "x" * 128])
def test_good_names(name: str) -> None:
    assert Prompt(name, render).name == name


@pytest.mark.parametrize("name", ["", "-lead", ".lead", "has space", "slash/name", "x" * 129, "tail\n"])
def test_a_bad_name_is_refused_naming_it(name: str) -> None:
    with pytest.raises(ValueError, match="prompt name") as caught:
        Prompt(name, render)
    assert repr(name) in str(caught.value)


def test_the_full_listing_holds_everything_any_revision_shows() -> None:
    listing = full().listing()
    assert listing["name"] == "greet" and listing["title"] == "Greet" and listing["description"] == "Says hello"
    assert listing["arguments"] == [{"name": "who", "title": "Who", "description": "whom to greet",
                                     "required": True}]
    assert listing["icons"] == [{"src": "https://example.com/i.png"}]
    meta = listing["_meta"]
    assert meta[META_TAGS] == ["a", "b"]  # sorted: the same bytes whatever the set's order
    assert meta[META_ARGUMENTS]["required"] == ["who"] and "who" in meta[META_ARGUMENTS]["properties"]
    assert meta["promptdeck.dev/version"] == 3


def test_a_bare_prompt_lists_its_name_only() -> None:
    assert Prompt("bare", render).listing() == {"name": "bare"}


def test_each_revision_shows_what_it_has() -> None:
    prompt = full()
    old = prompt.descriptor(R2024_11_05)
    assert set(old) == {"name", "description", "arguments"}
    assert old["arguments"] == [{"name": "who", "description": "whom to greet", "required": True}]
    middle = prompt.descriptor(R2025_06_18)
    assert set(middle) == {"name", "title", "description", "arguments", "_meta"}
    assert prompt.descriptor(R2025_11_25) == prompt.listing()
    assert prompt.descriptor(R2024_11_05) is old  # made once per revision


def test_for_revision_leaves_the_full_entry_untouched() -> None:
    listing = full().listing()
    shown = for_revision(listing, R2024_11_05)
    assert "title" not in shown and "title" in listing and "title" in listing["arguments"][0]


def test_with_meta_adds_to_the_listing_and_keeps_the_rest() -> None:
    prompt = full()
    more = prompt.with_meta({"promptdeck.dev/label": "prod"})
    assert more.listing()["_meta"]["promptdeck.dev/label"] == "prod"
    assert more.listing()["_meta"]["promptdeck.dev/version"] == 3
    assert "promptdeck.dev/label" not in prompt.listing()["_meta"]
    assert more.render is prompt.render and more.arguments == prompt.arguments


def test_arguments_by_name() -> None:
    prompt = full()
    found = prompt.argument("who")
    assert found is not None and found.required
    assert prompt.argument("nobody") is None


def test_progress_reaches_the_reporter_when_there_is_one() -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    RenderContext("p", lambda done, total, message: seen.append((done, total, message))).progress(1, 2, "half")
    RenderContext("p").progress(1)  # nobody asked: nothing happens, nothing fails
    assert seen == [(1, 2, "half")]


def test_uses_are_computed_once_when_given_lazily() -> None:
    from promptdeck.prompts.composition import NO_USES

    calls: list[int] = []

    def lazily() -> Any:
        calls.append(1)
        return NO_USES

    prompt = Prompt("lazy", render, uses=lazily)
    assert prompt.known_uses() is None  # not compiled yet
    assert prompt.uses is NO_USES and prompt.uses is NO_USES
    assert calls == [1]
    assert prompt.known_uses() is NO_USES
    assert Prompt("none", render).uses is NO_USES
