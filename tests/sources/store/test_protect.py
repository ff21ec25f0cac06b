"""Protected labels and the label audit, on SQLite and on the throwaway PostgreSQL cluster: the commands,
what the store enforces inside its write transactions, ``store upgrade`` from schema 4, and the PostgreSQL
roles docs/store.md#governance shows."""

# ruff: noqa: F811 - the store fixtures, imported from test_database, are parameters here

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from promptdeck.protocol.errors import HttpError
from promptdeck.server.web.store_governance import guard
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.model import StoreConflict
from promptdeck.sources.store.schema import SCHEMA_VERSION
from tests.support.cli import pd
from tests.support.postgres import new_database
from tests.support.store_schema import as_schema_4, promptdeck_in_process

GREET = "---\ndescription: Say hello\narguments:\n  - name: who\n---\n{} {{{{ who }}}}!\n"


def two_versions(tmp_path: Path, url: str) -> Path:
    """greet at versions 1 (label production) and 2 (no label)."""
    folder = tmp_path / "lib"
    folder.mkdir(exist_ok=True)
    (folder / "greet.md").write_text(GREET.format("Hello"))
    pd("publish", str(folder), "--store", url, "--label", "production", "-m", "first", "--author", "ana")
    (folder / "greet.md").write_text(GREET.format("Hi"))
    pd("publish", str(folder), "--store", url, "-m", "second", "--author", "bo")
    return folder


def test_protect_and_unprotect_from_the_command_line(store_url: str, tmp_path: Path) -> None:
    two_versions(tmp_path, store_url)
    said = pd("protect", "production", "--scope", "release", "--store", store_url, "--author", "root").stdout
    assert said == "label production is protected: moving it through /api/store needs the scope release\n"
    again = pd("protect", "production", "--scope", "release:prod", "--store", store_url).stdout
    assert "needs the scope release:prod (it needed release)" in again
    audit = pd("history", "--store", store_url, "--label", "production").stdout.splitlines()
    assert audit[0].startswith("label production is protected: moves through /api/store need release:prod")
    with Store(store_url) as store:
        protection = store.governance.protection("production")
        assert protection is not None and protection.scope == "release:prod" and not protection.require_tests
    assert pd("unprotect", "production", "--store", store_url).stdout == \
        "label production is no longer protected (it needed release:prod)\n"
    for args, code, says in ((("unprotect", "production"), 1, "label 'production' is not protected"),
                             (("protect", "nowhere", "--scope", "x"), 1, "no label 'nowhere' in the store"),
                             (("protect", "production", "--scope", "two words"), 2, "is not valid"),
                             (("protect", "production", "--scope", ""), 2, "is not valid"),
                             (("protect", "bad label", "--scope", "x"), 2, "is not valid"),
                             (("protect", "production", "--scope", "x" * 129), 2, "is not valid")):
        exit_code, _, stderr = promptdeck_in_process(*args, "--store", store_url)
        assert exit_code == code and says in stderr, (args, stderr)
    with Store(store_url) as store:
        assert store.governance.protections() == []


def test_the_store_holds_every_move_of_a_protected_label_to_its_scope(store_url: str, tmp_path: Path) -> None:
    """The guard sees the protection read in the write transaction, and a refusal changes nothing: a label
    move, a rollback, a save with the label, a rollout's start and end."""
    folder = two_versions(tmp_path, store_url)
    (folder / "greet.md").write_text(GREET.format("Hello there"))  # version 3: version 1's arguments
    pd("publish", str(folder), "--store", store_url)
    pd("label", "greet@2", "production", "--store", store_url)  # so that a rollback has somewhere to go
    pd("protect", "production", "--scope", "release", "--store", store_url)
    writer, releaser = guard(frozenset({"store:write"})), guard(frozenset({"store:write", "release"}))
    with Store(store_url) as store:
        where = store.reads.position_id("production")
        attempts = (lambda g: store.label("greet", 1, "production", author="w", guard=g),
                    lambda g: store.rollback("production", author="w", guard=g),
                    lambda g: store.publish_file("greet.md", b"---\n---\nnew\n", None, author="w", message="",
                                                 label="production", guard=g),
                    lambda g: store.governance.start_rollout("production", "greet", 3, 500, author="w", guard=g))
        for attempt in attempts:
            with pytest.raises(HttpError) as refused:
                attempt(writer)
            assert refused.value.status == 403 and "needs the scope release" in refused.value.message
            assert store.reads.position_id("production") == where
        assert store.reads.history("greet")[0].version == 3  # the refused save recorded no version
        assert store.governance.live_rollouts("production") == []
        started = store.governance.start_rollout("production", "greet", 3, 500, author="rel", guard=releaser)
        with pytest.raises(HttpError):
            store.governance.end_rollout("production", "greet", promote=True, author="w", guard=writer)
        assert [r.id for r in store.governance.live_rollouts("production")] == [started.id]
        store.label("greet", 1, "production", author="rel", guard=releaser, message="pin")
        assert store.reads.position("production").files == {"greet.md": 1}  # type: ignore[union-attr]
        # The move changed the rollout's prompt: the rollout ended with it, recorded.
        assert store.governance.live_rollouts("production") == []
        assert [e.kind for e in store.governance.rollout_events("production")] == ["superseded", "start"]
        # A label that is not protected needs no more than the writer has; a label that does not exist either.
        store.label("greet", 2, "staging", author="w", guard=writer)
        with pytest.raises(StoreConflict):
            store.rollback("nowhere", author="w", guard=writer)


def test_every_move_records_who_when_from_which_position_and_why(store_url: str, tmp_path: Path) -> None:
    folder = two_versions(tmp_path, store_url)
    pd("label", "greet@2", "production", "--store", store_url, "-m", "ship it", "--author", "cy")
    pd("rollback", "production", "--store", store_url, "-m", "too chatty", "--author", "di")
    (folder / "other.md").write_text("Other.\n")
    pd("publish", str(folder), "--store", store_url, "--label", "production", "-m", "add other", "--author", "ed")
    with Store(store_url) as store:
        moves = store.governance.moves("production")
        assert [(m.author, m.reason, m.message) for m in moves] == [
            ("ed", "publish 3", "add other"), ("di", f"rollback to position {moves[3].position}", "too chatty"),
            ("cy", "label greet@2", "ship it"), ("ana", "publish 1", "first")]
        assert [m.previous for m in moves] == [moves[1].position, moves[2].position, moves[3].position, None]
        assert store.governance.changes_between(moves[1].previous, moves[1].position) == {"greet.md": (2, 1)}
        assert store.governance.changes_between(moves[0].previous, moves[0].position) == {"greet.md": (1, 2),
                                                                                "other.md": (None, 1)}
        assert moves[0].created >= moves[1].created >= moves[2].created
    lines = pd("history", "--store", store_url, "--label", "production").stdout.splitlines()
    assert [line.split("  ")[1] for line in lines] == ["ed", "di", "cy", "ana"]
    assert lines[1].endswith("too chatty  [greet.md v2->v1]")
    assert "[greet.md v1->v2, other.md +v1]" in lines[0]
    refused = pd("history", "greet", "--store", store_url, "--label", "production", check=False)
    assert refused.returncode == 2 and "not both" in refused.stderr
    assert pd("history", "--store", store_url, "--label", "nowhere", check=False).returncode == 1


def test_store_upgrade_from_schema_4_keeps_the_moves_and_adds_governance(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    two_versions(tmp_path, url)
    pd("label", "greet@2", "production", "--store", url)
    with sqlite3.connect(tmp_path / "s.db") as conn:
        as_schema_4(conn)
    refused = pd("protect", "production", "--scope", "x", "--store", url, check=False)
    assert refused.returncode == 1 and "has schema 4: run `promptdeck store upgrade" in refused.stderr
    assert f"upgraded the store from schema 4 to {SCHEMA_VERSION}" in pd("store", "upgrade", url).stdout
    with Store(url) as store:
        moves = store.governance.moves("production")
        # Moves recorded before schema 5 have no reason in words; where they came from is the label's move before.
        assert [(m.message, m.previous) for m in moves] == [("", moves[1].position), ("", None)]
    pd("protect", "production", "--scope", "x", "--store", url)
    pd("rollout", "production", "greet@1", "--percent", "5", "--store", url)


def test_postgresql_roles_restrict_what_the_command_line_may_change(postgres: str, tmp_path: Path) -> None:
    """The GRANTs docs/store.md#governance shows: a CI role publishes versions but moves no label and protects
    none; the servers' role serves, moves labels for /api/store, but never changes a protection."""
    import psycopg

    url = new_database(postgres)
    folder = two_versions(tmp_path, url)
    pd("label", "greet@2", "production", "--store", url)  # the owner's move: a rollback has somewhere to go
    docs = (Path(__file__).parents[3] / "docs" / "store.md").read_text()
    grants = docs.split("```sql\n", 1)[1].split("```", 1)[0]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(grants.replace("PASSWORD 'change me'", ""))  # the cluster trusts 127.0.0.1
    ci, server = (url.replace("promptdeck@", f"{role}@") for role in ("promptdeck_ci", "promptdeck_server"))
    (folder / "greet.md").write_text(GREET.format("Hey"))
    assert "publish 3: 1 file changed" in pd("publish", str(folder), "--store", ci).stdout
    for args in (("label", "greet@3", "production"), ("protect", "production", "--scope", "x"),
                 ("rollback", "production"), ("rollout", "production", "greet@3", "--percent", "5")):
        refused = pd(*args, "--store", ci, check=False)
        assert refused.returncode == 1 and "permission denied" in refused.stderr, (args, refused.stderr)
    pd("label", "greet@3", "staging", "--store", server)
    pd("rollout", "staging", "greet@1", "--percent", "5", "--store", server)
    for args in (("protect", "production", "--scope", "x"), ("unprotect", "production")):
        refused = pd(*args, "--store", server, check=False)
        assert refused.returncode == 1 and ("permission denied" in refused.stderr or "not protected" in refused.stderr)
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM positions WHERE label = 'production'").fetchone() == (2,)
        assert conn.execute("SELECT count(*) FROM protected_labels").fetchone() == (0,)
    shutil.rmtree(folder)


TESTED = ("---\narguments:\n  - name: who\ntests:\n  - description: greets by name\n    vars: {{who: Ada}}\n"
          "    assert:\n      - {{type: contains, value: Hello Ada}}\n---\n{} {{{{ who }}}}!\n")


def test_a_label_that_requires_tests_refuses_a_move_to_failing_ones_from_anywhere(store_url: str,
                                                                                  tmp_path: Path) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "greet.md").write_text(TESTED.format("Hello"))
    pd("publish", str(folder), "--store", store_url, "--label", "production")
    (folder / "greet.md").write_text(TESTED.format("Hi"))  # version 2: its test fails
    pd("publish", str(folder), "--store", store_url, "--skip-tests")
    (folder / "greet.md").write_text(TESTED.format("Hello there, and Hello"))  # version 3: it passes
    pd("publish", str(folder), "--store", store_url)
    pd("rollout", "production", "greet@2", "--percent", "10", "--store", store_url)  # before the protection
    said = pd("protect", "production", "--scope", "release", "--require-tests", "--store", store_url).stdout
    assert "every move of it, from here too, needs the prompt tests to pass" in said
    with Store(store_url) as store:
        protection = store.governance.protection("production")
        assert protection is not None and protection.require_tests
        where = store.reads.position_id("production")
    refused = pd("label", "greet@2", "production", "--store", store_url, check=False)
    assert refused.returncode == 1
    assert "label 'production' requires passing tests, and 0 of 1 test case passed in 1 prompt; 1 failed" in \
        refused.stderr and "greets by name" in refused.stderr and "nothing changed" in refused.stderr
    # A rollout's share serves the version too: neither raised nor promoted (tests/attack/test_release_gate.py).
    raised = pd("rollout", "production", "greet@2", "--percent", "100", "--store", store_url, check=False)
    assert raised.returncode == 1 and "requires passing tests" in raised.stderr
    promoted = pd("rollout", "production", "greet", "--promote", "--store", store_url, check=False)
    assert promoted.returncode == 1 and "requires passing tests" in promoted.stderr
    with Store(store_url) as store:
        assert store.reads.position_id("production") == where
        # the refused promotion ended nothing, and the refused share changed nothing
        assert [(r.version, r.basis_points) for r in store.governance.live_rollouts("production")] == [(2, 1000)]
    pd("rollout", "production", "greet", "--abort", "--store", store_url)
    pd("label", "greet@3", "production", "--store", store_url)
    assert "back at position" in pd("rollback", "production", "--store", store_url).stdout  # version 1 passes
    pd("label", "greet@2", "staging", "--store", store_url)  # another label requires nothing


def test_kill_9_while_a_move_runs_its_required_tests_leaves_the_label_where_it_was(store_url: str,
                                                                                   tmp_path: Path) -> None:
    """A move holds its transaction while the tests it requires run (here for seconds: 200 slow cases); a
    mover killed meanwhile leaves no position, and the next writer gets the lock."""
    import signal
    import subprocess
    import sys
    import time

    cases = "".join(f"  - vars: {{who: w{n}}}\n    assert:\n      - {{type: contains, value: w{n}}}\n"
                    for n in range(200))
    slow = (f"---\narguments:\n  - name: who\ntests:\n{cases}---\n"
            "{% for i in range(40000) %}{{ i % 7 }}{% endfor %} {{ who }} WORD\n")
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "slow.md").write_text(slow.replace("WORD", "one"))
    pd("publish", str(folder), "--store", store_url, "--label", "production", "--skip-tests")
    (folder / "slow.md").write_text(slow.replace("WORD", "two"))
    pd("publish", str(folder), "--store", store_url, "--skip-tests")
    pd("protect", "production", "--scope", "release", "--require-tests", "--store", store_url)
    with Store(store_url) as store:
        where = store.reads.position_id("production")
    mover = subprocess.Popen([sys.executable, "-m", "promptdeck", "label", "slow@2", "production", "--store",
                              store_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.5)
    assert mover.poll() is None, mover.communicate()  # still testing
    mover.send_signal(signal.SIGKILL)
    mover.wait(30)
    assert mover.stdout is not None and mover.stderr is not None
    mover.stdout.close()
    mover.stderr.close()
    with Store(store_url) as store:
        assert store.reads.position_id("production") == where
        assert len(store.governance.moves("production")) == 1
        store.label("slow", 2, "staging", author="next")  # the lock is free: another label moves at once
        assert store.reads.position("staging").files == {"slow.md": 2}  # type: ignore[union-attr]
