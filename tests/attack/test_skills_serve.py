"""What a client can make promptdeck's skills methods read or say (issue 30), against real served processes.

``skills/get``, ``resources/read`` and ``resources/directory/read`` of a URI that is not a skill, file or folder
the principal may see must answer exactly as one nobody serves (-32602, the URI echoed, the same words), in
both eras, over HTTP with tokens and over stdio, and read nothing: an unknown skill, another principal's
hidden skill, a malformed URI, ``..`` in any spelling, percent-escapes of a separator or of a letter. A file
changed since it was listed is refused, never served with bytes its digest does not promise. A skill of
10,000 files or with a 100 MB file is a ``check`` problem, found without reading it, and is not served; the
server's memory stays small.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from promptdeck import PromptServer
from promptdeck.prompts.catalog import encode_cursor
from promptdeck.sources.files import paths
from promptdeck.sources.files import skills as file_skills
from tests.support.http_server import http_server
from tests.support.modern import headers_for, request
from tests.support.resources import BOB, CAROL, TOKENS, guarded_legacy, guarded_modern  # bob: no scope, carol: hr
from tests.support.schema import schema_available, validate_message
from tests.support.skills_schema import METHODS, validate_skills_message

SECRET = "s3cr3t-skill-value"
LEGACY = "2025-06-18"
OPEN = "skill://notes/SKILL.md"
PAY = "skill://payroll/SKILL.md"
#: Never a skill (nor a file, nor a folder) served to bob: each must answer as an unknown URI.
WRONG = [
    "skill://nope/SKILL.md", PAY, "skill://payroll/rates.csv", "skill://payroll", "skill://payroll/secret",
    "skill://notes/../payroll/SKILL.md", "skill://notes/%2e%2e/payroll/SKILL.md", "skill://notes/%2E%2E/payroll",
    "skill://notes%2f..%2fpayroll/SKILL.md", "skill://notes/SKILL%2emd", "skill://%6eotes/SKILL.md",
    "skill://notes/SKILL.md%00", "skill://notes/SKILL.md%", "skill://notes//SKILL.md", "skill://notes/./SKILL.md",
    "skill://notes/SKILL.md/", "skill://notes/SKILL.md?x", "skill://notes/SKILL.md#top", "skill:///notes/SKILL.md",
    "skill://notes\\..\\payroll/SKILL.md", "SKILL://notes/SKILL.md", "skill:notes/SKILL.md", "skill://",
    "skill://leaky/SKILL.md", "skill://leaky/leak.md", "skill://huge/SKILL.md", "skill://crowd/SKILL.md",
    "skill://notes/../../../../etc/passwd", "skill://notes/%c0%ae%c0%ae/payroll", "skill://notes/caf%C3%A9.md",
]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("skills")
    root = base / "library"
    files = {
        "hello.md": "Say hello.\n",
        "skills/notes/SKILL.md": "---\nname: notes\ndescription: Take notes.\n---\nSee references/how.md.\n",
        "skills/notes/references/how.md": "Write short notes.\n",
        "skills/payroll/SKILL.md": f"---\nname: payroll\ndescription: Payroll.\nmetadata:\n  promptdeck-scopes: hr\n"
                                   f"---\n{SECRET}\n",
        "skills/payroll/rates.csv": f"grade,rate\n1,{SECRET}\n",
        "skills/payroll/secret/inner.md": f"{SECRET}\n",
        "skills/leaky/SKILL.md": "---\nname: leaky\ndescription: Links out.\n---\nRead leak.md.\n",
        "skills/huge/SKILL.md": "---\nname: huge\ndescription: Too big.\n---\nBig.\n",
        "skills/crowd/SKILL.md": "---\nname: crowd\ndescription: Too many files.\n---\nMany.\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (base / "outside.txt").write_text(f"outside {SECRET}\n")
    (root / "skills/leaky/leak.md").symlink_to(base / "outside.txt")
    with open(root / "skills/huge/blob.bin", "wb") as big:
        big.truncate(100 * 1024 * 1024)  # sparse: 100 MB that nothing should read
    crowd = root / "skills/crowd/files"
    crowd.mkdir()
    for i in range(10_000):
        (crowd / f"f{i:05d}.txt").write_text(f"{SECRET} {i}\n")
    return root


@pytest.fixture(scope="module")
def url(library: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tokens = tmp_path_factory.mktemp("tokens") / "tokens"
    tokens.write_text(TOKENS)
    with http_server(str(library), "--no-watch", "--stateless", "--json-response", "--token-file", str(tokens)) \
            as endpoint:
        yield endpoint


def unknown(kind: str, uri: str) -> dict[str, Any]:
    return {"code": -32602, "message": f"{kind} not found: {uri!r}", "data": {"uri": uri}}


KINDS = {"skills/get": "Skill", "resources/read": "Resource", "resources/directory/read": "Directory"}


def validated(revision: str, message: dict[str, Any], method: str) -> None:
    if method in METHODS:
        validate_skills_message(revision, message, method)
    elif schema_available(revision):
        validate_message(revision, message, method)


legacy = partial(guarded_legacy, secret=SECRET, check=validated, revision=LEGACY)
modern = partial(guarded_modern, secret=SECRET, check=validated)


@pytest.mark.parametrize("method", sorted(KINDS))
@pytest.mark.parametrize("uri", WRONG)
def test_every_wrong_uri_answers_as_an_unknown_one(url: str, uri: str, method: str) -> None:
    assert legacy(url, method, {"uri": uri}, BOB)["error"] == unknown(KINDS[method], uri)
    status, body = modern(url, method, {"uri": uri}, BOB)
    assert (status, body["error"]) == (200, unknown(KINDS[method], uri))


def test_what_a_principal_may_see_is_served_and_nothing_else(url: str) -> None:
    def listed(who: dict[str, str]) -> list[str]:
        return [entry["uri"] for entry in legacy(url, "skills/list", {}, who)["result"]["skills"]]

    assert listed(BOB) == [OPEN]  # leaky, huge and crowd have problems: served to nobody
    carol = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "skills/list"}, headers={
        "accept": "application/json, text/event-stream", "mcp-protocol-version": LEGACY, **CAROL}, timeout=30).json()
    assert [entry["uri"] for entry in carol["result"]["skills"]] == [OPEN, PAY]
    status, body = modern(url, "skills/list", {}, BOB)
    assert [entry["uri"] for entry in body["result"]["skills"]] == [OPEN]
    assert body["result"]["cacheScope"] == "private"
    resources = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "resources/list"}, headers={
        "accept": "application/json, text/event-stream", "mcp-protocol-version": LEGACY, **BOB}, timeout=30)
    assert SECRET not in resources.text and "payroll" not in resources.text


def test_a_forged_or_oversized_request_is_refused_without_an_echo(url: str) -> None:
    huge = "skill://notes/" + "a" * 100_000
    for method in KINDS:
        error = legacy(url, method, {"uri": huge}, BOB)["error"]
        assert error["code"] == -32602 and len(error["message"]) < 300 and "data" not in error
    # A cursor names where a page starts, never what may be seen: one made up after a hidden skill shows nothing.
    assert legacy(url, "skills/list", {"cursor": encode_cursor(PAY)}, BOB)["result"]["skills"] == []
    for cursor in ("not-a-cursor", 7, "x" * 5000):
        assert legacy(url, "skills/list", {"cursor": cursor}, BOB)["error"]["code"] == -32602
        assert legacy(url, "resources/directory/read", {"uri": "skill://notes", "cursor": cursor}, BOB)[
            "error"]["code"] == -32602


def test_the_name_header_must_repeat_a_skill_uri(url: str) -> None:
    message = request(1, "resources/read", {"uri": OPEN})
    good = httpx.post(url, json=message, headers={**headers_for(message), **BOB}, timeout=30)
    assert good.status_code == 200 and good.json()["result"]["contents"][0]["uri"] == OPEN
    wrong = httpx.post(url, json=message, headers={**headers_for(message, mcp_name=PAY), **BOB}, timeout=30)
    assert (wrong.status_code, wrong.json()["error"]["code"]) == (400, -32020)


def test_over_stdio_too(library: Path) -> None:
    lines: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    asked = [(method, uri) for uri in WRONG if "payroll" not in uri for method in KINDS]
    lines += [{"jsonrpc": "2.0", "id": i + 1, "method": method, "params": {"uri": uri}}
              for i, (method, uri) in enumerate(asked)]
    done = subprocess.run([sys.executable, "-m", "promptdeck", "serve", str(library), "--no-watch"],
                          input="".join(json.dumps(line) + "\n" for line in lines), capture_output=True, text=True,
                          timeout=120)
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert SECRET not in done.stdout
    for i, (method, uri) in enumerate(asked):
        assert answers[i + 1]["error"] == unknown(KINDS[method], uri), (method, uri)


def test_problems_are_found_without_reading_and_nothing_refused_is_read(library: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real_read = paths.read_confined

    def spy(top: str, rel: str, limit: int) -> bytes:
        opened.append(rel)
        return real_read(top, rel, limit)

    monkeypatch.setattr(file_skills, "read_confined", spy)
    started = time.perf_counter()
    server = PromptServer("t")
    server.add_folder(library)
    skills = server.skills
    assert time.perf_counter() - started < 30
    # Each problem skill was judged by listing and lstat: its SKILL.md at most, never its other files.
    assert not [rel for rel in opened if rel.startswith(("files/", "blob.bin", "leak.md"))], opened[:5]
    assert sorted("/".join(path) for path in skills.skills) == ["notes", "payroll"]
    opened.clear()
    resources = server.resources
    sight = resources.sight(frozenset())
    for uri in WRONG:
        with pytest.raises(Exception, match="^Resource not found: "):
            resources.read(uri, sight)
        with pytest.raises(Exception, match="^Skill not found: "):
            skills.get(uri, frozenset())
    assert opened == []


def test_a_file_changed_since_its_listing_is_refused_not_served(tmp_path: Path) -> None:
    root = tmp_path / "library"
    (root / "skills/notes").mkdir(parents=True)
    (root / "skills/notes/SKILL.md").write_text("---\nname: notes\ndescription: Notes.\n---\nHello.\n")
    (root / "skills/notes/data.txt").write_text("listed bytes\n")
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "skills/list"}]
    with subprocess.Popen([sys.executable, "-m", "promptdeck", "serve", str(root), "--no-watch"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        for line in lines:
            proc.stdin.write(json.dumps(line) + "\n")
        proc.stdin.flush()
        proc.stdout.readline()
        listing = json.loads(proc.stdout.readline())
        assert listing["result"]["skills"][0]["uri"] == OPEN
        (root / "skills/notes/data.txt").write_text(f"swapped {SECRET}\n")  # no watcher: no reload
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
                                     "params": {"uri": "skill://notes/data.txt"}}) + "\n")
        proc.stdin.flush()
        answer = proc.stdout.readline()
        assert SECRET not in answer
        assert json.loads(answer)["error"] == unknown("Resource", "skill://notes/data.txt")
        proc.stdin.close()
        proc.wait(timeout=30)


def test_a_crowded_skill_does_not_blow_memory(library: Path) -> None:
    """A real server over a library with a 10,000-file skill and a 100 MB file: its peak RSS stays small."""
    if not Path("/proc/self/status").exists():
        pytest.skip("no /proc here")
    with subprocess.Popen([sys.executable, "-m", "promptdeck", "serve", str(library), "--no-watch"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        for line in ({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 1, "method": "skills/list"}):
            proc.stdin.write(json.dumps(line) + "\n")
        proc.stdin.flush()
        proc.stdout.readline()
        listing = json.loads(proc.stdout.readline())
        assert [entry["uri"] for entry in listing["result"]["skills"]] == [OPEN, PAY]  # stdio: trusted
        status = Path(f"/proc/{proc.pid}/status").read_text()
        peak_kib = int(next(row for row in status.splitlines() if row.startswith("VmHWM:")).split()[1])
        proc.stdin.close()
        errors = proc.stderr.read()
        proc.wait(timeout=30)
    assert peak_kib < 150 * 1024, f"peak RSS {peak_kib} KiB"
    # The problems are logged, at their files: the caps say what was wrong.
    assert "crowd" in errors and "huge" in errors and "leaky" in errors, errors[-2000:]
    assert os.path.getsize(library / "skills/huge/blob.bin") == 100 * 1024 * 1024
