"""The revision table (protocol/revisions.py): each revision's fields as the spec has them
(../shared/spec/CHECKLIST.md, CHECKLIST-2026.md), the table's order, and negotiation."""

from __future__ import annotations

import msgspec
import pytest

from promptdeck.protocol.revisions import (
    HTTP_DEFAULT,
    LATEST,
    LEGACY,
    MODERN,
    NEWEST_MODERN,
    REVISIONS,
    SUPPORTED,
    Revision,
    negotiate,
)

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")

#: field -> the first revision that has it (R1..R5 in the checklist), written from the spec, not the code.
SINCE: dict[str, str] = {
    "titles": "2025-06-18",  # Prompt.title, PromptArgument.title, Implementation.title (R3)
    "meta": "2025-06-18",  # _meta on Prompt, content blocks, resource contents (R3)
    "icons": "2025-11-25",  # Prompt.icons, Implementation.icons/description/websiteUrl (R4)
    "audio": "2025-03-26",  # the audio block (R2)
    "resource_link": "2025-06-18",  # R3
    "last_modified": "2025-06-18",  # Annotations.lastModified (R3)
    "completions_capability": "2025-03-26",  # R2: "completions": {}; R1 has no such flag
    "progress_message": "2025-03-26",  # notifications/progress message (R2)
    "completion_context": "2025-06-18",  # completion context.arguments (R3)
    "tool_annotations": "2025-03-26",  # Tool.annotations (R2)
    "structured_output": "2025-06-18",  # Tool.outputSchema, structuredContent (R3)
    "schema_keywords": "2026-07-28",
    "modern": "2026-07-28",
    "elicitation": "2025-06-18",  # elicitation/create and the client's elicitation capability (R3)
    "elicitation_modes": "2025-11-25",  # ElicitRequestFormParams.mode, capability {form, url} (R4)
}


def every_revision() -> list[Revision]:
    return [*LEGACY, *MODERN.values()]


@pytest.mark.parametrize("field", sorted(SINCE))
@pytest.mark.parametrize("version", VERSIONS)
def test_a_field_exists_from_its_revision_on(field: str, version: str) -> None:
    revision = {r.version: r for r in every_revision()}[version]
    assert getattr(revision, field) is (VERSIONS.index(version) >= VERSIONS.index(SINCE[field]))


def test_batches_exist_in_2025_03_26_alone() -> None:
    # R1 does not mention them; R2 MUST accept them; R3 removed them.
    assert [r.version for r in every_revision() if r.batches] == ["2025-03-26"]


def test_sse_priming_is_2025_11_25s_polling_alone() -> None:
    # R4's priming event with an id; 2026-07-28 streams do not resume, so no event ids.
    assert [r.version for r in every_revision() if r.sse_priming] == ["2025-11-25"]


def test_every_field_is_pinned_by_these_tests() -> None:
    # A new field added to Revision must get its row here too.
    fields = set(Revision.__struct_fields__) - {"version"}
    assert fields == set(SINCE) | {"batches", "sse_priming"}


def test_revisions_are_frozen() -> None:
    with pytest.raises(AttributeError):
        LATEST.titles = False  # type: ignore[misc]
    assert msgspec.structs.replace(LATEST, titles=False).titles is False and LATEST.titles


def test_the_tables() -> None:
    assert [r.version for r in LEGACY] == list(VERSIONS[:4])  # oldest first
    assert list(REVISIONS) == list(VERSIONS[:4])
    assert all(REVISIONS[v] is r for v, r in zip(VERSIONS, LEGACY, strict=False))
    assert list(MODERN) == ["2026-07-28"] and NEWEST_MODERN is MODERN["2026-07-28"]
    assert not any(r.modern for r in LEGACY) and all(r.modern for r in MODERN.values())
    assert SUPPORTED == tuple(reversed(VERSIONS))  # newest first, modern included
    assert LATEST is REVISIONS["2025-11-25"]
    assert HTTP_DEFAULT is REVISIONS["2025-03-26"]  # the spec's assumption without MCP-Protocol-Version


@pytest.mark.parametrize("version", VERSIONS[:4])
def test_negotiate_echoes_a_legacy_version_it_has(version: str) -> None:
    assert negotiate(version) is REVISIONS[version]


@pytest.mark.parametrize("requested", ["2026-07-28", "2099-01-01", "2025-11-25 ", "", None, 20250618,
                                       ["2025-06-18"]])
def test_negotiate_counter_offers_the_newest_legacy_revision(requested: object) -> None:
    # a modern version is never negotiated by initialize: it has no handshake
    assert negotiate(requested) is LATEST


@pytest.mark.parametrize(("version", "capabilities", "asked"), [
    # R1 and R2 have no elicitation, whatever a client declares.
    ("2024-11-05", {"elicitation": {}}, False),
    ("2025-03-26", {"elicitation": {}}, False),
    # R3: any elicitation object (it has form mode alone).
    ("2025-06-18", {"elicitation": {}}, True),
    ("2025-06-18", {"elicitation": {"form": {}, "url": {}}}, True),
    # R4 and on: an empty object is form mode, else form must be listed.
    ("2025-11-25", {"elicitation": {}}, True),
    ("2025-11-25", {"elicitation": {"form": {}}}, True),
    ("2025-11-25", {"elicitation": {"url": {}}}, False),
    ("2026-07-28", {"elicitation": {"form": {}, "url": {}}}, True),
    ("2026-07-28", {"elicitation": {"url": {}}}, False),
    # Nothing declared, or not an object.
    ("2025-11-25", {}, False),
    ("2025-11-25", {"sampling": {}}, False),
    ("2025-11-25", {"elicitation": True}, False),
    ("2025-11-25", {"elicitation": None}, False),
    ("2025-06-18", None, False),
    ("2025-06-18", ["elicitation"], False),
])
def test_elicits_forms_reads_the_capability_as_each_revision_defines_it(version: str, capabilities: object,
                                                                         asked: bool) -> None:
    revision = {r.version: r for r in every_revision()}[version]
    assert revision.elicits_forms(capabilities) is asked
