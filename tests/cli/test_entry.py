"""The front door (cli/entry.py): a plain stdio ``serve`` is read without click, every option it knows
honoured; anything else (another command, an option it does not know, a mistake) goes to click, whose
messages stay the only ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

#: Runs the front door as ``promptdeck`` would, and says on stderr at exit whether click was imported.
DOOR = ("import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('click imported: %s\\n' % ('click' in sys.modules)))\n"
        "sys.argv[0] = 'promptdeck'\n"
        "from promptdeck.cli.entry import main\n"
        "main()\n")
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def door(*args: str, requests: list[dict[str, Any]] | None = None) -> subprocess.CompletedProcess[str]:
    lines = "".join(json.dumps(r) + "\n" for r in requests or [])
    return subprocess.run([sys.executable, "-c", DOOR, *args], input=lines, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.md").write_text(f"prompt {name}\n")
    return tmp_path


def test_a_plain_serve_is_served_without_click_with_its_options(library: Path) -> None:
    done = door("serve", str(library), "--name", "deck", "--page-size", "2", "--no-watch", "-v",
                requests=[INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                          {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}])
    assert done.returncode == 0, done.stderr
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    assert answers[1]["result"]["serverInfo"]["name"] == "deck"
    page = answers[2]["result"]
    assert [p["name"] for p in page["prompts"]] == ["a", "b"] and "nextCursor" in page
    assert "click imported: False" in done.stderr


@pytest.mark.parametrize(("args", "says"), [
    (["serve", "--page-size", "0", "X"], "Error: Invalid value for '--page-size': 0 is not in the range"),
    (["serve", "--bogus", "X"], "Error: No such option '--bogus'"),
])
def test_anything_else_goes_to_click(args: list[str], says: str, library: Path) -> None:
    done = door(*[str(library) if arg == "X" else arg for arg in args])
    assert done.returncode == 2
    assert says in done.stderr and "click imported: True" in done.stderr
    assert "Usage: promptdeck serve [OPTIONS] [FOLDERS]..." in done.stderr


def test_a_serve_without_folders_is_a_usage_error() -> None:
    done = door("serve")
    assert done.returncode == 2
    assert done.stderr.startswith("promptdeck: serve needs a FOLDER or --store URL\n")


def test_other_commands_go_to_click() -> None:
    done = door("--version")
    assert done.returncode == 0 and done.stdout.startswith("promptdeck, version ")
