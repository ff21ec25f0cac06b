"""Content blocks (prompts/content.py) shaped for each protocol revision."""

from __future__ import annotations

import base64

import pytest

from promptdeck.protocol.content import (
    Annotations,
    Audio,
    Image,
    Message,
    ResourceLink,
    Text,
    assistant,
    content_to_wire,
    messages_to_wire,
    resource,
    user,
)
from promptdeck.protocol.errors import InternalError
from promptdeck.protocol.revisions import REVISIONS, Revision

R1, R2, R3, R4 = (REVISIONS[v] for v in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"))
ALL = [R1, R2, R3, R4]
MODERN = [R3, R4]
OLD = [R1, R2]
by_version = pytest.mark.parametrize("rev", ALL, ids=lambda r: r.version)

PNG = b"\x89PNG\r\n\x1a\n"
ANN = Annotations(("assistant",), 0.5, "2025-01-01T00:00:00Z")


@by_version
def test_text(rev: Revision) -> None:
    assert content_to_wire(Text("hi"), rev) == {"type": "text", "text": "hi"}
    assert content_to_wire(Text(""), rev) == {"type": "text", "text": ""}


@by_version
def test_image(rev: Revision) -> None:
    wire = content_to_wire(Image(PNG, "image/png"), rev)
    assert wire == {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}
    assert base64.b64decode(wire["data"]) == PNG


@pytest.mark.parametrize("rev", [R2, R3, R4], ids=lambda r: r.version)
def test_audio_from_2025_03_26(rev: Revision) -> None:
    assert content_to_wire(Audio(b"RIFF", "audio/wav"), rev) == {"type": "audio", "data": "UklGRg==",
                                                                "mimeType": "audio/wav"}


def test_audio_cannot_be_sent_to_2024_11_05() -> None:
    with pytest.raises(InternalError) as err:
        content_to_wire(Audio(b"RIFF", "audio/wav"), R1)
    assert err.value.code == -32603
    assert err.value.message == "Internal error"
    assert err.value.to_wire() == {"code": -32603, "message": "Internal error"}
    assert err.value.detail == "audio content cannot be sent to a 2024-11-05 client"
    with pytest.raises(InternalError):
        messages_to_wire([user("fine"), assistant(Audio(b"x", "audio/mpeg"))], R1)


@by_version
def test_embedded_text_resource(rev: Revision) -> None:
    assert content_to_wire(resource("u:1", "text/plain", text="t"), rev) == {
        "type": "resource", "resource": {"uri": "u:1", "mimeType": "text/plain", "text": "t"}}


@by_version
def test_embedded_resource_without_text_or_blob_has_empty_text(rev: Revision) -> None:
    assert content_to_wire(resource("u:1", "text/plain"), rev)["resource"] == {
        "uri": "u:1", "mimeType": "text/plain", "text": ""}


@by_version
def test_embedded_blob_resource(rev: Revision) -> None:
    wire = content_to_wire(resource("u:2", "application/octet-stream", blob=b"\x00\xff"), rev)
    assert wire == {"type": "resource", "resource": {"uri": "u:2", "mimeType": "application/octet-stream",
                                                     "blob": "AP8="}}
    assert "text" not in wire["resource"]


@pytest.mark.parametrize("rev", MODERN, ids=lambda r: r.version)
def test_resource_link_from_2025_06_18(rev: Revision) -> None:
    full = ResourceLink("u:3", "n", title="T", description="D", mime_type="text/html", size=3)
    assert content_to_wire(full, rev) == {"type": "resource_link", "uri": "u:3", "name": "n", "title": "T",
                                          "description": "D", "mimeType": "text/html", "size": 3}
    assert content_to_wire(ResourceLink("u:4", "m"), rev) == {"type": "resource_link", "uri": "u:4", "name": "m"}
    assert content_to_wire(ResourceLink("u:5", "e", size=0), rev)["size"] == 0


@pytest.mark.parametrize("rev", OLD, ids=lambda r: r.version)
def test_resource_link_becomes_text_before_2025_06_18(rev: Revision) -> None:
    link = ResourceLink("https://x/spec", "spec", title="The spec", description="read me", mime_type="text/html",
                        size=10)
    assert content_to_wire(link, rev) == {"type": "text", "text": "The spec: https://x/spec (read me)"}
    assert content_to_wire(ResourceLink("https://x/y", "y"), rev) == {"type": "text", "text": "y: https://x/y"}


@pytest.mark.parametrize("rev", OLD, ids=lambda r: r.version)
def test_a_down_converted_link_keeps_its_annotations(rev: Revision) -> None:
    link = ResourceLink("u", "n", annotations=Annotations(("user",), 1.0))
    assert content_to_wire(link, rev) == {"type": "text", "text": "n: u",
                                          "annotations": {"audience": ["user"], "priority": 1.0}}


@pytest.mark.parametrize("rev", MODERN, ids=lambda r: r.version)
def test_annotations_with_last_modified_from_2025_06_18(rev: Revision) -> None:
    wire = {"audience": ["assistant"], "priority": 0.5, "lastModified": "2025-01-01T00:00:00Z"}
    assert content_to_wire(Text("hi", ANN), rev) == {"type": "text", "text": "hi", "annotations": wire}
    assert content_to_wire(Image(PNG, "image/png", ANN), rev)["annotations"] == wire
    assert content_to_wire(resource("u", "text/plain", text="x", annotations=ANN), rev)["annotations"] == wire
    assert content_to_wire(ResourceLink("u", "n", annotations=ANN), rev)["annotations"] == wire
    assert content_to_wire(Audio(b"a", "audio/wav", ANN), rev)["annotations"] == wire


@pytest.mark.parametrize("rev", OLD, ids=lambda r: r.version)
def test_last_modified_is_dropped_before_2025_06_18(rev: Revision) -> None:
    assert content_to_wire(Text("hi", ANN), rev) == {
        "type": "text", "text": "hi", "annotations": {"audience": ["assistant"], "priority": 0.5}}
    # Nothing left to send: no annotations key at all.
    only_date = Annotations(last_modified="2025-01-01")
    assert content_to_wire(Text("t", only_date), rev) == {"type": "text", "text": "t"}
    assert content_to_wire(Image(PNG, "image/png", only_date), rev).keys() == {"type", "data", "mimeType"}


@by_version
def test_empty_annotations_are_left_out(rev: Revision) -> None:
    assert content_to_wire(Text("t", Annotations()), rev) == {"type": "text", "text": "t"}
    assert Annotations().to_wire(rev) is None


@by_version
def test_partial_annotations(rev: Revision) -> None:
    assert Annotations(audience=("user", "assistant")).to_wire(rev) == {"audience": ["user", "assistant"]}
    assert Annotations(priority=0.0).to_wire(rev) == {"priority": 0.0}
    assert Annotations(audience=()).to_wire(rev) == {"audience": []}


def test_user_and_assistant_helpers() -> None:
    assert user("a") == Message("user", Text("a"))
    assert assistant("b") == Message("assistant", Text("b"))
    image = Image(PNG, "image/png")
    assert user(image) == Message("user", image)
    assert assistant(image).content is image


def test_roles_are_checked() -> None:
    with pytest.raises(ValueError, match="role must be 'user' or 'assistant', got 'system'"):
        Message("system", Text("x"))  # type: ignore[arg-type]


def test_blocks_are_immutable() -> None:
    text = Text("x")
    with pytest.raises(AttributeError):
        text.text = "y"  # type: ignore[misc]


@by_version
def test_messages_to_wire(rev: Revision) -> None:
    messages = [user("a"), assistant("b"), user(resource("u", "text/plain", text="r"))]
    assert messages_to_wire(messages, rev) == [
        {"role": "user", "content": {"type": "text", "text": "a"}},
        {"role": "assistant", "content": {"type": "text", "text": "b"}},
        {"role": "user", "content": {"type": "resource", "resource": {"uri": "u", "mimeType": "text/plain",
                                                                      "text": "r"}}},
    ]
    assert messages_to_wire([], rev) == []


def test_a_link_message_per_revision() -> None:
    link = assistant(ResourceLink("https://x", "x", title="X"))
    assert messages_to_wire([link], R2) == [{"role": "assistant", "content": {"type": "text", "text": "X: https://x"}}]
    assert messages_to_wire([link], R3) == [{"role": "assistant", "content": {
        "type": "resource_link", "uri": "https://x", "name": "x", "title": "X"}}]
