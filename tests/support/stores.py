"""The two databases a store test runs against (``store_url``): SQLite, and a throwaway PostgreSQL cluster (one per
test module that asks, from the Debian package: ``postgres``) with a fresh database per test. Shared through
tests/conftest.py."""

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


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    with cluster() as url:
        yield url


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
