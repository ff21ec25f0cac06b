"""``PromptServer`` (server/app.py): sources in the order added with its Python prompts last, the earlier
source winning a name clash, deferred folders read on first need, and list_changed told only when the list
changes."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from promptdeck.prompts.catalog import Catalog
from promptdeck.prompts.spec import Prompt, RenderContext
from promptdeck.protocol.content import Message, Text
from promptdeck.protocol.errors import LibraryError, PromptdeckError
from promptdeck.protocol.revisions import LATEST
from promptdeck.server.app import PromptServer
from promptdeck.server.resources import Follows
from promptdeck.sources import Source


def made(name: str, text: str = "", description: str | None = None) -> Prompt:
    def render(values: dict[str, Any], ctx: RenderContext) -> list[Message]:
        return [Message("user", Text(text or name))]

    return Prompt(name, render, description=description, source=text)


class Listed(Source):
    """A source of given prompts that can change them and say so."""

    def __init__(self, *prompts: Prompt, problems: Sequence[PromptdeckError] = (),
                 whole: Catalog | None = None) -> None:
        self.items = list(prompts)
        self.problems = problems
        self.whole = whole
        self.changed: Callable[[], object] | None = None

    def load(self) -> Sequence[PromptdeckError]:
        return self.problems

    def prompts(self) -> Iterable[Prompt]:
        return self.items

    def catalog(self, page_size: int) -> Catalog | None:
        return self.whole

    def attach(self, changed: Callable[[], object]) -> None:
        self.changed = changed


class Ear:
    def __init__(self) -> None:
        self.heard: list[bool] = []
        self.follows: Follows | None = None

    def list_changed(self, tools: bool) -> None:
        self.heard.append(tools)


def text_of(server: PromptServer, name: str) -> str:
    messages = server.catalog.require(name).parsed().render({}, RenderContext(name))
    assert isinstance(messages, list)
    content = messages[0].content
    assert isinstance(content, Text)
    return content.text


def test_on_a_name_clash_the_earlier_source_wins_and_it_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    server = PromptServer()

    @server.prompt("same")
    def same() -> str:
        return "python"

    server.add_source(Listed(made("same", "first"), made("a", "first")))
    server.add_source(Listed(made("same", "second"), made("b", "second")))
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="promptdeck.server"):
        catalog = server.build_catalog()
    assert catalog.names == ["a", "b", "same"]
    assert text_of(server, "same") == "first"  # before the second source, and Python prompts come last
    assert sorted(r.getMessage().split(" from ")[1].split(" ")[0] for r in caplog.records) == [
        "python:tests.server.test_app.test_on_a_name_clash_the_earlier_source_wins_and_it_is_logged.<locals>.same",
        "second"]


def test_a_sources_problems_are_logged_and_the_rest_served(caplog: pytest.LogCaptureFixture) -> None:
    server = PromptServer()
    with caplog.at_level(logging.ERROR, logger="promptdeck.server"):
        server.add_source(Listed(made("ok"), problems=[PromptdeckError("bad.md: broken")]))
    assert server.catalog.names == ["ok"]
    assert "bad.md: broken" in caplog.text


def test_a_lone_source_with_a_catalog_of_its_own_is_served_as_it_is() -> None:
    whole = Catalog([made("x")])
    server = PromptServer()
    server.add_source(Listed(whole=whole))
    assert server.catalog is whole

    @server.prompt("extra")
    def extra() -> str:
        return "x"

    # with a Python prompt beside it, the catalog is built from both
    assert server.catalog is not whole and server.catalog.names == ["extra"]


def test_add_folder_refuses_what_is_no_folder(tmp_path: Path) -> None:
    (tmp_path / "file.md").write_text("x")
    for path in (tmp_path / "missing", tmp_path / "file.md"):
        with pytest.raises(LibraryError, match="is not a folder"):
            PromptServer().add_folder(path)


def test_a_deferred_folder_is_read_when_the_catalog_is_first_needed(tmp_path: Path) -> None:
    (tmp_path / "hello.md").write_text("Hello\n")
    server = PromptServer()
    server.add_folder(tmp_path, defer=True)
    assert server.sources == [] and server.watch_roots() == [str(tmp_path.resolve())]
    ear = Ear()
    server.listeners.add(ear)
    assert server.catalog.names == ["hello"]
    assert len(server.sources) == 1 and server.pending == []
    assert ear.heard == []  # nobody saw a list without these prompts: nothing to tell


def test_listeners_are_told_only_when_the_list_changes() -> None:
    server = PromptServer()
    source = Listed(made("a"))
    server.add_source(source)
    ear = Ear()
    server.listeners.add(ear)
    assert server.refresh() is False and ear.heard == []  # the same list
    source.items = [made("a", "renders differently")]
    assert server.refresh() is False and ear.heard == []  # what prompts/list shows did not change
    source.items = [made("a", description="now described")]
    assert server.refresh() is True and ear.heard == [False]
    source.items.append(made("b"))
    assert source.changed is not None
    source.changed()  # a source that learns of changes itself calls back
    assert ear.heard == [False, False] and "b" in server.catalog
    assert server.refresh(notify=False) is False


def test_listeners_hear_that_tools_changed_when_the_server_offers_tools() -> None:
    server = PromptServer(tools=True)
    source = Listed(made("a"))
    server.add_source(source)
    ear = Ear()
    server.listeners.add(ear)
    source.items.append(made("b"))
    assert server.refresh() is True and ear.heard == [True]


def test_reload_paths_hands_every_source_the_paths() -> None:
    got: list[list[str]] = []

    class Watching(Listed):
        def reload(self, paths: Sequence[str]) -> Sequence[PromptdeckError]:
            got.append(list(paths))
            self.items.append(made("new"))
            return ()

    server = PromptServer()
    server.add_source(Watching())
    server.add_source(Watching(made("old")))
    ear = Ear()
    server.listeners.add(ear)
    assert server.reload_paths(iter(["/x/a.md"])) is True
    assert got == [["/x/a.md"], ["/x/a.md"]] and ear.heard == [False]


def test_python_prompts_and_identity() -> None:
    server = PromptServer("team", version="9.9", instructions="Be kind")

    @server.prompt(description="Says hi")
    def hello(name: str) -> str:
        return f"hi {name}"

    assert server.catalog.names == ["hello"]
    assert server.catalog.require("hello").parsed().description == "Says hi"
    assert server.server_info(LATEST) == {"name": "team", "version": "9.9"}
    assert server.modern is server.modern  # made once, on first use
