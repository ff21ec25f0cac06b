"""Running a prompt's render (prompts/execution.py): inline or in the render threads, bounded in time, every
fault an InternalError naming the prompt, and a prompt stuck past its limit refused before it takes every
thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import Any

import pytest

from promptdeck.prompts.execution import (
    CODE,
    LIGHT,
    MAX_OVERDUE,
    TEMPLATE,
    check_output,
    failure,
    off_loop,
    run_render,
    when_ready,
)
from promptdeck.prompts.limits import MAX_OUTPUT_CHARS
from promptdeck.prompts.spec import Prompt, RenderContext
from promptdeck.protocol.content import Message, user
from promptdeck.protocol.errors import INTERNAL_ERROR, InternalError, InvalidParams


def hello() -> list[Message]:
    return [user("hello")]


def test_light_work_without_a_loop_runs_inline() -> None:
    caller = threading.get_ident()
    ran_on: list[int] = []

    def render() -> list[Message]:
        ran_on.append(threading.get_ident())
        return hello()

    assert run_render(render, "p", LIGHT) == hello()
    assert run_render(render, "p", TEMPLATE) == hello()  # no loop to hold: a template runs inline too
    assert ran_on == [caller, caller]


def test_a_fault_becomes_an_internal_error_naming_the_prompt() -> None:
    def broken() -> list[Message]:
        raise ZeroDivisionError("division by zero")

    with pytest.raises(InternalError) as caught:
        run_render(broken, "sums", LIGHT)
    assert caught.value.detail == "prompt 'sums': ZeroDivisionError: division by zero"
    assert (caught.value.code, caught.value.message) == (INTERNAL_ERROR, "Internal error")  # the wire learns nothing
    assert failure("x", KeyError("k")).detail == "prompt 'x': KeyError: 'k'"


def test_a_protocol_error_from_a_render_passes_as_it_is() -> None:
    def refuses() -> list[Message]:
        raise InvalidParams("argument 'n' must be a number")

    with pytest.raises(InvalidParams, match="argument 'n'"):
        run_render(refuses, "p", LIGHT)


def test_an_async_render_is_awaited_under_its_limit() -> None:
    async def quick() -> list[Message]:
        return hello()

    async def slow() -> list[Message]:
        await asyncio.sleep(30)
        return hello()

    async def exits() -> list[Message]:
        raise SystemExit(3)  # must not stop the server's loop

    async def main() -> None:
        assert await run_render(quick, "p", LIGHT, code_seconds=5) == hello()
        with pytest.raises(InternalError) as late:
            await run_render(slow, "slow", LIGHT, code_seconds=0.05)
        assert late.value.detail == "prompt 'slow': rendering took longer than 0.05 s"
        with pytest.raises(InternalError) as exited:
            await run_render(exits, "exits", LIGHT)
        assert (exited.value.detail or "").startswith("prompt 'exits': SystemExit")

    asyncio.run(main())


def test_code_runs_in_a_render_thread_and_a_stuck_prompt_is_refused_past_max_overdue() -> None:
    release = threading.Event()
    ran_on: list[int] = []

    def stuck() -> list[Message]:
        ran_on.append(threading.get_ident())
        release.wait(30)
        return hello()

    async def main() -> None:
        assert await run_render(hello, "fine", CODE) == hello()
        for _ in range(MAX_OVERDUE):
            with pytest.raises(InternalError) as late:
                await run_render(stuck, "stuck-unit", CODE, code_seconds=0.05)
            assert "took longer than" in (late.value.detail or "")
        with pytest.raises(InternalError) as refused:
            await run_render(stuck, "stuck-unit", CODE, code_seconds=0.05)
        assert (refused.value.detail or "").startswith(f"prompt 'stuck-unit': refused while {MAX_OVERDUE} of its")
        assert await run_render(hello, "other-unit", CODE) == hello()  # another prompt is still served
        release.set()
        for _ in range(600):  # the overdue renders end, and the prompt is served again
            try:
                assert await run_render(hello, "stuck-unit", CODE) == hello()
                return
            except InternalError:
                await asyncio.sleep(0.05)
        raise AssertionError("the prompt stayed refused after its renders ended")

    try:
        asyncio.run(main())
    finally:
        release.set()
    assert ran_on and threading.get_ident() not in ran_on


def test_output_over_the_limit_is_refused_naming_the_prompt() -> None:
    fits = [user("x" * (MAX_OUTPUT_CHARS // 2)), user("y" * (MAX_OUTPUT_CHARS // 2))]
    assert check_output(fits, "p") is fits
    with pytest.raises(InternalError) as caught:
        check_output([*fits, user("z")], "big")
    assert (caught.value.detail or "").startswith("prompt 'big': ")
    assert f"limit of {MAX_OUTPUT_CHARS} characters" in (caught.value.detail or "")


def test_off_loop_is_direct_without_a_loop_and_threaded_on_one() -> None:
    assert off_loop(lambda: 42) == 42

    async def main() -> None:
        pending = off_loop(threading.get_ident)
        assert isinstance(pending, Awaitable)
        assert await pending != threading.get_ident()

    asyncio.run(main())


class Unready(Prompt):
    """A prompt whose attributes need a slow preparation first, as a stored prompt's first parse. A ``Prompt``
    is frozen, so its own state is set as a stored prompt sets its parse: past the frozen check."""

    __slots__ = ("prepared", "gate")
    prepared: int
    gate: threading.Event

    def __init__(self) -> None:
        super().__init__("unready", lambda args, ctx: hello())
        object.__setattr__(self, "prepared", 0)
        object.__setattr__(self, "gate", threading.Event())

    def unprepared(self) -> Any:
        if self.prepared:
            return None
        return self._prepare

    def _prepare(self) -> None:
        self.gate.wait(30)
        object.__setattr__(self, "prepared", self.prepared + 1)


def test_when_ready_prepares_once_for_every_request_waiting() -> None:
    prompt = Unready()
    assert isinstance(prompt, Prompt) and isinstance(RenderContext("p"), RenderContext)

    async def main() -> list[str]:
        first = asyncio.ensure_future(when_ready(prompt, lambda: "a"))
        second = asyncio.ensure_future(when_ready(prompt, lambda: "b"))
        await asyncio.sleep(0.01)
        assert not first.done() and not second.done()
        prompt.gate.set()
        return [await first, await second]

    try:
        assert asyncio.run(main()) == ["a", "b"]
    finally:
        prompt.gate.set()
    assert prompt.prepared == 1
    assert when_ready(prompt, lambda: "now") == "now"  # ready: answered at once
