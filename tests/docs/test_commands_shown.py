"""The commands the README and docs show work as pasted by a README reader: the command is
``.venv/bin/promptdeck`` (promptdeck is not on PyPI), never a bare ``promptdeck``, and every command shown
exists (docs/application.md named a ``promptdeck store label`` there is none of). Issue 38, finding 16."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from promptdeck.cli.main import main
from tests.support.libraries import EXAMPLES
from tests.support.paths import REPO

#: what a reader reads; architecture.md is for those who work on promptdeck, and names commands in passing
PAGES = [REPO / "README.md", *sorted(p for p in (REPO / "docs").glob("*.md") if p.name != "architecture.md")]
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```", re.S | re.M)
#: an inline code span, which may run over a line break within its paragraph
SPAN = re.compile(r"`((?:[^`\n]|\n(?!\n))+)`")
#: shell-like blocks: what is pasted into a terminal
SHELL = ("sh", "console", "bash", "shell", "")
#: ``promptdeck`` followed by one of its commands, not part of a path or another word
COMMANDS = "|".join(sorted(main.commands))
BARE = re.compile(rf"(?<![\w./-])promptdeck (?=({COMMANDS})\b)")
#: ``promptdeck`` run by another launcher, where it is the right name: a built wheel through uvx or pipx,
#: and the container's own command
LAUNCHED = re.compile(r"\.whl\S*'? promptdeck |^docker run .* promptdeck serve |^promptdeck serve /srv/prompts")
SHOWN = re.compile(r"\.venv/bin/promptdeck ((?:[a-z-]+)(?: [a-z-]+)?)")


def shown_commands(page: Path) -> list[tuple[int, str]]:
    """(line, text) of each line of a shell block, and of each inline code span starting with a command
    outside headings."""
    text = page.read_text()
    found: list[tuple[int, str]] = []
    for block in FENCE.finditer(text):
        if block.group(1) in SHELL:
            first = text[:block.start()].count("\n") + 2
            found += [(first + i, line) for i, line in enumerate(block.group(2).splitlines())]
    prose = FENCE.sub(lambda block: "\n" * block.group(0).count("\n"), text)
    # a heading names a command (and its anchor is linked to), it is not one to paste
    prose = re.sub(r"(?m)^#.*$", "", prose)
    for span in SPAN.finditer(prose):
        code = " ".join(span.group(1).split())
        if re.match(r"(\.venv/bin/)?promptdeck ", code):
            found.append((prose[:span.start()].count("\n") + 1, code))
    return found


def bare(line: str) -> bool:
    return bool(BARE.search(line)) and not LAUNCHED.search(line.strip().removeprefix("$ "))


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_no_command_shown_is_a_bare_promptdeck(page: Path) -> None:
    found = [f"{page.name}:{at}: {line}" for at, line in shown_commands(page) if bare(line)]
    assert not found, "\n".join(found)


def test_the_check_sees_a_bare_command_and_lets_a_launched_one_be() -> None:
    assert bare("promptdeck check my-prompts") and bare('.venv/bin/promptdeck ls "promptdeck serve x"')
    assert bare("$ promptdeck test my-prompts")
    assert not bare(".venv/bin/promptdeck check my-prompts") and not bare("promptdeck vs the official SDK")
    assert not bare(".venv/bin/uvx --from ./dist/promptdeck-0.1.0-py3-none-any.whl promptdeck serve examples/prompts")
    assert not bare("docker run --rm -p 8000:8000 promptdeck serve /srv/prompts --http 0.0.0.0:8000")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_command_shown_exists(page: Path) -> None:
    missing = []
    for at, line in shown_commands(page):
        for words in SHOWN.findall(line):
            name, _, sub = words.partition(" ")
            command = main.commands.get(name)
            if command is None:
                missing.append(f"{page.name}:{at}: {name}")
            elif isinstance(command, click.Group) and sub and sub not in command.commands:
                missing.append(f"{page.name}:{at}: {name} {sub}")
    assert not missing, "\n".join(missing)


def test_the_docs_say_once_how_to_call_the_command() -> None:
    cli_page = (REPO / "docs" / "cli.md").read_text()
    assert "The command is `.venv/bin/promptdeck`" in cli_page.split("\n## ", 1)[0]
    assert "the command\nis `.venv/bin/promptdeck`" in (REPO / "README.md").read_text()


def test_the_example_count_is_what_check_says() -> None:
    done = subprocess.run([sys.executable, "-m", "promptdeck", "check", str(EXAMPLES)], capture_output=True,
                          text=True, timeout=120, check=True)
    prompts = int(re.match(r"(\d+) prompts", done.stdout).group(1))  # type: ignore[union-attr]
    for page in (REPO / "README.md", REPO / "docs" / "prompt-files.md"):
        text = " ".join(page.read_text().split())
        assert f"[examples/prompts]({'' if page.name == 'README.md' else '../'}examples/prompts), has {prompts} " \
               "prompts" in text, page


def test_the_readme_opens_with_why_promptdeck() -> None:
    """What it is and why to pick it over the official SDK or FastMCP, before revision dates and speed."""
    opening = (REPO / "README.md").read_text().split("## Set up", 1)[0]
    assert "official MCP SDK or FastMCP" in opening
    for reason in ("No code per prompt", "Check and test", "Store and review", "A web page", "Skills"):
        assert f"**{reason}" in opening, reason
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b|millisecond", opening)
