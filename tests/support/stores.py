"""The two databases a store test runs against (``store_url``): SQLite, and a throwaway PostgreSQL cluster (one per
test module that asks, from the Debian package: ``postgres``) with a fresh database per test. Shared through
tests/conftest.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.postgres import cluster, new_database


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    with cluster() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/prompts.db"
    return new_database(request.getfixturevalue("postgres"))
