"""Another MCP server's prompts as a source: what ``promptdeck ui TARGET`` serves the web app from.

It lives with the client, not in ``sources/``: it is made of the client, and imports point down only.

``RemoteSource`` holds one connected promptdeck ``Client`` (stdio or HTTP, either era) on an event
loop of its own, in its own thread, so the source works the same whichever loop (uvicorn's, stdio's
lazily made one, none at all while loading) asks it for something: every call to the remote server
is a coroutine handed to that loop.

- Listing: the remote listing, walked whole at ``load`` (bounded by the client's ``max_pages`` and
  ``timeout``), each entry made a ``Prompt`` with its name, title, description, icons, ``_meta`` (so a
  remote promptdeck's typed argument schema reaches the page's form) and its arguments as plain
  strings, required as the remote says. Values are checked by the remote, which knows their types.
- Rendering: the prompt's render forwards ``prompts/get`` and returns an awaitable, which the
  server awaits under its render time limit (cancelled past it). A remote -32602 stays -32602 with
  its message and data; another remote error is -32603 naming the code and message; a server that
  went away is -32603 "the server at TARGET is not reachable". Each is logged.
- Completion: each argument's completer forwards ``completion/complete``: an async completer, so the
  server's loop never waits on the remote; it gives up after ``COMPLETE_SECONDS``. The remote's values
  are passed on as it ordered them (``Suggestions``), not filtered again by the typed prefix.
- Changes: when the remote announces list changes, ``Client.watch`` (list_changed in a legacy
  session, a subscription in 2026-07-28) gives the fresh listing, and the server is told.

A remote prompt whose name promptdeck cannot serve (``spec.NAME_RE``: it must fit in an HTTP
header and a cursor) is left out, and that is reported as a problem of ``load``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

from ..prompts.arguments import Argument
from ..prompts.completion import Suggestions
from ..prompts.execution import LIGHT, check_output
from ..prompts.spec import META_TAGS, NAME_RE, Completer, Prompt, RenderContext
from ..protocol.content import Message
from ..protocol.errors import (
    INTERNAL_ERROR,
    ClientError,
    ConnectionFailed,
    InvalidParams,
    LibraryError,
    McpError,
    PromptdeckError,
    ProtocolViolation,
)
from ..sources import Source

if TYPE_CHECKING:
    from .fetch import Auth
    from .session import Client, Era
    from .types import PromptInfo, RenderedPrompt

log = logging.getLogger("promptdeck.remote")
T = TypeVar("T")

#: How long a completion may wait for the remote.
COMPLETE_SECONDS = 5.0
#: The longest remote error message passed on (the rest is cut).
MAX_MESSAGE = 500
#: The pause before connecting again to a remote that went away, doubling up to the second.
RECONNECT_FIRST, RECONNECT_MOST = 1.0, 30.0
#: Listing pages walked at most (the client gives up past it): 1,000 pages of 100 are 100,000 prompts.
MAX_PAGES = 1_000


class RemoteSource(Source):
    """The prompts of the MCP server at ``target`` (an http(s) URL or a command line), followed live.

    ``load`` connects (a ``LibraryError`` when it cannot); ``close`` ends the connection.
    """

    def __init__(self, target: str, *, era: Era = "auto", token: str | None = None,
                 headers: Mapping[str, str] | None = None, timeout: float = 30.0, auth: Auth | None = None) -> None:
        self.target = target
        self.auth = auth
        self.era = era
        self.token = token
        self.headers = dict(headers or {})
        self.timeout = timeout
        self._prompts: tuple[Prompt, ...] = ()
        self._changed: Callable[[], object] | None = None
        self._client: Client | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._watching: asyncio.Task[None] | None = None
        #: reconnecting after the remote went away (one at a time)
        self._reconnecting: asyncio.Task[None] | None = None

    # -- the Source interface ------------------------------------------------------------------

    def load(self) -> Sequence[PromptdeckError]:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="promptdeck-remote", daemon=True)
        self._thread.start()
        try:
            infos = self._wait(self._open(), None)
        except PromptdeckError as exc:
            self.close()
            raise LibraryError(f"cannot use the server at {self.target}: {exc}") from None
        return self._take(infos)

    def prompts(self) -> Iterable[Prompt]:
        return self._prompts

    def attach(self, changed: Callable[[], object]) -> None:
        self._changed = changed
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._start_watch)

    def close(self) -> None:
        """End the connection (a stdio server is stopped) and the loop's thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        self._loop = None
        if self._stack is not None:
            stack = self._stack

            async def end() -> None:
                for task in (self._watching, self._reconnecting):
                    if task is not None:
                        task.cancel()
                        await asyncio.gather(task, return_exceptions=True)
                await (self._stack or stack).aclose()  # a reconnection may have made a new one
                # Whatever the client left waiting (a watch's queue read) ends before the loop does.
                rest = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
                for task in rest:
                    task.cancel()
                await asyncio.gather(*rest, return_exceptions=True)

            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(end(), loop).result(self.timeout)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(self.timeout)
        if not thread.is_alive():
            loop.close()

    # -- on the source's loop ------------------------------------------------------------------

    async def _open(self) -> tuple[PromptInfo, ...]:
        from .session import connect

        self._stack = contextlib.AsyncExitStack()
        self._client = await self._stack.enter_async_context(
            connect(self.target, era=self.era, token=self.token, headers=self.headers or None,
                    timeout=self.timeout, max_pages=MAX_PAGES, auth=self.auth))
        return await self._client.list_prompts()

    def _start_watch(self) -> None:
        client = self._client
        prompts = client.capabilities.get("prompts") if client is not None else None
        if isinstance(prompts, dict) and prompts.get("listChanged"):
            self._watching = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        assert self._client is not None
        try:
            async for change in self._client.watch():
                self._listed(change.prompts)
        except asyncio.CancelledError:
            raise
        except ConnectionFailed as exc:
            log.error("the server at %s went away: %s", self.target, exc)
            self._lost()
            return
        except PromptdeckError as exc:
            log.error("the server at %s no longer tells its prompt list changes: %s", self.target, exc)
            return
        log.error("the server at %s ended its prompt list changes", self.target)

    def _listed(self, infos: Sequence[PromptInfo]) -> None:
        for problem in self._take(infos):
            log.error("%s", problem)
        if self._changed is not None:
            self._changed()

    def _lost(self) -> None:
        """(On the source's loop.) The remote went away: connect again in the background, with a growing
        pause (a stdio server is started again); until then its calls fail and the last listing stays."""
        if self._reconnecting is None or self._reconnecting.done():
            self._reconnecting = asyncio.ensure_future(self._reconnect())

    async def _reconnect(self) -> None:
        pause = RECONNECT_FIRST
        while True:
            await asyncio.sleep(pause)
            if self._watching is not None:
                self._watching.cancel()
                await asyncio.gather(self._watching, return_exceptions=True)
            old, self._stack, self._client = self._stack, None, None
            if old is not None:
                with contextlib.suppress(Exception):  # what is gone may fail to close; it is gone either way
                    await old.aclose()
            try:
                infos = await self._open()
            except PromptdeckError as exc:
                log.info("the server at %s is still away: %s", self.target, exc)
                pause = min(pause * 2, RECONNECT_MOST)
                continue
            log.warning("the server at %s is back: %d prompts", self.target, len(infos))
            self._listed(infos)
            self._start_watch()
            return

    def _wait(self, work: Awaitable[T], seconds: float | None) -> T:
        """Run ``work`` on the source's loop from another thread and wait for it."""
        if self._loop is None:
            raise ConnectionFailed("the connection is closed")
        future: Future[T] = asyncio.run_coroutine_threadsafe(_awaited(work), self._loop)
        try:
            return future.result(seconds)
        except TimeoutError:
            future.cancel()
            raise

    # -- making prompts ------------------------------------------------------------------------

    def _take(self, infos: Sequence[PromptInfo]) -> list[PromptdeckError]:
        problems: list[PromptdeckError] = []
        prompts: list[Prompt] = []
        for info in infos:
            if not NAME_RE.match(info.name):
                problems.append(LibraryError(f"the server at {self.target} lists a prompt named {info.name!r:.140}, "
                                             "which promptdeck cannot serve (1-128 letters, digits, '_', '-', '.')"))
                continue
            prompts.append(self._prompt(info))
        self._prompts = tuple(prompts)
        return problems

    def _prompt(self, info: PromptInfo) -> Prompt:
        arguments = tuple(Argument(name=a.name, title=a.title, description=a.description, required=a.required,
                                   wire_description=a.description) for a in info.arguments)
        meta = dict(info.meta or {})
        tags = meta.get(META_TAGS)
        name = info.name

        def render(values: dict[str, Any], context: RenderContext) -> Awaitable[list[Message]]:
            return self._render(name, {key: str(value) for key, value in values.items()})

        completers = {a.name: self._completer(name, a.name) for a in info.arguments}
        return Prompt(name, render, title=info.title, description=info.description, arguments=arguments,
                      icons=info.icons, meta=meta, source=self.target, completers=completers, work=LIGHT,
                      tags=frozenset(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else frozenset())

    async def _render(self, name: str, values: dict[str, str]) -> list[Message]:
        if self._loop is None or self._client is None:
            raise self._unreachable("prompts/get", name, "the connection is closed")
        client = self._client
        future = asyncio.run_coroutine_threadsafe(client.get_prompt(name, **values), self._loop)
        try:
            rendered = await asyncio.wrap_future(future)
        except McpError as exc:
            raise self._forwarded("prompts/get", name, exc) from None
        except ClientError as exc:
            raise self._failed("prompts/get", name, exc) from None
        return check_output(_messages(rendered), name)

    def _completer(self, prompt: str, argument: str) -> Completer:
        async def complete(value: str, filled: Mapping[str, str]) -> Iterable[str]:
            if self._loop is None or self._client is None:
                raise self._unreachable("completion/complete", prompt, "the connection is closed")
            future = asyncio.run_coroutine_threadsafe(self._client.complete(prompt, argument, value, filled),
                                                      self._loop)
            try:
                async with asyncio.timeout(COMPLETE_SECONDS):
                    found = await asyncio.wrap_future(future)
            except TimeoutError:
                future.cancel()
                raise self._unreachable("completion/complete", prompt,
                                        f"no answer within {COMPLETE_SECONDS:g} s") from None
            except McpError as exc:
                raise self._forwarded("completion/complete", prompt, exc) from None
            except ClientError as exc:
                raise self._failed("completion/complete", prompt, exc) from None
            # The remote chose and ordered these for what was typed: passed on as they are.
            return Suggestions(found.values, found.total, found.has_more)

        return complete

    # -- errors --------------------------------------------------------------------------------

    def _forwarded(self, method: str, prompt: str, exc: McpError) -> McpError:
        message = exc.message[:MAX_MESSAGE]
        log.warning("the server at %s answered %s %r with error %d: %s", self.target, method, prompt, exc.code,
                    message)
        if exc.code == InvalidParams.code:
            return InvalidParams(message, exc.data)
        return McpError(f"the server at {self.target} answered with error {exc.code}: {message}", code=INTERNAL_ERROR)

    def _failed(self, method: str, prompt: str, exc: ClientError) -> McpError:
        if isinstance(exc, ProtocolViolation):  # it answered, but not in MCP (or asked what we cannot give)
            log.error("%s %r: the server at %s: %s", method, prompt, self.target, exc)
            return McpError(f"the server at {self.target} answered outside the protocol: {str(exc)[:MAX_MESSAGE]}",
                            code=INTERNAL_ERROR)
        if isinstance(exc, ConnectionFailed) and self._loop is not None:
            self._loop.call_soon_threadsafe(self._lost)
        return self._unreachable(method, prompt, exc)

    def _unreachable(self, method: str, prompt: str, why: object) -> McpError:
        log.error("%s %r: the server at %s is not reachable: %s", method, prompt, self.target, why)
        return McpError(f"the server at {self.target} is not reachable", code=INTERNAL_ERROR)


async def _awaited(work: Awaitable[T]) -> T:
    return await work


def _messages(rendered: RenderedPrompt) -> list[Message]:
    """The remote's messages: decoded into promptdeck's own content types (one model for both sides), so
    they are shaped anew for each local revision."""
    return list(rendered.messages)


