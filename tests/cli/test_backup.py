"""``promptdeck store backup`` and ``store restore`` (``cli.backup``), as a user runs them: what each says, and
that a PostgreSQL URL gets the exact command to run, nothing done, exit 1, no password shown. A store served by
a real ``serve --store`` process is backed up meanwhile."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from promptdeck.sources.store.database import Store
from promptdeck.sources.store.schema import SCHEMA_VERSION
from tests.support.store_schema import promptdeck_in_process
from tests.support.stores import publish_texts


def test_backup_and_restore_say_what_they_did(tmp_path: Path) -> None:
    store = str(tmp_path / "prompts.db")
    with Store(store, create=True) as opened:
        publish_texts(opened, "production", {"greet.md": "---\ndescription: Hi\n---\nHello\n"})
    code, out, err = promptdeck_in_process("store", "backup", store, str(tmp_path / "b.db"))
    assert (code, out.strip()) == (0, f"backed up the store (schema {SCHEMA_VERSION}) to {tmp_path / 'b.db'}"), err
    code, out, err = promptdeck_in_process("store", "restore", str(tmp_path / "b.db"), store, "--force")
    assert code == 0 and "its webhooks are paused" in out and "webhook resume ID" in out, err


def test_a_postgresql_url_gets_the_command_to_run_and_nothing_is_done(tmp_path: Path) -> None:
    code, out, err = promptdeck_in_process("store", "restore", "p.dump", "postgresql://ops:pw@db/copy")
    assert code == 1 and out == "" and "nothing was done" in err and ":pw@" not in err
    assert "pg_restore --no-owner --no-privileges --exit-on-error --single-transaction " \
           "--dbname='postgresql://ops:***@db/copy' p.dump" in err
    assert list(tmp_path.iterdir()) == []


def test_a_store_a_server_is_serving_is_backed_up(tmp_path: Path) -> None:
    store = str(tmp_path / "prompts.db")
    with Store(store, create=True) as opened:
        publish_texts(opened, "production", {"greet.md": "---\ndescription: Hi\n---\nHello\n"})
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    with subprocess.Popen([sys.executable, "-m", "promptdeck", "serve", "--store", store, "--label", "production"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as served:
        assert served.stdin is not None and served.stdout is not None
        served.stdin.write(json.dumps(hello) + "\n")
        served.stdin.flush()
        assert json.loads(served.stdout.readline())["id"] == 1  # serving, the store open
        with Store(store) as opened:  # a publish while it serves
            publish_texts(opened, "production", {"greet.md": "---\ndescription: Hi\n---\nHello again\n"})
        code, _, err = promptdeck_in_process("store", "backup", store, str(tmp_path / "b.db"))
        served.communicate(timeout=60)
    assert code == 0, err
    with Store(str(tmp_path / "b.db")) as copy:
        assert sorted(v.version for v in copy.reads.history("greet")) == [1, 2]
