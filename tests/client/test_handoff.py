"""``DrivenLoop``: an event loop run by the threads that hand it work, while they wait."""

from __future__ import annotations

import asyncio
import threading

import pytest

from promptdeck.client.handoff import DrivenLoop
from tests.support.application import in_threads, wait_for


def test_work_runs_on_the_calling_thread_and_gives_its_result_or_raises_its_error() -> None:
    driven = DrivenLoop()

    async def where(value: int) -> tuple[str, int, bool]:
        await asyncio.sleep(0)
        return threading.current_thread().name, value * 2, asyncio.get_running_loop() is driven.loop

    assert driven.run(where(21)) == ("MainThread", 42, True)

    async def fails() -> None:
        raise KeyError("the work's own error")

    with pytest.raises(KeyError, match="the work's own error"):
        driven.run(fails())
    assert driven.run(where(1)) == ("MainThread", 2, True)  # an error leaves the loop serving
    driven.close()
    assert driven.loop.is_closed()


def test_what_runs_in_the_background_goes_on_whenever_a_caller_runs_the_loop() -> None:
    driven = DrivenLoop()
    ticks: list[int] = []

    async def ticking() -> None:
        while True:
            ticks.append(len(ticks))
            await asyncio.sleep(0)

    async def start() -> asyncio.Task[None]:
        return asyncio.ensure_future(ticking())

    task = driven.run(start())
    before = len(ticks)
    driven.run(asyncio.sleep(0.01))
    assert len(ticks) > before  # it ran while this call ran the loop

    async def stop() -> None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    driven.run(stop())
    driven.close()


def test_many_threads_share_the_loop_each_getting_its_own_result() -> None:
    driven = DrivenLoop()
    in_flight: list[int] = []
    most = [0]

    async def step(index: int) -> int:
        in_flight.append(index)
        most[0] = max(most[0], len(in_flight))
        await asyncio.sleep(0.005)
        in_flight.remove(index)
        return index

    def work(index: int) -> None:
        for turn in range(30):
            assert driven.run(step(index * 100 + turn)) == index * 100 + turn

    in_threads(8, work)
    assert most[0] > 1  # the threads' work overlapped on the one loop, whoever ran it
    driven.close()
    assert driven.loop.is_closed()


def test_a_caller_already_on_another_loop_is_served_by_a_thread() -> None:
    """A sync call from a coroutine (its thread runs a loop already, so it cannot run this one)."""
    driven = DrivenLoop()

    async def where() -> str:
        return threading.current_thread().name

    async def from_a_coroutine() -> str:
        return driven.run(where())

    assert asyncio.run(from_a_coroutine()) == "promptdeck-prompts"
    # That thread stops once the work it ran for is done (a call right after may still be run by it).
    wait_for(lambda: driven.run(where()) == "MainThread", "this thread to run the loop again")
    driven.close()
    assert driven.loop.is_closed()


def test_closed_while_a_thread_runs_it_the_loop_is_closed_by_that_thread() -> None:
    driven = DrivenLoop()
    running = threading.Event()

    async def slow() -> str:
        running.set()
        await asyncio.sleep(0.2)
        return "done"

    results: list[str] = []
    worker = threading.Thread(target=lambda: results.append(driven.run(slow())))
    worker.start()
    assert running.wait(30)
    driven.close()  # the worker runs the loop: it closes it when its work is done
    assert not driven.loop.is_closed()
    worker.join(30)
    assert results == ["done"] and driven.loop.is_closed()

    async def late() -> None:
        return None

    work = late()
    with pytest.raises(RuntimeError, match="closed"):
        driven.run(work)
    work.close()
    assert not driven._driven  # the refusal left no thread marked as running the loop
