"""The package as users install it: an sdist and a wheel built from this tree, checked by ``twine``, and
the wheel run the ways MCP users run servers (``uvx``, ``pipx run``, a fresh ``uv`` venv), each
serving the example library over stdio to a real exchange.

The builds and installs fetch their dependencies from PyPI, into caches under the test's own folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from promptdeck.server.app import PromptServer
from tests.support.libraries import EXAMPLES
from tests.support.paths import REPO

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(REPO)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    yield out


def wheel_of(dist: Path) -> Path:
    (wheel,) = dist.glob("promptdeck-*.whl")
    return wheel


def test_twine_passes_the_sdist_and_the_wheel(dist: Path) -> None:
    files = sorted(str(p) for p in dist.iterdir())
    assert sorted(f.rsplit(".", 1)[-1] for f in files) == ["gz", "whl"], files
    checked = subprocess.run([str(BIN / "twine"), "check", "--strict", *files], capture_output=True, text=True,
                             timeout=120)
    assert checked.returncode == 0 and checked.stdout.count("PASSED") == 2, checked.stdout + checked.stderr


def test_the_wheel_holds_the_package_its_types_and_its_command(dist: Path) -> None:
    with zipfile.ZipFile(wheel_of(dist)) as wheel:
        names = set(wheel.namelist())
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        assert "promptdeck = promptdeck.cli.entry:main" in wheel.read(entry_points).decode()
    assert {"promptdeck/py.typed", "promptdeck/cli/main.py", "promptdeck/sources/store/source.py"} <= names
    # The web UI's files are package data, served from the installed package (server/ui.py).
    from promptdeck.server.web.page import ASSETS

    assert {f"promptdeck/server/web/static/{name}" for name in [*ASSETS, "index.html"]} <= names
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)


def _runners(wheel: Path, tmp_path: Path) -> dict[str, list[str]]:
    venv = tmp_path / "venv"
    return {
        "uvx": [str(BIN / "uvx"), "--from", str(wheel), "promptdeck"],
        "pipx run": [str(BIN / "pipx"), "run", "--spec", str(wheel), "promptdeck"],
        "uv venv": [str(venv / "bin" / "promptdeck")],
    }


@pytest.mark.parametrize("runner", ["uvx", "pipx run", "uv venv"])
def test_the_wheel_serves_the_example_library(runner: str, dist: Path, tmp_path: Path) -> None:
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache"), "PIPX_HOME": str(tmp_path / "pipx"),
           "PIPX_BIN_DIR": str(tmp_path / "pipx-bin"), "UV_TOOL_DIR": str(tmp_path / "uv-tools")}
    wheel = wheel_of(dist)
    if runner == "uv venv":
        for step in ([str(BIN / "uv"), "venv", str(tmp_path / "venv")],
                     [str(BIN / "uv"), "pip", "install", "--python", str(tmp_path / "venv" / "bin" / "python"),
                      str(wheel)]):
            done = subprocess.run(step, capture_output=True, text=True, timeout=600, env=env)
            assert done.returncode == 0, done.stderr[-2000:]
    command = [*_runners(wheel, tmp_path)[runner], "serve", str(EXAMPLES)]
    exchange = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"},
    ]
    # All of it at once, then end of input: the server answers every line, then exits.
    served = subprocess.run(command, input=b"".join(json.dumps(m).encode() + b"\n" for m in exchange),
                            capture_output=True, timeout=600, env=env, cwd=tmp_path)
    assert served.returncode == 0, served.stderr[-2000:]
    answers = {m["id"]: m for m in map(json.loads, served.stdout.splitlines())}
    assert answers[1]["result"]["serverInfo"]["name"] == "promptdeck"
    folder = PromptServer()
    folder.add_folder(EXAMPLES)
    assert [p["name"] for p in answers[2]["result"]["prompts"]] == folder.catalog.names
