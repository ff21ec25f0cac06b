"""Renders counted over real HTTP, for the usage tests: a modern ``prompts/get`` naming its client, and waiting
for ``/api/store/usage`` to show what the server's writer flushed (every ``FLUSH_SECONDS``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from tests.support import modern

CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"


def render_as(base: str, headers: dict[str, str], name: str, client: object,
              arguments: dict[str, str] | None = None) -> dict[str, Any]:
    """A 2026-07-28 ``prompts/get`` whose ``_meta`` names ``client`` as its ``clientInfo.name``."""
    message = modern.request(1, "prompts/get", {"name": name, **({"arguments": arguments} if arguments else {})},
                             meta={CLIENT_INFO_KEY: {"name": client, "version": "1"}})
    with httpx.Client(timeout=30, headers=headers) as http:
        response = http.post(f"{base}/mcp", json=message, headers=modern.headers_for(message))
    answer: dict[str, Any] = modern.answers(response)[-1]
    return answer


def usage(base: str, headers: dict[str, str], **params: str) -> httpx.Response:
    return httpx.get(f"{base}/api/store/usage", headers=headers, params=params, timeout=30)


def wait_for_usage(base: str, headers: dict[str, str], done: Callable[[dict[str, Any]], bool],
                   timeout: float = 90) -> dict[str, Any]:
    """``/api/store/usage`` once ``done`` holds of it (the writer flushes on its own schedule)."""
    deadline = time.monotonic() + timeout
    while True:
        answer = usage(base, headers)
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
