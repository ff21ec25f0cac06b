"""A throwaway PostgreSQL cluster from the Debian package, started for the tests and removed after.

``initdb`` and ``pg_ctl`` come from ``/usr/lib/postgresql/<version>/bin``; as root the cluster runs as
the ``postgres`` user (PostgreSQL refuses to run as root). It listens on 127.0.0.1 at a free port, with
trust authentication for the one user it is made with.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count

from tests.support.http_server import free_port

USER = "promptdeck"
_databases = count(1)


def binaries() -> str | None:
    """The newest installed PostgreSQL's bin folder, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return os.path.dirname(found[-1]) if found else None


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


class Cluster:
    """A running throwaway cluster that a test may stop and start again (a store that goes away)."""

    def __init__(self, bin_dir: str, folder: str, port: int) -> None:
        self.bin_dir, self.folder, self.port = bin_dir, folder, port
        self.data = os.path.join(folder, "data")
        self.url = f"postgresql://{USER}@127.0.0.1:{port}/postgres"

    def start(self) -> None:
        subprocess.run(_as_postgres([f"{self.bin_dir}/pg_ctl", "-D", self.data, "-l", f"{self.folder}/log", "-w",
                                     "-t", "60", "-o", f"-k {self.folder} -h 127.0.0.1 -p {self.port} -c fsync=off",
                                     "start"]), check=True, capture_output=True, timeout=120)

    def stop(self) -> None:
        subprocess.run(_as_postgres([f"{self.bin_dir}/pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop"]),
                       capture_output=True, timeout=120)


@contextmanager
def running_cluster() -> Iterator[Cluster]:
    """A running cluster, removed afterwards."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed (the Debian package postgresql); .ci/run installs it")
    folder = tempfile.mkdtemp(prefix="promptdeck-pg-")
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    running = Cluster(bin_dir, folder, free_port())
    try:
        subprocess.run(_as_postgres([f"{bin_dir}/initdb", "-D", running.data, "-A", "trust", "-U", USER, "-E",
                                     "UTF8", "--no-sync"]), check=True, capture_output=True, timeout=120)
        running.start()
        yield running
    finally:
        running.stop()
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def cluster() -> Iterator[str]:
    """A running cluster: yields the URL of its ``postgres`` database."""
    with running_cluster() as running:
        yield running.url


def new_database(url: str) -> str:
    """A fresh, empty database in the cluster at ``url``: its URL."""
    import psycopg

    name = f"t{os.getpid()}_{next(_databases)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return url.rsplit("/", 1)[0] + "/" + name
