"""A tool's own folder served directly (``serve ~/.claude/commands``): its files are read in that tool's
format, as its path says (``paths.folder_prefix``) or as ``--format`` says, over real stdio, with hot
reload, ``check``, ``render`` and a store's ``publish`` (docs/native-formats.md, "A tool's own folder")."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from promptdeck.sources.files.paths import folder_prefix
from promptdeck.sources.files.source import FileSource
from tests.support.files import write

HOME: dict[str, str | bytes] = {
    # the commands users keep globally, front matter and all
    ".claude/commands/review.md": "---\ndescription: Review code\nargument-hint: \"[file]\"\n---\n"
                                  "Review $ARGUMENTS carefully.\n",
    ".claude/commands/git/commit.md": "---\ndescription: Commit\nallowed-tools: Bash(git commit:*)\n---\n"
                                      "Commit $0 at $1 priority.\n",
    ".claude/skills/explain/SKILL.md": "---\ndescription: Explain\narguments: topic\n---\nExplain $topic.\n",
    ".claude/projects/p/notes.md": "not a prompt\n",
    ".claude/CLAUDE.md": "not a prompt either\n",
    ".gemini/commands/ops/deploy.toml": "description = 'Deploy'\nprompt = 'Deploy {{args}} now.'\n",
    ".codex/prompts/pair.md": "---\ndescription: Pair up\n---\nPair $USER with $BRANCH.\n",
    "proj/.github/prompts/form.prompt.md": "---\ndescription: Form\n---\nMake ${input:formName}.\n",
}


@pytest.mark.parametrize(("folder", "prefix"), [
    ("home/.claude/commands", ".claude/commands/"),
    ("home/.claude/commands/git", ".claude/commands/git/"),
    ("home/.claude", ".claude/"),
    ("home/.claude/skills/explain", ".claude/skills/explain/"),
    ("home/.gemini/commands", ".gemini/commands/"),
    ("home/.codex/prompts", ".codex/prompts/"),
    ("home/proj/.github/prompts", ".github/prompts/"),
    ("home/proj/.github", ".github/"),
    ("home/.cursor/commands", ".cursor/commands/"),
    ("home/.continue/prompts", ".continue/prompts/"),
    ("home", ""), ("home/proj", ""),
    ("home/.claude/projects", ""),  # not where Claude Code keeps commands: a library of its own
    ("home/.github/workflows", ""),
])
def test_a_folder_is_read_as_its_path_says(tmp_path: Path, folder: str, prefix: str) -> None:
    assert folder_prefix(tmp_path / folder) == prefix


def test_a_link_to_a_tools_folder_is_read_as_where_it_leads(tmp_path: Path) -> None:
    write(tmp_path, {"home/.claude/commands/a.md": "A $ARGUMENTS\n"})
    os.symlink(tmp_path / "home/.claude/commands", tmp_path / "mine")
    assert folder_prefix(tmp_path / "mine") == ".claude/commands/"
    assert folder_prefix(tmp_path / "mine", "promptdeck") == ""
    assert folder_prefix(tmp_path / "home", "gemini") == ".gemini/commands/"


def test_serving_home_claude_reads_commands_and_skills_and_walks_nothing_else(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "home", HOME)
    source = FileSource(tmp_path / "home/.claude")
    source.load()
    assert {p.name for p in source.prompts()} == {"review", "git.commit", "explain"}
    assert source.errors == {}
    walked: list[str] = []
    real_walk = os.walk

    def spy(top: str) -> Iterator[tuple[str, list[str], list[str]]]:
        for entry in real_walk(top):
            walked.append(entry[0])
            yield entry

    monkeypatch.setattr(os, "walk", spy)
    source.scan()
    assert walked and not any("projects" in path for path in walked)  # ~/.claude/projects can be huge


def _params(*serve: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "promptdeck", "serve", *serve],
                                 env=dict(os.environ))


@pytest.mark.slow
def test_tools_folders_served_directly_over_stdio(tmp_path: Path) -> None:
    """Each folder served alone, as a user points a client at it; a new command comes in while served."""
    import mcp_types as types

    home = tmp_path / "home"
    write(home, HOME)
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            changed.set()

    async def run() -> None:
        async with stdio_client(_params(str(home / ".claude/commands"))) as (read, write_), \
                ClientSession(read, write_, message_handler=on_message) as session:
            await session.initialize()
            listed = {p.name: p for p in (await session.list_prompts()).prompts}
            assert set(listed) == {"review", "git.commit"}
            assert listed["review"].description == "Review code"
            got = await session.get_prompt("review", {"arguments": "app.py"})
            assert got.messages[0].content.text == "Review app.py carefully.\n"
            got = await session.get_prompt("git.commit", {"arg0": "fix", "arg1": "high"})
            assert got.messages[0].content.text == "Commit fix at high priority.\n"
            await anyio.sleep(0.3)  # let the watcher settle before the edit
            write(home, {".claude/commands/fresh.md": "---\ndescription: Fresh\n---\nFresh $ARGUMENTS\n"})
            with anyio.fail_after(10):
                await changed.wait()
            got = await session.get_prompt("fresh", {"arguments": "x"})
            assert got.messages[0].content.text == "Fresh x\n"
        for folder, name, arguments, expected in [
            (".gemini/commands", "ops.deploy", {"args": "staging"}, "Deploy staging now."),
            (".codex/prompts", "pair", {"USER": "al", "BRANCH": "main"}, "Pair al with main.\n"),
            ("proj/.github/prompts", "form", {"formName": "login"}, "Make login.\n"),
        ]:
            async with stdio_client(_params(str(home / folder))) as (read, write_), \
                    ClientSession(read, write_) as session:
                await session.initialize()
                assert [p.name for p in (await session.list_prompts()).prompts] == [name]
                got = await session.get_prompt(name, arguments)
                assert got.messages[0].content.text == expected

    anyio.run(run)


@pytest.mark.slow
def test_format_option_reads_any_folder_in_a_tools_format(tmp_path: Path) -> None:
    write(tmp_path, {"mine/review.md": HOME[".claude/commands/review.md"]})

    async def run() -> None:
        async with stdio_client(_params(str(tmp_path / "mine"), "--format", "claude-command")) as (read, write_), \
                ClientSession(read, write_) as session:
            await session.initialize()
            got = await session.get_prompt("review", {"arguments": "a.py"})
            assert got.messages[0].content.text == "Review a.py carefully.\n"

    anyio.run(run)


def _promptdeck(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True)


def test_check_and_render_a_tools_folder_name_files_below_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home, {**HOME, ".claude/commands/bad.md": "---\nargument-hint: [a] [b]\n---\nx\n"})
    done = _promptdeck("check", str(home / ".claude/commands"))
    assert done.returncode == 1
    assert done.stdout.startswith("bad.md:2: ")  # as the user finds it from the folder given
    assert "2 prompts ok; 1 problem in 1 file" in done.stderr
    done = _promptdeck("render", str(home / ".claude/commands"), "review", "-a", "arguments=x.py")
    assert done.returncode == 0 and "Review x.py carefully." in done.stdout
    # the same file, read as promptdeck's own by --format, is refused for its Claude Code key
    done = _promptdeck("check", str(home / ".claude/commands/git"), "--format", "promptdeck")
    assert done.returncode == 1 and "allowed-tools" in done.stdout


@pytest.mark.slow
def test_a_tools_folder_published_to_a_store_is_served_as_that_tool_reads_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home, HOME)
    url = f"sqlite:///{tmp_path}/s.db"
    done = _promptdeck("publish", str(home / ".claude/commands"), "--store", url, "--label", "production")
    assert done.returncode == 0, done.stderr
    assert ".claude/commands/review.md" in done.stdout and ".claude/commands/git/commit.md" in done.stdout
    done = _promptdeck("publish", str(home / ".claude/commands"), "--store", url)
    assert done.stdout.startswith("nothing changed"), done.stdout

    async def run() -> None:
        async with stdio_client(_params("--store", url)) as (read, write_), ClientSession(read, write_) as session:
            await session.initialize()
            got = await session.get_prompt("review", {"arguments": "app.py"})
            assert got.messages[0].content.text == "Review app.py carefully.\n"

    anyio.run(run)
