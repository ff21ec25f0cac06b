"""A store's secrets (issue 28, items 10 and 11): the PostgreSQL password, in every form a libpq URL or its
environment carries it, reaches no answer, error or log line, even during an outage; a SQLite store and its
-wal and -shm are the owner's alone. Real processes, a real cluster that is stopped under a live server."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.http_server import free_port, http_server
from tests.support.libraries import EXAMPLES
from tests.support.postgres import Cluster, new_database, running_cluster

PASSWORD = "Hunter2-s3cret"
#: What libpq reads when the URL has no password; it must never be echoed either.
ENV_PASSWORD = "env-Pgpass-s3cret"
TOKEN = "reader-token-0123456789"


@pytest.fixture(scope="module")
def postgres() -> Iterator[Cluster]:
    with running_cluster() as running:
        yield running


def promptdeck(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


def secret_forms(database: str) -> list[str]:
    """The database's URL with the password in each form libpq takes (the cluster trusts any password)."""
    user_host, name = database.removeprefix("postgresql://").rsplit("/", 1)
    user, host = user_host.split("@")
    return [f"postgresql://{user}:{PASSWORD}@{host}/{name}",
            f"postgresql://{user}@{host}/{name}?sslmode=disable&password={PASSWORD}",
            # libpq decodes parameter names too: this is a password parameter for it.
            f"postgres://{user}@{host}/{name}?pass%77ord={PASSWORD}"]


def assert_hidden(text: str, where: str) -> None:
    for secret in (PASSWORD, ENV_PASSWORD, PASSWORD.replace("-", "%2D")):
        assert secret not in text, f"{where} shows a password: {text}"


def test_readers_and_the_log_see_no_password_while_the_store_is_down(postgres: Cluster, tmp_path: Path) -> None:
    database = new_database(postgres.url)
    library = tmp_path / "lib"
    shutil.copytree(EXAMPLES, library)
    published = promptdeck("publish", str(library), "--store", secret_forms(database)[0], "--label", "production")
    assert published.returncode == 0, published.stderr
    tokens = tmp_path / "tokens"
    tokens.write_text(f"reader:{TOKEN}\n")
    env = {"PGPASSWORD": ENV_PASSWORD}
    os.environ.update(env)  # the servers started below inherit it
    try:
        for number, url in enumerate([*secret_forms(database), database]):  # the last: $PGPASSWORD alone
            log = tmp_path / f"serve-{number}.log"
            with http_server("", "--store", url, "--token-file", str(tokens), log=log) as endpoint:
                base = endpoint.removesuffix("/mcp")
                headers = {"authorization": f"Bearer {TOKEN}"}
                assert httpx.get(f"{base}/api/store", headers=headers, timeout=30).status_code == 200
                postgres.stop()
                try:
                    down = httpx.get(f"{base}/api/store", headers=headers, timeout=60)
                    # Exactly this, and nothing about hosts, drivers or URLs: those are the operator's.
                    assert down.status_code == 503 and down.json() == {"error": "store unavailable"}, down.text
                    assert_hidden(down.text, "the 503")
                    # The label's follower notices the outage too, and says so in the log.
                    deadline = time.monotonic() + 30
                    while "is not reachable" not in log.read_text() and time.monotonic() < deadline:
                        time.sleep(0.2)
                    cli = promptdeck("history", "--store", url)
                    assert cli.returncode == 1 and "cannot reach the store postgres" in cli.stderr, cli.stderr
                    assert_hidden(cli.stderr, "promptdeck history")
                finally:
                    postgres.start()
            logged = log.read_text()
            assert "store call failed" in logged and "is not reachable" in logged, logged
            assert_hidden(logged, "the server log")
            if url != database:
                assert "***" in logged and "***" in cli.stderr, (logged, cli.stderr)
    finally:
        for name in env:
            os.environ.pop(name, None)


@pytest.mark.parametrize("url", [
    f"postgresql://ana:{PASSWORD}%zz@127.0.0.1:{free_port()}/prompts",  # libpq quotes what it cannot decode
    f"postgresql://ana@127.0.0.1:{free_port()}/prompts?password={PASSWORD}%zz",
    f"postgress://ana:{PASSWORD}@127.0.0.1:{free_port()}/prompts",  # a mistyped scheme is taken for a path
    f"postgresql://ana@127.0.0.1:{free_port()}/prompts?Password={PASSWORD}",  # libpq's names are lower-case
    f"sqlite:postgresql://ana:{PASSWORD}@127.0.0.1/prompts",
], ids=["userinfo-undecodable", "query-undecodable", "mistyped-scheme", "query-capitalized", "sqlite-of-url"])
def test_a_malformed_url_is_refused_without_its_password(url: str, tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "lib")
    for args in (("history", "--store", url), ("serve", "--store", url),
                 ("publish", str(tmp_path / "lib"), "--store", url)):
        done = promptdeck(*args, env={"PGPASSWORD": ENV_PASSWORD})
        assert done.returncode == 1 and done.stderr.startswith("promptdeck: "), done.stderr
        assert_hidden(done.stderr, " ".join(args[:1]))


@pytest.mark.parametrize("umask", [0o022, 0o000], ids=["umask-022", "umask-000"])
def test_a_sqlite_store_and_its_wal_and_shm_are_the_owners_alone(umask: int, tmp_path: Path) -> None:
    library = tmp_path / "lib"
    shutil.copytree(EXAMPLES, library)
    path = tmp_path / "prompts.db"
    done = subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(library), "--store", str(path),
                           "--label", "production"], capture_output=True, text=True, timeout=120, umask=umask)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # A server keeps the store open, with its -wal and -shm beside it.
    script = ("import sys, time; from promptdeck.sources.store.database import Store; "
              "s = Store(sys.argv[1]); s.reads.labels(); print('open', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE, text=True,
                              umask=umask)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            assert stat.S_IMODE(name.stat().st_mode) == 0o600, name
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


def test_opening_a_store_others_can_read_warns_once_with_the_fix(tmp_path: Path) -> None:
    library = tmp_path / "lib"
    shutil.copytree(EXAMPLES, library)
    path = tmp_path / "prompts.db"
    assert promptdeck("publish", str(library), "--store", str(path), "--label", "production").returncode == 0
    quiet = promptdeck("history", "--store", str(path))
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    path.chmod(0o644)  # as an older promptdeck made it, or a copy did
    warned = promptdeck("history", "--store", str(path))
    assert warned.returncode == 0, warned.stderr
    lines = [line for line in warned.stderr.splitlines() if "can be read by other users" in line]
    assert len(lines) == 1 and f"chmod 600 {path}" in lines[0], warned.stderr
    # A server opens its store again and again (loading, following the label): still one warning.
    served = promptdeck("serve", "--store", str(path), "--label", "production")
    assert served.stderr.count("can be read by other users") == 1, served.stderr
