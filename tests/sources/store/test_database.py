"""The versioned store, on SQLite and on a real PostgreSQL cluster, through the real command line.

Each test runs against both databases (``store_url``): the cluster is one throwaway PostgreSQL started
from the Debian package for this module, with a fresh database per test.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.cli import library, pd
from tests.support.flag import Flag, setter_for
from tests.support.libraries import EXAMPLES


def same_files(a: Path, b: Path) -> bool:
    def files(root: Path) -> dict[str, bytes]:
        # the base file publish keeps in the folder (cli/sync) is the folder's, not the library's
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*")
                if p.is_file() and p.name != ".promptdeck-base"}

    return files(a) == files(b)


def test_publish_label_rollback_history_diff_and_export(store_url: str, tmp_path: Path) -> None:
    folder = library(tmp_path)
    first = pd("publish", str(folder), "--store", store_url, "--label", "production", "-m", "first", "--author", "ada")
    assert first.stdout.startswith("publish 1: 19 files changed; label production points at it")
    again = pd("publish", str(folder), "--store", store_url, "--label", "production")
    assert again.stdout == "nothing changed in 19 files; label production points at it\n"

    (folder / "summarize.md").write_text((folder / "summarize.md").read_text() + "Keep it short.\n")
    (folder / "git" / "commit.md").unlink()
    second = pd("publish", str(folder), "--store", store_url, "--label", "staging", "-m", "tighter")
    assert second.stdout.splitlines() == ["publish 2: 2 files changed; label staging points at it (1 deleted)",
                                          "  summarize.md", "  deleted: git/commit.md"]

    history = pd("history", "summarize", "--store", store_url).stdout.splitlines()
    assert history[0].startswith("summarize.md v2  summarize  publish 2") and history[0].endswith("[staging]")
    assert history[1].startswith("summarize.md v1  summarize  publish 1") and "ada  first  [production]" in history[1]
    assert "git/commit.md v2  deleted  publish 2" in pd("history", "--store", store_url).stdout

    diff = pd("diff", "summarize", "1", "--store", store_url).stdout
    assert diff.startswith("--- summarize.md@1\n+++ summarize.md@2\n") and "+Keep it short.\n" in diff

    exported = tmp_path / "production"
    pd("export", str(exported), "--store", store_url, "--label", "production")
    assert same_files(exported, EXAMPLES)  # byte for byte what was published
    staged = tmp_path / "staging"
    pd("export", str(staged), "--store", store_url, "--label", "staging")
    assert same_files(staged, folder)

    assert pd("label", "summarize", "production", "--store", store_url).stdout == \
        "label production: summarize is at version 2\n"
    moved = tmp_path / "moved"
    pd("export", str(moved), "--store", store_url, "--label", "production")
    assert (moved / "summarize.md").read_bytes() == (folder / "summarize.md").read_bytes()
    assert (moved / "git" / "commit.md").exists()  # one prompt moved, the rest stayed
    assert "is back at position" in pd("rollback", "production", "--store", store_url).stdout
    back = tmp_path / "back"
    pd("export", str(back), "--store", store_url, "--label", "production")
    assert same_files(back, EXAMPLES)


def test_a_folder_with_a_problem_publishes_nothing(store_url: str, tmp_path: Path) -> None:
    folder = library(tmp_path)
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    (folder / "broken.md").write_text("---\narguments: [\n---\nHello\n")
    (folder / "summarize.md").write_text("changed\n")
    refused = pd("publish", str(folder), "--store", store_url, "--label", "production", check=False)
    assert refused.returncode == 1
    assert "broken.md:3: front matter is not valid YAML" in refused.stdout
    assert "nothing published: 1 problem in 1 file" in refused.stderr
    exported = tmp_path / "out"
    pd("export", str(exported), "--store", store_url, "--label", "production")
    assert same_files(exported, EXAMPLES)
    assert len(pd("history", "--store", store_url).stdout.splitlines()) == 19


def test_a_bad_first_publish_makes_no_store_and_an_unchanged_one_is_not_checked_again(tmp_path: Path) -> None:
    folder = library(tmp_path)
    (folder / "broken.md").write_text("---\narguments: [\n---\nHello\n")
    url = f"sqlite:///{tmp_path}/new.db"
    assert pd("publish", str(folder), "--store", url, check=False).returncode == 1
    assert not (tmp_path / "new.db").exists()
    (folder / "broken.md").unlink()
    pd("publish", str(folder), "--store", url, "--label", "production")
    # The same bytes again: the store says so (publish then skips the check), nothing is published,
    # and the label moves.
    from promptdeck.sources.store.database import Store
    from promptdeck.sources.store.model import to_check

    with Store(url) as store:
        files = {path: data for path, (_, data) in store.reads.snapshot("production").items()}
        assert to_check(files, store.reads.latest()) == set()
        files["summarize.md"] += b"more\n"
        assert to_check(files, store.reads.latest()) == {"summarize.md"}  # only what changed is parsed again
        files["_material/new.txt"] = b"new material"
        assert to_check(files, store.reads.latest()) is None  # material may change any prompt: all are checked
    done = pd("publish", str(folder), "--store", url, "--label", "staging")
    assert done.stdout.startswith("nothing changed in 19 files; label staging points at it"), done.stdout
    (folder / "summarize.md").write_text("changed\n")
    assert pd("publish", str(folder), "--store", url).stdout.startswith("publish 2: 1 file changed")
    history = pd("history", "--store", url, "summarize").stdout.splitlines()
    assert [line.split()[:2] for line in history] == [["summarize.md", "v2"], ["summarize.md", "v1"]]
    assert all(line.split()[2] == "summarize" for line in history)  # the prompt's name, in every version


def test_hidden_files_are_never_published(store_url: str, tmp_path: Path) -> None:
    folder = library(tmp_path)
    (folder / ".env").write_text("SECRET=1\n")
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text("[core]\n")
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    everything = pd("history", "--store", store_url).stdout
    assert ".env" not in everything and ".git" not in everything


def test_links_are_published_only_when_they_stay_inside(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    folder = library(tmp_path)
    (folder / "_material" / "same.txt").symlink_to(folder / "_material" / "app.log")
    (folder / "_material" / "shared").symlink_to(folder / "_material", target_is_directory=True)
    pd("publish", str(folder), "--store", url, "--label", "production")
    exported = tmp_path / "out"
    pd("export", str(exported), "--store", url, "--label", "production")
    assert (exported / "_material" / "same.txt").read_bytes() == (folder / "_material" / "app.log").read_bytes()
    assert not (exported / "_material" / "shared").exists()  # a linked folder is not walked, as serve does
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2\n")
    (folder / "_material" / "leak.txt").symlink_to(secret)
    os.mkfifo(folder / "_material" / "pipe")
    for bad, why in (("leak.txt", "is a link that leads out of the library"), ("pipe", "is not a regular file")):
        done = pd("publish", str(folder), "--store", url, check=False)
        assert done.returncode == 1 and f"file '_material/{bad}' {why}" in done.stderr, done.stderr
        (folder / "_material" / bad).unlink()
    assert "hunter2" not in pd("history", "--store", url).stdout


def test_bad_input_is_one_clear_line_and_changes_nothing(store_url: str, tmp_path: Path) -> None:
    folder = library(tmp_path)
    pd("publish", str(folder), "--store", store_url, "--label", "production")

    def refused(*args: str) -> str:
        done = pd(*args, check=False)
        assert done.returncode != 0 and done.stderr.count("\n") == 1, (args, done.stderr)
        return done.stderr

    assert "no label 'nope'" in refused("export", str(tmp_path / "x"), "--store", store_url, "--label", "nope")
    assert "has no version 99" in refused("label", "summarize@99", "production", "--store", store_url)
    assert "no prompt 'ghost'" in refused("label", "ghost", "production", "--store", store_url)
    assert "no earlier position" in refused("rollback", "production", "--store", store_url)
    assert "label 'bad label'" in refused("label", "summarize", "bad label", "--store", store_url)
    assert "not an empty folder" in refused("export", str(folder), "--store", store_url, "--label", "production")
    assert "no store at" in refused("history", "--store", str(tmp_path / "missing.db"))
    assert "sqlite:///path.db" in refused("history", "--store", "sqlite:relative.db")
    assert "serve needs a FOLDER or --store URL" in refused("serve")
    assert "no label 'nope'" in refused("serve", "--store", store_url, "--label", "nope")
    assert len(pd("history", "--store", store_url).stdout.splitlines()) == 19


def test_an_unreachable_or_missing_postgresql_store_is_one_line_without_its_password(postgres: str) -> None:
    from tests.support.http_server import free_port

    dead = f"postgresql://ana:s3cret-pw@127.0.0.1:{free_port()}/prompts"  # nothing listens there
    port = postgres.rsplit(":", 1)[1].split("/")[0]
    missing = f"postgresql://promptdeck:s3cret-pw@127.0.0.1:{port}/no_such_database"  # a live cluster
    for url in (dead, missing):
        http = ("--http", str(free_port()))
        for args in (("serve", "--store", url), ("history", "--store", url), ("serve", "--store", url, *http)):
            done = subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True,
                                  timeout=60, stdin=subprocess.DEVNULL)
            assert done.returncode == 1 and done.stderr.count("\n") == 1, (args, done.stderr)
            assert "cannot reach the store postgresql://" in done.stderr and ":***@127.0.0.1:" in done.stderr
            assert "s3cret" not in done.stderr


def test_a_schema_from_a_newer_promptdeck_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    pd("store", "upgrade", url)
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute("UPDATE promptdeck_schema SET version = 99")
    done = pd("history", "--store", url, check=False)
    assert done.returncode == 1 and "has schema 99, made by a newer promptdeck" in done.stderr


def test_two_publishers_at_once_never_interleave(store_url: str, tmp_path: Path) -> None:
    """Each of two folders is published again and again by its own process, all at once; every label
    position the store ever recorded is exactly one of the two folders, never a mix."""
    one, two = library(tmp_path, "one"), library(tmp_path, "two")
    (two / "summarize.md").write_text((two / "summarize.md").read_text() + "two was here\n")
    (two / "only-two.md").write_text("Published by the second folder only.\n")
    pd("publish", str(one), "--store", store_url, "--label", "production")  # makes the schema first

    def publish(folder: Path, rounds: int) -> None:
        for round_number in range(rounds):
            (folder / "round.md").write_text(f"{folder.name} {round_number}\n")
            # --force: each undoes the other's publish on purpose (without it, the second is refused: cli/sync)
            pd("publish", str(folder), "--store", store_url, "--label", "production", "-m", folder.name, "--force")

    threads = [threading.Thread(target=publish, args=(folder, 4)) for folder in (one, two)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    out = tmp_path / "out"
    pd("export", str(out), "--store", store_url, "--label", "production")
    winner = one if (out / "round.md").read_text().startswith("one") else two
    shutil.copy(out / "round.md", winner / "round.md")
    assert same_files(out, winner)
    # Roll back through every position: each is one whole folder.
    for _ in range(3):
        pd("rollback", "production", "--store", store_url)
        back = tmp_path / f"back{time.monotonic_ns()}"
        pd("export", str(back), "--store", store_url, "--label", "production")
        owner = two if (back / "round.md").read_text().startswith("two") else one
        shutil.copy(back / "round.md", owner / "round.md")
        assert same_files(back, owner), "a label position mixing two publishes"


def test_kill_9_during_a_large_publish_leaves_the_previous_version(store_url: str, tmp_path: Path) -> None:
    folder = library(tmp_path)
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    big = library(tmp_path, "big")
    material = big / "_material" / "bulk"
    material.mkdir()
    for index in range(400):
        (material / f"blob{index}.bin").write_bytes(os.urandom(64 * 1024))  # 25 MB to write in one transaction
    # Killed at different moments (reading the folder, inside the transaction, after the commit), the
    # label is always on one whole library: the one before, or the complete new one.
    for delay in (0.3, 0.5, 0.7, 0.9, 1.2, 1.6):
        proc = subprocess.Popen([sys.executable, "-m", "promptdeck", "publish", str(big), "--store", store_url,
                                 "--label", "production"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        out = tmp_path / f"after-{delay}"
        pd("export", str(out), "--store", store_url, "--label", "production")
        assert same_files(out, EXAMPLES) or same_files(out, big), f"killed after {delay} s: a half publish is served"
        if same_files(out, big):
            pd("rollback", "production", "--store", store_url)  # and try again from the small library
    if store_url.startswith("sqlite"):
        path = store_url.removeprefix("sqlite:///")
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_serve_a_store_over_stdio_and_follow_its_label(store_url: str, tmp_path: Path) -> None:
    """The official SDK client on a store-backed server: each prompt says its version and label, and a
    publish that moves the label reaches the open session as list_changed."""
    folder = library(tmp_path)
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    changed = Flag()

    async def run() -> None:
        params = StdioServerParameters(command=sys.executable, env=dict(os.environ),
                                       args=["-m", "promptdeck", "serve", "--store", store_url])
        async with stdio_client(params) as (read, write), \
                ClientSession(read, write, message_handler=setter_for(types.PromptListChangedNotification,
                                                                      changed)) as session:
            await session.initialize()
            listed = {p.name: p for p in (await session.list_prompts()).prompts}
            assert "summarize" in listed and "code-review" in listed
            meta = listed["summarize"].meta or {}
            assert meta["promptdeck.dev/version"] == 1 and meta["promptdeck.dev/label"] == "production"
            (folder / "fresh.md").write_text("---\ndescription: New in the store\n---\nHello from the store!\n")
            await anyio.to_thread.run_sync(lambda: pd("publish", str(folder), "--store", store_url,
                                                      "--label", "production"))
            with anyio.fail_after(20):
                await changed.wait()
            names = {p.name for p in (await session.list_prompts()).prompts}
            assert "fresh" in names
            fresh = await session.get_prompt("fresh", {})
            assert fresh.messages[0].content.text == "Hello from the store!"

    anyio.run(run)


def test_a_bad_version_in_the_store_keeps_the_good_one_served(tmp_path: Path) -> None:
    """A file the store holds but that does not parse (written by another tool) is never served over
    the good version already loaded."""
    url = f"sqlite:///{tmp_path}/s.db"
    folder = library(tmp_path)
    pd("publish", str(folder), "--store", url, "--label", "production")
    from promptdeck.sources.store.database import Store
    from promptdeck.sources.store.source import StoreSource

    source = StoreSource(url)
    try:
        assert not source.load()
        before = {p.name: p for p in source.prompts()}["summarize"]
        with Store(url) as store:
            files = {path: data for path, (_, data) in store.reads.snapshot("production").items()}
            files["summarize.md"] = b"---\narguments: [\n---\nbroken\n"
            store.publish(files, {}, author="tool", message="bypassed check", label="production")
        assert source.sync()
        after = {p.name: p for p in source.prompts()}["summarize"]
        assert after.parsed().description == before.parsed().description
        assert json.dumps(after.meta) == json.dumps(before.meta)
    finally:
        source.close()


def test_several_labels_over_http_each_on_its_own_endpoint(tmp_path: Path) -> None:
    """``--label production --label staging``: production on /mcp, staging on /mcp/staging. A move of
    staging reaches staging's sessions only; a session of one endpoint is unknown at the other."""
    import httpx

    from tests.support.http_rpc import POST_HEADERS, messages_of, rpc, start_session
    from tests.support.http_server import http_server

    url = f"sqlite:///{tmp_path}/s.db"
    folder = library(tmp_path)
    pd("publish", str(folder), "--store", url, "--label", "production")
    pd("publish", str(folder), "--store", url, "--label", "staging")  # unchanged: staging moves there too
    (folder / "summarize.md").write_text("---\ndescription: The staging summary\n---\nSummarize, staged.\n")
    pd("publish", str(folder), "--store", url, "--label", "staging")

    def described(client: httpx.Client, endpoint: str) -> tuple[str, dict[str, object]]:
        listed = client.post(endpoint, json=rpc("prompts/list"), headers=start_session(client, endpoint))
        entry = next(p for p in messages_of(listed)[0]["result"]["prompts"] if p["name"] == "summarize")
        return entry["description"], entry["_meta"]

    with http_server("", "--store", url, "--label", "production", "--label", "staging") as production, \
            httpx.Client(timeout=30) as client:
        staging = production + "/staging"
        description, meta = described(client, production)
        assert description != "The staging summary" and meta["promptdeck.dev/label"] == "production"
        assert meta["promptdeck.dev/version"] == 1
        description, meta = described(client, staging)
        assert description == "The staging summary" and meta["promptdeck.dev/label"] == "staging"
        assert meta["promptdeck.dev/version"] == 2
        assert client.post(production + "/nope", json=rpc("prompts/list"), headers=POST_HEADERS).status_code == 404

        session = start_session(client, production)
        assert client.post(staging, json=rpc("prompts/list"), headers=session).status_code == 404
        staged = start_session(client, staging)
        with client.stream("GET", staging, headers={**staged, "accept": "text/event-stream"}) as stream:
            pd("rollback", "--store", url, "staging")
            assert any("notifications/prompts/list_changed" in line for line in _until_data(stream.iter_lines()))
        description, meta = described(client, staging)
        assert description != "The staging summary" and meta["promptdeck.dev/version"] == 1
        assert described(client, production)[1]["promptdeck.dev/label"] == "production"


def _until_data(lines: Iterator[str]) -> list[str]:
    """Lines of an SSE stream up to and including the first that carries data (priming events have none)."""
    seen = []
    for line in lines:
        seen.append(line)
        if line.startswith("data:") and line.strip() != "data:":
            return seen
    return seen


def test_label_options_are_checked(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    for args, expected in [
        (("--label", "staging", str(tmp_path)), "--label goes with --store"),
        (("--store", url, "--label", "a", "--label", "a", "--http", "1"), "a label is given twice"),
        (("--store", url, "--label", "a", "--label", "b"), "stdio serves one label"),
        (("--store", url, "--label", "../x", "--http", "1"), "label '../x' is not valid"),
    ]:
        done = pd("serve", *args, check=False)
        assert done.returncode == 2 and expected in done.stderr, (args, done.stderr)


def test_scopes_hold_for_stored_prompts(tmp_path: Path) -> None:
    """A prompt restricted by ``scopes`` is as invisible from a store as from a folder: not listed, and
    unknown to a get, for a principal without the scope; listed and rendered for one with it."""
    import httpx

    from tests.support.http_server import http_server
    from tests.support.modern import Message, get_prompt, post, request

    url = f"sqlite:///{tmp_path}/s.db"
    folder = library(tmp_path)
    (folder / "payroll.md").write_text("---\nscopes: [hr]\ndescription: Salaries\n---\nThe payroll.\n")
    pd("publish", str(folder), "--store", url, "--label", "production")
    tokens = tmp_path / "tokens"
    tokens.write_text("ana:ana-token-0123456789 hr\nbob:bob-token-0123456789\n")
    with http_server("", "--store", url, "--stateless", "--token-file", str(tokens)) as endpoint, \
            httpx.Client(timeout=30) as client:
        def as_(token: str, message: Message) -> Message:
            client.headers["authorization"] = f"Bearer {token}"
            return post(client, endpoint, message)[1]

        listed = as_("bob-token-0123456789", request(1, "prompts/list"))
        assert "payroll" not in {p["name"] for p in listed["result"]["prompts"]}
        refused = as_("bob-token-0123456789", get_prompt(2, "payroll"))
        assert refused["error"]["code"] == -32602 and "payroll" in refused["error"]["message"]
        listed = as_("ana-token-0123456789", request(3, "prompts/list"))
        assert "payroll" in {p["name"] for p in listed["result"]["prompts"]}
        got = as_("ana-token-0123456789", get_prompt(4, "payroll"))
        assert got["result"]["messages"][0]["content"]["text"] == "The payroll."


def test_forged_paths_in_the_store_never_leave_the_folder(tmp_path: Path) -> None:
    """Rows written into the database by another tool: a path out of the folder, an absolute one, a
    hidden one, and a file where a folder must be. Serving and export leave each out and say so; the
    rest is served, and nothing is written outside."""
    url = f"sqlite:///{tmp_path}/s.db"
    folder = library(tmp_path)
    pd("publish", str(folder), "--store", url, "--label", "production")
    forged = ["../../escaped.md", "/tmp/absolute.md", ".hidden/x.md", "summarize.md/inner.md", "a\\\\b.md"]
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute("INSERT INTO blobs (digest, data) VALUES ('forged', X'48690a')")
        conn.execute("INSERT INTO blobs (digest, data) VALUES ('huge', zeroblob(11 * 1024 * 1024))")
        conn.execute("INSERT INTO files (path, version, publish, prompt, digest) VALUES ('huge.md', 1, 1, NULL, "
                     "'huge')")
        conn.execute("INSERT INTO position_files (position, path, version) SELECT MAX(id), 'huge.md', 1 "
                     "FROM positions")
        position = conn.execute("SELECT MAX(id) FROM positions").fetchone()[0]
        for path in forged:
            conn.execute("INSERT INTO files (path, version, publish, prompt, digest) VALUES (?, 1, 1, NULL, "
                         "'forged')", (path,))
            conn.execute("INSERT INTO position_files (position, path, version) VALUES (?, ?, 1)", (position, path))
    from promptdeck.sources.store.database import Store
    from promptdeck.sources.store.model import StoreError

    with Store(url) as store, pytest.raises(StoreError, match="is not a library path"):
        store.publish({"../up.md": b"x"}, {}, author="a", message="m")
    exported = tmp_path / "out" / "deep"
    done = pd("export", str(exported), "--store", url, "--label", "production", check=False)
    assert done.returncode == 1, done.stderr
    assert "'../../escaped.md', which is not a library path" in done.stderr
    assert "'huge.md' larger than 10485760 bytes" in done.stderr and not (exported / "huge.md").exists()
    assert "cannot write 'summarize.md/inner.md'" in done.stderr and "1 could not be written" in done.stderr
    assert not (tmp_path / "escaped.md").exists() and not (tmp_path / "out" / "escaped.md").exists()

    async def run() -> None:
        params = StdioServerParameters(command=sys.executable, env=dict(os.environ),
                                       args=["-m", "promptdeck", "serve", "--store", url])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = {p.name for p in (await session.list_prompts()).prompts}
            assert names == _folder_prompt_names()

    anyio.run(run)
    assert not (tmp_path / "escaped.md").exists() and not Path("/tmp/absolute.md").exists()


def _folder_prompt_names() -> set[str]:
    from promptdeck.sources.files.source import FileSource

    source = FileSource(EXAMPLES)
    source.load()
    return {prompt.name for prompt in source.prompts()}


# -- the writes, in process (``Store`` composing its connection, reads and governance) ---------------------------

def test_the_writes_record_versions_and_refuse_what_would_lose_one(store_url: str) -> None:
    from promptdeck.sources.store.database import Store
    from promptdeck.sources.store.model import StoreConflict, StoreError
    from tests.support.stores import publish_texts

    with Store(store_url, create=True) as store:
        assert publish_texts(store, "production", {"greet.md": "Hello\n"}, author="ana") == (1, ["greet.md"])
        assert publish_texts(store, "production", {"greet.md": "Hello\n"}) == (None, [])
        assert store.publish_file("greet.md", b"Hi\n", None, author="bo", message="edit", base=1) == (2, 2)
        with pytest.raises(StoreConflict, match="newer version 2 by bo than the version 1 you edited"):
            store.publish_file("greet.md", b"Hey\n", None, author="cy", message="late", base=1)
        assert store.reads.file_version("greet.md", None) == (2, b"Hi\n")
        with pytest.raises(StoreError, match="is not a library path"):
            store.publish_file("../out.md", b"x", None, author="cy", message="")
        assert store.label("greet", 2, "production", author="ana") == 2
        assert store.rollback("production", author="ana").files == {"greet.md": 1}
        publish_texts(store, None, {})  # greet.md deleted: version 3
        with pytest.raises(StoreConflict, match="version 3 of 'greet' is its deletion"):
            store.label("greet", 3, "production", author="ana")
        with pytest.raises(StoreConflict, match="label 'staging' has no earlier position"):
            store.publish_file("greet.md", b"Back\n", None, author="ana", message="", label="staging")
            store.rollback("staging", author="ana")
