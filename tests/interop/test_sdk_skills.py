"""The official MCP Python SDK reads skills from ``promptdeck serve`` (SEP-2640): a real process over stdio and
Streamable HTTP, per legacy revision, and at 2026-07-28 with ``mcp.Client``.

The SDK has no skills API, so ``skills/list``, ``skills/get`` and ``resources/directory/read`` go through its
``send_request`` with request types of their own (as a skills-aware client built on it does); skill files are
read with its ``read_resource``. Every server message is recorded and validated: the envelope against the
official schema of its revision, each skills result against the SEP's shapes
(``tests/support/skills_schema.py``, through ``validate_traffic``). Each file read must hash to the digest
the listing gave.
"""

from __future__ import annotations

import base64
import hashlib
import warnings
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from pydantic import TypeAdapter

from tests.support.http_server import http_server
from tests.support.libraries import copy_examples
from tests.support.sdk_http import connect_http
from tests.support.sdk_stdio import connect
from tests.support.skills_schema import check_capabilities, check_entry

from . import sdk_resources as resources_suite
from .sdk_modern import Recorded, check_modern, sdk_client, serving

# The same revisions and transports as the resources suite (its fixtures), and its listener of notifications.
revision, transport, modern_transport = resources_suite.revision, resources_suite.transport, \
    resources_suite.modern_transport
Heard = resources_suite.Heard

pytestmark = pytest.mark.slow

DEADLINE = 20
CHANGELOG = "skill://changelog/SKILL.md"
STYLE = "skill://changelog/references/style.md"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
RAW: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])


# The SDK's types are untyped for mypy here (ignore_missing_imports): subclassing them needs the ignores.
class ListSkillsParams(types.PaginatedRequestParams):  # type: ignore[misc]
    pass


class ListSkills(types.Request[ListSkillsParams, Literal["skills/list"]]):  # type: ignore[misc]
    method: Literal["skills/list"] = "skills/list"
    params: ListSkillsParams


class GetSkillParams(types.RequestParams):  # type: ignore[misc]
    uri: str


class GetSkill(types.Request[GetSkillParams, Literal["skills/get"]]):  # type: ignore[misc]
    method: Literal["skills/get"] = "skills/get"
    params: GetSkillParams


class ReadDirectoryParams(types.PaginatedRequestParams):  # type: ignore[misc]
    uri: str


class ReadDirectory(types.Request[ReadDirectoryParams, Literal["resources/directory/read"]]):  # type: ignore[misc]
    method: Literal["resources/directory/read"] = "resources/directory/read"
    params: ReadDirectoryParams


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """The example library (its skill, changelog) and a second skill with a binary file and a nested skill."""
    root = copy_examples(tmp_path / "library")
    tools = root / "skills/tools"
    (tools / "assets").mkdir(parents=True)
    (tools / "SKILL.md").write_text("---\nname: tools\ndescription: Pick the right tool.\n---\nSee assets/.\n")
    (tools / "assets/icon.png").write_bytes(PNG)
    (tools / "linting").mkdir()
    (tools / "linting/SKILL.md").write_text("---\nname: linting\ndescription: Lint before review.\n---\nLint.\n")
    return root


async def walk(session: Any) -> list[dict[str, Any]]:
    """Every entry of ``skills/list``, page by page."""
    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(50):
        page = await session.send_request(ListSkills(params=ListSkillsParams(cursor=cursor)), RAW)
        entries.extend(page["skills"])
        cursor = page.get("nextCursor")
        if cursor is None:
            return entries
    raise AssertionError("skills/list never ended")


async def read_bytes(read: Any, uri: str) -> bytes:
    (contents,) = (await read(uri)).contents
    assert str(contents.uri) == uri
    if isinstance(contents, types.BlobResourceContents):
        return base64.b64decode(contents.blob)
    assert isinstance(contents, types.TextResourceContents)
    text: str = contents.text
    return text.encode()


async def exercise(session: Any, read: Any, library: Path) -> None:
    """What a skills-aware client does: list, get, browse folders, read every file and check its digest."""
    entries = await walk(session)
    assert [entry["uri"] for entry in entries] == [CHANGELOG, "skill://tools/SKILL.md",
                                                   "skill://tools/linting/SKILL.md"]
    for entry in entries:
        check_entry(entry)
        got = await session.send_request(GetSkill(params=GetSkillParams(uri=entry["uri"])), RAW)
        assert got["skill"] == entry
        for item in entry["resources"]:
            data = await read_bytes(read, item["uri"])
            assert "sha256:" + hashlib.sha256(data).hexdigest() == item["digest"] and len(data) == item["size"]
    source = library / "skills/changelog"
    assert await read_bytes(read, STYLE) == (source / "references/style.md").read_bytes()
    assert await read_bytes(read, "skill://tools/assets/icon.png") == PNG
    root = await session.send_request(ReadDirectory(params=ReadDirectoryParams(uri="skill://changelog")), RAW)
    assert [(e["uri"], e["mimeType"]) for e in root["resources"]] == [
        (CHANGELOG, "text/markdown"), ("skill://changelog/references", "inode/directory")]
    refs = await session.send_request(ReadDirectory(params=ReadDirectoryParams(
        uri="skill://changelog/references")), RAW)
    assert [e["uri"] for e in refs["resources"]] == [STYLE]
    for wrong in ("skill://changelog/../tools/SKILL.md", "skill://nope/SKILL.md", STYLE):
        with pytest.raises(MCPError) as caught:
            await session.send_request(GetSkill(params=GetSkillParams(uri=wrong)), RAW)
        assert (caught.value.error.code, caught.value.error.message) == (-32602, f"Skill not found: {wrong!r}")
    with pytest.raises(MCPError) as caught:
        await session.send_request(ReadDirectory(params=ReadDirectoryParams(uri=STYLE)), RAW)
    assert caught.value.error.code == -32602
    with pytest.raises(MCPError) as caught:
        await read("skill://changelog/%2e%2e/tools/SKILL.md")
    assert caught.value.error.code == -32602


def test_legacy_clients_list_get_browse_and_read_skills(transport: str, revision: str, log: Path,
                                                         library: Path) -> None:
    async def run(session: Any, result: Any) -> None:
        check_capabilities(result.capabilities.model_dump(by_alias=True, exclude_none=True))
        listed = [str(r.uri) for r in (await session.list_resources()).resources]
        assert {CHANGELOG, STYLE, "skill://tools/assets/icon.png"} <= set(listed)
        await exercise(session, session.read_resource, library)

    async def main(url: str | None) -> None:
        if url is None:
            async with connect([str(library), "--no-watch"], revision, log) as (session, result):
                await run(session, result)
        else:
            async with connect_http(url, revision, log) as (session, result):
                await run(session, result)

    if transport == "stdio":
        anyio.run(main, None)
    else:
        with http_server(str(library), "--no-watch") as url:
            anyio.run(main, url)


def test_2026_clients_list_get_browse_and_read_skills(modern_transport: str, tmp_path: Path, library: Path) -> None:
    recorded = Recorded(tmp_path / "modern.log")

    async def run(target: str | list[str]) -> None:
        async with sdk_client(target, recorded) as client:  # its server/discover probe learns the capabilities
            assert client.protocol_version == "2026-07-28"
            check_capabilities(client.server_capabilities.model_dump(by_alias=True, exclude_none=True))
            await exercise(client.session, client.read_resource, library)

    with serving(modern_transport, str(library), "--no-watch") as target:
        anyio.run(run, target)
    _, received = check_modern(recorded)
    pages = [m["result"] for m in received if "skills" in m.get("result", {})]
    assert pages and all((page["ttlMs"], page["cacheScope"]) == (60_000, "public") for page in pages)
    reads = [(body, headers) for body, headers in recorded.posts if body.get("method") == "resources/read"]
    for body, headers in reads:  # a skill file's URI travels in Mcp-Name too
        assert headers["mcp-name"] == body["params"]["uri"], (body, headers)
    assert modern_transport == "stdio" or any(body["params"]["uri"] == STYLE for body, _ in reads)


@pytest.mark.parametrize("revision", ["2025-11-25"])
def test_a_changed_skill_reaches_the_client_and_a_broken_one_keeps_its_last_good_version(
        revision: str, log: Path, library: Path) -> None:
    heard = Heard()

    async def main() -> None:
        async with connect([str(library)], revision, log, heard) as (session, _):
            before = await walk(session)  # a client that read skills/list is told when their files come and go
            with warnings.catch_warnings():  # the SDK marks it deprecated (gone at 2026-07-28); 2025-11-25 has it
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await session.subscribe_resource(STYLE)
            await anyio.sleep(0.5)  # let the watcher settle before the edit
            (library / "skills/changelog/references/style.md").write_text("# House style, changed\n")
            with anyio.fail_after(DEADLINE):
                await heard.updates.wait()
            assert heard.updated == [STYLE]
            got = await session.send_request(GetSkill(params=GetSkillParams(uri=CHANGELOG)), RAW)
            digest = "sha256:" + hashlib.sha256(b"# House style, changed\n").hexdigest()
            assert [r["digest"] for r in got["skill"]["resources"] if r["uri"] == STYLE] == [digest]
            assert got["skill"]["frontmatter"] == before[0]["frontmatter"]
            # Break the SKILL.md, then add a file elsewhere: the list_changed that follows proves both reloads ran.
            (library / "skills/changelog/SKILL.md").write_text("---\nname: changelog\n---\nno description\n")
            await anyio.sleep(0.3)
            (library / "skills/tools/assets/notes.md").write_text("notes\n")
            with anyio.fail_after(DEADLINE):
                await heard.list_changed.wait()
            after = await session.send_request(GetSkill(params=GetSkillParams(uri=CHANGELOG)), RAW)
            assert after["skill"]["frontmatter"] == before[0]["frontmatter"]  # the last good version
            with pytest.raises(MCPError) as caught:  # its bytes are no longer those listed: refused, not served
                await session.read_resource(CHANGELOG)
            assert caught.value.error.code == -32602
            tools = await session.send_request(GetSkill(params=GetSkillParams(uri="skill://tools/SKILL.md")), RAW)
            assert "skill://tools/assets/notes.md" in [r["uri"] for r in tools["skill"]["resources"]]

    anyio.run(main)
