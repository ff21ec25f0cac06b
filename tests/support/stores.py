"""The two databases a store test runs against (``store_url``): SQLite, and a throwaway PostgreSQL cluster from the
Debian package with a fresh database per test. Shared through tests/conftest.py.

The cluster is started once per test process (``postgres_cluster``; each xdist worker has its own), since
starting one takes seconds; a module that asks for ``postgres`` gets a fresh, empty database of its own in it,
so modules stay as separate as they were with a cluster each (LISTEN/NOTIFY channels are per database too).
A test that stops its cluster starts its own (tests/support/postgres.py, ``running_cluster``)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from promptdeck.sources.files.source import FileSource
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.folder import read_library
from promptdeck.sources.store.model import listing_of
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


def publish_texts(store: Store, label: str | None, files: dict[str, str], *, author: str = "ana",
                  message: str = "") -> tuple[int | None, list[str]]:
    """What ``promptdeck publish --skip-tests`` records of a library of ``files`` (path -> text): the files with
    their prompts' listings. Its publish number (None: nothing changed) and the paths that changed."""
    with tempfile.TemporaryDirectory() as folder:
        for path, text in files.items():
            (Path(folder) / path).parent.mkdir(parents=True, exist_ok=True)
            (Path(folder) / path).write_text(text)
        source = FileSource(folder)
        source.load()
        listed = {prompt.source: listing_of(prompt) for prompt in source.prompts()}
        return store.publish(read_library(folder), listed, author=author, message=message, label=label)
