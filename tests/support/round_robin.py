"""A load balancer without stickiness, for tests: each HTTP request goes to the next replica in turn.

Per request, not per connection: a client that keeps one connection alive (the SDK's does) still has its
requests spread over every replica, as a balancer without session affinity would. Response bodies are
passed on as they come, so an SSE stream stays a stream. It runs on its own event loop in a thread, and
records which replica answered each request (``served``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import aiohttp
from aiohttp import web

from tests.support.http_server import free_port

#: Headers a proxy does not pass on (RFC 9110's hop-by-hop ones, and what aiohttp sets itself).
_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
                  "proxy-authorization", "proxy-authenticate", "content-length", "host"})


class RoundRobin:
    """The proxy: ``url`` is its MCP endpoint; ``served`` lists (method, replica index) per request."""

    def __init__(self, backends: list[str]) -> None:
        self.backends = backends  # each replica's origin, http://127.0.0.1:PORT
        self.served: list[tuple[str, int]] = []
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._next = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _pick(self) -> int:
        index = self._next % len(self.backends)
        self._next += 1
        return index

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        index = self._pick()
        self.served.append((request.method, index))
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        body = await request.read()
        assert self._session is not None
        try:
            upstream = await self._session.request(request.method, self.backends[index] + request.path_qs,
                                                   headers=headers, data=body or None)
        except aiohttp.ClientError:
            return web.Response(status=502, text="replica unreachable")
        response = web.StreamResponse(status=upstream.status, headers={
            k: v for k, v in upstream.headers.items() if k.lower() not in _HOP})
        await response.prepare(request)
        try:
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
        except (aiohttp.ClientError, ConnectionResetError):
            pass  # the replica went away mid-stream: the client sees its stream end
        finally:
            upstream.release()
        return response

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        self._session: aiohttp.ClientSession | None = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=10))
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._forward)
        runner = web.AppRunner(app, shutdown_timeout=1)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", self.port).start()
        self._ready.set()
        await self._stop.wait()
        await runner.cleanup()
        await self._session.close()

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(30), "the proxy did not start"

    def close(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
        self._loop.close()


@contextmanager
def round_robin(endpoints: list[str]) -> Iterator[RoundRobin]:
    """A ``RoundRobin`` in front of the MCP endpoints ``endpoints`` (their origins are taken), until exit."""
    proxy = RoundRobin([endpoint.removesuffix("/mcp") for endpoint in endpoints])
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.close()
