"""The resource seam: providers, sights, paged listings, reads and stamps, whatever the provider."""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable

import pytest

from promptdeck.prompts.catalog import Catalog
from promptdeck.prompts.resources import (
    MAX_URI_CHARS,
    Resource,
    ResourceCatalog,
    ResourceProvider,
    Sight,
    Template,
    not_found,
)
from promptdeck.prompts.spec import Prompt
from promptdeck.protocol.content import ResourceContents
from promptdeck.protocol.errors import InvalidParams
from promptdeck.protocol.revisions import R2024_11_05, R2025_06_18, R2025_11_25


class Skills(ResourceProvider):
    """A provider of another kind: one file per skill, each seen by who may see its skill's prompt."""

    def __init__(self, names: Iterable[str], icon: bool = False) -> None:
        self.names = list(names)
        self.icon = icon
        self.reads = 0

    def _visible(self, sight: Sight) -> list[str]:
        return [name for name in self.names if name in sight.prompts]

    def resources(self, sight: Sight) -> Iterable[Resource]:
        icons = ({"src": "https://example.com/i.png"},) if self.icon else ()
        return [Resource(f"skill://{name}/SKILL.md", "SKILL.md", title=name, mime_type="text/markdown", size=3,
                         icons=icons, meta={"k": 1}) for name in self._visible(sight)]

    def read(self, uri: str, sight: Sight) -> ResourceContents | None:
        self.reads += 1
        for name in self._visible(sight):
            if uri == f"skill://{name}/SKILL.md":
                return ResourceContents(uri, "text/markdown", text=name)
        return None

    def stamp(self, uri: str, sight: Sight) -> Hashable | None:
        return 1 if self.read(uri, sight) is not None else None

    def templates(self) -> Iterable[Template]:
        return (Template(uri_template="skill://{name}/SKILL.md", name="skill", title="A skill"),)


def prompt(name: str, scopes: frozenset[str] = frozenset()) -> Prompt:
    return Prompt(name, lambda values, ctx: [], scopes=scopes)


PROMPTS = Catalog([prompt(f"s{i}") for i in range(5)] + [prompt("hidden", frozenset({"hr"}))])


def walk(resources: ResourceCatalog, sight: Sight) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        page = json.loads(resources.page(sight, R2025_11_25, cursor))
        pages.append([entry["uri"] for entry in page["resources"]])
        cursor = page.get("nextCursor")
        if cursor is None:
            return pages


def test_pages_follow_uris_with_opaque_cursors() -> None:
    resources = ResourceCatalog([Skills(["s3", "s1", "s0", "s4", "s2", "hidden"])], PROMPTS, page_size=2)
    pages = walk(resources, resources.sight(frozenset()))
    assert pages == [["skill://s0/SKILL.md", "skill://s1/SKILL.md"], ["skill://s2/SKILL.md", "skill://s3/SKILL.md"],
                     ["skill://s4/SKILL.md"]]
    assert "skill://hidden/SKILL.md" in sum(walk(resources, resources.sight(frozenset({"hr"}))), [])
    with pytest.raises(InvalidParams, match="invalid cursor"):
        resources.page(resources.sight(None), R2025_11_25, "not-a-cursor!")


def test_each_revision_sees_its_own_fields() -> None:
    resources = ResourceCatalog([Skills(["s0"], icon=True)], PROMPTS)
    sight = resources.sight(None)
    entries = {rev.version: json.loads(resources.page(sight, rev))["resources"][0]
               for rev in (R2024_11_05, R2025_06_18, R2025_11_25)}
    assert entries["2024-11-05"] == {"uri": "skill://s0/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown",
                                     "size": 3}
    assert entries["2025-06-18"] == {**entries["2024-11-05"], "title": "s0", "_meta": {"k": 1}}
    assert entries["2025-11-25"] == {**entries["2025-06-18"], "icons": [{"src": "https://example.com/i.png"}]}
    assert resources.templates(R2024_11_05) == {"resourceTemplates": [
        {"uriTemplate": "skill://{name}/SKILL.md", "name": "skill"}]}
    assert resources.templates(R2025_06_18)["resourceTemplates"][0]["title"] == "A skill"


def test_the_first_provider_wins_a_uri() -> None:
    first, second = Skills(["s0"]), Skills(["s0", "s1"])
    resources = ResourceCatalog([first, second], PROMPTS)
    sight = resources.sight(None)
    assert resources.listing(sight).uris == ["skill://s0/SKILL.md", "skill://s1/SKILL.md"]
    assert resources.read("skill://s0/SKILL.md", sight).text == "s0"
    assert (first.reads, second.reads) == (1, 0)
    assert resources.read("skill://s1/SKILL.md", sight).text == "s1"


def test_a_hidden_resource_answers_as_an_unknown_one() -> None:
    resources = ResourceCatalog([Skills(["hidden"])], PROMPTS)
    anonymous = resources.sight(frozenset())
    answers = []
    for uri in ("skill://hidden/SKILL.md", "skill://nobody/SKILL.md"):
        with pytest.raises(InvalidParams) as caught:
            resources.read(uri, anonymous)
        answers.append((caught.value.code, caught.value.message.replace(uri, "URI"), caught.value.data))
        assert resources.stamp(uri, anonymous) is None
    assert answers[0][:2] == answers[1][:2] == (-32602, "Resource not found: 'URI'")
    assert resources.read("skill://hidden/SKILL.md", resources.sight(frozenset({"hr"}))).text == "hidden"


def test_not_found_escapes_what_it_echoes() -> None:
    error = not_found("x://a\nb\x00\u202e")
    assert error.message == "Resource not found: 'x://a\\nb\\x00\\u202e'"
    assert error.data == {"uri": "x://a\nb\x00\u202e"}
    long = not_found("x" * (MAX_URI_CHARS + 1))
    assert long.data is None and len(long.message) < 300
    assert not_found(42).message == "Resource not found: ''" and not_found(42).data is None


def test_sights_are_made_once_per_view_and_scopes() -> None:
    resources = ResourceCatalog([Skills(["s0"])], PROMPTS)
    assert resources.sight(frozenset()) is resources.sight(frozenset())
    # One view, two principals: each its own sight (a provider may judge by scopes too), one memo of the view.
    anonymous, other = resources.sight(frozenset()), resources.sight(frozenset({"other"}))
    assert anonymous is not other and anonymous.memo is other.memo and other.held == frozenset({"other"})
    assert resources.sight(None).held is None and resources.sight(frozenset({"hr"})).held == frozenset({"hr"})
    assert resources.sight(frozenset()).memo is not resources.sight(None).memo
    assert resources.restricted
    assert resources.signature(resources.sight(None)) == ("skill://s0/SKILL.md",)
