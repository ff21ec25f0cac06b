"""What a client can make a library read (issue 13, items 1 and 2), against real served processes.

Before: a ``path`` argument read any file under the root (``.env``, ``.git/config``,
another prompt's source, even one restricted by ``scopes``), and a prompt file
that was a symlink to ``/proc/self/environ`` was served with the server's secrets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from tests.support.http_server import http_server
from tests.support.resources import guarded_legacy

SECRET = "s3cr3t-state-key-value"
PEEK = "---\narguments:\n  - {name: f, type: path, required: true}\n---\n{{ read(f) }}\n"
WIDE = "---\narguments:\n  - {name: f, type: path, required: true, pattern: 'docs/.*'}\n---\n{{ read(f) }}\n"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("exposure")
    root = base / "library"
    for rel, text in {
        ".env": f"PROMPTDECK_STATE_KEY={SECRET}\n",
        ".git/config": f"[remote]\n  token = {SECRET}\n",
        "_material/notes.md": "material notes\n",
        "_material/.private": f"{SECRET}\n",
        "docs/readme.txt": "the docs\n",
        "hr/payroll.md": f"---\nscopes: [hr]\n---\nSalaries: {SECRET}\n",
        "peek.md": PEEK,
        "wide.md": WIDE,
        "fine.md": "Hello\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (base / "outside.txt").write_text(f"outside {SECRET}\n")
    (root / "environ.md").symlink_to("/proc/self/environ")
    (root / "outside.md").symlink_to(base / "outside.txt")
    (root / "_material/leak.txt").symlink_to("../hr/payroll.md")
    (root / "_material/dotenv.txt").symlink_to("../.env")
    (root / "_material/away.txt").symlink_to(base / "outside.txt")
    os.mkfifo(root / "fifo.md")
    os.mkfifo(root / "_material/pipe.txt")
    return root


@pytest.fixture(scope="module")
def url(library: Path) -> Iterator[str]:
    os.environ["PROMPTDECK_STATE_KEY_FOR_TEST"] = SECRET  # inherited by the server: environ must not leak it
    try:
        with http_server(str(library), "--no-watch", "--stateless", "--json-response") as endpoint:
            yield endpoint
    finally:
        del os.environ["PROMPTDECK_STATE_KEY_FOR_TEST"]


#: One stateless 2025-06-18 request; its answer, which must not show the secret.
rpc = partial(guarded_legacy, who={}, secret=SECRET)


def test_only_prompt_files_inside_the_library_are_served(url: str) -> None:
    names = [p["name"] for p in rpc(url, "prompts/list", {})["result"]["prompts"]]
    assert names == ["fine", "peek", "wide"]  # payroll is scoped; environ, outside and fifo are refused


@pytest.mark.parametrize("value, words", [
    (".env", "hidden"),
    (".git/config", "hidden"),
    ("_material/.private", "hidden"),
    ("hr/payroll.md", "is a prompt file"),
    ("peek.md", "is a prompt file"),
    ("docs/readme.txt", "not in a material folder"),
    ("_material/leak.txt", "leads to a file that arguments may not name"),
    ("_material/dotenv.txt", "leads to a file that arguments may not name"),
    ("_material/away.txt", "leaves the library"),
    ("_material/pipe.txt", "not a regular file"),
    ("environ.md", "is a prompt file"),
])
def test_a_path_argument_names_material_only(url: str, value: str, words: str) -> None:
    answer = rpc(url, "prompts/get", {"name": "peek", "arguments": {"f": value}})
    assert answer["error"]["code"] == -32602, answer
    assert answer["error"]["message"].startswith("prompt 'peek': ") and words in answer["error"]["message"], answer


def test_material_is_read_and_a_pattern_opens_exactly_what_it_matches(url: str) -> None:
    got = rpc(url, "prompts/get", {"name": "peek", "arguments": {"f": "_material/notes.md"}})
    assert got["result"]["messages"][0]["content"]["text"] == "material notes\n"
    wide = rpc(url, "prompts/get", {"name": "wide", "arguments": {"f": "docs/readme.txt"}})
    assert wide["result"]["messages"][0]["content"]["text"] == "the docs\n"
    for value in ("_material/notes.md", ".env", "hr/payroll.md"):
        assert rpc(url, "prompts/get", {"name": "wide", "arguments": {"f": value}})["error"]["code"] == -32602


def test_completion_offers_only_what_may_be_named(url: str) -> None:
    values = rpc(url, "completion/complete", {"ref": {"type": "ref/prompt", "name": "peek"},
                                              "argument": {"name": "f", "value": ""}})["result"]["completion"]
    assert values["values"] == ["_material/notes.md", "_material/pipe.txt"]


def test_check_names_every_refused_file_and_does_not_hang(library: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "promptdeck", "check", str(library)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    assert SECRET not in done.stdout + done.stderr
    assert "environ.md: file is a link that leads out of the library" in done.stdout
    assert "outside.md: file is a link that leads out of the library" in done.stdout
    assert "fifo.md: file is not a regular file" in done.stdout


def test_over_stdio_too(library: Path) -> None:
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "peek", "arguments": {"f": ".env"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "environ"}}]
    done = subprocess.run([sys.executable, "-m", "promptdeck", "serve", str(library), "--no-watch"],
                          input="".join(json.dumps(line) + "\n" for line in lines), capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PROMPTDECK_STATE_KEY_FOR_TEST": SECRET})
    assert SECRET not in done.stdout
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert answers[1]["error"]["code"] == -32602 and answers[2]["error"]["code"] == -32602
