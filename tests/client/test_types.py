"""The client's view of a server's prompts (client/types.py): every revision's answers decoded into one set of
frozen types, camelCase and ``_meta`` on the wire, unknown fields ignored, wrong types refused."""

from __future__ import annotations

import msgspec
import pytest

from promptdeck.client.types import (
    ArgumentInfo,
    Completion,
    PromptInfo,
    RenderedPrompt,
    TextContent,
)


def test_an_old_servers_entry_and_a_new_ones_decode_alike() -> None:
    old = msgspec.json.decode(b'{"name": "review", "description": "d", "arguments": [{"name": "code"}]}',
                              type=PromptInfo)
    assert old == PromptInfo(name="review", description="d", arguments=(ArgumentInfo(name="code"),))
    assert old.label == "review" and old.meta is None
    new = msgspec.json.decode(b'{"name": "review", "title": "Code review", "icons": [{"src": "i.png"}], '
                              b'"_meta": {"k": 1}, "futureField": true}', type=PromptInfo)
    assert new.label == "Code review" and new.icons == ({"src": "i.png"},) and new.meta == {"k": 1}


def test_encoding_leaves_defaults_out_and_names_fields_as_the_wire_does() -> None:
    assert msgspec.json.encode(PromptInfo(name="a", meta={"x": 1})) == b'{"name":"a","_meta":{"x":1}}'
    assert msgspec.json.decode(b'{"values": ["a", "b"], "total": 9, "hasMore": true}', type=Completion) == \
        Completion(values=("a", "b"), total=9, has_more=True)


def test_a_rendered_prompt_holds_the_servers_own_content_types() -> None:
    rendered = msgspec.json.decode(b'{"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}',
                                   type=RenderedPrompt)
    [message] = rendered.messages
    assert message.role == "user" and message.content == TextContent(text="hi")


def test_the_types_are_frozen() -> None:
    info = PromptInfo(name="a")
    with pytest.raises(AttributeError):
        info.name = "b"  # type: ignore[misc]


@pytest.mark.parametrize(("raw", "field"), [
    (b'{"title": "no name"}', "name"),
    (b'{"name": 5}', "name"),
    (b'{"name": "a", "arguments": [{"name": "x", "required": "yes"}]}', "required"),
])
def test_a_wrong_entry_is_refused_naming_the_field(raw: bytes, field: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=field):
        msgspec.json.decode(raw, type=PromptInfo)
