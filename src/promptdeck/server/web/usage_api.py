"""The web page's view of usage: ``GET /api/usage`` for every server with the page (``serve --http``, a folder
or a store), answered as ``/api/store/usage`` answers (``store_usage``): each prompt's renders since ``since``
(``7d``, ``24h``, ``2w`` or epoch seconds; 30 days by default), hour by hour by version, label, arm and client,
and the last hour it was ever rendered in; ``prompt=NAME`` for one prompt.

Served beside ``/mcp`` when the page is on, behind the same Host/Origin checks, authentication and rate limit
(``StreamableHttpApp`` routes here after them, as ``/api/graph``). A server serving a store answers with
``store_usage.get`` itself, through ``StoreApi._visible``; a folder-served server from the counts it keeps in
memory (``PromptServer.usage``, ``store_usage.kept``), each prompt shown only when the principal's
``Catalog.view`` holds it (``UsageApi._kept``). Either way a prompt hidden from the principal is a 404 as an unknown
one is, and its name is in no answer.

A drain counts the window's renders in the hour it runs, so a folder server drains every ``DRAIN_SECONDS``
(``Usage.keep_hours``, started by ``StreamableHttpApp``) as a store server's writer does: its renders are shown
in the hour they were made, and its window (``MAX_KEYS`` keys) starts again empty before new clients would fold
into ``other``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ...protocol.errors import HttpError
from ...protocol.jsonrpc import encode_json
from ..asgi import Receive, Scope, Send, get_query, respond

if TYPE_CHECKING:
    from ..app import PromptServer
    from ..security.principals import Principal
    from .store_api import StoreApi

PATH = "/api/usage"


class UsageApi:
    """``GET /api/usage`` for ``server`` (see the module docstring); ``store_api`` when it serves a store."""

    def __init__(self, server: PromptServer, store_api: StoreApi | None) -> None:
        self.server = server
        self.store_api = store_api

    @staticmethod
    def serves(path: str) -> bool:
        return path == PATH

    async def __call__(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        query = get_query(scope, PATH)
        if self.store_api is not None:
            from .store_usage import get  # not before a first ask: a folder server need not load the store's

            body = await get(self.store_api, query, principal)
        else:
            body = await self._kept(query, principal)
        await respond(send, 200, encode_json(body), headers=[(b"cache-control", b"no-store"),
                                                             (b"x-content-type-options", b"nosniff")])

    async def _kept(self, query: dict[str, str], principal: Principal) -> dict[str, Any]:
        """A folder-served server's answer, from the counts it keeps in memory, of the prompts in sight."""
        from .store_usage import kept, since_of

        seen = self.server.catalog.view(principal.scopes)  # the one rule: what the principal may see now
        name = query.get("prompt")
        if name is not None and seen.get(name) is None:
            raise HttpError(404, f"no prompt {name[:128]!r}")
        since = since_of(query)

        def answer() -> dict[str, Any]:
            return kept(self.server.usage, since, lambda prompt: seen.get(prompt) is not None, name)

        # A drain folds the window into every hour kept, and a long-running server keeps many: off the loop.
        return await asyncio.to_thread(answer)
