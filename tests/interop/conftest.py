from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.libraries import write_prompts


@pytest.fixture(scope="session")
def big_library(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("big-library")
    return root, write_prompts(root, 1050)
