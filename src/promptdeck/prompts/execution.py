"""Running a prompt's render: off the event loop when it may block, and always bounded in time.

Three kinds of work, named on the ``Prompt`` by its source:

- ``LIGHT``: a substitution-only template, or an async Python prompt. Runs
  inline; an async one is awaited under the render time limit.
- ``TEMPLATE``: a Jinja template or one that reads files. It checks the render
  deadline itself (``render.run_bounded``), so over stdio it runs inline; on an
  event loop (HTTP) it runs in the render threads so that one slow render does
  not hold every other connection.
- ``CODE``: a sync Python prompt, whose author may do anything, ``time.sleep``
  included. It always runs in the render threads and is awaited under the time
  limit. A thread cannot be stopped: a render past its limit is answered with
  an error and left to finish, and a prompt with ``MAX_OVERDUE`` renders still
  running past their limit is refused at once, so one stuck prompt cannot take
  every thread from the others.

Whatever a render raises, ``SystemExit`` and ``KeyboardInterrupt`` included,
becomes an ``InternalError`` naming the prompt; only cancellation passes.

A prompt whose attributes are not ready yet (a stored prompt, parsed from its
file on first use: ``Offered.unprepared``) is prepared the same way before a
request reads it (``when_ready``): inline without an event loop, otherwise in
the render threads, one preparation per prompt however many requests wait for
it, each waiting at most ``PREPARE_SECONDS``. Parsing and compiling a large
template takes seconds of CPU; on the loop it once held every connection.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..protocol.content import Audio, Image, Message, Resource, ResourceLink, Text
from ..protocol.errors import INTERNAL_ERROR, InternalError, McpError
from .limits import MAX_OUTPUT_CHARS, MAX_RENDER_SECONDS

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from .spec import Offered

LIGHT, TEMPLATE, CODE = "light", "template", "code"
T = TypeVar("T")

#: Threads for renders that may block. Renders are short; more threads only add GIL contention.
RENDER_THREADS = 8
#: Default time limit for a Python prompt (``PromptServer(prompt_seconds=...)``): it may wait on I/O.
CODE_SECONDS = 30.0
#: Renders of one prompt still running past their limit before that prompt is refused outright.
MAX_OVERDUE = 2

#: The longest a request waits for a prompt's preparation (its first parse). The parse itself goes on, for
#: the requests after it: a thread cannot be stopped, and its work is not wasted.
PREPARE_SECONDS = 30.0

_pool: ThreadPoolExecutor | None = None
#: preparations running, by prompt (its id, and the prompt itself so that the id is not reused meanwhile)
_preparing: dict[int, tuple[object, Future[object]]] = {}
_preparing_lock = threading.Lock()
_overdue: Counter[str] = Counter()
_overdue_lock = threading.Lock()


def _threads() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        # Imported with the first thread pool: over stdio a file library may never need one (issue 29).
        from concurrent.futures import ThreadPoolExecutor

        _pool = ThreadPoolExecutor(RENDER_THREADS, thread_name_prefix="promptdeck-render")
    return _pool


def failure(prompt: str, exc: BaseException) -> InternalError:
    """The -32603 a render fault becomes; the reason goes to the log, not to the client."""
    return InternalError(f"prompt {prompt!r}: {type(exc).__name__}: {exc}")


def check_output(messages: list[Message], prompt: str) -> list[Message]:
    """Refuse a render whose messages carry more than ``MAX_OUTPUT_CHARS`` of text and data."""
    size = 0
    for message in messages:
        content = message.content
        if isinstance(content, Text):
            size += len(content.text)
        elif isinstance(content, Image | Audio):
            size += len(content.data)
        elif isinstance(content, Resource):
            size += len(content.resource.text or "") + len(content.resource.blob or b"")
        elif isinstance(content, ResourceLink):
            size += len(content.uri) + len(content.name)
        if size > MAX_OUTPUT_CHARS:
            raise InternalError(f"prompt {prompt!r}: the rendered messages are larger than the limit of "
                                f"{MAX_OUTPUT_CHARS} characters")
    return messages


def _on_loop() -> bool:
    """Whether this thread runs an event loop. Without asyncio imported (stdio) none can be running."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_render(render: Callable[[], Any], prompt: str, work: str, code_seconds: float = CODE_SECONDS) -> Any:
    """Run ``render`` as ``work`` says: its messages, or an awaitable of them.

    Templates get ``MAX_RENDER_SECONDS``; Python prompts, which may wait on I/O, get ``code_seconds``.
    """
    seconds = MAX_RENDER_SECONDS if work == TEMPLATE else code_seconds
    if work == CODE or (work == TEMPLATE and _on_loop()):
        return _in_thread(render, prompt, seconds)
    try:
        result = render()
    except McpError:
        raise
    except Exception as exc:
        raise failure(prompt, exc) from exc
    if isinstance(result, Awaitable):
        return _bounded(result, prompt, seconds)
    return result


def _too_slow(prompt: str, seconds: float) -> InternalError:
    return InternalError(f"prompt {prompt!r}: rendering took longer than {seconds:g} s")


async def _bounded(pending: Awaitable[Any], prompt: str, seconds: float) -> Any:
    import asyncio

    try:
        async with asyncio.timeout(seconds):
            return await pending
    except TimeoutError:
        raise _too_slow(prompt, seconds) from None
    except McpError:
        raise
    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # SystemExit from a prompt must not stop the server's loop
        raise failure(prompt, exc) from exc


class _Job:
    """One render on a thread; ``late`` once its caller stopped waiting while it still ran."""

    __slots__ = ("prompt", "finished", "late")

    def __init__(self, prompt: str) -> None:
        self.prompt = prompt
        self.finished = False
        self.late = False

    def end(self) -> None:
        with _overdue_lock:
            self.finished = True
            if self.late:
                _overdue[self.prompt] -= 1
                if not _overdue[self.prompt]:
                    del _overdue[self.prompt]

    def give_up(self) -> None:
        with _overdue_lock:
            if not self.finished:
                self.late = True
                _overdue[self.prompt] += 1


async def _in_thread(render: Callable[[], Any], prompt: str, seconds: float) -> Any:
    import asyncio

    if _overdue[prompt] >= MAX_OVERDUE:
        raise InternalError(f"prompt {prompt!r}: refused while {_overdue[prompt]} of its renders still run "
                            f"past their time limit")
    job = _Job(prompt)

    def call() -> Any:
        try:
            return render()
        except McpError:
            raise
        except BaseException as exc:  # raised on a render thread, so it is the prompt's own doing
            raise failure(prompt, exc) from exc
        finally:
            job.end()

    work = _threads().submit(call)
    future = asyncio.wrap_future(work)
    # Read the outcome even when nobody waits for it any more, so asyncio logs no "never retrieved".
    future.add_done_callback(lambda done: done.cancelled() or done.exception())
    try:
        async with asyncio.timeout(seconds):
            result = await asyncio.shield(future)
    except TimeoutError:
        if not work.cancel():  # cancelled while queued costs nothing; a running one is overdue until it ends
            job.give_up()
        raise _too_slow(prompt, seconds) from None
    if isinstance(result, Awaitable):  # a sync function that returned an awaitable: await it on the loop
        return await _bounded(result, prompt, seconds)
    return result


def off_loop(work: Callable[[], T]) -> T | Awaitable[T]:
    """``work()`` at once when no event loop runs on this thread (stdio); otherwise an awaitable of it, run in
    the render threads, so that blocking work (reading a file, parsing a stored prompt) never holds the loop."""
    if not _on_loop():
        return work()
    return in_threads(work)


async def in_threads(work: Callable[[], T]) -> T:
    """``work()`` run in the render threads, awaited on this event loop."""
    import asyncio

    return await asyncio.wrap_future(_threads().submit(work))


def when_ready(prompt: Offered, then: Callable[[], Any]) -> Any:
    """``then()`` once ``prompt`` is ready to read: at once when it is (or when no event loop runs here, as
    on stdio, where the preparation runs inline), else an awaitable of it (awaited if it is one itself)."""
    prepare = prompt.unprepared()
    if prepare is None or not _on_loop():
        return then()
    return _prepared(prompt, prepare, then)


async def _prepared(prompt: Offered, prepare: Callable[[], object], then: Callable[[], Any]) -> Any:
    import asyncio

    with _preparing_lock:
        running = _preparing.get(id(prompt))
        started = running is None
        if running is None:
            work = _threads().submit(prepare)
            _preparing[id(prompt)] = (prompt, work)
        else:
            work = running[1]
    if started:
        # Not under the lock: a preparation already finished runs this callback at once, on this thread, and
        # _forget takes the lock (under it, that deadlocked the event loop: seen as a get that never answered).
        work.add_done_callback(lambda done: _forget(prompt, done))
    future = asyncio.wrap_future(work)
    future.add_done_callback(lambda done: done.cancelled() or done.exception())
    try:
        async with asyncio.timeout(PREPARE_SECONDS):
            await asyncio.shield(future)
    except TimeoutError:
        raise McpError(f"prompt {prompt.name!r} is still being read; try again shortly",
                       code=INTERNAL_ERROR) from None
    result = then()
    return await result if isinstance(result, Awaitable) else result  # a render may go on in the threads


def _forget(prompt: Offered, work: Future[object]) -> None:
    with _preparing_lock:
        if _preparing.get(id(prompt), (None, None))[1] is work:
            del _preparing[id(prompt)]
