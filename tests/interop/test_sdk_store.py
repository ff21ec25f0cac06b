"""The official SDK client against a store-backed server, as against a folder (issue 15).

The bundled examples are published to a real PostgreSQL store and served by ``serve --store … --http``,
stateful and stateless; the SDK's Streamable HTTP client runs the same checks the folder's HTTP tests
run, in every revision, with every server message validated against that revision's JSON schema. The
stored prompts render exactly as the folder's: the same messages for the same arguments.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES
from tests.support.postgres import cluster, new_database

from .checks import check_argument_errors, check_completions, check_examples_render
from .sdk_http import REVISIONS, connect_http

pytestmark = pytest.mark.slow

MODES = {"sse": (), "stateless": ("--stateless",)}


@pytest.fixture(scope="module")
def store() -> Iterator[str]:
    with cluster() as postgres:
        url = new_database(postgres)
        done = subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(EXAMPLES), "--store", url,
                               "--label", "production"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        yield url


@pytest.fixture(scope="module", params=sorted(MODES))
def url(request: pytest.FixtureRequest, store: str) -> Iterator[str]:
    with http_server("", "--store", store, "--no-watch", *MODES[request.param]) as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def folder_url() -> Iterator[str]:
    with http_server(str(EXAMPLES), "--no-watch", "--stateless") as endpoint:
        yield endpoint


@pytest.fixture(params=REVISIONS)
def revision(request: pytest.FixtureRequest) -> str:
    return str(request.param)



def test_the_sdk_client_sees_the_store_as_it_sees_the_folder(url: str, folder_url: str, revision: str,
                                                            log: Path, tmp_path: Path) -> None:
    async def run() -> None:
        async with connect_http(url, revision, log) as (session, _), \
                connect_http(folder_url, revision, tmp_path / "folder.log") as (folder, _):
            stored = {p.name: p for p in (await session.list_prompts()).prompts}
            assert set(stored) == set(EXAMPLE_ARGS)
            filed = {p.name: p for p in (await folder.list_prompts()).prompts}
            for name, prompt in stored.items():
                assert prompt.description == filed[name].description
                assert [a.name for a in prompt.arguments or []] == [a.name for a in filed[name].arguments or []]
                if revision >= "2025-06-18":
                    meta = prompt.meta or {}
                    assert meta["promptdeck.dev/version"] == 1 and meta["promptdeck.dev/label"] == "production"
                else:
                    assert prompt.meta is None  # no _meta before 2025-06-18, from a store as from files
            await check_examples_render(session.get_prompt)
            for name, arguments in sorted(EXAMPLE_ARGS.items()):
                got, expected = await session.get_prompt(name, arguments), await folder.get_prompt(name, arguments)
                assert got.model_dump() == expected.model_dump(), name
            await check_completions(session.complete)
            await check_argument_errors(session.get_prompt)
            with pytest.raises(MCPError) as err:
                await session.list_tools()
            assert err.value.error.code == -32601

    anyio.run(run)
