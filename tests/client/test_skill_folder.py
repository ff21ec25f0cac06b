"""Fetching a skill into a folder, from a real server process that lies about it in every way it can.

The server is ``servers/bad_skills.py`` over stdio. Whatever it sends, nothing may be written outside the
destination, and nothing at all unless every file matches its digest."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from promptdeck.client import connect, fetch_skill
from promptdeck.protocol.errors import ClientError, McpError, ProtocolViolation
from tests.support.client_servers import DEADLINE, PYTHON, SERVERS, run
from tests.support.paths import REPO

URI = "skill://team/demo/SKILL.md"


def server(mode: str) -> list[str]:
    return [PYTHON, str(SERVERS / "bad_skills.py"), mode]


def everything_under(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


def fetch(mode: str, into: Path, *, max_file_bytes: int = 10**7, max_total_bytes: int = 10**8) -> Path:
    async def scenario() -> Path:
        async with connect(server(mode), timeout=DEADLINE) as client:
            return await fetch_skill(client, URI, into, max_file_bytes=max_file_bytes, max_total_bytes=max_total_bytes)

    return run(scenario())


def test_an_honest_skill_is_written_byte_for_byte(tmp_path: Path) -> None:
    into = tmp_path / "skills"
    written = fetch("honest", into)
    assert written == into / "demo"
    assert everything_under(into) == {"demo", "demo/SKILL.md", "demo/refs", "demo/refs/guide.txt", "demo/bin",
                                      "demo/bin/tool.bin"}
    assert (written / "bin" / "tool.bin").read_bytes() == bytes(range(256))
    assert (written / "refs" / "guide.txt").read_text(encoding="utf-8") == "A guide, with ünïcode.\n"


def test_the_listing_and_the_client_api(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with connect(server("honest"), timeout=DEADLINE) as client:
            (skill,) = await client.list_skills()
            assert (skill.name, skill.root, skill.description) == ("demo", "skill://team/demo", "A demo skill.")
            assert skill == await client.get_skill(URI)
            (content,) = await client.read_resource("skill://team/demo/bin/tool.bin")
            assert content.blob == bytes(range(256))
            digests = {entry.uri: entry.digest for entry in skill.files}
            expected = "sha256:" + hashlib.sha256(bytes(range(256))).hexdigest()
            assert digests["skill://team/demo/bin/tool.bin"] == expected
            with pytest.raises(McpError) as unknown:
                await client.get_skill("skill://team/nope/SKILL.md")
            assert unknown.value.code == -32602

    run(scenario())


@pytest.mark.parametrize("mode", ["escape", "encoded", "slash", "absolute", "outside", "bad-name", "twice",
                                  "no-skill-md"])
def test_a_file_list_that_could_leave_the_folder_is_refused_before_anything_is_read(mode: str, tmp_path: Path) -> None:
    into = tmp_path / "deep" / "skills"
    with pytest.raises(ProtocolViolation, match="skill"):
        fetch(mode, into)
    assert not (tmp_path / "escaped.txt").exists()
    assert not list(tmp_path.rglob("escaped.txt"))
    assert everything_under(tmp_path) <= {"deep", "deep/skills"}


def test_a_file_that_does_not_match_its_digest_leaves_nothing(tmp_path: Path) -> None:
    into = tmp_path / "skills"
    with pytest.raises(ClientError, match="refs/guide.txt does not match its digest"):
        fetch("digest", into)
    assert everything_under(into) == set()


def test_contents_for_another_uri_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ProtocolViolation, match="expected one content for that URI"):
        fetch("other-uri", tmp_path)
    assert everything_under(tmp_path) == set()


def test_too_many_files_and_too_many_bytes_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ClientError, match="5003 files, more than the 1000 allowed"):
        fetch("many", tmp_path)
    with pytest.raises(ClientError, match="3000000 bytes, more than the 1000000 allowed"):
        fetch("big", tmp_path, max_file_bytes=1_000_000)
    with pytest.raises(ClientError, match="more than 2000000 bytes in all"):
        fetch("big", tmp_path, max_total_bytes=2_000_000)
    assert everything_under(tmp_path) == set()


def test_an_existing_skill_is_kept_unless_replaced(tmp_path: Path) -> None:
    mine = tmp_path / "demo"
    mine.mkdir()
    (mine / "SKILL.md").write_text("my own\n")
    with pytest.raises(ClientError, match="already exists"):
        fetch("honest", tmp_path)
    assert (mine / "SKILL.md").read_text() == "my own\n"

    async def replace() -> Path:
        async with connect(server("honest"), timeout=DEADLINE) as client:
            return await fetch_skill(client, URI, tmp_path, replace=True)

    assert run(replace()) == mine
    assert (mine / "SKILL.md").read_text().startswith("---\nname: demo")
    assert everything_under(tmp_path) == {"demo", "demo/SKILL.md", "demo/refs", "demo/refs/guide.txt", "demo/bin",
                                          "demo/bin/tool.bin"}


def test_a_symlink_in_the_way_is_replaced_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    into = tmp_path / "skills"
    into.mkdir()
    os.symlink(target, into / "demo")
    with pytest.raises(ClientError, match="already exists"):
        fetch("honest", into)

    async def replace() -> Path:
        async with connect(server("honest"), timeout=DEADLINE) as client:
            return await fetch_skill(client, URI, into, replace=True)

    run(replace())
    assert not (into / "demo").is_symlink() and (into / "demo" / "SKILL.md").is_file()
    assert everything_under(target) == set()


def test_the_cli_lists_and_fetches(tmp_path: Path) -> None:
    promptdeck = [PYTHON, "-m", "promptdeck"]
    command = f"{PYTHON} {SERVERS / 'bad_skills.py'} honest"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    listed = subprocess.run([*promptdeck, "skills", command], capture_output=True, text=True, env=env, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert "skill://team/demo/SKILL.md" in listed.stdout and "(3 files)" in listed.stdout
    fetched = subprocess.run([*promptdeck, "skill", command, "skill://team/demo", "--to", str(tmp_path / "out")],
                             capture_output=True, text=True, env=env, timeout=60)
    assert fetched.returncode == 0, fetched.stderr
    assert "3 files, every digest checked" in fetched.stdout
    assert (tmp_path / "out" / "demo" / "bin" / "tool.bin").read_bytes() == bytes(range(256))
    lying = subprocess.run([*promptdeck, "skill", command.replace("honest", "escape"), URI, "--to", str(tmp_path)],
                           capture_output=True, text=True, env=env, timeout=60)
    assert lying.returncode == 1
    assert "outside the skill" in lying.stderr or "cannot be written safely" in lying.stderr
    assert "Traceback" not in lying.stderr
