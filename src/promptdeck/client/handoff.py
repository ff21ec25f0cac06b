"""An event loop for callers that have none, run by the threads that wait on it: no thread hop per call.

``RemoteLibrary`` keeps its connection on an event loop; code that is not on one (a sync ``Prompts.render``)
must get its work run there. Measured per remote render (client CPU, medians of 5 alternating rounds on the 2
loaded cores of docs/performance.md): handing the work to a loop on a thread of its own cost 215 µs more than
running it on the caller's own loop with ``run_coroutine_threadsafe`` (a concurrent ``Future``, a ``Condition``,
a chained callback each way), and still 140 µs with ``call_soon_threadsafe`` and one lock: two thread wake-ups
per render, each a context switch. Here the calling thread runs the loop itself (``run_until_complete``) while
it waits: 30 µs. A thread that finds another running the loop hands its work over and waits; when that one's
own work is done it stops, and a waiter whose work is not done takes the loop over. A caller whose thread is
already running another loop cannot run this one: a thread is started to run it for that call.

Between calls nobody runs the loop, so what arrived meanwhile is taken in by the next call: a list_changed
notice then, and a keep-alive connection the server closed meanwhile is found closed when that call writes its
request, which goes again on a new connection (``fetch.HttpClient._exchange``;
tests/application/test_remote.py::test_a_render_after_the_server_closed_an_idle_connection_goes_out_on_a_new_one).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class DrivenLoop:
    """An event loop run, while they wait, by the threads that hand it work."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._state = threading.Condition(threading.Lock())
        self._driven = False  # a thread is running the loop
        self._closing = False  # close() was called while a thread ran it: that thread closes it

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the loop and give its result (or raise its error), from any thread."""
        if asyncio._get_running_loop() is None:
            with self._state:
                mine = not self._driven
                self._driven = True
            if mine:
                task: asyncio.Task[T] | None = None
                try:
                    task = self.loop.create_task(work)
                    return self.loop.run_until_complete(task)
                finally:
                    if task is not None and not task.done():  # interrupted (KeyboardInterrupt): nobody waits
                        task.cancel()
                    self._hand_over()
        return self._wait(work)

    def _wait(self, work: Coroutine[Any, Any, T]) -> T:
        """Hand ``work`` to the thread running the loop; run the loop in its place if it stops first."""
        future = asyncio.run_coroutine_threadsafe(work, self.loop)
        future.add_done_callback(self._wake)
        able = asyncio._get_running_loop() is None
        while True:
            with self._state:
                while self._driven and not future.done():
                    self._state.wait()
                if future.done():
                    return future.result()
                if self.loop.is_closed():  # closed by the thread that ran it last, with this work left undone
                    raise RuntimeError("the event loop was closed before this work was done")
                self._driven = True
            if able:
                self._drive_until(future)
            else:  # this thread runs a loop of its own already: another runs this one meanwhile
                threading.Thread(target=self._drive_until, args=(future,), name="promptdeck-prompts",
                                 daemon=True).start()

    def _drive_until(self, future: concurrent.futures.Future[T]) -> None:
        try:
            self.loop.run_until_complete(asyncio.wrap_future(future, loop=self.loop))
        except BaseException:  # noqa: BLE001 - the work's own error is the future's, raised by its waiter
            pass
        finally:
            self._hand_over()

    def _wake(self, _: object) -> None:
        with self._state:
            self._state.notify_all()

    def _hand_over(self) -> None:
        with self._state:
            self._driven = False
            if self._closing and not self.loop.is_closed():
                self.loop.close()
            self._state.notify_all()

    def close(self) -> None:
        """Close the loop (what ran on it should have ended: ``run`` a coroutine that ends it first)."""
        with self._state:
            self._closing = True
            if not self._driven and not self.loop.is_closed():
                self.loop.close()

