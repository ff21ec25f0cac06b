from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.libraries import write_prompts
from tests.support.schema import schema_available, schema_missing_reason
from tests.support.traffic import validate_traffic


@pytest.fixture
def log(tmp_path: Path, revision: str) -> Iterator[Path]:
    """Where a test's SDK session records every server message; afterwards each is checked against the
    official JSON schema of ``revision`` (a fixture of each module: the revisions its transport speaks)."""
    path = tmp_path / "traffic.log"
    yield path
    if not schema_available(revision):
        pytest.skip(schema_missing_reason(revision))
    assert validate_traffic(path, revision) > 0


@pytest.fixture(scope="session")
def big_library(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("big-library")
    return root, write_prompts(root, 1050)
