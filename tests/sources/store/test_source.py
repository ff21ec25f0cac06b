"""StoreSource: a label served from the store's listing (schema 3), nothing read per prompt until a prompt is used.

These run the server in-process against SQLite and a real PostgreSQL cluster, to look at what the
private folder holds and which catalog serves; what clients see is covered by ``test_peers``.
"""
# ruff: noqa: F811 - the store fixtures, imported from test_database, are parameters here

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from promptdeck.prompts.catalog import Catalog
from promptdeck.prompts.spec import RenderContext
from promptdeck.protocol.errors import InternalError, InvalidParams
from promptdeck.protocol.revisions import LATEST, LEGACY, MODERN, Revision
from promptdeck.server.app import PromptServer
from promptdeck.server.local import LocalClient
from promptdeck.sources.files.paths import is_prompt_path
from promptdeck.sources.store.catalog import StoredCatalog
from promptdeck.sources.store.source import StoreSource
from tests.support.cli import library, pd


def served_files(source: StoreSource) -> set[str]:
    root = Path(source.files.folder)
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def listing(catalog: Catalog, rev: Revision = LATEST) -> list[dict[str, object]]:
    entries, cursor = [], None
    while True:
        page = json.loads(catalog.page(rev, cursor))
        entries += page["prompts"]
        cursor = page.get("nextCursor")
        if cursor is None:
            return entries


def test_a_listed_label_reads_no_prompt_file_until_one_is_used(store_url: str, tmp_path: Path) -> None:
    folder = library(tmp_path)
    (folder / "quoting.md").write_text('---\ndescription: Quotes another prompt\n---\n{{ read("summarize.md") }}\n')
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    source = StoreSource(store_url)
    try:
        assert not source.load()  # not attached: no background writer, so the folder shows what start wrote
        # Material, and every file of a skill (its SKILL.md is a prompt file too): the skills are listed at start.
        material = {p.relative_to(folder).as_posix() for p in folder.rglob("*")  # the base file is publish's
                    if p.is_file() and p.name != ".promptdeck-base"
                    and (not is_prompt_path(p.relative_to(folder).as_posix())
                         or p.relative_to(folder).parts[0] == "skills")}
        assert served_files(source) == material
        catalog = source.catalog(4)
        assert isinstance(catalog, StoredCatalog)
        folder_server = PromptServer(page_size=4)
        folder_server.add_folder(folder)
        for rev in [*LEGACY, *MODERN.values()]:
            stored = listing(catalog, rev)
            for entry in stored if rev.meta else ():  # the stored version and label, which a folder lacks
                meta = entry["_meta"]
                assert isinstance(meta, dict) and meta.pop("promptdeck.dev/label") == "production"
                assert meta.pop("promptdeck.dev/version") == 1
                if not meta:
                    del entry["_meta"]
            assert stored == listing(folder_server.catalog, rev) and len(catalog) == len(stored), rev.version
        assert served_files(source) == material  # listing read no file

        quoting = catalog.require("quoting").parsed()
        messages = quoting.render({}, RenderContext("quoting"))
        assert served_files(source) == material | {"quoting.md", "summarize.md"}  # itself, and what it read
        assert isinstance(messages, list) and "Summarize" in str(messages[0])
        with pytest.raises(InvalidParams, match="unknown prompt 'nope'"):
            catalog.require("nope")
    finally:
        source.close()


def test_a_listing_that_disagrees_with_its_file_is_never_rendered(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """Another tool rewrites a scoped prompt's listing as unscoped: it may be listed so, but its file
    says otherwise, and it is never rendered."""
    url = f"sqlite:///{tmp_path}/s.db"
    folder = library(tmp_path)
    (folder / "payroll.md").write_text("---\nscopes: [hr]\n---\nThe payroll.\n")
    pd("publish", str(folder), "--store", url, "--label", "production")
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute("UPDATE files SET scopes = '' WHERE path = 'payroll.md'")
        conn.execute("UPDATE position_files SET scopes = '' WHERE path = 'payroll.md'")
    server = PromptServer()
    server.add_store(url)
    try:
        payroll = server.catalog.view(frozenset()).require("payroll")
        with caplog.at_level(logging.ERROR), pytest.raises(InternalError) as refused:
            payroll.parsed()  # what parses the file
        detail = refused.value.detail or ""
        assert "disagrees with the file" in detail and "publish it again" in detail
    finally:
        for source in server.sources:
            source.close()  # type: ignore[attr-defined]


def test_a_store_from_an_older_promptdeck_is_loaded_until_published_again(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    folder = library(tmp_path)
    pd("publish", str(folder), "--store", url, "--label", "production")
    with sqlite3.connect(tmp_path / "s.db") as conn:  # as schema 2 left it, upgraded
        conn.execute("UPDATE files SET listing = NULL, scopes = NULL")
        conn.execute("UPDATE positions SET listing_format = NULL, scope_sets = NULL")
        conn.execute("UPDATE position_files SET scopes = NULL")

    def served() -> tuple[Catalog, list[str]]:
        server = PromptServer()
        server.add_store(url)
        catalog = server.catalog
        names = [str(p["name"]) for p in listing(catalog)]
        for source in server.sources:
            source.close()  # type: ignore[attr-defined]
        return catalog, names

    loaded, names = served()
    assert not isinstance(loaded, StoredCatalog) and "summarize" in names
    again = pd("publish", str(folder), "--store", url)
    assert again.stdout.startswith("nothing changed")
    listed, names_now = served()
    assert isinstance(listed, StoredCatalog) and names_now == names


def test_a_python_prompt_beside_a_store_holds_the_label_in_memory(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    pd("publish", str(library(tmp_path)), "--store", url, "--label", "production")
    server = PromptServer()
    server.add_store(url)
    try:
        assert isinstance(server.catalog, StoredCatalog)

        @server.prompt()
        def extra() -> str:
            return "From Python."

        names = {p.name for p in server.catalog}
        assert not isinstance(server.catalog, StoredCatalog) and {"extra", "summarize"} <= names
    finally:
        for source in server.sources:
            source.close()  # type: ignore[attr-defined]


def test_a_label_move_that_would_list_one_name_twice_is_refused(store_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "a.md").write_text("---\nname: one\n---\nA.\n")
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    (folder / "a.md").write_text("---\nname: two\n---\nA, renamed.\n")
    (folder / "b.md").write_text("---\nname: one\n---\nB takes the name.\n")
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    refused = pd("label", "--store", store_url, "a.md@1", "production", check=False)
    assert refused.returncode == 1 and "would serve two prompts named 'one'; nothing changed" in refused.stderr
    history = pd("history", "--store", store_url).stdout
    assert "[production]" in history.splitlines()[0]  # still the second publish


@pytest.mark.parametrize("change", ["broken", "clash-earlier", "clash-later"])
def test_a_publish_that_checks_only_what_changed_finds_what_check_finds(change: str, tmp_path: Path) -> None:
    """Only changed prompt files are parsed again; the problems are still exactly ``check``'s."""
    url = f"sqlite:///{tmp_path}/s.db"
    folder = library(tmp_path)
    pd("publish", str(folder), "--store", url, "--label", "production")
    if change == "broken":
        (folder / "summarize.md").write_text("---\ndescription: fine\narguments: [\n---\nHello\n")
    elif change == "clash-earlier":  # a new file takes the name of an unchanged one that sorts after it
        (folder / "aaa.md").write_text("---\nname: summarize\n---\nMine now.\n")
    else:  # and one that sorts after the unchanged file whose name it takes
        (folder / "zzz.md").write_text("---\nname: summarize\n---\nMine now.\n")
    checked = pd("check", str(folder), check=False)
    published = pd("publish", str(folder), "--store", url, check=False)
    assert checked.returncode == published.returncode == 1
    # check's warnings (issue 38: a path argument without a pattern) are check's alone: a publish has problems.
    problems = [line for line in checked.stdout.splitlines() if ": warning: " not in line]
    assert problems and published.stdout.splitlines() == problems
    assert "nothing published: 1 problem in 1 file" in published.stderr
    assert pd("history", "--store", url).stdout.count("publish 2") == 0


def test_a_killed_servers_folder_is_removed_by_the_next_and_a_live_ones_kept(tmp_path: Path) -> None:
    """kill -9 leaves a server's private folder (in /dev/shm: memory) behind; the next store server
    removes it, and leaves alone the folder of a server still running."""
    url = f"sqlite:///{tmp_path}/s.db"
    pd("publish", str(library(tmp_path)), "--store", url, "--label", "production")

    def folders(pid: int) -> set[str]:
        """The private folders whose lock process ``pid`` holds open: its own, whatever other store servers
        (another test run on the machine) make in /dev/shm meanwhile."""
        held = set()
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):  # an fd closed since the listing
                target = os.readlink(fd)
                if Path(target).name.startswith("promptdeck-store-") and target.endswith(".lock"):
                    held.add(target[:-len(".lock")])
        return held

    def started() -> tuple[subprocess.Popen[bytes], str]:
        server = subprocess.Popen([sys.executable, "-m", "promptdeck", "serve", "--store", url, "--no-watch"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
                           b'"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n')
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1  # loaded: its folder is made
        (made,) = folders(server.pid)
        return server, made

    killed, gone = started()
    live, kept = started()
    try:
        killed.kill()
        killed.wait()
        assert Path(gone).is_dir()
        source = StoreSource(url)
        try:
            source.load()
            assert not Path(gone).exists() and not Path(gone + ".lock").exists()
            assert Path(kept).is_dir() and Path(source.files.folder).is_dir()
        finally:
            source.close()
        assert not Path(source.files.folder).exists()
    finally:
        for server in (killed, live):
            server.kill()
            server.wait()
            for pipe in (server.stdin, server.stdout):
                if pipe is not None:
                    pipe.close()


def test_a_label_serves_its_files_as_resources_and_a_move_tells_followers(store_url: str, tmp_path: Path) -> None:
    """What a folder's prompts send is readable from a label too; a move that changes a file tells its
    subscriber (``updated``) and one that adds a file tells who read the list (``list_changed``)."""
    folder = library(tmp_path)
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    server = PromptServer()
    source = StoreSource(store_url)
    server.add_source(source)  # add_store's requestState ledger is not what this is about
    try:
        client = LocalClient(server, "2025-11-25")
        log = "promptdeck:///_material/app.log"
        uris = [entry["uri"] for entry in client.request("resources/list")["result"]["resources"]]
        assert log in uris and "promptdeck:///_material/diagram.png" in uris
        read = client.request("resources/read", {"uri": log})["result"]["contents"][0]
        assert read["text"] == (folder / "_material/app.log").read_text()
        assert client.request("resources/read", {"uri": "promptdeck:///summarize.md"})["error"]["code"] == -32602
        assert client.request("resources/subscribe", {"uri": log})["result"] == {}
        (folder / "_material/app.log").write_text("a new log\n")
        (folder / "_material/new.txt").write_text("new material\n")
        pd("publish", str(folder), "--store", store_url, "--label", "production")
        deadline = time.monotonic() + 20
        heard: set[str] = set()
        while time.monotonic() < deadline and len(heard) < 2:
            heard |= {note["method"] for note in client.notifications if "resources" in note["method"]}
            time.sleep(0.05)
        assert heard == {"notifications/resources/updated", "notifications/resources/list_changed"}
        assert client.request("resources/read", {"uri": log})["result"]["contents"][0]["text"] == "a new log\n"
    finally:
        source.close()
