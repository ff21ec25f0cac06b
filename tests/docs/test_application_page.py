"""docs/application.md, run as written: each Python example and the publish command, in order, from a folder
holding the example library (as the page's commands are run from the promptdeck folder). The MCP server example
gets a real ``promptdeck serve --http`` on the page's folder, its port made a free one."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.http_server import free_port, http_server
from tests.support.libraries import EXAMPLES
from tests.support.paths import REPO

PAGE = REPO / "docs" / "application.md"
#: This tree's promptdeck, whatever the folder the examples run in.
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}
BLOCK = re.compile(r"^```(python|sh)\n(.*?)^```", re.S | re.M)


def test_every_example_of_the_page_runs_as_written(tmp_path: Path) -> None:
    blocks = BLOCK.findall(PAGE.read_text())
    assert [kind for kind, _ in blocks].count("python") >= 6, "docs/application.md lost examples"
    shutil.copytree(EXAMPLES, tmp_path / "examples" / "prompts")
    port = free_port()
    outputs: list[str] = []
    for kind, code in blocks:
        if kind == "sh":
            argv = shlex.split(code.replace(".venv/bin/promptdeck", "promptdeck"))
            assert argv[0] == "promptdeck", code
            done = subprocess.run([sys.executable, "-m", *argv], cwd=tmp_path, capture_output=True, text=True,
                                  timeout=120, env=ENV)
            assert done.returncode == 0, (code, done.stderr)
            continue
        if "127.0.0.1:8000" in code:
            with http_server(str(tmp_path / "app-prompts"), "--no-watch", port=port):
                outputs.append(run(code.replace("127.0.0.1:8000", f"127.0.0.1:{port}"), tmp_path))
        else:
            outputs.append(run(code, tmp_path))
    shown = "\n".join(outputs)
    assert "MCP servers offer prompts." in shown  # the first example printed its render
    assert "Write a short, warm greeting for Ada. False" in shown  # the server's render, not stale
    # arender from coroutines, on their loop
    assert "['Write a short, warm greeting for Ada.', 'Write a short, warm greeting for Bea.']" in shown
    assert "1 production" in shown
    assert "payroll" in shown  # the hidden prompt's InvalidParams
    assert "bundle of position 1 with" in shown and "(greet is offline) True" in shown


def run(code: str, cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env=ENV)
    assert done.returncode == 0, (code, done.stderr[-3000:])
    return done.stdout
