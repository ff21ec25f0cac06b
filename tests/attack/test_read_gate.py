"""The read gate (issue 38, findings 1 and 2), against real served processes, for a folder and a store.

Before: a plain argument named any file its template reads or its role line sends (``{{ read(n) }}``,
``{resource: "{{ n }}"}``), so ``n: .env`` embedded the library's secrets, also through ``--tools``; and a
``path`` argument whose pattern covers ``skills/`` let ``resources/read`` (and its updates) serve a
restricted skill's file to a principal who may not see the skill. Every path that reads a library file now
passes one gate (``LibraryRoot.gate``): each is listed here with its refusal, and a scan of the source fails
when a new module reads library files without it.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.files import write
from tests.support.http_rpc import init, post_legacy
from tests.support.http_server import http_server, promptdeck_http
from tests.support.modern import by_id, exchange, legacy, notification, stdio_line

SECRET = "s3cr3t-gate-value"
PNG = b"\x89PNG\r\n\x1a\n" + SECRET.encode()
WAV = b"RIFF\x00\x00\x00\x00WAVE" + SECRET.encode()
ARG = "---\narguments:\n  - {name: n, required: true}\n---\n"
PEEK = "---\narguments:\n  - {name: f, type: path, required: true, pattern: '.*'}\n---\nuser: {resource: \"{{ f }}\"}\n"
BOB = {"authorization": "Bearer reader-token-0123456789"}  # no scope
CAROL = {"authorization": "Bearer hr-token-0123456789"}  # hr
TOKENS = "bob:reader-token-0123456789\ncarol:hr-token-0123456789 hr\n"

#: Each path by which a plain argument names a file, with what it may not reach (hidden, a prompt's source,
#: outside a material folder, a restricted skill's file, a material link to a hidden file) and what it may.
TEXT_BAD = [".env", ".git/config", "other.md", "notes/plain.txt", "skills/payroll/salaries.csv", "_material/link.txt"]
PATHS: dict[str, tuple[str, list[str], str]] = {
    "read": (ARG + "{{ read(n) }}\n", TEXT_BAD, "_material/ok.txt"),
    "alias": (ARG + "{% set r = read %}{{ r(n) }}\n", TEXT_BAD, "_material/ok.txt"),  # read by another name
    "include": (ARG + "{% include n %}\n", TEXT_BAD, "_material/ok.txt"),
    "resource": (ARG + 'user: {resource: "{{ n }}"}\n', TEXT_BAD, "_material/ok.txt"),
    "link": (ARG + 'user: {resource_link: "{{ n }}"}\n', TEXT_BAD, "_material/ok.txt"),
    "image": (ARG + 'user: {image: "{{ n }}"}\n', [".x.png", "notes/x.png", "skills/payroll/x.png"],
              "_material/x.png"),
    "audio": (ARG + 'user: {audio: "{{ n }}"}\n', [".x.wav", "notes/x.wav", "skills/payroll/x.wav"],
              "_material/x.wav"),
}


def library(root: Path, link: bool = True) -> Path:
    files: dict[str, str | bytes] = {
        ".env": f"KEY={SECRET}\n", ".git/config": f"token = {SECRET}\n", "notes/plain.txt": f"{SECRET}\n",
        "other.md": f"Private: {SECRET}\n", "_material/ok.txt": "material\n", "notes/open.txt": "open notes\n",
        "skills/payroll/SKILL.md": "---\nname: payroll\ndescription: Payroll.\nmetadata:\n  promptdeck-scopes: hr\n"
                                   "---\n# payroll\n\nPay people.\n",
        "skills/payroll/salaries.csv": f"{SECRET}\n", "literal.md": '{{ read("notes/open.txt") }}\n', "peek.md": PEEK,
        ".x.png": PNG, "notes/x.png": PNG, "skills/payroll/x.png": PNG, "_material/x.png": b"\x89PNG\r\n\x1a\nok",
        ".x.wav": WAV, "notes/x.wav": WAV, "skills/payroll/x.wav": WAV, "_material/x.wav": b"RIFF\x00\x00\x00\x00WAVE",
    }
    files.update({f"{name}.md": text for name, (text, _, _) in PATHS.items()})
    write(root, files)
    if link:
        (root / "_material/link.txt").symlink_to("../.env")
    return root


def requests() -> list[dict[str, Any]]:
    """Every path once with each file it may not reach, once with one it may (ids: odd refused, even read)."""
    lines: list[dict[str, Any]] = []

    def add(method: str, params: dict[str, Any], refused: bool) -> None:
        lines.append(legacy(2 * len(lines) + (1 if refused else 2), method, params))

    for name, (_, bad, good) in PATHS.items():
        for value in bad:
            add("prompts/get", {"name": name, "arguments": {"n": value}}, True)
        add("prompts/get", {"name": name, "arguments": {"n": good}}, False)
    add("prompts/get", {"name": "literal"}, False)  # the author's own literal read is the author's choice
    add("prompts/get", {"name": "peek", "arguments": {"f": "skills/payroll/salaries.csv"}}, True)
    add("resources/read", {"uri": "promptdeck:///skills/payroll/salaries.csv"}, True)
    add("resources/read", {"uri": "promptdeck:///notes/open.txt"}, False)  # peek's pattern: .*
    return lines


def serve(*options: str, lines: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """A 2025-11-25 stdio session sent ``lines``; its answers by id, none of which shows the secret."""
    start = [init(), notification("notifications/initialized")]
    messages, _, _ = exchange([stdio_line(m) for m in start + lines], *options, "--no-watch")
    assert SECRET not in json.dumps(messages), messages
    return by_id(messages)


def assert_gated(answers: dict[int, dict[str, Any]], lines: list[dict[str, Any]]) -> None:
    for line in lines:
        answer = answers[line["id"]]
        if line["id"] % 2:
            assert answer.get("error", {}).get("code") == -32602, (line, answer)
        else:
            assert "result" in answer, (line, answer)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return library(tmp_path_factory.mktemp("gate") / "lib")


def test_every_path_of_a_folder_goes_through_the_gate(folder: Path) -> None:
    lines = requests()
    assert_gated(serve(str(folder), lines=lines), lines)


def test_completion_offers_no_restricted_skill_file(folder: Path) -> None:
    line = {"jsonrpc": "2.0", "id": 2, "method": "completion/complete", "params": {
        "ref": {"type": "ref/prompt", "name": "peek"}, "argument": {"name": "f", "value": "skills/"}}}
    values = serve(str(folder), lines=[line])[2]["result"]["completion"]["values"]
    assert values == [], values  # payroll's files are the hr skill's; SKILL.md is a prompt file


def test_tools_get_prompt_goes_through_the_gate(folder: Path) -> None:
    lines: list[dict[str, Any]] = [{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {
        "name": "get_prompt", "arguments": {"name": name, "arguments": {"n": bad[0]}}}}
        for i, (name, (_, bad, _)) in enumerate(PATHS.items())]
    good: dict[str, Any] = {"jsonrpc": "2.0", "id": 100, "method": "tools/call", "params": {
        "name": "get_prompt", "arguments": {"name": "read", "arguments": {"n": "_material/ok.txt"}}}}
    answers = serve(str(folder), "--tools", "--tools-per-prompt", "0", lines=[*lines, good])
    for line in lines:
        answer = answers[line["id"]]
        assert answer.get("error", {}).get("code") == -32602 or answer["result"].get("isError"), answer
    assert not answers[100]["result"].get("isError") and "material" in json.dumps(answers[100]["result"])


def publish(folder: Path, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(folder), "--store", url, "--label",
                           "production"], capture_output=True, text=True, timeout=300)


def test_a_material_link_to_a_hidden_file_is_never_stored(folder: Path, tmp_path: Path) -> None:
    # A store keeps a link as a copy of what it leads to, under the link's name: .env as _material/link.txt.
    done = publish(folder, f"sqlite:///{tmp_path}/s.db")
    assert done.returncode == 1 and "_material/link.txt is a link to the hidden file .env" in done.stderr
    assert SECRET not in done.stdout + done.stderr


def test_every_path_of_a_store_goes_through_the_gate(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    done = publish(library(tmp_path / "lib", link=False), url)
    assert done.returncode == 0, done.stderr
    lines = requests()
    answers = serve("--store", url, "--label", "production", lines=lines)
    for line in lines:  # what the store does not keep (hidden files) is refused as missing: refused all the same
        answer = answers[line["id"]]
        if line["id"] % 2:
            assert answer.get("error", {}).get("code") == -32602, (line, answer)


@pytest.fixture(scope="module")
def url(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tokens = tmp_path_factory.mktemp("tokens") / "tokens"
    tokens.write_text(TOKENS)
    with http_server(str(folder), "--no-watch", "--stateless", "--json-response", "--token-file", str(tokens)) \
            as endpoint:
        yield endpoint


def http(url: str, method: str, params: dict[str, Any], who: dict[str, str]) -> dict[str, Any]:
    answer = post_legacy(url, method, params, revision="2025-06-18", headers=who, timeout=30)
    assert who is CAROL or SECRET not in answer.text
    return answer.json()  # type: ignore[no-any-return]


def test_a_restricted_skills_file_is_not_a_resource_through_an_open_pattern(url: str) -> None:
    uri = "promptdeck:///skills/payroll/salaries.csv"
    assert http(url, "resources/read", {"uri": uri}, BOB)["error"]["code"] == -32602
    listed = [r["uri"] for r in http(url, "resources/list", {}, BOB)["result"]["resources"]]
    assert not any(u.startswith("promptdeck:///skills/payroll/") for u in listed), listed
    assert "promptdeck:///notes/open.txt" in listed
    # Who holds hr reads it where skills are served, as the skill's own file; who does not, nowhere.
    skill = http(url, "resources/read", {"uri": "skill://payroll/salaries.csv"}, CAROL)
    assert SECRET in skill["result"]["contents"][0]["text"]
    assert http(url, "resources/read", {"uri": "skill://payroll/salaries.csv"}, BOB)["error"]["code"] == -32602


#: The modules that may read library files below the gate: the gate itself, and the readers of prompt files
#: and skill folders that load a library (no template, argument or URI names what they read).
BELOW_THE_GATE = {
    "sources/files/paths.py", "sources/files/source.py", "sources/files/skills.py", "sources/store/private_files.py",
    "sources/store/folder.py", "sources/files/resources.py",
}
_RAW = {"read_confined", "read_real", "read_opened"}


def test_no_module_reads_library_files_round_the_gate() -> None:
    """A new caller of the raw readers fails here until it goes through ``LibraryRoot.gate`` (or is listed
    above with its reason)."""
    src = Path(__file__).resolve().parents[2] / "src" / "promptdeck"
    found: set[str] = set()
    for path in src.rglob("*.py"):
        rel = path.relative_to(src).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else \
                    node.func.id if isinstance(node.func, ast.Name) else ""
                if name in _RAW:
                    found.add(rel)
    assert found <= BELOW_THE_GATE, sorted(found - BELOW_THE_GATE)
    assert os.path.exists(src / "sources/files/paths.py")


# -- finding 10: the bytes of reads in flight -------------------------------------------------------------------

def test_the_read_budget_refuses_past_a_principals_share_and_the_total() -> None:
    from promptdeck.prompts.read_budget import ReadBudget, spend, spending
    from promptdeck.protocol.errors import InvalidRequest

    budget = ReadBudget(total=64, per_principal=32)
    with spending(budget, "bob"):
        spend(10, "promptdeck:///_m/0")
        assert budget.held("bob") == 10
    assert budget.held("bob") == 0 and budget.taken == 0  # given back on leaving the read
    for i in range(3):
        budget.take("bob", 10, f"promptdeck:///_m/{i}")
    # Three 10-byte reads held by bob: a fourth passes his share of 32.
    assert budget.held("bob") == 30
    with pytest.raises(InvalidRequest) as over:
        budget.take("bob", 10, "promptdeck:///_m/3")
    assert (over.value.code, over.value.http_status, over.value.data["retryAfter"]) == (-32600, 429, 1)
    budget.take("carol", 30, "promptdeck:///_m/x")  # carol's share is hers: the total (64) holds 60 now
    with pytest.raises(InvalidRequest) as full:
        budget.take("dave", 10, "promptdeck:///_m/y")
    assert full.value.http_status == 503
    budget.give("carol", 30)
    budget.give("bob", 30)
    assert budget.taken == 0 and budget.held("bob") == 0
    # A lone read always fits, however large: one file is within the size limits already.
    budget.take("bob", 100, "promptdeck:///_m/big")
    budget.give("bob", 100)


def test_a_read_over_http_holds_its_bytes_until_its_answer_is_written() -> None:
    """A transport that writes answers after building them holds the request in ``answering``: what its reads
    took stays taken until then, so answers waiting to be written count too; a read that failed gives back
    at once."""
    from promptdeck.prompts.read_budget import ReadBudget, answer_held, answering, spend, spending

    budget = ReadBudget(total=64, per_principal=32)
    assert answer_held() is None
    with answering():
        held = answer_held()
        with spending(budget, "bob", held):
            spend(10, "promptdeck:///_m/0")
        assert budget.held("bob") == 10  # built, not yet written
        with pytest.raises(OSError), spending(budget, "bob", held):
            spend(5, "promptdeck:///_m/1")
            raise OSError("the read failed")
        assert budget.held("bob") == 10
    assert budget.held("bob") == 0 and budget.taken == 0 and answer_held() is None


def test_concurrent_large_reads_are_bounded_over_http(tmp_path: Path) -> None:
    """24 reads at once of a 10 MiB file from one principal (issue 38: the server grew by ~18 MiB a read):
    past the principal's share they are refused with -32600 and retryAfter, before a byte is read, and
    every one that is read is whole; once they are done, a read is served again."""
    from concurrent.futures import ThreadPoolExecutor

    from promptdeck.sources.files.paths import MAX_EMBED_BYTES

    write(tmp_path, {"peek.md": "---\narguments:\n  - {name: f, type: path, pattern: '_m/.*'}\n---\n"
                                "user: {resource: \"{{ f }}\"}\n"})
    (tmp_path / "_m").mkdir(exist_ok=True)
    (tmp_path / "_m/big.txt").write_bytes(b"x" * MAX_EMBED_BYTES)
    uri = "promptdeck:///_m/big.txt"
    started: list[subprocess.Popen[bytes]] = []
    with promptdeck_http("serve", str(tmp_path), "--http", "{host}:{port}", "--no-watch", "--stateless",
                         "--json-response", started=started) as endpoint:
        before = peak_memory(started[0].pid)
        def read(_: int) -> dict[str, Any]:
            answer = httpx.post(endpoint, json={"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                                                "params": {"uri": uri}},
                                headers={"accept": "application/json, text/event-stream",
                                         "mcp-protocol-version": "2025-06-18"}, timeout=120)
            return answer.json()  # type: ignore[no-any-return]

        with ThreadPoolExecutor(24) as pool:
            answers = list(pool.map(read, range(24)))
        for answer in answers:
            if "error" in answer:
                assert answer["error"]["code"] == -32600 and answer["error"]["data"] == {"uri": uri, "retryAfter": 1}
            else:
                assert len(answer["result"]["contents"][0]["text"]) == MAX_EMBED_BYTES
        assert "result" in read(0)  # every read gave its bytes back
        # The budget holds each read until its answer is written, in pieces each waiting for the client: 24
        # reads took the server up ~245 MiB with no budget, ~190 MiB with one given back while a whole answer
        # still sat in the connection's buffer, ~120 MiB now; the bound is the share's 32 MiB, a few copies
        # each, and room.
        grown = peak_memory(started[0].pid) - before
        assert grown < 160 * 2**20, f"the server grew by {grown / 2**20:.0f} MiB"


def peak_memory(pid: int) -> int:
    """The peak resident memory of process ``pid`` so far (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for process {pid}")


def test_check_warns_of_a_pathless_pattern_and_a_refused_link(tmp_path: Path) -> None:
    folder = library(tmp_path / "lib")
    (folder / "plain.md").write_text("---\narguments:\n  - {name: f, type: path}\n---\n{{ f }}\n")
    done = subprocess.run([sys.executable, "-m", "promptdeck", "check", str(folder)], capture_output=True,
                          text=True, timeout=120)
    assert "plain.md: warning: path argument 'f' has no pattern" in done.stdout, done.stdout
    assert "_material/link.txt: warning: a link the read gate refuses" in done.stdout, done.stdout
    assert SECRET not in done.stdout + done.stderr
