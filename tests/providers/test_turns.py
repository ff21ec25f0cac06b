"""What every provider conversion reads (providers/turns.py): messages in any form an application holds them,
one part per message sorted into kinds, blank text left out, consecutive roles grouped into turns, and a
malformed message refused naming its index."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from promptdeck.protocol.content import Message, Text, user
from promptdeck.protocol.errors import ConversionError
from promptdeck.providers.turns import Part, Turn, check_system, data_uri, media_type, read, turns

PNG = base64.b64encode(b"\x89PNG fake").decode()


def wire(role: str, content: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "content": content}


def test_every_form_of_the_messages_reads_the_same() -> None:
    as_wire = [wire("user", {"type": "text", "text": "hi"})]
    typed = [user("hi")]
    expected = [Part(0, "user", "text", text="hi")]
    assert read(as_wire, "X") == read(typed, "X") == read({"messages": as_wire}, "X") == expected

    class Result:
        messages = (Message(role="user", content=Text(text="hi")),)

    assert read(Result(), "X") == expected


def test_each_content_block_becomes_its_kind() -> None:
    pdf = base64.b64encode(b"%PDF-1.4").decode()
    parts = read([
        wire("user", {"type": "image", "data": PNG, "mimeType": "image/JPG; q=1"}),
        wire("user", {"type": "audio", "data": PNG, "mimeType": "audio/wav"}),
        wire("user", {"type": "resource", "resource": {"uri": "file:///a.py", "mimeType": "text/x-python",
                                                       "text": "print(1)"}}),
        wire("user", {"type": "resource", "resource": {"uri": "file:///d/r%201.pdf", "mimeType": "application/pdf",
                                                       "blob": pdf}}),
        wire("user", {"type": "resource", "resource": {"uri": "file:///x.bin", "blob": pdf}}),
        wire("assistant", {"type": "resource_link", "uri": "file:///y", "name": "y"}),
    ], "X")
    assert [(p.kind, p.mime_type) for p in parts] == [
        ("image", "image/jpeg"), ("audio", "audio/wav"), ("document", "text/x-python"), ("pdf", "application/pdf"),
        ("blob", "application/octet-stream"), ("text", "")]
    assert parts[2].text == "print(1)" and parts[3].file_name() == "r 1.pdf" and parts[3].data == pdf
    assert "file:///y" in parts[5].text
    assert [p.index for p in parts] == [0, 1, 2, 3, 4, 5]


def test_blank_text_is_left_out_and_roles_make_turns() -> None:
    parts = read([wire("user", {"type": "text", "text": "a"}), wire("user", {"type": "text", "text": "  \n"}),
                  wire("user", {"type": "text", "text": "b"}), wire("assistant", {"type": "text", "text": "c"}),
                  wire("user", {"type": "text", "text": "d"})], "X")
    assert [p.index for p in parts] == [0, 2, 3, 4]
    assert [(turn.role, [p.text for p in turn.parts]) for turn in turns(parts)] == [
        ("user", ["a", "b"]), ("assistant", ["c"]), ("user", ["d"])]
    assert turns([]) == [] and isinstance(turns(parts)[0], Turn)


@pytest.mark.parametrize(("messages", "says"), [
    ({"prompt": "x"}, "X: expected a prompts/get result or a list of messages; got a mapping without 'messages'"),
    ("hello", "X: expected a list of MCP prompt messages, got str"),
    ([wire("user", {"type": "text", "text": "ok"}), wire("system", {"type": "text", "text": "no"})],
     "X: message 1: not an MCP prompt message"),
    ([wire("user", {"type": "hologram"})], "X: message 0: not an MCP prompt message"),
    ([42], "X: message 0: not an MCP prompt message: int"),
])
def test_what_is_not_a_prompts_messages_is_refused_naming_where(messages: Any, says: str) -> None:
    with pytest.raises(ConversionError) as caught:
        read(messages, "X")
    assert str(caught.value).startswith(says)


def test_small_helpers() -> None:
    assert media_type(" Image/PNG ; charset=x") == "image/png" and media_type(None) == ""
    part = Part(0, "user", "image", mime_type="image/png", data=PNG)
    assert data_uri(part) == f"data:image/png;base64,{PNG}"
    assert part.what() == "an image (image/png)" and Part(0, "user", "blob").what() == \
        "an embedded binary resource (no MIME type)"
    assert Part(0, "user", "pdf", uri="urn:x").file_name() == "x" and Part(0, "user", "pdf").file_name() == "file"
    check_system("X", None)
    with pytest.raises(ConversionError, match="X: system must be a string, not int"):
        check_system("X", 5)
