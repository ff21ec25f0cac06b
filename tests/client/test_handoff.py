"""``LoopThread``: work handed from threads with no event loop to a loop on a thread of its own."""

from __future__ import annotations

import asyncio
import threading

import pytest

from promptdeck.client.handoff import LoopThread
from tests.support.application import in_threads


def test_work_runs_on_the_loop_thread_and_gives_its_result_or_raises_its_error() -> None:
    runner = LoopThread("handoff-test")
    try:
        async def where(value: int) -> tuple[str, int]:
            await asyncio.sleep(0)
            return threading.current_thread().name, value * 2

        assert runner.run(where(21)) == ("handoff-test", 42)

        async def fails() -> None:
            raise KeyError("the work's own error")

        with pytest.raises(KeyError, match="the work's own error"):
            runner.run(fails())
        assert runner.run(where(1)) == ("handoff-test", 2)  # an error leaves the loop serving
    finally:
        runner.close(5)
    assert runner.loop.is_closed()


def test_many_threads_hand_work_over_at_once() -> None:
    runner = LoopThread("handoff-threads")
    in_flight: list[int] = []
    most = [0]

    async def step(index: int) -> int:
        in_flight.append(index)
        most[0] = max(most[0], len(in_flight))
        await asyncio.sleep(0.01)
        in_flight.remove(index)
        return index

    try:
        def work(index: int) -> None:
            for turn in range(20):
                assert runner.run(step(index * 100 + turn)) == index * 100 + turn

        in_threads(8, work)
    finally:
        runner.close(5)
    assert most[0] > 1  # the threads' work overlapped on the one loop rather than queueing behind each other
