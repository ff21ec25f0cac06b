"""``serve`` over stdio (cli/serve_stdio.py): folders served until stdin ends, exit 0; a folder that cannot be
served is one line on stderr naming it, exit 1, with nothing on stdout (the protocol's channel)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SERVE = ("import sys\n"
         "from promptdeck.cli.serve_stdio import serve_stdio_folders\n"
         "sys.exit(serve_stdio_folders(sys.argv[1:], 'named', 100, False, 0))\n")


def serve(*folders: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SERVE, *folders], input=stdin, capture_output=True, text=True,
                          timeout=120)


def test_serves_until_stdin_ends(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("hello\n")
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    done = serve(str(tmp_path), stdin=json.dumps(request) + "\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["serverInfo"]["name"] == "named"


def test_a_folder_that_cannot_be_served_is_one_line_and_exit_1(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere\x1b[2J"
    done = serve(str(missing))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"promptdeck: prompt library {str(missing)!r} is not a folder\n"
    assert "\x1b" not in done.stderr  # the name reaches the terminal escaped
