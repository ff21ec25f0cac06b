"""The skills extension (SEP-2640) in both eras, in memory: the capability, ``skills/list``, ``skills/get``,
``resources/directory/read``, skill files as resources, scopes, paging, and changes reaching clients.

Every answer is checked against its revision's official schema and the SEP's shapes
(``tests/support/skills_schema.py``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from promptdeck import PromptServer
from promptdeck.prompts import skill_catalog
from promptdeck.protocol import jsonrpc
from promptdeck.server.legacy import LegacySession
from tests.support.cli import pd
from tests.support.modern import REVISION, request
from tests.support.resources import LEGACY, Client, modern_answer, skills_checked
from tests.support.schema import schema_available, validate_message
from tests.support.skills_schema import EXTENSION, check_capabilities, validate_skills_message

SKILLS = ("skills/list", "skills/get", "resources/directory/read")
GIT = "skill://git-workflow/SKILL.md"
PAY = "skill://payroll/SKILL.md"
FORMS = "skill://pdf/forms/SKILL.md"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def write(root: Path, rel: str, data: str | bytes) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        (root / rel).write_bytes(data)
    else:
        (root / rel).write_text(data)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    write(tmp_path, "hello.md", "Say hello.\n")
    write(tmp_path, "skills/git-workflow/SKILL.md", "---\nname: git-workflow\ndescription: Follow the team's Git "
          "conventions.\nlicense: Apache-2.0\nmetadata:\n  version: '2.1'\nreleased: 2025-01-31\n---\n\n"
          "Read [branches](references/branches.md).\n")
    write(tmp_path, "skills/git-workflow/references/branches.md", "# Branches\n\nmain, then topic branches.\n")
    write(tmp_path, "skills/git-workflow/scripts/check.sh", "#!/bin/sh\nexit 0\n")
    write(tmp_path, "skills/git-workflow/assets/logo.png", PNG)
    (tmp_path / "skills/git-workflow/templates").mkdir()
    write(tmp_path, "skills/payroll/SKILL.md", "---\nname: payroll\ndescription: Run the payroll checks.\n"
          "metadata:\n  promptdeck-scopes: hr\n---\nCheck rates.csv.\n")
    write(tmp_path, "skills/payroll/rates.csv", "grade,rate\n1,100\n")
    write(tmp_path, "skills/pdf/SKILL.md", "---\nname: pdf\ndescription: Work with PDF files.\n---\nSee forms/.\n")
    write(tmp_path, "skills/pdf/forms/SKILL.md", "---\nname: forms\ndescription: Fill PDF forms.\n---\nFill.\n")
    write(tmp_path, "skills/pdf/forms/fill.md", "Fill each field.\n")
    return tmp_path


def served(library: Path, **options: Any) -> PromptServer:
    server = PromptServer("t", **options)
    server.add_folder(library)
    return server


def sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


class Skills(Client):
    """A legacy session in memory whose skills answers are checked against the SEP too."""

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        if method not in SKILLS:
            return super().call(method, params)
        message = self.request(method, params)
        validate_skills_message(self.revision, message, method)
        return message


#: A 2026-07-28 request handled in memory, its answer checked against the skills SEP or the official schema.
modern = partial(modern_answer, check=skills_checked)


def listed(client: Skills) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    cursor = None
    for _ in range(100):
        result = client.call("skills/list", {} if cursor is None else {"cursor": cursor})["result"]
        entries.extend(result["skills"])
        cursor = result.get("nextCursor")
        if cursor is None:
            return entries
    raise AssertionError("skills/list never ended")


@pytest.mark.parametrize("revision", LEGACY)
def test_each_revision_declares_lists_gets_and_reads_skills(library: Path, revision: str) -> None:
    client = Skills(served(library), revision, frozenset())
    check_capabilities(client.initialize["result"]["capabilities"])
    entries = listed(client)
    assert [entry["uri"] for entry in entries] == [GIT, "skill://pdf/SKILL.md", FORMS]
    git = entries[0]
    assert git["frontmatter"] == {"name": "git-workflow", "description": "Follow the team's Git conventions.",
                                  "license": "Apache-2.0", "metadata": {"version": "2.1"}, "released": "2025-01-31"}
    root = library / "skills/git-workflow"
    assert [(r["uri"], r["digest"], r["size"]) for r in git["resources"]] == [
        (f"skill://git-workflow/{rel}", sha(root / rel), (root / rel).stat().st_size)
        for rel in ("SKILL.md", "assets/logo.png", "references/branches.md", "scripts/check.sh")]
    assert client.call("skills/get", {"uri": GIT})["result"] == {"skill": git}
    # Every file reads back as exactly the bytes its digest was taken of.
    for entry in entries:
        for item in entry["resources"]:
            (contents,) = client.call("resources/read", {"uri": item["uri"]})["result"]["contents"]
            data = base64.b64decode(contents["blob"]) if "blob" in contents else contents["text"].encode()
            assert "sha256:" + hashlib.sha256(data).hexdigest() == item["digest"], item
    read = client.call("resources/read", {"uri": GIT})["result"]["contents"][0]
    assert read["mimeType"] == "text/markdown" and read["text"] == (root / "SKILL.md").read_text()
    logo = client.call("resources/read", {"uri": "skill://git-workflow/assets/logo.png"})["result"]["contents"][0]
    assert logo["mimeType"] == "image/png" and base64.b64decode(logo["blob"]) == PNG


def test_stdio_trusts_the_client_with_every_skill(library: Path) -> None:
    # A session without principal scopes (stdio) sees restricted skills too, as it sees restricted prompts.
    client = Skills(served(library), "2025-11-25")
    client.session.scopes = None
    assert PAY in [entry["uri"] for entry in listed(client)]


@pytest.mark.parametrize("revision", LEGACY)
def test_skill_files_are_listed_as_resources_with_their_front_matter(library: Path, revision: str) -> None:
    client = Skills(served(library), revision, frozenset())
    resources = {entry["uri"]: entry for entry in client.call("resources/list")["result"]["resources"]}
    assert {uri for uri in resources if uri.startswith("skill://")} == {
        GIT, "skill://git-workflow/assets/logo.png", "skill://git-workflow/references/branches.md",
        "skill://git-workflow/scripts/check.sh", "skill://pdf/SKILL.md", FORMS, "skill://pdf/forms/fill.md"}
    skill_md = resources[GIT]
    assert (skill_md["name"], skill_md["description"], skill_md["mimeType"]) == (
        "git-workflow", "Follow the team's Git conventions.", "text/markdown")
    if revision >= "2025-06-18":
        assert skill_md["_meta"] == {"io.modelcontextprotocol.skills/license": "Apache-2.0",
                                     "io.modelcontextprotocol.skills/metadata": {"version": "2.1"},
                                     "io.modelcontextprotocol.skills/released": "2025-01-31"}
    else:
        assert "_meta" not in skill_md
    # A nested skill's SKILL.md is described by its own front matter, listed once.
    assert (resources[FORMS]["name"], resources[FORMS]["description"]) == ("forms", "Fill PDF forms.")
    assert resources["skill://git-workflow/assets/logo.png"]["mimeType"] == "image/png"


@pytest.mark.parametrize("revision", LEGACY)
def test_directories_list_their_direct_children(library: Path, revision: str) -> None:
    client = Skills(served(library), revision, frozenset())
    root = client.call("resources/directory/read", {"uri": "skill://git-workflow"})["result"]["resources"]
    assert [(e["uri"], e["name"], e.get("mimeType")) for e in root] == [
        (GIT, "git-workflow", "text/markdown"),
        ("skill://git-workflow/assets", "assets", "inode/directory"),
        ("skill://git-workflow/references", "references", "inode/directory"),
        ("skill://git-workflow/scripts", "scripts", "inode/directory"),
        ("skill://git-workflow/templates", "templates", "inode/directory")]
    assert root[0]["size"] == (library / "skills/git-workflow/SKILL.md").stat().st_size
    assert client.call("resources/directory/read", {"uri": "skill://git-workflow/templates"})["result"] == {
        "resources": []}
    refs = client.call("resources/directory/read", {"uri": "skill://git-workflow/references"})["result"]
    assert [e["uri"] for e in refs["resources"]] == ["skill://git-workflow/references/branches.md"]
    # A nested skill's folder, from the skill around it and as a skill of its own, is one directory.
    pdf = client.call("resources/directory/read", {"uri": "skill://pdf"})["result"]["resources"]
    assert [e["uri"] for e in pdf] == ["skill://pdf/SKILL.md", "skill://pdf/forms"]
    forms = client.call("resources/directory/read", {"uri": "skill://pdf/forms"})["result"]["resources"]
    assert [(e["uri"], e["name"]) for e in forms] == [(FORMS, "forms"), ("skill://pdf/forms/fill.md", "fill.md")]


def test_directory_reads_are_paged(library: Path) -> None:
    client = Skills(served(library, page_size=2), "2025-11-25")
    seen: list[str] = []
    cursor = None
    for _ in range(10):
        result = client.call("resources/directory/read", {"uri": "skill://git-workflow", **(
            {"cursor": cursor} if cursor else {})})["result"]
        assert len(result["resources"]) <= 2
        seen += [entry["name"] for entry in result["resources"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert seen == ["git-workflow", "assets", "references", "scripts", "templates"]
    bad = client.call("resources/directory/read", {"uri": "skill://git-workflow", "cursor": "not-ours"})
    assert bad["error"]["code"] == -32602


def test_listing_pages_keep_each_skill_whole(library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = Skills(served(library, page_size=2), "2025-11-25")
    pages = []
    cursor = None
    while True:
        result = client.call("skills/list", {} if cursor is None else {"cursor": cursor})["result"]
        pages.append([entry["uri"] for entry in result["skills"]])
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert pages == [[GIT, PAY], ["skill://pdf/SKILL.md", FORMS]]
    # The files of a page are bounded too; a skill is never split, so a page holds at least one.
    monkeypatch.setattr(skill_catalog, "MAX_PAGE_FILES", 3)
    small = Skills(served(library, page_size=10), "2025-11-25")
    first = small.call("skills/list")["result"]
    assert [entry["uri"] for entry in first["skills"]] == [GIT] and len(first["skills"][0]["resources"]) == 4
    second = small.call("skills/list", {"cursor": first["nextCursor"]})["result"]
    assert [entry["uri"] for entry in second["skills"]] == [PAY]
    assert small.call("skills/list", {"cursor": "nope"})["error"]["code"] == -32602


def not_a(kind: str, uri: str) -> dict[str, Any]:
    return {"code": -32602, "message": f"{kind} not found: {uri!r}", "data": {"uri": uri}}


WRONG = ["skill://git-workflow/references/branches.md", "skill://git-workflow", "skill://nope/SKILL.md",
         "skill://git-workflow/../payroll/SKILL.md", "skill://git-workflow/%2e%2e/payroll/SKILL.md",
         "skill://git-workflow%2fSKILL.md", "skill://%67it-workflow/SKILL.md", "skill://git-workflow/SKILL.md/",
         "skill://git-workflow/SKILL.md?x=1", "skill://git-workflow//SKILL.md", "skills://git-workflow/SKILL.md",
         "promptdeck:///skills/git-workflow/SKILL.md", "skill://git-workflow/skill.md", PAY]


@pytest.mark.parametrize("uri", WRONG)
def test_anything_but_a_skill_served_is_not_found_in_the_same_words(library: Path, uri: str) -> None:
    client = Skills(served(library), "2025-11-25", frozenset())  # a principal without hr: payroll is hidden
    assert client.call("skills/get", {"uri": uri})["error"] == not_a("Skill", uri)
    session = LegacySession(served(library), lambda _: None)
    assert modern(session, "skills/get", {"uri": uri}, frozenset())["error"] == not_a("Skill", uri)


def test_a_directory_read_of_anything_but_a_folder_is_not_found(library: Path) -> None:
    client = Skills(served(library), "2025-11-25", frozenset())
    for uri in ("skill://git-workflow/SKILL.md", "skill://git-workflow/references/branches.md", "skill://payroll",
                "skill://nope", "skill://git-workflow/", "skill://git-workflow/%2e%2e", "promptdeck:///skills",
                "skill://git-workflow/references/"):
        assert client.call("resources/directory/read", {"uri": uri})["error"] == not_a("Directory", uri)
    for params in ({}, {"uri": 5}, {"uri": "skill://" + "a" * 10_000}):
        assert client.call("resources/directory/read", params)["error"]["code"] == -32602
        assert client.call("skills/get", params)["error"]["code"] == -32602


def test_a_hidden_skill_is_an_unknown_one_everywhere(library: Path) -> None:
    server = served(library)
    anonymous, hr = Skills(server, "2025-11-25", frozenset()), Skills(server, "2025-11-25", frozenset({"hr"}))
    assert PAY not in [entry["uri"] for entry in listed(anonymous)]
    assert PAY in [entry["uri"] for entry in listed(hr)]
    for uri, hidden_uri in ((PAY, "skill://payroll/rates.csv"),):
        assert anonymous.call("skills/get", {"uri": uri})["error"] == not_a("Skill", uri)
        assert anonymous.call("resources/read", {"uri": hidden_uri})["error"] == {
            "code": -32602, "message": f"Resource not found: {hidden_uri!r}", "data": {"uri": hidden_uri}}
        assert anonymous.call("resources/directory/read", {"uri": "skill://payroll"})["error"] == \
            not_a("Directory", "skill://payroll")
        assert hr.call("skills/get", {"uri": uri})["result"]["skill"]["uri"] == PAY
        assert hr.call("resources/read", {"uri": hidden_uri})["result"]["contents"][0]["text"] == "grade,rate\n1,100\n"
    assert not [e for e in anonymous.call("resources/list")["result"]["resources"] if "payroll" in e["uri"]]


def test_2026_results_carry_result_type_and_cache_hints(library: Path) -> None:
    server = served(library, list_ttl_ms=7_000)
    session = LegacySession(server, lambda _: None)
    discover = modern(session, "server/discover")["result"]
    check_capabilities(discover["capabilities"])
    page = modern(session, "skills/list", scopes=frozenset())["result"]
    assert [entry["uri"] for entry in page["skills"]] == [GIT, "skill://pdf/SKILL.md", FORMS]
    # payroll is restricted: what a listing shows depends on who asks
    assert (page["resultType"], page["ttlMs"], page["cacheScope"]) == ("complete", 7_000, "private")
    got = modern(session, "skills/get", {"uri": GIT}, frozenset())["result"]
    # GetSkillResult extends CacheableResult (the extension's final text): ttlMs and cacheScope are required.
    assert (got["resultType"], got["ttlMs"], got["cacheScope"]) == ("complete", 7_000, "private")
    assert got["skill"] == page["skills"][0]
    folder = modern(session, "resources/directory/read", {"uri": "skill://pdf/forms"}, frozenset())["result"]
    assert (folder["resultType"], folder["ttlMs"], folder["cacheScope"]) == ("complete", 7_000, "private")
    read = modern(session, "resources/read", {"uri": GIT}, frozenset())["result"]
    assert read["cacheScope"] == "private"
    # Without a restricted skill (nor prompt), the answers are everybody's.
    (library / "skills/payroll/SKILL.md").unlink()
    open_server = served(library)
    public = modern(LegacySession(open_server, lambda _: None), "skills/list", scopes=frozenset())["result"]
    assert public["cacheScope"] == "public"
    one = modern(LegacySession(open_server, lambda _: None), "skills/get", {"uri": GIT}, frozenset())["result"]
    assert one["cacheScope"] == "public"


def test_no_skills_serves_none(library: Path) -> None:
    server = served(library, skills=False)
    client = Client(server, "2025-11-25")
    assert "extensions" not in client.initialize["result"]["capabilities"]
    for method in SKILLS:
        assert client.request(method, {"uri": GIT})["error"]["code"] == -32601
    assert client.call("resources/read", {"uri": GIT})["error"]["code"] == -32602
    assert not [e for e in client.call("resources/list")["result"]["resources"] if e["uri"].startswith("skill://")]
    session = LegacySession(server, lambda _: None)
    assert "extensions" not in modern(session, "server/discover")["result"]["capabilities"]
    assert modern(session, "skills/list")["error"]["code"] == -32601
    assert server.skills.skills == {}


def test_a_server_without_folders_declares_no_skills() -> None:
    server = PromptServer("t")

    @server.prompt()
    def hello() -> str:
        return "Hello"

    client = Client(server, "2025-11-25")
    assert "extensions" not in client.initialize["result"]["capabilities"]
    assert client.request("skills/list")["error"]["code"] == -32601


def test_a_deferred_folder_declares_skills_before_it_is_read(library: Path) -> None:
    server = PromptServer("t")
    server.add_folder(library, defer=True)
    client = Client(server, "2025-11-25")
    assert not server.loaded  # the handshake read nothing
    assert client.initialize["result"]["capabilities"]["extensions"] == {EXTENSION: {"directoryRead": True}}
    assert listed(Skills(server, "2025-11-25"))[0]["uri"] == GIT


def test_changed_skill_files_reach_subscribers_and_the_list_its_readers(library: Path) -> None:
    server = served(library)
    reader, hidden, follower = (Skills(server, "2025-11-25", frozenset()), Skills(server, "2025-11-25", frozenset()),
                                Skills(server, "2025-11-25", frozenset()))
    reader.call("skills/list")  # read the skills only: it hears of their files through resources/list_changed
    hidden.call("resources/subscribe", {"uri": "skill://payroll/rates.csv"})  # not its to read: never told
    follower.call("resources/subscribe", {"uri": "skill://git-workflow/references/branches.md"})
    branches = library / "skills/git-workflow/references/branches.md"
    branches.write_text("# Branches\n\nmain only.\n")
    server.reload_paths([str(branches)])
    assert [(n["method"], n["params"]["uri"]) for n in follower.heard()] == [
        ("notifications/resources/updated", "skill://git-workflow/references/branches.md")]
    assert reader.heard() == []  # the same files: the list has not changed
    new = library / "skills/git-workflow/references/tags.md"
    new.write_text("# Tags\n")
    (library / "skills/payroll/rates.csv").write_text("grade,rate\n1,120\n")
    server.reload_paths([str(new), str(library / "skills/payroll/rates.csv")])
    assert [n["method"] for n in reader.heard()] == ["notifications/resources/list_changed"]
    assert hidden.heard() == [] and follower.heard() == []
    entry = reader.call("skills/get", {"uri": GIT})["result"]["skill"]
    assert "skill://git-workflow/references/tags.md" in [item["uri"] for item in entry["resources"]]


def test_a_broken_reload_keeps_the_last_good_version(library: Path) -> None:
    server = served(library)
    client = Skills(server, "2025-11-25")
    before = client.call("skills/get", {"uri": GIT})["result"]
    skill_md = library / "skills/git-workflow/SKILL.md"
    skill_md.write_text("---\nname: git-workflow\n---\nno description now\n")
    server.reload_paths([str(skill_md)])
    assert client.call("skills/get", {"uri": GIT})["result"] == before
    # Its SKILL.md changed since it was listed: refused, never served with bytes the listing does not promise.
    assert client.call("resources/read", {"uri": GIT})["error"]["code"] == -32602
    assert "text" in client.call("resources/read", {"uri": "skill://git-workflow/scripts/check.sh"})["result"][
        "contents"][0]
    skill_md.write_text("---\nname: git-workflow\ndescription: Fixed.\n---\nBack.\n")
    server.reload_paths([str(skill_md)])
    fixed = client.call("skills/get", {"uri": GIT})["result"]["skill"]
    assert fixed["frontmatter"]["description"] == "Fixed."
    assert client.call("resources/read", {"uri": GIT})["result"]["contents"][0]["text"].endswith("Back.\n")


def test_2026_listen_hears_skill_files_change(library: Path) -> None:
    server = served(library)
    sent: list[bytes] = []
    session = LegacySession(server, sent.append)
    uri = "skill://pdf/forms/fill.md"
    message = request(9, "subscriptions/listen", {"notifications": {
        "resourcesListChanged": True, "resourceSubscriptions": [uri]}})
    session.scopes = frozenset()
    assert session.handle(jsonrpc.decode(json.dumps(message).encode()), sent.append) is None  # type: ignore[arg-type]
    sent.pop(0)  # the acknowledgement
    (library / "skills/pdf/forms/fill.md").write_text("Fill each field, twice.\n")
    server.reload_paths([str(library / "skills/pdf/forms/fill.md")])
    (library / "skills/pdf/forms/more.md").write_text("More.\n")
    server.reload_paths([str(library / "skills/pdf/forms/more.md")])
    notes = [json.loads(line) for line in sent]
    for note in notes:
        if schema_available(REVISION):
            validate_message(REVISION, note)
    assert [(n["method"], n["params"].get("uri")) for n in notes] == [
        ("notifications/resources/updated", uri), ("notifications/resources/list_changed", None)]


def test_a_store_label_serves_its_skills_and_a_label_move_reaches_clients(library: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/store.db"
    pd("publish", str(library), "--store", url, "--label", "production")
    server = PromptServer("t")
    server.add_store(url)
    try:
        client = Skills(server, "2025-11-25", frozenset())
        folder = Skills(served(library), "2025-11-25", frozenset())
        assert listed(client) == listed(folder)  # the same entries: URIs, front matter, digests
        client.call("resources/subscribe", {"uri": "skill://pdf/forms/fill.md"})
        assert client.call("resources/read", {"uri": "skill://pdf/forms/fill.md"})["result"]["contents"][0][
            "text"] == "Fill each field.\n"
        (library / "skills/pdf/forms/fill.md").write_text("Fill each field, in ink.\n")
        write(library, "skills/pdf/forms/sign.md", "Sign at the end.\n")
        pd("publish", str(library), "--store", url, "--label", "production")
        heard: list[dict[str, Any]] = []
        for _ in range(400):  # the label is followed four times a second
            heard += [n for n in client.heard() if n["method"].startswith("notifications/resources/")]
            if len(heard) >= 2:
                break
            time.sleep(0.05)
        assert sorted((n["method"], n.get("params", {}).get("uri")) for n in heard) == [
            ("notifications/resources/list_changed", None),
            ("notifications/resources/updated", "skill://pdf/forms/fill.md")]
        entry = client.call("skills/get", {"uri": FORMS})["result"]["skill"]
        assert "skill://pdf/forms/sign.md" in [item["uri"] for item in entry["resources"]]
        assert client.call("resources/read", {"uri": "skill://pdf/forms/fill.md"})["result"]["contents"][0][
            "text"] == "Fill each field, in ink.\n"
    finally:
        for source in server.sources:
            close = getattr(source, "close", None)
            if close is not None:
                close()
    off = PromptServer("t", skills=False)
    off.add_store(url)
    try:
        assert off.skills.skills == {}
        assert "extensions" not in Client(off, "2025-11-25").initialize["result"]["capabilities"]
    finally:
        for source in off.sources:
            getattr(source, "close", lambda: None)()
