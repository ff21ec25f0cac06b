"""docs/http.md's token rotation recipe, run as written against a real ``serve --http --token-file`` process over
real HTTP: the old token works; after the first step both do (read without a signal: the file changed); after the
second (with its ``kill -HUP``) the old one is a 401 and the new one works; one process throughout."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

from tests.support.http_server import listens, promptdeck_http
from tests.support.paths import REPO
from tests.support.token_files import OLD, status

SECTION = (REPO / "docs" / "http.md").read_text().split("\n### Rotating a bearer token\n", 1)[1].split("\n## ", 1)[0]


def bash(script: str, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def until(endpoint: str, wanted: dict[str, int]) -> None:
    """Wait (on the answers, not a clock) until each token gets its status; fail after a generous deadline."""
    deadline = time.monotonic() + 60
    while {token: status(endpoint, token) for token in wanted} != wanted:
        assert time.monotonic() < deadline, f"never {wanted}"
        time.sleep(0.1)


def test_the_rotation_recipe_runs_as_written(tmp_path: Path) -> None:
    steps = re.findall(r"```sh\n(.*?)```", SECTION, re.S)
    assert len(steps) == 2 and "kill -HUP" in steps[1]
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "hello.md").write_text("Hello.\n")
    (tmp_path / "tokens.txt").write_text(f"ci:{OLD} prompts\n")
    started: list[subprocess.Popen[bytes]] = []
    with promptdeck_http("serve", str(tmp_path / "prompts"), "--http", "{host}:{port}", "--no-watch",
                         "--token-file", str(tmp_path / "tokens.txt"), started=started) as endpoint:
        (server,) = started
        port = int(endpoint.rsplit(":", 1)[1].split("/", 1)[0])
        assert status(endpoint, OLD) == 200
        new = bash(steps[0] + 'printf %s "$NEW"', tmp_path, {"PATH": "/usr/bin:/bin"})
        assert len(new) >= 16
        until(endpoint, {OLD: 200, new: 200})
        bash(steps[1], tmp_path, {"PATH": "/usr/bin:/bin", "OLD": OLD, "PID": str(server.pid)})
        until(endpoint, {OLD: 401, new: 200})
        assert server.poll() is None and listens(server.pid, port)
        assert (tmp_path / "tokens.txt").read_text() == f"ci:{new} prompts\n"
