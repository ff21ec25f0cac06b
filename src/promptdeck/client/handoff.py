"""An event loop on a thread of its own, run for callers that have no loop: the cheapest hand-off measured.

``RemoteLibrary`` keeps its connection on an event loop; code that is not on one (a sync ``Prompts.render``)
hands its work to this loop and waits. Measured per render of ``benchmarks/bench_app.py`` (client CPU,
docs/performance.md): ``asyncio.run_coroutine_threadsafe(...).result()`` cost ~45 µs more than running on the
caller's own loop (a concurrent ``Future``, a ``Condition`` and a chained callback each way); this hand-off
(``call_soon_threadsafe`` to start a task, one plain lock released by it) ~20 µs. Cheaper still is no thread
at all, the caller running the loop itself while it waits; it was measured and left: between renders nobody
would read the connection, so a keep-alive connection the server closed meanwhile, or a subscription's
notice, would be seen only by the next render, after its own request had gone out on the dead connection.
Here the loop runs all the time, as the connection's reader.
"""

from __future__ import annotations

import _thread
import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class _Handoff(Generic[T]):
    """One piece of work handed over: what it gave or raised, and the lock released when it has."""

    __slots__ = ("done", "error", "result", "task")

    def __init__(self) -> None:
        self.done = _thread.allocate_lock()
        self.done.acquire()
        self.result: T | None = None
        self.error: BaseException | None = None
        self.task: asyncio.Task[None] | None = None


class LoopThread:
    """An event loop running on a daemon thread named ``name`` until ``close``."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the loop and wait for its result (or its exception, raised here). From any thread but
        the loop's own. Interrupted while waiting (KeyboardInterrupt), the work is cancelled."""
        handoff: _Handoff[T] = _Handoff()
        self.loop.call_soon_threadsafe(self._start, work, handoff)
        try:
            handoff.done.acquire()
        except BaseException:
            self.loop.call_soon_threadsafe(self._cancel, handoff)
            raise
        if handoff.error is not None:
            error, handoff.error = handoff.error, None  # no cycle through the traceback
            raise error
        return handoff.result  # type: ignore[return-value]

    def _start(self, work: Coroutine[Any, Any, T], handoff: _Handoff[T]) -> None:
        handoff.task = self.loop.create_task(_finish(work, handoff))

    @staticmethod
    def _cancel(handoff: _Handoff[Any]) -> None:
        if handoff.task is not None:
            handoff.task.cancel()

    def close(self, timeout: float) -> None:
        """Stop the loop (what runs on it should have ended) and wait up to ``timeout`` for its thread."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self.loop.close()


async def _finish(work: Coroutine[Any, Any, T], handoff: _Handoff[T]) -> None:
    try:
        handoff.result = await work
    except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller, which raises it
        handoff.error = exc
    finally:
        handoff.done.release()
