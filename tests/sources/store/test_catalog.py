"""A stored label's catalog (sources/store/catalog.py): ``StoredCatalog`` pages the listing by name (a cursor
is a name, as ``Catalog``'s), narrows by scope sets for a principal's view, and finds prompts one by one;
``StoredPrompt`` knows its name, scopes, version and listing, and parses its file on first use only."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from promptdeck.prompts.catalog import Catalog, encode_cursor
from promptdeck.prompts.spec import FrozenError, Prompt, RenderContext
from promptdeck.protocol.errors import INTERNAL_ERROR, InvalidParams, McpError
from promptdeck.protocol.revisions import LATEST, REVISIONS
from promptdeck.server.tools import ToolOptions, ToolSet
from promptdeck.sources.store.catalog import META_LABEL, META_VERSION, StoredCatalog, StoredPrompt
from promptdeck.sources.store.model import StoreError
from promptdeck.sources.store.source import StoreSource

PAGE = 5
PLAIN = [f"p{i:02d}" for i in range(12)]
SCOPED = {"hr1": "[hr]", "hr2": "[hr]", "both": "[admin, hr]", "adm": "[admin]"}
ALL = sorted([*PLAIN, *SCOPED])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite store whose label production holds 12 plain prompts and 4 scoped ones, published once."""
    root = tmp_path_factory.mktemp("store")
    folder = root / "lib"
    folder.mkdir()
    for name in PLAIN:
        (folder / f"{name}.md").write_text(f"---\ndescription: Prompt {name}\narguments:\n  - {{name: topic}}\n"
                                           f"---\nWrite about {{{{ topic }}}} ({name}).\n")
    for name, scopes in SCOPED.items():
        (folder / f"{name}.md").write_text(f"---\nscopes: {scopes}\n---\nOnly for {scopes}.\n")
    url = f"sqlite:///{root}/prompts.db"
    done = subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(folder), "--store", url,
                           "--label", "production"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return url


@pytest.fixture
def source(store: str) -> Iterator[StoreSource]:
    source = StoreSource(store)
    assert not source.load()
    try:
        yield source
    finally:
        source.close()


def catalog_of(source: StoreSource) -> StoredCatalog:
    catalog = source.catalog(PAGE)
    assert isinstance(catalog, StoredCatalog)
    return catalog


def page(catalog: Catalog, cursor: str | None = None) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(catalog.page(LATEST, cursor))
    return decoded


def walk(catalog: Catalog) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        result = page(catalog, cursor)
        pages.append([p["name"] for p in result["prompts"]])
        cursor = result.get("nextCursor")
        if cursor is None:
            return pages


# -- paging by name -----------------------------------------------------------------------------------


def test_pages_walk_every_name_in_order(source: StoreSource) -> None:
    pages = walk(catalog_of(source))
    assert [len(p) for p in pages] == [5, 5, 5, 1]
    assert sum(pages, []) == ALL


def test_a_cursor_is_the_same_as_an_in_memory_catalogs(source: StoreSource) -> None:
    stored = catalog_of(source)
    first = page(stored)
    assert first["nextCursor"] == encode_cursor(first["prompts"][-1]["name"])


def test_a_cursor_names_a_position_not_an_offset(source: StoreSource) -> None:
    catalog = catalog_of(source)
    # a name that is not in the label: the page starts at the next name after it
    assert [p["name"] for p in page(catalog, encode_cursor("p05a"))["prompts"]] == ["p06", "p07", "p08", "p09", "p10"]
    assert page(catalog, encode_cursor("zzz")) == {"prompts": []}
    with pytest.raises(InvalidParams):
        page(catalog, "not a cursor!")


def test_each_entry_carries_its_version_and_label(source: StoreSource) -> None:
    entries = page(catalog_of(source))["prompts"]
    assert entries[0]["_meta"] == {"promptdeck.dev/version": 1, "promptdeck.dev/label": "production"}
    legacy = json.loads(catalog_of(source).page(REVISIONS["2024-11-05"]))["prompts"]
    assert all("_meta" not in e for e in legacy)  # a revision without _meta gets none


def test_length_names_and_membership(source: StoreSource) -> None:
    catalog = catalog_of(source)
    assert len(catalog) == len(ALL)
    assert catalog.names == ALL
    assert "p03" in catalog and "nope" not in catalog and 3 not in catalog


# -- views by scope -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("held", "hidden"), [
    (frozenset({"hr"}), {"adm"}),
    (frozenset({"admin"}), {"hr1", "hr2"}),
    (frozenset(), {"hr1", "hr2", "both", "adm"}),
    (frozenset({"other"}), {"hr1", "hr2", "both", "adm"}),
])
def test_a_view_lists_what_the_principal_may_see(source: StoreSource, held: frozenset[str], hidden: set[str]) -> None:
    view = catalog_of(source).view(held)
    shown = [n for n in ALL if n not in hidden]
    assert sum(walk(view), []) == shown
    assert len(view) == len(shown) and view.names == shown
    for name in hidden:
        assert view.get(name) is None and name not in view
        with pytest.raises(InvalidParams, match=f"unknown prompt '{name}'"):
            view.require(name)  # answered as an unknown prompt, not as a forbidden one
    for name in shown:
        assert view.require(name).name == name


def test_a_view_of_everything_is_the_catalog_itself(source: StoreSource) -> None:
    catalog = catalog_of(source)
    assert catalog.view(None) is catalog
    assert catalog.view(frozenset({"hr", "admin"})) is catalog
    narrowed = catalog.view(frozenset({"hr"}))
    assert catalog.view(frozenset({"hr"})) is narrowed  # views are kept
    assert narrowed.signature() != catalog.signature()
    assert catalog_of(source).signature() == catalog.signature()  # one position lists the same


# -- finding prompts, parsed on first use -------------------------------------------------------------


def test_a_prompt_is_known_by_its_listing_and_parsed_only_when_used(source: StoreSource,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    load = source.load_prompt

    def counting(prompt: StoredPrompt) -> Prompt:
        parsed.append(prompt.name)
        return load(prompt)

    monkeypatch.setattr(source, "load_prompt", counting)
    catalog = catalog_of(source)
    walk(catalog)
    prompt = catalog.require("p03")
    assert isinstance(prompt, StoredPrompt)
    assert (prompt.name, prompt.scopes, prompt.version, prompt.source) == ("p03", frozenset(), 1, "p03.md")
    assert prompt.listing()["description"] == "Prompt p03"
    assert prompt.unprepared() is not None
    assert parsed == []  # listing and finding read no file
    assert [a.name for a in prompt.parsed().arguments] == ["topic"]
    assert parsed == ["p03"] and prompt.unprepared() is None
    full = prompt.parsed()
    assert full.description == "Prompt p03" and full.render is not None
    messages = full.render({"topic": "tea"}, RenderContext("p03"))
    assert isinstance(messages, list) and "Write about tea (p03)." in str(messages[0])
    assert parsed == ["p03"]  # once


def test_listing_a_label_parses_no_prompt(source: StoreSource, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a listing needs (every page in every revision, each principal's view, the names, each prompt's
    name, scopes, version and entry, the tools made of the prompts) is the store's listing: not one prompt
    file is parsed, whether the label is paged from the store or held (``prompts()``, beside another source)."""

    def refuse(prompt: StoredPrompt) -> Prompt:
        raise AssertionError(f"listing parsed {prompt.name}")

    monkeypatch.setattr(source, "load_prompt", refuse)
    paged = catalog_of(source)
    held = Catalog(source.prompts(), page_size=PAGE)  # from now on, the label is held
    for catalog in (paged, held):
        for rev in REVISIONS.values():
            cursor = None
            while cursor is not False:
                result = json.loads(catalog.page(rev, cursor))
                cursor = result.get("nextCursor", False)
        for scopes in (None, frozenset(), frozenset({"hr"}), frozenset({"admin", "hr"})):
            view = catalog.view(scopes)
            assert len(view) == len(view.names) and sum(walk(view), []) == view.names
            assert ToolSet(view, ToolOptions(per_prompt_limit=100)).per_prompt  # one tool per prompt, from listings
        for prompt in catalog:
            assert isinstance(prompt, StoredPrompt) and catalog.require(prompt.name) is prompt
            assert prompt.descriptor(LATEST) == prompt.listing() and prompt.meta[META_VERSION] == 1
            assert prompt.unprepared() is not None  # still: nothing above parsed it
        catalog.signature()


def test_a_stored_prompt_wraps_its_parsed_prompt_rather_than_being_one(source: StoreSource) -> None:
    prompt = catalog_of(source).require("p03")
    assert isinstance(prompt, StoredPrompt) and not isinstance(prompt, Prompt)
    assert prompt.unprepared() is not None
    parsed = prompt.parsed()
    assert type(parsed) is Prompt and prompt.parsed() is parsed and prompt.unprepared() is None
    # The file's prompt, with what the stored one says of its version and label (what a render reports).
    assert (parsed.name, parsed.source, parsed.scopes) == (prompt.name, prompt.source, prompt.scopes)
    assert parsed.meta == prompt.meta == {META_VERSION: 1, META_LABEL: "production"}
    for rev in REVISIONS.values():
        assert parsed.descriptor(rev) == prompt.descriptor(rev), rev.version  # listed as it parses
    assert parsed.argument("topic") is not None and not parsed.uses.prompts
    with pytest.raises(FrozenError):
        prompt.version = 2
    with pytest.raises(FrozenError):
        del prompt.name


def test_a_scoped_prompt_knows_its_scopes_unparsed(source: StoreSource) -> None:
    both = catalog_of(source).require("both")
    assert isinstance(both, StoredPrompt)
    assert both.scopes == frozenset({"admin", "hr"}) and both.unprepared() is not None


def test_a_prompt_found_is_kept_and_shared_by_pages_and_views(source: StoreSource) -> None:
    catalog = catalog_of(source)
    found = catalog.require("hr1")
    assert catalog.get("hr1") is found
    assert catalog.view(frozenset({"hr"})).get("hr1") is found
    assert next(p for p in catalog if p.name == "hr1") is found


def test_an_unknown_name_is_remembered_as_absent(source: StoreSource, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = catalog_of(source)
    assert catalog.get("nope") is None
    reads: list[object] = []
    real = source.read

    def counted(what: Any, position: int | None = None) -> Any:
        reads.append(what)
        return real(what, position)

    monkeypatch.setattr(source, "read", counted)
    assert catalog.get("nope") is None and reads == []
    with pytest.raises(InvalidParams, match='"name" must be a string'):
        catalog.require(None)


def test_a_store_that_cannot_be_read_is_an_internal_error_for_the_client(source: StoreSource,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    catalog = catalog_of(source)

    def broken(what: Any, position: int | None = None) -> Any:
        raise StoreError("database is locked at sqlite:///secret/path.db")

    monkeypatch.setattr(source, "read", broken)
    with pytest.raises(McpError) as caught:
        catalog.page(LATEST)
    assert caught.value.code == INTERNAL_ERROR
    assert caught.value.message == "the prompt list cannot be read from the store now; try again"
    assert "database is locked" in caplog.text  # the reason is logged, not sent
