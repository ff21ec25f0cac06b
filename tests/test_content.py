"""Content blocks shaped per revision."""

from __future__ import annotations

import pytest

from promptdeck.prompts.content import (
    Annotations,
    Audio,
    Image,
    Resource,
    ResourceLink,
    Text,
    content_to_wire,
    messages_to_wire,
    user,
)
from promptdeck.protocol.errors import InternalError
from promptdeck.protocol.revisions import REVISIONS

R1, R2, R3, R4 = (REVISIONS[v] for v in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"))


def test_blocks_on_the_newest_revision() -> None:
    ann = Annotations(("assistant",), 0.5, "2025-01-01T00:00:00Z")
    assert content_to_wire(Text("hi", ann), R4) == {
        "type": "text", "text": "hi",
        "annotations": {"audience": ["assistant"], "priority": 0.5, "lastModified": "2025-01-01T00:00:00Z"}}
    assert content_to_wire(Image(b"\x89PNG", "image/png"), R4) == {"type": "image", "data": "iVBORw==",
                                                                  "mimeType": "image/png"}
    assert content_to_wire(Resource("u:1", "text/plain", text="t"), R4) == {
        "type": "resource", "resource": {"uri": "u:1", "mimeType": "text/plain", "text": "t"}}
    assert content_to_wire(Resource("u:2", "application/octet-stream", blob=b"\x00"), R4)["resource"]["blob"] == "AA=="
    assert content_to_wire(ResourceLink("u:3", "n", title="T", size=3), R4) == {
        "type": "resource_link", "uri": "u:3", "name": "n", "title": "T", "size": 3}


def test_older_revisions_get_what_they_can_carry() -> None:
    link = ResourceLink("https://x/spec", "spec", title="The spec", description="read me")
    for rev in (R1, R2):
        assert content_to_wire(link, rev) == {"type": "text", "text": "The spec: https://x/spec (read me)"}
    assert content_to_wire(Text("t", Annotations(last_modified="2025-01-01")), R2) == {"type": "text", "text": "t"}
    assert content_to_wire(Audio(b"RIFF", "audio/wav"), R2)["type"] == "audio"
    with pytest.raises(InternalError) as err:
        content_to_wire(Audio(b"RIFF", "audio/wav"), R1)
    assert err.value.code == -32603 and err.value.message == "Internal error"
    assert err.value.detail is not None and "2024-11-05" in err.value.detail


def test_messages_and_roles() -> None:
    assert messages_to_wire([user("a")], R3) == [{"role": "user", "content": {"type": "text", "text": "a"}}]
    with pytest.raises(ValueError):
        from promptdeck.prompts.content import Message
        Message("system", Text("x"))  # type: ignore[arg-type]
