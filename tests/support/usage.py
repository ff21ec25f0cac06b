"""Renders counted over real HTTP, for the usage tests: a modern ``prompts/get`` naming its client, and waiting
for ``/api/store/usage`` to show what the server's writer flushed (every ``FLUSH_SECONDS``); a folder served
with two principals for ``/api/usage`` (``server/web/usage_api.py``) and the page's usage panel."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.support import modern
from tests.support.http_server import http_server

CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"


def render_as(base: str, headers: dict[str, str], name: str, client: object,
              arguments: dict[str, str] | None = None, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """A 2026-07-28 ``prompts/get`` whose ``_meta`` names ``client`` as its ``clientInfo.name`` (and holds
    ``meta``: a rollout key, say)."""
    message = modern.request(1, "prompts/get", {"name": name, **({"arguments": arguments} if arguments else {})},
                             meta={CLIENT_INFO_KEY: {"name": client, "version": "1"}, **(meta or {})})
    with httpx.Client(timeout=30, headers=headers) as http:
        response = http.post(f"{base}/mcp", json=message, headers=modern.headers_for(message))
    answer: dict[str, Any] = modern.answers(response)[-1]
    return answer


def usage(base: str, headers: dict[str, str], route: str = "/api/store/usage", **params: str) -> httpx.Response:
    return httpx.get(f"{base}{route}", headers=headers, params=params, timeout=30)


def wait_for_usage(base: str, headers: dict[str, str], done: Callable[[dict[str, Any]], bool],
                   timeout: float = 90, route: str = "/api/store/usage") -> dict[str, Any]:
    """``route`` once ``done`` holds of it (the writer flushes on its own schedule)."""
    deadline = time.monotonic() + timeout
    while True:
        answer = usage(base, headers, route)
        assert answer.status_code == 200, answer.text
        shown: dict[str, Any] = answer.json()
        if done(shown) or time.monotonic() > deadline:
            return shown
        time.sleep(0.5)


def totals(shown: dict[str, Any]) -> dict[str, int]:
    return {entry["prompt"]: entry["renders"] for entry in shown["prompts"]}


class Served:
    """A prompt as a catalog serves it, as far as usage reads it (``usage.Counted``): hashed by identity."""

    def __init__(self, name: str, version: int = 0, label: str = "") -> None:
        self.name = name
        self.meta: dict[str, Any] = \
            {"promptdeck.dev/version": version, "promptdeck.dev/label": label} if version else {}


#: A folder's principals: alice holds hr, bob holds nothing
ALICE_TOKEN, BOB_TOKEN = "alice-usage-token-0123456789", "bob-usage-token-0123456789"
ALICE_AUTH, BOB_AUTH = {"authorization": f"Bearer {ALICE_TOKEN}"}, {"authorization": f"Bearer {BOB_TOKEN}"}
#: greet and payroll (hr only) are rendered by the tests; quiet never is
FOLDER = {
    "greet.md": "---\ndescription: Say hello\narguments:\n  - name: who\n---\nHello {{ who }}!\n",
    "payroll.md": "---\nscopes: [hr]\ndescription: Salaries\n---\nSalaries are private.\n",
    "quiet.md": "---\ndescription: Nobody asks for it\n---\nShh.\n",
}


@contextmanager
def folder_server(root: Path) -> Iterator[str]:
    """``serve --http`` over ``FOLDER`` written to ``root``, with alice and bob: its base URL (no /mcp)."""
    library = root / "library"
    library.mkdir()
    for name, text in FOLDER.items():
        (library / name).write_text(text)
    tokens = root / "tokens"
    tokens.write_text(f"alice:{ALICE_TOKEN} hr\nbob:{BOB_TOKEN}\n")
    with http_server(str(library), "--no-watch", "--token-file", str(tokens)) as endpoint:
        yield endpoint.removesuffix("/mcp")
