"""``Prompts(source, bundle=FILE)`` (application/bundled.py): an application's first start with its store away
renders from the bundle (stale), then the store comes back and its newer version is served; the same for a
remote server (a real ``serve --http``); a callable fallback; what a bundle refuses and how often it retries."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from promptdeck import Prompts, Rendered
from promptdeck.application.bundled import REFRESH_BOUNDS, Revalidation, refresh_seconds
from promptdeck.client.library import BREAKER_SECONDS
from promptdeck.protocol.errors import LibraryError
from promptdeck.sources.store.bundle import BundleError
from tests.support.application import MODELLED, SCOPED, publish, wait_for
from tests.support.cli import pd
from tests.support.http_server import free_port, http_server
from tests.support.postgres import new_database, running_cluster


def library(tmp_path: Path, greeting: str = "Hello") -> Path:
    folder = tmp_path / "lib"
    folder.mkdir(exist_ok=True)
    (folder / "greet.md").write_text(MODELLED.replace("Hello", greeting))
    (folder / "payroll.md").write_text(SCOPED)
    return folder


def bundled(url: str, output: Path, *options: str) -> Path:
    pd("bundle", "--store", url, "--label", "production", "-o", str(output), *options)
    return output


def test_a_first_start_with_postgresql_down_renders_the_bundle_then_the_newer_version(tmp_path: Path) -> None:
    with running_cluster() as cluster:
        url = new_database(cluster.url)
        publish(library(tmp_path), url)
        bundle = bundled(url, tmp_path / "prompts.bundle")
        publish(library(tmp_path, "Welcome"), url)  # the label moved on after the bundle was made
        cluster.stop()
        stopped = True
        try:
            with Prompts(url, bundle=str(bundle), refresh=0.1, watch=False) as prompts:
                rendered = prompts.render("greet", who="Ann")
                assert rendered.text() == "Hello, Ann!" and rendered.stale and prompts.stale
                assert (rendered.version, rendered.label, rendered.source) == (1, "production", str(bundle))
                assert rendered.model == {"name": "gpt-4.1-mini", "temperature": 0.2, "max_tokens": 200}
                assert prompts.names() == ["greet", "payroll"] and prompts.get("greet").version == 1
                assert prompts.bundle is not None and prompts.bundle.cut is None
                cluster.start()
                stopped = False
                wait_for(lambda: not prompts.stale, "the store to answer")
                rendered = prompts.render("greet", who="Ann")
                assert rendered.text() == "Welcome, Ann!" and not rendered.stale
                assert (rendered.version, rendered.source) == (2, url)
        finally:
            if stopped:
                cluster.start()  # running_cluster stops it


def test_a_sqlite_store_away_at_start_is_served_from_the_bundle_until_it_is_back(tmp_path: Path) -> None:
    db = tmp_path / "prompts.db"
    url = f"sqlite:///{db}"
    publish(library(tmp_path), url)
    bundle = bundled(url, tmp_path / "prompts.bundle")
    publish(library(tmp_path, "Welcome"), url)
    db.rename(tmp_path / "away.db")
    with Prompts(url, bundle=str(bundle), refresh=0.1, watch=False) as prompts:
        assert prompts.render("greet", who="Bo").text() == "Hello, Bo!"
        shutil.move(tmp_path / "away.db", db)
        wait_for(lambda: not prompts.stale, "the store to be back")
        assert prompts.render("greet", who="Bo").text() == "Welcome, Bo!"


def test_arender_renders_from_the_bundle_too(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'prompts.db'}"
    publish(library(tmp_path), url)
    bundle = bundled(url, tmp_path / "prompts.bundle")
    (tmp_path / "prompts.db").unlink()
    with Prompts(url, bundle=str(bundle), refresh=REFRESH_BOUNDS[1], watch=False) as prompts:
        rendered = asyncio.run(prompts.arender("greet", who="Cy"))
        assert rendered.text() == "Hello, Cy!" and rendered.stale and rendered.version == 1


def test_a_remote_server_down_at_start_is_served_from_a_bundle_made_for_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'prompts.db'}"
    publish(library(tmp_path), url)
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}/mcp"
    bundle = bundled(url, tmp_path / "prompts.bundle", "--for", endpoint)
    with Prompts(endpoint, bundle=str(bundle), refresh=0.1, timeout=2, retries=0) as prompts:
        rendered = prompts.render("greet", who="Di")
        assert rendered.text() == "Hello, Di!" and rendered.stale and rendered.source == str(bundle)
        publish(library(tmp_path, "Welcome"), url)
        with http_server("", "--store", url, "--no-watch", port=port):
            # Tried every refresh (0.1 s), not held back by the breaker the failed tries would open for 30 s.
            wait_for(lambda: not prompts.stale, "the server to answer", seconds=BREAKER_SECONDS * 2 / 3)
            rendered = prompts.render("greet", who="Di")
            assert rendered.text() == "Welcome, Di!" and not rendered.stale and rendered.source == endpoint
        # The server gone again: the bundle serves once more, rather than an error.
        again = prompts.render("greet", who="Di")
        assert again.stale and again.text() == "Hello, Di!"


def test_a_callable_fallback_renders_when_the_store_is_away(tmp_path: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    def fallback(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        calls.append((name, arguments))
        return {"messages": [{"role": "user", "content": {"type": "text", "text": f"offline {arguments['who']}"}}]}

    with Prompts(f"sqlite:///{tmp_path / 'none.db'}", fallback=fallback, watch=False) as prompts:
        rendered = prompts.render("greet", who="Ed")
        assert rendered.text() == "offline Ed" and rendered.stale and calls == [("greet", {"who": "Ed"})]
        with pytest.raises(LibraryError, match="a callable fallback lists no prompts"):
            prompts.names()
    with Prompts("http://127.0.0.1:1/mcp", fallback=fallback, timeout=2, retries=0) as remote:
        assert remote.render("greet", who="Flo").text() == "offline Flo"  # a server away: the callable too
        made = Rendered("greet", [], stale=True)
    with Prompts(f"sqlite:///{tmp_path / 'none.db'}", fallback=lambda name, arguments: made, watch=False) as prompts:
        assert prompts.render("greet") is made


def test_a_bundle_for_another_label_or_store_is_refused_naming_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'prompts.db'}"
    publish(library(tmp_path), url)
    bundle = bundled(url, tmp_path / "prompts.bundle")
    with pytest.raises(BundleError, match=f"bundle {bundle} is of label production of {url}, not of label staging"):
        Prompts(url, label="staging", bundle=str(bundle))
    other = f"sqlite:///{tmp_path / 'other.db'}"
    with pytest.raises(BundleError, match=f"not of label production of {other}"):
        Prompts(other, bundle=str(bundle))


def test_a_token_renders_from_its_cut_bundle_what_it_sees_over_the_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'prompts.db'}"
    publish(library(tmp_path), url)
    tokens = tmp_path / "tokens"
    tokens.write_text("ann:ann-token-0123456789 prompts:hr\nbob:bob-token-0123456789\n")
    bundle = bundled(url, tmp_path / "bob.bundle", "--token", "bob-token-0123456789", "--token-file", str(tokens))
    with Prompts(url, token="bob-token-0123456789", tokens=str(tokens), watch=False) as direct:
        seen = direct.names()
    (tmp_path / "prompts.db").unlink()
    with Prompts(url, bundle=str(bundle), watch=False) as prompts:  # even trusted: the bundle holds no more
        assert prompts.names() == seen == ["greet"]
        assert prompts.bundle is not None and prompts.bundle.cut is not None
        assert (prompts.bundle.cut.principal, prompts.bundle.cut.scopes) == ("bob", [])


def test_a_bundle_cut_to_a_token_lists_what_that_token_lists_over_mcp(tmp_path: Path) -> None:
    """Against a real ``serve --http --token-file``: the server's ``prompts/list`` for the token is the bundle's."""
    url = f"sqlite:///{tmp_path / 'prompts.db'}"
    folder = library(tmp_path)
    (folder / "it.md").write_text("---\ndescription: IT\nscopes: [prompts:it]\n---\nIT desk.\n")
    publish(folder, url)
    tokens = tmp_path / "tokens"
    tokens.write_text("ann:ann-token-0123456789 prompts:hr\nbob:bob-token-0123456789 prompts:it\n")
    for who, token, sees in (("ann", "ann-token-0123456789", ["greet", "payroll"]),
                             ("bob", "bob-token-0123456789", ["greet", "it"])):
        bundle = bundled(url, tmp_path / f"{who}.bundle", "--token", token, "--token-file", str(tokens), "--for",
                         "http://127.0.0.1:1/mcp")
        with http_server("", "--store", url, "--no-watch", "--token-file", str(tokens)) as endpoint, \
                Prompts(endpoint, token=token) as served, \
                Prompts("http://127.0.0.1:1/mcp", bundle=str(bundle), refresh=3600, retries=0) as offline:
            assert offline.names() == served.names() == sees, who
            assert offline.bundle is not None and offline.bundle.cut is not None
            assert offline.bundle.cut.principal == who


@pytest.mark.parametrize(("options", "says"), [
    ({"refresh": 0}, "refresh= is seconds between tries of the source, from 0.05 to 3600.0; not 0"),
    ({"refresh": 86_400}, "from 0.05 to 3600.0; not 86400"),
])
def test_a_refresh_out_of_bounds_is_refused(tmp_path: Path, options: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        Prompts(f"sqlite:///{tmp_path / 'p.db'}", **options)
    with pytest.raises(ValueError, match="bundle= is for a store or an MCP server"):
        Prompts(str(tmp_path), bundle="b")
    assert refresh_seconds(1.5) == 1.5


def test_revalidation_tries_until_the_source_answers_then_stops() -> None:
    answers: list[bool | Exception] = [RuntimeError("away"), False, True]

    def attempt() -> bool:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    revalidation = Revalidation(attempt, 0.05, "the source")
    revalidation.start()
    assert revalidation.answered.wait(60)
    revalidation.join(60)
    assert not revalidation.is_alive()
    stopped = Revalidation(lambda: False, 3600, "the source")
    stopped.start()
    stopped.stop()
    assert not stopped.is_alive() and not stopped.answered.is_set()
