"""Several MCP endpoints on one HTTP port, one per label of a store.

``serve --store URL --label production --label staging --http PORT`` serves
``production`` on ``/mcp`` and ``staging`` on ``/mcp/staging``, so a client's
configuration names an environment by its URL. Each endpoint is a whole
``StreamableHttpApp`` over its own ``PromptServer``: sessions, subscriptions
and list_changed belong to one label, and a session id from one endpoint is
unknown (404) at another.

The first endpoint is the default: ``/healthz``, ``/metrics``, the OAuth
metadata, the web UI and the 2024-11-05 ``/sse`` transport are its, and any path that is
no endpoint reaches it and gets its 404. Authentication, Host and Origin rules
are the same on every endpoint. The stream cap (GET, ``/sse`` and
``subscriptions/listen`` streams, in total and per principal) is one budget
shared by all endpoints; the session cap applies per endpoint.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..asgi import Receive, Scope, Send
from .app import StreamableHttpApp, create_app

if TYPE_CHECKING:
    from ..app import PromptServer


class Endpoints:
    """An ASGI app routing by exact path to one ``StreamableHttpApp`` per endpoint."""

    def __init__(self, apps: Mapping[str, StreamableHttpApp]) -> None:
        if not apps:
            raise ValueError("Endpoints needs at least one endpoint")
        self.apps = dict(apps)
        self.default = next(iter(self.apps.values()))

    @classmethod
    def create(cls, servers: Mapping[str, PromptServer], **options: Any) -> Endpoints:
        """One app per ``path -> server``, all with the same ``options`` (``create_app``'s); the first is the
        default, and the others share its stream quota."""
        apps: dict[str, StreamableHttpApp] = {}
        for number, (path, server) in enumerate(servers.items()):
            # Only the default endpoint speaks 2024-11-05 HTTP+SSE (its /sse and /messages paths are fixed) and
            # serves the web UI, which talks to it.
            settings = {**options, "legacy_sse": False, "ui": False} if number else options
            streams = next(iter(apps.values())).table.streams if apps else None
            apps[path] = create_app(server, path=path, streams=streams, **settings)
        return cls(apps)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        await self.apps.get(scope.get("path", ""), self.default)(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                for app in self.apps.values():
                    app.startup()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await asyncio.gather(*(app.shutdown() for app in self.apps.values()))
                await send({"type": "lifespan.shutdown.complete"})
                return

    def end_streams(self) -> None:
        """See ``StreamableHttpApp.end_streams``: called by ``runner`` when shutdown begins."""
        for app in self.apps.values():
            app.end_streams()
