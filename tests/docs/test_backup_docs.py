"""docs/store.md's backup and restore runbook, run as written: the SQLite commands on a store with a webhook,
and the PostgreSQL ones (pg_dump, psql, pg_restore, then promptdeck) against a real cluster, its URLs made the
test cluster's."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import psycopg

from promptdeck.sources.store import webhooks
from promptdeck.sources.store.database import Store
from tests.support.paths import REPO
from tests.support.postgres import new_database

SECTION = (REPO / "docs" / "store.md").read_text().split("\n## Backup and restore\n", 1)[1].split("\n## ", 1)[0]
SECRET = "whsec_a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s="


def bash(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def reader_folder(tmp_path: Path) -> None:
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "promptdeck").symlink_to(Path(sys.executable).parent / "promptdeck")


def store_with_a_webhook(url: str, cwd: Path) -> None:
    done = bash(f"cp -r {REPO}/examples/prompts my-prompts && .venv/bin/promptdeck publish my-prompts "
                f"--store {url} --label production -m 'first cut'", cwd)
    assert done.returncode == 0, done.stderr
    with Store(url if url.startswith("postgresql") else str(cwd / url)) as store:
        webhooks.add(store.db, "https://example.com/hook", SECRET, [], scopes=[], allow=[], timeout=1, author="ops")


def test_the_sqlite_runbook_runs_as_written(tmp_path: Path) -> None:
    sqlite, _ = re.findall(r"```sh\n(.*?)```", SECTION, re.S)
    reader_folder(tmp_path)
    store_with_a_webhook("prompts.db", tmp_path)
    lines = sqlite.splitlines()
    listed = next(i for i, line in enumerate(lines) if "webhook list" in line)
    before = bash("\n".join(lines[:listed + 1]), tmp_path)
    assert before.returncode == 0, before.stderr
    assert "backed up the store" in before.stdout and "paused: this store is a copy" in before.stdout
    after = bash("\n".join(lines[:1] + lines[listed + 1:]) + "\n$P webhook list --store restored.db", tmp_path)
    assert after.returncode == 0, after.stderr
    assert "webhook 1 delivers from this store" in after.stdout and "paused" not in after.stdout.splitlines()[-1]
    again = bash("\n".join(lines[:1] + [lines[2]]), tmp_path)  # restore once more: refused, without --force
    assert again.returncode == 1 and "--force" in again.stderr


def test_the_postgresql_runbook_runs_as_written_against_a_real_cluster(tmp_path: Path, postgres: str) -> None:
    _, commands = re.findall(r"```sh\n(.*?)```", SECTION, re.S)
    reader_folder(tmp_path)
    original = new_database(postgres)
    store_with_a_webhook(original, tmp_path)
    name = f"{original.rsplit('/', 1)[1]}_restored"
    copy = original.rsplit("/", 1)[0] + "/" + name
    script = (commands.replace("postgresql://ops@db.internal/prompts_restored", copy)
              .replace("postgresql://ops@db.internal/prompts", original).replace("prompts_restored", name))
    assert script.count(original) == 2 and copy in script
    done = bash(script, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "paused: this store is a copy" in done.stdout and "webhook 1 delivers from this store" in done.stdout
    with Store(copy) as restored, Store(original) as source:
        assert restored.reads.history("summarize") == source.reads.history("summarize")
        assert [hook.paused for hook in webhooks.listed(restored.db)] == [None]
    # Restoring again into the database that now holds the store: refused by pg_restore, nothing changed.
    restore = next(line for line in script.splitlines() if line.startswith("pg_restore"))
    refused = bash(script.split("\n", 2)[0] + "\n" + script.split("\n", 2)[1] + "\n" + restore, tmp_path)
    assert refused.returncode != 0 and "already exists" in refused.stderr
    with psycopg.connect(copy) as conn:
        assert conn.execute("SELECT count(*) FROM webhooks").fetchone() == (1,)
