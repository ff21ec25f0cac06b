"""A real skills-aware client, fast-agent (``fast-agent-mcp`` 0.10.48, its SEP-2640 client), against
``promptdeck serve examples/prompts``: over stdio and Streamable HTTP, in each era it speaks.

fast-agent connects to the server from its own ``fastagent.config.yaml`` (``protocol_mode`` legacy or
modern), builds its registry of the server's skills from ``skills/list`` (``scan_mcp_skill_registry``:
it validates names, URIs, digests, sizes and ``resultType``), and installs the example skill
(``install_mcp_registry_skill``: ``skills/get`` again, then every file by ``resources/read``, each checked
against its size and digest, the ``SKILL.md`` front matter against the entry's). The folder it writes must be
the source skill byte for byte, beside fast-agent's own provenance file.

fast-agent needs Python 3.13, so it lives in a venv of its own, driven as a subprocess: the one named by
``$PROMPTDECK_FAST_AGENT`` (its ``python``), or ``.venv-fast-agent`` at the repository root (``make
fast-agent``). Without one these tests skip, saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.http_server import http_server
from tests.support.paths import EXAMPLES, REPO
from tests.support.schema import schema_available
from tests.support.sdk_stdio import RECORDER
from tests.support.traffic import read_log, validate_traffic

pytestmark = pytest.mark.slow

VERSION = "0.10.48"
SOURCE = EXAMPLES / "skills/changelog"
PROVENANCE = ".skill-source.json"

DRIVER = """
import asyncio, json, pathlib, sys
from fast_agent import FastAgent
from fast_agent.skills.mcp_registry import install_mcp_registry_skill, scan_mcp_skill_registry

fast = FastAgent("promptdeck-skills", config_path="fastagent.config.yaml", parse_cli_args=False, quiet=True)

@fast.agent(name="reader", servers=["promptdeck"], model="passthrough")
async def reader():
    pass

async def main():
    async with fast.run() as app:
        aggregator = app._agent("reader").aggregator
        registry = await scan_mcp_skill_registry(aggregator, "promptdeck")
        found = [{"name": s.name, "uri": s.uri, "frontmatter": s.frontmatter,
                  "resources": [r.model_dump() for r in s.resources]} for s in registry.skills]
        installed = await install_mcp_registry_skill(aggregator, registry.skills[0],
                                                     destination_root=pathlib.Path(sys.argv[1]))
        print(json.dumps({"skills": found, "installed": str(installed)}))

asyncio.run(main())
"""


def fast_agent_python() -> Path | None:
    given = os.environ.get("PROMPTDECK_FAST_AGENT")
    candidate = Path(given) if given else REPO / ".venv-fast-agent/bin/python"
    return candidate if candidate.exists() else None


@pytest.fixture(scope="module")
def python() -> Path:
    found = fast_agent_python()
    if found is None:
        pytest.skip("fast-agent-mcp is not installed: `make fast-agent` puts it in .venv-fast-agent (it needs "
                    "Python 3.13), or set $PROMPTDECK_FAST_AGENT to the python of a venv that has it")
    done = subprocess.run([str(found), "-c", "import importlib.metadata as m; print(m.version('fast-agent-mcp'))"],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        pytest.skip(f"{found} has no fast-agent-mcp: {done.stderr.strip()[-300:]}")
    assert done.stdout.strip() == VERSION, f"fast-agent-mcp {done.stdout.strip()} here; these tests pin {VERSION}"
    return found


def server_entry(transport: str, mode: str, url: str | None, log: Path) -> str:
    if transport == "http":
        return f"      transport: http\n      url: {url}\n      protocol_mode: {mode}\n"
    # promptdeck from this tree, whatever Python fast-agent runs on, behind the recorder of every line
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH", "")) if p)}
    command = [str(RECORDER), str(log), "--", sys.executable, "-m", "promptdeck", "serve", str(EXAMPLES), "--no-watch"]
    return (f"      command: {json.dumps(sys.executable)}\n      args: {json.dumps(command)}\n"
            f"      env: {json.dumps(env)}\n      protocol_mode: {mode}\n")


def install(python: Path, folder: Path, transport: str, mode: str, url: str | None = None) -> dict[str, object]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fastagent.config.yaml").write_text(
        "default_model: passthrough\nlogger:\n  level: error\n  progress_display: false\n  show_chat: false\n"
        "  show_tools: false\nmcp:\n  servers:\n    promptdeck:\n" + server_entry(transport, mode, url,
                                                                             folder / "traffic.log"))
    (folder / "driver.py").write_text(DRIVER)
    # fast-agent's own environment: its venv's Python, no promptdeck on its path, a home inside the test folder
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["HOME"] = str(folder)
    done = subprocess.run([str(python), "driver.py", str(folder / "skills")], cwd=folder, capture_output=True,
                          text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def files(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*"))
            if path.is_file()}


def check(result: dict[str, object], folder: Path) -> None:
    skills = result["skills"]
    assert isinstance(skills, list) and [skill["uri"] for skill in skills] == ["skill://changelog/SKILL.md"]
    assert skills[0]["frontmatter"]["name"] == "changelog"
    assert [(r["uri"], r["size"]) for r in skills[0]["resources"]] == [
        ("skill://changelog/SKILL.md", (SOURCE / "SKILL.md").stat().st_size),
        ("skill://changelog/references/style.md", (SOURCE / "references/style.md").stat().st_size)]
    installed = Path(str(result["installed"]))
    assert installed == folder / "skills/changelog"
    written = files(installed)
    provenance = json.loads(written.pop(PROVENANCE))
    assert (provenance["source_origin"], provenance["source_url"]) == ("mcp", "skill://changelog/SKILL.md")
    assert written == files(SOURCE)


@pytest.mark.parametrize("mode", ["legacy", "modern"])
def test_fast_agent_installs_the_example_skill_over_stdio(python: Path, tmp_path: Path, mode: str) -> None:
    check(install(python, tmp_path, "stdio", mode), tmp_path)
    # It spoke the era asked for, and every answer fits its revision's schema and the SEP's shapes.
    sent, _ = read_log(tmp_path / "traffic.log")
    methods = [message.get("method") for message in sent]
    assert {"skills/list", "skills/get", "resources/read"} <= set(methods)
    if mode == "legacy":
        assert methods[0] == "initialize"
        revision = sent[0]["params"]["protocolVersion"]
    else:
        assert "initialize" not in methods
        revision = "2026-07-28"
    if schema_available(revision):
        assert validate_traffic(tmp_path / "traffic.log", revision) > 0


@pytest.mark.parametrize("mode", ["legacy", "modern"])
def test_fast_agent_installs_the_example_skill_over_http(python: Path, tmp_path: Path, mode: str) -> None:
    with http_server(str(EXAMPLES), "--no-watch") as url:
        check(install(python, tmp_path, "http", mode, url), tmp_path)
