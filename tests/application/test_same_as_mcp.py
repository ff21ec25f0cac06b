"""``Prompts.render`` gives exactly the messages ``prompts/get`` gives, for every example prompt and every kind
of source: a folder, a SQLite store, a PostgreSQL store (each rendered in-process), a remote server
(rendered through it) and a bundle of the store's label (``promptdeck bundle``, rendered in-process while its
store cannot be reached), and during a store's rollout, for each rollout key. The other side of each comparison
is the official MCP SDK's client asking a real ``promptdeck serve --http`` process on the same source."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from promptdeck import Prompts
from promptdeck.application.rendered import Rendered
from promptdeck.sources.store.database import Store
from tests.support.client_servers import http_peer, script
from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES
from tests.support.postgres import cluster, new_database
from tests.support.publishing import greet_store


def publish(folder: Path, url: str) -> None:
    done = subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(folder), "--store", url, "--label",
                           "production"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


async def sdk_renders(url: str) -> dict[str, dict[str, Any]]:
    """Every example prompt as the SDK's client gets it from the server at ``url``: name -> result (JSON)."""
    got: dict[str, dict[str, Any]] = {}
    async with httpx2.AsyncClient(timeout=30) as http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for name, arguments in EXAMPLE_ARGS.items():
                result = await session.get_prompt(name, arguments)
                got[name] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return got


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """kind -> the source Prompts is given; each is served over HTTP too (``served``)."""
    root = tmp_path_factory.mktemp("same-as-mcp")
    sqlite = f"sqlite:///{root / 'prompts.db'}"
    publish(EXAMPLES, sqlite)
    with cluster() as postgres:
        postgresql = new_database(postgres)
        publish(EXAMPLES, postgresql)
        yield {"folder": str(EXAMPLES), "sqlite": sqlite, "postgresql": postgresql}


@pytest.mark.parametrize("kind", ["folder", "sqlite", "postgresql", "remote", "bundle"])
def test_every_example_renders_as_prompts_get_gives_it(kind: str, sources: dict[str, str], tmp_path: Path) -> None:
    served = sources[{"remote": "folder", "bundle": "sqlite"}.get(kind, kind)]
    options = () if kind in ("folder", "remote") else ("--store", served)
    given: dict[str, Any] = {}
    if kind == "bundle":
        # The bundle stands for a store that is not there: every render comes from the bundle.
        away = f"sqlite:///{tmp_path / 'away.db'}"
        given["bundle"] = str(tmp_path / "prompts.bundle")
        done = subprocess.run([sys.executable, "-m", "promptdeck", "bundle", "--store", served, "--for", away,
                               "--label", "production", "-o", given["bundle"]], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
    with http_server(served if kind in ("folder", "remote") else "", "--no-watch", *options) as url:
        expected = asyncio.run(sdk_renders(url))
        with Prompts(url if kind == "remote" else away if kind == "bundle" else served, **given) as prompts:
            assert prompts.names() == sorted(EXAMPLE_ARGS)
            for name, arguments in EXAMPLE_ARGS.items():
                rendered = prompts.render(name, **arguments)
                assert rendered.messages == expected[name]["messages"], (kind, name)
                assert rendered.description == expected[name].get("description"), (kind, name)
                assert rendered.stale == (kind == "bundle")
                if kind in ("sqlite", "postgresql", "bundle"):
                    assert isinstance(rendered.version, int) and rendered.label == "production"
                    assert rendered.version == expected[name]["_meta"]["promptdeck.dev/version"], (kind, name)


#: The prompts of tests/client/servers/sdk_server.py, with arguments that render each.
SDK_PROMPTS = {"greet": {"name": "Ada", "greeting": "Hi"}, "picture": {}, "document": {"topic": "MCP"}}


@pytest.mark.parametrize("api", ["lowlevel", "mcpserver"])
def test_a_server_built_on_the_sdk_renders_as_its_prompts_get_gives_it(api: str) -> None:
    """Any MCP server, not only promptdeck: the official SDK's, each kind of content included."""
    async def sdk_side(url: str) -> dict[str, dict[str, Any]]:
        async with httpx2.AsyncClient(timeout=30) as http, \
                streamable_http_client(url, http_client=http) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return {name: (await session.get_prompt(name, arguments)).model_dump(mode="json", by_alias=True,
                                                                                 exclude_none=True)
                    for name, arguments in SDK_PROMPTS.items()}

    with http_peer(lambda port: script("sdk_server.py", api, "http", str(port))) as url, Prompts(url) as prompts:
        expected = asyncio.run(sdk_side(url))
        assert set(SDK_PROMPTS) <= set(prompts.names())
        for name, arguments in SDK_PROMPTS.items():
            rendered = prompts.render(name, **arguments)
            assert rendered.messages == expected[name]["messages"], name
            assert rendered.version is None and rendered.model is None and not rendered.stale
        assert prompts.get("greet").arguments[0]["name"] == "name"


#: The rollout keys of the rollout test: users of an application, each of whom must keep one version.
KEYS = [f"user-{number}" for number in range(200)]
ROLLOUT_KEY = "promptdeck.dev/rollout-key"


async def sdk_keyed_renders(url: str) -> dict[str, dict[str, Any]]:
    """greet as the SDK's client gets it from the server at ``url`` with each of ``KEYS`` as its rollout key."""
    async with httpx2.AsyncClient(timeout=30) as http, \
            streamable_http_client(url, http_client=http) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return {key: (await session.get_prompt("greet", {"who": "Al"}, meta={ROLLOUT_KEY: key}))
                .model_dump(mode="json", by_alias=True, exclude_none=True) for key in KEYS}


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "remote"])
def test_during_a_rollout_each_key_renders_the_version_prompts_get_gives_that_key(kind: str, tmp_path: Path,
                                                                                  request: pytest.FixtureRequest
                                                                                  ) -> None:
    """A live 50% rollout of greet version 2 over production's version 1: each key renders in-process (SQLite,
    PostgreSQL) or through a server (remote) the version, label and rollout ``prompts/get`` gives that key,
    the same at every render, and the keys split about evenly."""
    url = new_database(request.getfixturevalue("postgres_cluster")) if kind == "postgresql" \
        else f"sqlite:///{tmp_path / 'prompts.db'}"
    greet_store(tmp_path, url)
    with Store(url) as store:
        rollout = store.governance.start_rollout("production", "greet", 2, 5_000, author="t").id
    with http_server("", "--store", url) as served:
        expected = asyncio.run(sdk_keyed_renders(served))
        with Prompts(served if kind == "remote" else url) as prompts:
            rendered = {key: prompts.render("greet", who="Al", key=key) for key in KEYS}
            again = {key: prompts.render("greet", {"who": "Al"}, key=key) for key in reversed(KEYS)}

            async def awaited() -> dict[str, Rendered]:
                return {key: await prompts.arender("greet", who="Al", key=key) for key in KEYS}

            coroutines = asyncio.run(awaited())
    for key in KEYS:
        meta = expected[key]["_meta"]
        assert rendered[key].messages == expected[key]["messages"], key
        assert (rendered[key].version, rendered[key].label, rendered[key].rollout) == \
            (meta["promptdeck.dev/version"], meta["promptdeck.dev/label"], meta.get("promptdeck.dev/rollout")), key
        assert again[key] == rendered[key], key  # sticky: the same version (and all else) at every render
        assert coroutines[key] == rendered[key], key  # and from a coroutine, on its own loop
        assert rendered[key].text() == {1: "Hello Al!", 2: "Hi Al!"}[rendered[key].version], key  # type: ignore[index]
    arms = Counter((r.version, r.rollout) for r in rendered.values())
    assert set(arms) == {(1, None), (2, rollout)}
    assert 0.4 < arms[2, rollout] / len(KEYS) < 0.6, arms
