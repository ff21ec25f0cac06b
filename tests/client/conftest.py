from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLES, write_prompts
from tests.support.oauth_fixtures import issuer, protected  # noqa: F401 - the OAuth tests' processes

#: How many prompts the big library holds, and the page size that makes it many pages.
BIG = 5000
PAGE = 7


@pytest.fixture(scope="session")
def big_library(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A library of 5,000 generated prompts (folder, sorted names)."""
    root = tmp_path_factory.mktemp("client-big-library")
    return root, write_prompts(root, BIG)


@pytest.fixture(scope="module")
def examples_http() -> Iterator[str]:
    """``promptdeck serve --http`` (stateful, legacy /sse beside it) on the examples."""
    with http_server(str(EXAMPLES), "--no-watch") as url:
        yield url


@pytest.fixture(scope="module")
def examples_stateless() -> Iterator[str]:
    with http_server(str(EXAMPLES), "--no-watch", "--stateless") as url:
        yield url
