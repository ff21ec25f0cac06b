"""The README's first-prompt walkthrough and the docs' Python example and store walkthrough, each run as
written from a folder of its own, as a reader would run it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.modern import stdio_line
from tests.support.paths import REPO

README = REPO / "README.md"
PYTHON_PAGE = REPO / "docs" / "python.md"
STORE_PAGE = REPO / "docs" / "store.md"


def _python_example() -> str:
    section = PYTHON_PAGE.read_text().split("# Prompts in Python", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, "docs/python.md lost its Python example"
    return found.group(1)


def test_the_python_example_serves_from_any_folder(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(_python_example())
    requests: list[dict[str, object]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "reader", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "prompts/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/get",
         "params": {"name": "incident_summary", "arguments": {"service": "billing"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "completion/complete", "params": {
            "ref": {"type": "ref/prompt", "name": "handover"}, "argument": {"name": "team", "value": "p"}}},
    ]
    done = subprocess.run([sys.executable, "server.py"], cwd=tmp_path, input=b"".join(map(stdio_line, requests)),
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert [p["name"] for p in answers[1]["result"]["prompts"]] == ["handover", "incident_summary"]
    assert answers[2]["result"]["messages"][0]["content"]["text"] == "Summarize the sev2 incident on billing."
    assert answers[3]["result"]["completion"]["values"] == ["payments", "platform"]


def test_the_store_walkthrough_runs_as_written(tmp_path: Path) -> None:
    """Every line of the store section's shell block, run in order from a fresh folder (the two
    ``serve`` lines start servers; they are run elsewhere, in tests/sources/store/test_database.py)."""
    section = STORE_PAGE.read_text().split("# A versioned store", 1)[1]
    found = re.search(r"```sh\n(.*?)```", section, re.S)
    assert found, "docs/store.md lost its store walkthrough"
    lines = [line for line in found.group(1).splitlines() if " serve " not in line]
    assert lines[0] == "P=.venv/bin/promptdeck"
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "promptdeck").symlink_to(Path(sys.executable).parent / "promptdeck")
    (tmp_path / "examples").symlink_to(REPO / "examples")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(lines)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "publish 2: 1 file changed; label staging points at it" in done.stdout
    assert "+Answer in one paragraph." in done.stdout
    assert (tmp_path / "exported" / "summarize.md").read_text().endswith("Answer in one paragraph.\n")


def _first_prompt_section() -> str:
    return README.read_text().split("## Your first prompt", 1)[1].split("\n## ", 1)[0]


def test_the_first_prompt_walkthrough_runs_as_written(tmp_path: Path) -> None:
    """The README's five-minute walkthrough, literally: its shell block, its prompt file saved where it says,
    and each ``$`` line of its console block run from the promptdeck folder, printing exactly what follows
    it there (stdout and stderr, as a terminal shows them). ``~`` is a fresh home folder."""
    section = _first_prompt_section()
    home, repo = tmp_path / "home", tmp_path / "promptdeck"
    home.mkdir()
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".venv" / "bin" / "promptdeck").symlink_to(Path(sys.executable).parent / "promptdeck")
    env = {**os.environ, "HOME": str(home)}

    def bash(script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=60)

    (setup,) = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert bash(setup).returncode == 0
    (prompt,) = re.findall(r"```markdown\n(.*?)```", section, re.S)
    saved = re.search(r"Save this as `~/([^`]+)`", section)
    assert saved, "the walkthrough no longer says where to save its prompt"
    (home / saved.group(1)).write_text(prompt)
    (console,) = re.findall(r"```console\n(.*?)```", section, re.S)
    runs = re.split(r"^\$ ", console, flags=re.M)[1:]
    assert len(runs) == 3, runs
    for run in runs:
        command, _, shown = run.partition("\n")
        done = bash(command + " 2>&1")
        assert done.stdout == shown, command
    assert [bash(run.partition("\n")[0]).returncode for run in runs] == [0, 0, 1]
