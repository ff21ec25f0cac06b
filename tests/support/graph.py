"""The prompt page's parts graph as its tests reach it: a composed library with a prompt only hr may see, served
with two principals by a real ``promptdeck serve --http`` (one per module), and ``/api/graph`` asked as either."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.http_server import http_server
from tests.support.libraries import composed_library

ALICE = "alice-token-0123456789"  # holds hr
BOB = "bob-token-0123456789"  # holds nothing
#: a prompt only hr may see, including a partial nobody else uses and composing rules
SECRET = "---\nscopes: [hr]\n---\n{% include \"_hr/pay.md\" %}\n{{ prompt(\"rules\", tone=\"kind\") }}\n"


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = composed_library(tmp_path_factory.mktemp("graph") / "library")
    (root / "payroll.md").write_text(SECRET)
    (root / "_hr").mkdir()
    (root / "_hr/pay.md").write_text("Salaries are private.\n")
    tokens = root.parent / "tokens"
    tokens.write_text(f"alice:{ALICE} hr\nbob:{BOB}\n")
    with http_server(str(root), "--no-watch", "--token-file", str(tokens)) as url:
        yield url


def graph(endpoint: str, prompt: str, token: str) -> tuple[int, dict[str, Any]]:
    url = endpoint.removesuffix("mcp") + "api/graph?prompt=" + prompt
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())
