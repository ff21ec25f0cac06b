"""What a client can make ``resources/read`` read (issue 30), against real served processes.

Before: no resources at all (-32601). A read of any URI that is not a file a prompt the principal may
see could send must answer exactly as a URI nobody serves (-32602 "Resource not found", the URI
echoed), in both eras and over both transports, and read nothing: an escape by ``..`` or by
percent-escapes (``%2e%2e``, ``%2f``), a hidden file, a link out or to a hidden or prompt file, a FIFO,
another prompt's source, a file of a prompt the principal may not see, a file past the size limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from promptdeck import PromptServer
from promptdeck.sources.files import paths
from promptdeck.sources.files import resources as file_resources
from tests.support.http_server import http_server
from tests.support.modern import headers_for, request
from tests.support.resources import BOB, CAROL, TOKENS, guarded_legacy, guarded_modern

SECRET = "s3cr3t-resource-value"
PAY = "payroll-figures-for-hr"
BIG = paths.MAX_EMBED_BYTES + 1
PEEK = "---\narguments:\n  - {name: f, type: path, pattern: '_material/.*'}\n---\nuser: {resource: \"{{ f }}\"}\n"

U = "promptdeck:///"
REFUSED = [
    U + ".env", U + ".git/config", U + "_material/.private", U + "_material/leak.txt", U + "_material/dotenv.txt",
    U + "_material/away.txt", U + "_material/pipe.txt", U + "environ.md", U + "peek.md", U + "hr/payroll.md",
    U + "_hr/salaries.csv", U + "_material/big.txt", U + "_material/../.env", U + "../outside.txt",
    U + "%2e%2e/outside.txt", U + "_material/%2e%2e/.env", U + "_material%2f..%2f.env", U + "_material%2fnotes.txt",
    U + "%5fmaterial/notes.txt", U + "_material/notes.txt%00", U + "_material/notes.txt%", U + "_material//notes.txt",
    U + "_material/./notes.txt", U + "/etc/passwd", U + "_material/missing.txt", U, "promptdeck:/.env",
    "file:///etc/passwd", "_material/notes.txt", "promptdeck:///_material/notes.txt\n",
]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("resources")
    root = base / "library"
    for rel, text in {
        ".env": f"KEY={SECRET}\n",
        ".git/config": f"[remote]\n  token = {SECRET}\n",
        "_material/notes.txt": "material notes\n",
        "_material/.private": f"{SECRET}\n",
        "_hr/salaries.csv": f"{PAY}\n",
        "hr/payroll.md": f"---\nscopes: [hr]\n---\nuser: {{resource: _hr/salaries.csv}}\n\nuser:\nSecret: {SECRET}\n",
        "peek.md": PEEK,
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (base / "outside.txt").write_text(f"outside {SECRET}\n")
    with open(root / "_material/big.txt", "wb") as big:
        big.truncate(BIG)  # sparse: past the limit, nothing to read
    (root / "environ.md").symlink_to("/proc/self/environ")
    (root / "_material/leak.txt").symlink_to("../hr/payroll.md")
    (root / "_material/dotenv.txt").symlink_to("../.env")
    (root / "_material/away.txt").symlink_to(base / "outside.txt")
    os.mkfifo(root / "_material/pipe.txt")
    return root


@pytest.fixture(scope="module")
def url(library: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tokens = tmp_path_factory.mktemp("tokens") / "tokens"
    tokens.write_text(TOKENS)
    with http_server(str(library), "--no-watch", "--stateless", "--json-response", "--token-file", str(tokens)) \
            as endpoint:
        yield endpoint


def not_found(uri: str) -> dict[str, Any]:
    return {"code": -32602, "message": f"Resource not found: {uri!r}", "data": {"uri": uri}}


legacy = partial(guarded_legacy, secret=SECRET)
modern = partial(guarded_modern, secret=SECRET)


@pytest.mark.parametrize("uri", REFUSED)
def test_every_refusal_answers_as_an_unknown_uri(url: str, uri: str) -> None:
    assert legacy(url, "resources/read", {"uri": uri}, BOB)["error"] == not_found(uri)
    status, body = modern(url, "resources/read", {"uri": uri}, BOB)
    assert (status, body["error"]) == (200, not_found(uri))


def test_what_may_be_read_is_read(url: str) -> None:
    notes, salaries = {"uri": U + "_material/notes.txt"}, {"uri": U + "_hr/salaries.csv"}
    assert legacy(url, "resources/read", notes, BOB)["result"]["contents"] == [
        {"uri": U + "_material/notes.txt", "mimeType": "text/plain", "text": "material notes\n"}]
    # The scoped prompt's file is readable by who may see that prompt, and by nobody else.
    assert legacy(url, "resources/read", salaries, CAROL)["result"]["contents"][0]["text"] == f"{PAY}\n"
    assert legacy(url, "resources/read", salaries, BOB)["error"] == not_found(U + "_hr/salaries.csv")
    status, body = modern(url, "resources/read", salaries, CAROL)
    assert status == 200 and body["result"]["cacheScope"] == "private"


def test_the_list_shows_only_what_may_be_read(url: str) -> None:
    def listed(who: dict[str, str]) -> list[str]:
        answer = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "resources/list"},
                            headers={"accept": "application/json, text/event-stream",
                                     "mcp-protocol-version": "2025-06-18", **who}, timeout=30)
        assert SECRET not in answer.text
        return [entry["uri"] for entry in answer.json()["result"]["resources"]]

    assert listed(BOB) == [U + "_material/notes.txt"]
    assert listed(CAROL) == [U + "_hr/salaries.csv", U + "_material/notes.txt"]


def test_the_name_header_must_repeat_the_uri(url: str) -> None:
    message = request(1, "resources/read", {"uri": U + "_material/notes.txt"})
    wrong = httpx.post(url, json=message, headers={**headers_for(message, mcp_name=U + ".env"), **BOB}, timeout=30)
    assert (wrong.status_code, wrong.json()["error"]["code"]) == (400, -32020)
    missing = httpx.post(url, json=message, headers={**headers_for(message, mcp_name=None), **BOB}, timeout=30)
    assert (missing.status_code, missing.json()["error"]["code"]) == (400, -32020)


def test_over_stdio_too(library: Path) -> None:
    lines: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": i + 1, "method": "resources/read", "params": {"uri": uri}}
              for i, uri in enumerate(REFUSED) if uri not in (U + "_hr/salaries.csv", U + "hr/payroll.md")]
    done = subprocess.run([sys.executable, "-m", "promptdeck", "serve", str(library), "--no-watch"],
                          input="".join(json.dumps(line) + "\n" for line in lines), capture_output=True, text=True,
                          timeout=60)
    assert SECRET not in done.stdout
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    for line in lines[2:]:
        assert answers[line["id"]]["error"] == not_found(line["params"]["uri"]), line


def rchar() -> int:
    """Bytes this process has read through read(2) so far."""
    for row in Path("/proc/self/io").read_text().splitlines():
        if row.startswith("rchar:"):
            return int(row.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def test_nothing_is_read_for_a_refusal(library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not Path("/proc/self/io").exists():
        pytest.skip("no /proc/self/io here")
    server = PromptServer("t")
    server.add_folder(library)
    resources = server.resources
    sight = resources.sight(frozenset())
    opened: list[str] = []

    def spy(real: str, rel: str, limit: int) -> bytes:
        opened.append(rel)
        return paths.read_real(real, rel, limit)

    monkeypatch.setattr(file_resources, "read_real", spy)
    before = rchar()
    for uri in REFUSED:
        with pytest.raises(Exception, match="^Resource not found: "):
            resources.read(uri, sight)
    assert rchar() - before < 64 * 1024, "a refused read read a file"
    # Only the file over the limit is opened (it passed the rules): its size refuses it before a byte is read.
    assert opened == ["_material/big.txt"]
