"""What ``Prompts`` gives back (application/rendered.py): a listing read from a ``prompts/list`` entry, a render
read from a ``prompts/get`` result (its version, label and rollout the result's, else the listing's), its text,
and its provider formats, which are ``promptdeck.providers``' conversions of its messages (tested there against
each provider's SDK types): here, that each method hands its messages over unchanged and gives the result back."""

from __future__ import annotations

from typing import Any

import pytest

from promptdeck import Prompts, providers
from promptdeck.application.rendered import PromptListing, Rendered
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES


@pytest.mark.parametrize("name", sorted(EXAMPLE_ARGS))
def test_each_conversion_is_the_providers_of_the_rendered_messages(name: str) -> None:
    with Prompts(str(EXAMPLES), watch=False) as prompts:
        rendered = prompts.render(name, **EXAMPLE_ARGS[name])
    for method in ("to_openai", "to_openai_responses", "to_anthropic", "to_gemini"):
        for system in (None, "Be brief."):
            try:
                expected = getattr(providers, method)(rendered.messages, system=system)
            except providers.ConversionError as exc:
                with pytest.raises(providers.ConversionError) as caught:
                    getattr(rendered, method)(system=system)
                assert str(caught.value) == str(exc)
                continue
            assert getattr(rendered, method)(system=system) == expected
    assert rendered.to_openai()  # every example gives at least one message


ENTRY: dict[str, Any] = {"name": "review", "title": "Review", "description": "Reviews code",
         "arguments": [{"name": "code", "required": True}, "junk"],
         "_meta": {"promptdeck.dev/model": {"name": "gpt-x", "temperature": 0.2}, "promptdeck.dev/version": 7,
                   "promptdeck.dev/label": "production", "other": 1}}


def test_a_listing_from_its_wire_entry() -> None:
    listing = PromptListing.from_wire(ENTRY)
    assert listing == PromptListing(name="review", title="Review", description="Reviews code",
                                    arguments=({"name": "code", "required": True},),
                                    model={"name": "gpt-x", "temperature": 0.2}, version=7, label="production",
                                    meta=ENTRY["_meta"])
    bare = PromptListing.from_wire({"name": "x", "title": 5, "arguments": "nope",
                                    "_meta": {"promptdeck.dev/version": True, "promptdeck.dev/model": "m"}})
    assert (bare.title, bare.arguments, bare.version, bare.model, bare.label) == (None, (), None, None, None)


def test_a_render_names_what_its_result_says_was_rendered() -> None:
    listing = PromptListing.from_wire(ENTRY)
    result = {"description": "d", "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
              "_meta": {"promptdeck.dev/version": 8, "promptdeck.dev/label": "canary", "promptdeck.dev/rollout": 3}}
    rendered = Rendered.of_result("review", result, listing, stale=False, source="sqlite:///s.db")
    assert (rendered.version, rendered.label, rendered.rollout, rendered.model) == (8, "canary", 3, listing.model)
    plain = Rendered.of_result("review", {"messages": []}, listing, stale=True, source="f", label="other")
    assert (plain.version, plain.label, plain.rollout, plain.stale, plain.description) == (7, "production", None,
                                                                                           True, None)
    unlabelled = Rendered.of_result("x", {"messages": [], "_meta": {"promptdeck.dev/rollout": True}},
                                    PromptListing("x"), stale=False, source="f", label="given")
    assert (unlabelled.label, unlabelled.rollout) == ("given", None)


def test_the_text_of_every_text_block_and_embedded_text() -> None:
    rendered = Rendered("x", [
        {"role": "user", "content": {"type": "text", "text": "one"}},
        {"role": "user", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}},
        {"role": "assistant", "content": {"type": "resource", "resource": {"uri": "f:///a", "text": "two"}}},
        {"role": "user", "content": {"type": "resource", "resource": {"uri": "f:///b", "blob": "AA=="}}},
        {"role": "user", "content": "not a block"}])
    assert rendered.text() == "one\n\ntwo"

