"""A composed prompt served from a store label (issue 31): its partials are the label's stored files, fetched
on first need as ``read()``'s are, and ``prompt(NAME)`` is the label's own prompt of that name."""

# ruff: noqa: F811 - the store fixtures, imported from test_database, are parameters here
from __future__ import annotations

from pathlib import Path

from promptdeck.prompts.arguments import bind
from promptdeck.prompts.spec import RenderContext
from promptdeck.protocol.content import Message
from promptdeck.server.app import PromptServer
from promptdeck.sources.store.source import StoreSource
from tests.support.cli import pd
from tests.support.libraries import COMPOSED_ARGS, composed_library


def rendered(source: StoreSource | PromptServer, name: str) -> list[Message]:
    catalog = source.catalog(50) if isinstance(source, StoreSource) else source.catalog
    assert catalog is not None
    prompt = catalog.require(name).parsed()
    result = prompt.render(bind(prompt.arguments, COMPOSED_ARGS if name == "review" else {}, name),
                           RenderContext(name))
    assert isinstance(result, list)
    return result


def test_a_label_renders_a_composed_prompt_as_its_folder_does(store_url: str, tmp_path: Path) -> None:
    folder = composed_library(tmp_path / "lib")
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    local = PromptServer()
    local.add_folder(folder)
    source = StoreSource(store_url)
    try:
        assert not source.load()
        assert rendered(source, "review") == rendered(local, "review")
        catalog = source.catalog(50)
        assert catalog is not None
        uses = catalog.require("review").parsed().uses  # a stored prompt knows what it composes, as a folder's does
        assert uses.prompts == {"rules", "few-shot"} and uses.files == {"_partials/lists.j2"}
    finally:
        source.close()


def test_prompt_resolves_within_the_same_label(store_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "_partials").mkdir()
    (folder / "rules.md").write_text("rules, first\n")
    (folder / "_partials/sign.md").write_text("signed first")
    (folder / "p.md").write_text('{{ prompt("rules") }} / {% include "_partials/sign.md" %}\n')
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    (folder / "rules.md").write_text("rules, second\n")
    (folder / "_partials/sign.md").write_text("signed second")
    pd("publish", str(folder), "--store", store_url, "--label", "staging")
    texts = {}
    for label in ("production", "staging"):
        source = StoreSource(store_url, label)
        try:
            assert not source.load()
            [message] = rendered(source, "p")
            texts[label] = message.content.text  # type: ignore[union-attr]
        finally:
            source.close()
    assert texts == {"production": "rules, first / signed first", "staging": "rules, second / signed second"}
