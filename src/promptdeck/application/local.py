"""A folder or a stored label rendered in this process, by the server's own render path.

``LocalLibrary`` holds a ``PromptServer`` that no client talks to: its catalog is the one ``serve`` would
build from the same folder or label, and a render goes through ``prompts/get``'s params (``server.params``) and
``handlers.render`` as a ``prompts/get`` does, so the messages are those ``prompts/get`` gives (at
``REVISION``), checked by ``tests/application/test_same_as_mcp.py``. Nothing goes over the network per
render: a folder is read from disk once and followed by the watcher thread; a label is followed by the
store source itself (PostgreSQL LISTEN/NOTIFY, SQLite ``data_version``), which serves its last good copy
through a database outage as replicas do.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import threading
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from ..prompts.usage import Usage, client_name
from ..protocol.errors import LibraryError
from ..protocol.revisions import LATEST
from ..server import handlers
from ..server.app import PromptServer
from ..server.params import GetPrompt, decode

if TYPE_CHECKING:
    from ..prompts.catalog import Catalog
    from ..prompts.spec import Offered
    from ..server.watch import WatchThread
    from ..sources.store.source import StoreSource

#: The revision renders are shaped for: the newest legacy one, which the official SDK's client speaks too.
REVISION = LATEST


def _ignore(_: bytes) -> None:
    """Where a render's progress notifications would go: nowhere, nobody asked for them."""


def is_store_url(source: str) -> bool:
    """``sqlite:///…``, ``postgresql://…`` (``postgres://``) or a path ending in ``.db``: a store, as ``serve
    --store`` reads it."""
    return source.startswith(("sqlite:", "postgresql:", "postgres:")) or source.endswith(".db")


class LocalLibrary:
    """The prompts of a folder or of a store's label, rendered in-process."""

    def __init__(self, source: str, *, label: str = "production", watch: bool = True,
                 app: str | None = None) -> None:
        self.source = source
        #: the application's name as usage counts its renders (``Prompts(app=...)``)
        self.client = client_name(app)
        self.store = is_store_url(source)
        self.label: str | None = label if self.store else None
        #: the source as renders name it (in traces too): a store URL without its password
        self.shown = source
        self._server = PromptServer("promptdeck-application", skills=False)
        self._watcher: WatchThread | None = None
        self._lock = threading.RLock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: threading.Thread | None = None
        self._stored: StoreSource | None = None
        if self.store:
            from ..sources.store.source import StoreSource
            from ..sources.store.urls import shown_url

            self.shown = shown_url(source)

            # Not ``add_store``: the requestState ledger it opens on PostgreSQL is for 2026-07-28 forms,
            # which an application's renders never send.
            self._stored = StoreSource(source, label, skills=False)
            self._server.add_source(self._stored)
        else:
            if not os.path.isdir(source):
                raise LibraryError(f"prompt library {source!r} is not a folder (nor a store URL or an MCP URL)")
            self._server.add_folder(source)
            if watch:
                from ..server.watch import WatchThread

                self._watcher = WatchThread(self._server, self._lock)
                self._watcher.start()

    @property
    def usage(self) -> Usage:
        """The renders counted here (drained into the store by a store source, else kept in memory)."""
        return self._server.usage

    def usage_shown(self, since: str) -> dict[str, Any]:
        """The counts kept in memory since ``since``, as ``/api/store/usage`` shows a store's."""
        import time

        from ..prompts.usage import since_seconds
        from ..server.web.store_usage import kept

        try:
            start = since_seconds(since, time.time())
        except ValueError as exc:
            raise LibraryError(str(exc)) from None
        if self.store:  # its writer drains them into the store, where they are read
            raise LibraryError(f"the usage of {self.shown} is in the store: .venv/bin/promptdeck usage --store URL")
        return kept(self._server.usage, start, lambda _: True, None)

    @property
    def unreachable(self) -> bool:
        """A store that cannot be reached now: its renders come from the last good copy (stale)."""
        return self._stored is not None and self._stored.unreachable

    def catalog(self, scopes: frozenset[str] | None) -> Catalog:
        """What a principal holding ``scopes`` (None: trusted, as a local stdio client is) may see now."""
        return self._server.catalog.view(scopes)

    def find(self, name: str, arguments: dict[str, Any], scopes: frozenset[str] | None, key: str | None = None,
             sticky: str | None = None) -> Offered:
        """The prompt a ``prompts/get`` of ``name`` renders for this principal: during a store's rollout, the
        version its rollout key gives (``key``, sent as the request's ``_meta`` key, else ``sticky``: the
        principal's), chosen and counted for usage by the server's own ``handlers.chosen``: a render finds its
        prompt here first (the precompiled render of ``Prompts`` too)."""
        meta: dict[str, Any] | None = None
        if key is not None:
            p = decode(GetPrompt, {"name": name, "arguments": arguments, "_meta": {handlers.META_ROLLOUT_KEY: key}})
            name, meta = p.name, p.meta
        elif type(name) is not str or type(arguments) is not dict:  # noqa: E721 - exactly these, as decoded
            decode(GetPrompt, {"name": name, "arguments": arguments})  # refused as a prompts/get's would be
        return handlers.chosen(self._server, self.catalog(scopes).require(name), meta, sticky, self.client)

    def render(self, prompt: Offered, arguments: dict[str, Any]) -> dict[str, Any]:
        """The ``prompts/get`` result for ``prompt``: inline for templates (bounded by ``run_bounded``), on a
        private event loop for a render that must be awaited (a Python prompt's). A plain prompt (text that
        only substitutes names) takes ``plain_render``, the one-pass way the HTTP server answers it: the same
        result, without the general path's deadline, render context and message objects."""
        plain = handlers.plain_render(self._server, prompt, arguments or None)
        if plain is not None:
            return plain
        result = handlers.render(self._server, prompt, arguments or None, None, REVISION, _ignore)
        if isinstance(result, dict):
            return result
        return self._await(result)

    async def arender(self, prompt: Offered, arguments: dict[str, Any]) -> dict[str, Any]:
        """``render`` from a coroutine: blocking work (a template, a first parse) runs in the render threads,
        as it does for a server on an event loop; a plain prompt's render is too short to be worth a thread."""
        plain = handlers.plain_render(self._server, prompt, arguments or None)
        if plain is not None:
            return plain
        result = handlers.render(self._server, prompt, arguments or None, None, REVISION, _ignore)
        if inspect.isawaitable(result):
            return await result
        return result

    def _await(self, pending: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="promptdeck-application", daemon=True)
                thread.start()
                self._loop, self._loop_thread = loop, thread
            loop = self._loop

        async def wait() -> dict[str, Any]:
            return await pending

        return asyncio.run_coroutine_threadsafe(wait(), loop).result()

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher.join(5)
        for source in self._server.sources:
            close = getattr(source, "close", None)
            if close is not None:
                close()
        if self._loop is not None and self._loop_thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._loop_thread.join(5)
            self._loop.close()
            self._loop = None


def folder_problems(folder: str) -> list[str]:
    """What ``promptdeck check`` finds wrong with the prompt files of ``folder`` (a fallback must have none)."""
    from ..sources.files.source import FileSource

    source = FileSource(folder, skills=False)
    source.load(compile_all=True)
    source.prompts()  # where name clashes are found
    errors = sorted((e for found in source.errors.values() for e in found), key=lambda e: e.path)
    return list(dict.fromkeys(str(e) for e in errors))
