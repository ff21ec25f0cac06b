"""``Prompts.render`` gives exactly the messages ``prompts/get`` gives, for every example prompt and every kind
of source: a folder, a SQLite store, a PostgreSQL store (each rendered in-process), a remote server
(rendered through it) and a bundle of the store's label (``promptdeck bundle``, rendered in-process while its
store cannot be reached). The other side of each comparison is the official MCP SDK's client asking a real
``promptdeck serve --http`` process on the same source."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from promptdeck import Prompts
from tests.support.client_servers import http_peer, script
from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES
from tests.support.postgres import cluster, new_database


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
