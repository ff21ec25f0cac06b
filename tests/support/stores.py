"""The two databases a store test runs against (``store_url``): SQLite, and a throwaway PostgreSQL cluster from the
Debian package with a fresh database per test. Shared through tests/conftest.py.

The cluster is started once per test process (``postgres_cluster``; each xdist worker has its own), since
starting one takes seconds; a module that asks for ``postgres`` gets a fresh, empty database of its own in it,
so modules stay as separate as they were with a cluster each (LISTEN/NOTIFY channels are per database too).
A test that stops its cluster starts its own (tests/support/postgres.py, ``running_cluster``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.postgres import cluster, new_database


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[str]:
    """The URL of the ``postgres`` database of this process's cluster."""
    with cluster() as url:
        yield url


@pytest.fixture(scope="module")
def postgres(postgres_cluster: str) -> str:
    """The URL of a fresh database for the module, in this process's cluster."""
    return new_database(postgres_cluster)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/prompts.db"
    return new_database(request.getfixturevalue("postgres"))
