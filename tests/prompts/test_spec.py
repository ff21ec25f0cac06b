"""A prompt as the server knows it (prompts/spec.py): a frozen record changed only by ``replace`` (a copy whose
caches start afresh), its name rule, its listing entry in full and as each revision shows it, its arguments by
name, progress reports and what it composes."""

from __future__ import annotations

from typing import Any

import pytest

from promptdeck.prompts.arguments import make_argument
from promptdeck.prompts.composition import NO_USES, Uses
from promptdeck.prompts.spec import META_ARGUMENTS, META_TAGS, FrozenError, Prompt, RenderContext, for_revision
from promptdeck.protocol.content import Message, user
from promptdeck.protocol.revisions import LATEST, R2024_11_05, R2025_06_18, R2025_11_25, REVISIONS


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

    prompt = Prompt("lazy", render, composes=lazily)
    assert prompt.known_uses() is None  # not compiled yet
    assert prompt.uses is NO_USES and prompt.uses is NO_USES
    assert calls == [1]
    assert prompt.known_uses() is NO_USES
    assert Prompt("none", render).uses is NO_USES


def no_messages(values: dict[str, Any], ctx: RenderContext) -> list[Message]:
    return []


def test_a_prompt_cannot_be_changed_in_place() -> None:
    prompt = Prompt("p", no_messages, description="d")
    for field, value in (("description", "other"), ("tests", None), ("meta", {}), ("name", "q")):
        with pytest.raises(FrozenError):
            setattr(prompt, field, value)
    assert prompt.description == "d"


def test_replace_is_a_changed_copy_whose_caches_start_afresh() -> None:
    topic = make_argument("topic", required=True)
    prompt = Prompt("p", no_messages, arguments=(topic,), meta={"k": 1})
    assert prompt.descriptor(LATEST)["_meta"]["k"] == 1  # cached
    tone = make_argument("tone")
    changed = prompt.replace(arguments=(tone,), meta={"k": 2})
    assert changed is not prompt and changed.render is no_messages and changed.name == "p"
    assert changed.argument("tone") is tone and changed.argument("topic") is None
    assert changed.descriptor(LATEST)["_meta"]["k"] == 2
    assert [a["name"] for a in changed.descriptor(LATEST)["arguments"]] == ["tone"]
    assert prompt.argument("topic") is topic and prompt.descriptor(LATEST)["_meta"]["k"] == 1
    with pytest.raises(ValueError, match="prompt name"):
        prompt.replace(name="no way")


def test_with_meta_adds_to_the_listing_and_keeps_everything_else() -> None:
    lazy = Prompt("p", no_messages, composes=lambda: Uses(frozenset({"f"})), meta={"a": 1}, tags=frozenset({"t"}))
    more = lazy.with_meta({"b": 2})
    assert more.meta == {"a": 1, "b": 2} and lazy.meta == {"a": 1}
    assert more.tags == lazy.tags and more.composes is lazy.composes
    assert lazy.known_uses() is None and more.uses.files == {"f"} and lazy.known_uses() is None
    assert Prompt("q", no_messages).uses is NO_USES


def test_a_prompt_keeps_its_own_copies_of_the_mappings_it_is_given() -> None:
    meta: dict[str, Any] = {"k": 1}
    completers: dict[str, Any] = {}
    prompt = Prompt("p", no_messages, meta=meta, completers=completers)
    meta["k"], completers["x"] = 2, lambda value, filled: []
    assert prompt.meta == {"k": 1} and dict(prompt.completers) == {}


def test_prompts_without_tags_scopes_completers_or_meta_share_one_read_only_empty_of_each() -> None:
    """A 100,000-file library held an empty frozenset or dict of its own in each of these (216 and 64 bytes)."""
    one, two = Prompt("p", no_messages), Prompt("q", no_messages, meta={}, completers={}, tags=frozenset())
    for field in ("tags", "scopes", "meta", "completers"):
        assert getattr(one, field) is getattr(two, field) and not getattr(one, field)
    with pytest.raises(TypeError):
        one.meta["k"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        one.completers["k"] = no_messages  # type: ignore[index]
    assert one.with_meta({"k": 1}).meta == {"k": 1} and one.meta == {} and two.meta == {}


def test_prompts_are_compared_by_identity() -> None:
    one, two = Prompt("p", no_messages), Prompt("p", no_messages)
    assert one != two and one == one and len({one, two}) == 2


def test_the_listing_shows_per_revision_what_the_revision_has() -> None:
    prompt = Prompt("p", no_messages, title="T", arguments=(make_argument("x"),), icons=({"src": "a.png"},))
    oldest = prompt.descriptor(REVISIONS["2024-11-05"])
    assert "title" not in oldest and "_meta" not in oldest and "icons" not in oldest
    latest = prompt.descriptor(LATEST)
    assert latest["title"] == "T" and META_ARGUMENTS in latest["_meta"] and latest["icons"] == [{"src": "a.png"}]
