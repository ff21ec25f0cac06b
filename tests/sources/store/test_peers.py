"""Real peers against a store-backed server, as against the folder it was published from (issue 15).

The official ``mcp`` SDK client drives ``promptdeck serve --store`` over stdio and over Streamable HTTP
(stateful and stateless), with an SQLite and a PostgreSQL store, in every revision each transport
speaks, side by side with ``promptdeck serve FOLDER``: the handshake, every listed prompt, page by page
with the same cursors (the store's adding only its ``promptdeck.dev/version`` and
``promptdeck.dev/label`` to ``_meta``), the rendered messages for the same prompts and arguments,
completions, and the errors for bad arguments are the same. Every server message is checked against
the official JSON schema of the session's revision.

The conformance tests of ``tests/interop/test_conformance.py`` run unchanged with each library they serve as a
folder published to a store and served with ``--store`` instead: the active suites (0.1 and the 0.2
alpha, stateful and stateless) on both stores, every 2026-07-28 scenario on SQLite, and the
2026-07-28 requirements on PostgreSQL.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from tests.support import conformance_suite, sdk_http
from tests.support import sdk_stdio as sdk
from tests.support.http_server import http_server
from tests.support.interop_checks import all_pages, check_argument_errors, check_completions, check_examples_render
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES
from tests.support.node_peers import SUITES, missing_node_peers
from tests.support.postgres import new_database
from tests.support.schema import schema_available, schema_missing_reason
from tests.support.traffic import validate_traffic

pytestmark = pytest.mark.slow

BACKENDS = ("sqlite", "postgresql")
STORED_META = {"promptdeck.dev/version": 1, "promptdeck.dev/label": "production"}
#: ``--page-size`` for both servers, so that the store's cursors are walked and compared too.
PAGE_SIZE = ("--page-size", "4")

#: Prompts and arguments that render: every example's, and others that take other branches and files.
RENDERS: list[tuple[str, dict[str, str]]] = [
    *sorted(EXAMPLE_ARGS.items()),
    ("code-review", {"code": "fn add(a: i32) -> i32 { a }", "language": "rust", "focus": "security",
                     "strictness": "5", "context": "Adds two numbers"}),
    ("code-review", {"code": "x = 1", "strictness": "1"}),
    ("docs.release-notes", {"version": "2.3.1", "audience": "operators", "reading_minutes": "2.5",
                            "highlight": "Faster checkout"}),
    ("write-tests", {"source": "_material/app.log", "framework": "unittest", "include_edge_cases": "false",
                     "target": "OrderService.apply_coupon"}),
    ("describe-image", {"image": "_material/diagram.png", "purpose": "alt-text"}),
    ("standup.transcribe", {"format": "notes", "speakers": "Ana, Bo", "timestamps": "true"}),
    ("summarize", {}),
    ("summarize", {"bullets": "3", "text": "The store serves what the folder serves."}),
    ("git.commit", {"diff": "-a\n+b", "style": "plain", "ticket": "PROJ-7", "max_subject": "50"}),
]
#: Bad arguments, each -32602: the ones that depend on the library's files too (missing, a prompt, a folder).
REFUSED: list[tuple[str, dict[str, str]]] = [
    ("write-tests", {"source": "_material/nope.py"}),
    ("write-tests", {"source": "code-review.md"}),
    ("write-tests", {"source": "_material"}),
    ("write-tests", {"source": "../examples/prompts/_material/service.py"}),
    ("describe-image", {"image": "_material/none.png"}),
    ("docs.release-notes", {"version": "2.4"}),
    ("summarize", {"bullets": "0"}),
    ("git.commit", {"diff": ""}),
    ("code-review", {"code": "x", "focus": "everything"}),
]
#: Completion requests: enums, examples, and paths from the library's files.
COMPLETIONS: list[tuple[str, str, str]] = [
    ("code-review", "language", "py"), ("code-review", "focus", ""), ("docs.release-notes", "version", "2.3"),
    ("git.commit", "ticket", ""), ("write-tests", "source", ""), ("write-tests", "source", "_material/s"),
    ("describe-image", "image", ""), ("write-tests", "source", "debug/"),
]


def publish(folder: Path, url: str) -> str:
    done = subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(folder), "--store", url, "--label",
                           "production"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return url


def new_store(request: pytest.FixtureRequest, folder: Path, name: str) -> str:
    """An empty store of the backend ``request.param``: its URL."""
    if request.param == "sqlite":
        return f"sqlite:///{folder / name}.db"
    return new_database(request.getfixturevalue("postgres"))


@pytest.fixture(scope="module", params=BACKENDS)
def examples_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The bundled examples, published to a store: its URL."""
    return publish(EXAMPLES, new_store(request, tmp_path_factory.mktemp("store"), "examples"))


@pytest.fixture
def log(tmp_path: Path, revision: str) -> Iterator[Path]:
    """The store session's traffic; afterwards every server message is checked against the schema."""
    path = tmp_path / "traffic.log"
    yield path
    if not schema_available(revision):
        pytest.skip(schema_missing_reason(revision))
    assert validate_traffic(path, revision) > 0


async def outcome(session: Any, name: str, arguments: dict[str, str]) -> dict[str, Any]:
    """What ``prompts/get`` gives: the result, or the error's code and message."""
    try:
        return {"result": (await session.get_prompt(name, arguments)).model_dump()}
    except MCPError as err:
        return {"code": err.error.code, "message": err.error.message}


async def listing(session: Any) -> list[types.ListPromptsResult]:
    return await all_pages(lambda cursor: session.list_prompts(params=types.PaginatedRequestParams(cursor=cursor)))


async def check_same_as_folder(stored: Any, filed: Any, revision: str) -> None:
    """The SDK sessions ``stored`` (a store's server) and ``filed`` (the folder's) see the same library."""
    pages, expected_pages = await listing(stored), await listing(filed)
    assert len(pages) == 3  # 10 prompts, PAGE_SIZE a page
    assert [page.next_cursor for page in pages] == [page.next_cursor for page in expected_pages]
    listed = [prompt for page in pages for prompt in page.prompts]
    expected = [prompt for page in expected_pages for prompt in page.prompts]
    assert [p.name for p in listed] == sorted(EXAMPLE_ARGS) == [p.name for p in expected]
    for prompt, twin in zip(listed, expected, strict=True):
        assert prompt.model_dump(exclude={"meta"}) == twin.model_dump(exclude={"meta"}), prompt.name
        if revision >= "2025-06-18":
            assert prompt.meta == {**(twin.meta or {}), **STORED_META}, prompt.name
        else:
            assert prompt.meta is None and twin.meta is None  # no _meta before 2025-06-18

    # What the store serves renders, with the values given, independently of the folder...
    await check_examples_render(stored.get_prompt, skip={"standup.transcribe"} if revision < "2025-03-26" else ())
    # ...and exactly as the folder does, message for message; errors (audio before 2025-03-26) included.
    for name, arguments in RENDERS:
        got, want = await outcome(stored, name, arguments), await outcome(filed, name, arguments)
        if "result" in got and "result" in want:
            # A stored prompt's result names the version rendered (docs/store.md#rollouts), in every revision.
            assert got["result"].pop("meta") == {**(want["result"].pop("meta") or {}), **STORED_META}, name
        assert got == want, (name, arguments)
        assert "result" in got or (name == "standup.transcribe" and revision < "2025-03-26"), (name, got)

    await check_argument_errors(stored.get_prompt)
    for name, arguments in REFUSED:
        got = await outcome(stored, name, arguments)
        assert got.get("code") == -32602, (name, arguments, got)
        assert got == await outcome(filed, name, arguments), (name, arguments)

    await check_completions(stored.complete)
    for name, argument, value in COMPLETIONS:
        reference, typed = types.PromptReference(type="ref/prompt", name=name), {"name": argument, "value": value}
        got = (await stored.complete(reference, typed)).model_dump()
        assert got == (await filed.complete(reference, typed)).model_dump(), (name, argument, value)

    for session in (stored, filed):
        with pytest.raises(MCPError) as err:
            await session.list_tools()
        assert err.value.error.code == -32601
    # The store's server kept serving through all of that.
    assert (await stored.get_prompt("code-review", {"code": "x"})).messages


# --- the SDK client ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("revision", sdk.REVISIONS)
def test_the_sdk_client_over_stdio_sees_the_store_as_the_folder(examples_store: str, revision: str, log: Path,
                                                                 tmp_path: Path) -> None:
    async def run() -> None:
        async with sdk.connect(["--store", examples_store, *PAGE_SIZE], revision, log) as (stored, opened), \
                sdk.connect([str(EXAMPLES), *PAGE_SIZE], revision, tmp_path / "folder.log") as (filed, expected):
            assert opened.protocol_version == revision
            assert opened.model_dump() == expected.model_dump()
            await check_same_as_folder(stored, filed, revision)

    anyio.run(run)


@pytest.fixture(scope="module", params=sorted(conformance_suite.MODES))
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def store_endpoint(examples_store: str, mode: str) -> Iterator[str]:
    with http_server("", "--store", examples_store, *PAGE_SIZE, *conformance_suite.MODES[mode][0]) as url:
        yield url


@pytest.fixture(scope="module")
def folder_endpoint(mode: str) -> Iterator[str]:
    with http_server(str(EXAMPLES), *PAGE_SIZE, *conformance_suite.MODES[mode][0]) as url:
        yield url


@pytest.mark.parametrize("revision", sdk_http.REVISIONS)
def test_the_sdk_client_over_http_sees_the_store_as_the_folder(store_endpoint: str, folder_endpoint: str,
                                                               revision: str, log: Path, tmp_path: Path) -> None:
    async def run() -> None:
        async with sdk_http.connect_http(store_endpoint, revision, log) as (stored, opened), \
                sdk_http.connect_http(folder_endpoint, revision, tmp_path / "folder.log") as (filed, expected):
            assert opened.protocol_version == revision
            assert opened.model_dump() == expected.model_dump()
            await check_same_as_folder(stored, filed, revision)

    anyio.run(run)


# --- the conformance suite --------------------------------------------------------------------------------
# The folder's conformance checks (tests/support/conformance_suite.py) are called as they are, with their
# ``http_server`` swapped for one that serves the same library from a store: the scenarios, baselines and
# assertions cannot drift apart.

PROMPTS, PROMPTS_2026 = (str(conformance_suite.FIXTURES / name) for name in ("prompts", "prompts-2026"))


@pytest.fixture(scope="module")
def conformance_stores(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                       ) -> dict[tuple[str, ...], str]:
    """Each set of folders the conformance tests serve, merged into one folder and published to its own
    store (of the backend ``request.param``): folders -> store URL."""
    if (missing := missing_node_peers()) is not None:
        if os.environ.get("CI"):
            pytest.fail(f"conformance suite not installed in CI: {missing}")
        pytest.skip(missing)
    root = tmp_path_factory.mktemp("conformance")
    stores: dict[tuple[str, ...], str] = {}
    for index, folders in enumerate([(PROMPTS,), (PROMPTS, PROMPTS_2026)]):
        library = root / f"library{index}"
        for folder in folders:
            shutil.copytree(folder, library, dirs_exist_ok=True)
        stores[folders] = publish(library, new_store(request, root, f"library{index}"))
    return stores


@pytest.fixture
def served_from_store(monkeypatch: pytest.MonkeyPatch, conformance_stores: dict[tuple[str, ...], str]) -> list[str]:
    """Makes the conformance checks serve each library from its store instead of its folders; the list
    fills with the store URLs served."""
    served: list[str] = []

    @contextmanager
    def store_server(*arguments: str, log: Path | None = None) -> Iterator[str]:
        folders = tuple(argument for argument in arguments if not argument.startswith("-"))
        options = [argument for argument in arguments if argument.startswith("-")]
        url = conformance_stores[folders]
        served.append(url)
        with http_server("", "--store", url, *options, log=log) as endpoint:
            yield endpoint

    monkeypatch.setattr(conformance_suite, "http_server", store_server)
    return served


@pytest.mark.parametrize("conformance_stores", BACKENDS, indirect=True)
@pytest.mark.parametrize("mode", sorted(conformance_suite.MODES))
@pytest.mark.parametrize("suite", sorted(SUITES))
def test_the_active_suite_passes_against_a_store(suite: str, mode: str, tmp_path: Path, served_from_store: list[str],
                                                 conformance_stores: dict[tuple[str, ...], str]) -> None:
    conformance_suite.check_active_suite(suite, mode, tmp_path)
    assert served_from_store == [conformance_stores[(PROMPTS,)]]


@pytest.mark.parametrize(("conformance_stores", "selection"),
                         [("sqlite", "spec-version"), ("postgresql", "requirements")], indirect=["conformance_stores"])
@pytest.mark.parametrize("mode", sorted(conformance_suite.MODES))
def test_the_2026_suite_passes_against_a_store(selection: str, mode: str, tmp_path: Path, served_from_store: list[str],
                                               conformance_stores: dict[tuple[str, ...], str]) -> None:
    conformance_suite.check_2026_suite(selection, mode, tmp_path)
    assert served_from_store == [conformance_stores[(PROMPTS, PROMPTS_2026)]]
