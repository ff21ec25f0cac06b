"""How the commands that run until stopped (serve, over stdio and HTTP; watch; ui) end, one convention for all
(docs/cli.md, "Exit codes"): Ctrl-C (SIGINT) and SIGTERM are how they are meant to end, so they exit 0 with
nothing more said; an error is 1, a usage mistake 2. Commands that end by themselves (ls, get, complete,
pick) exit 130 when Ctrl-C interrupts them, as a shell reports SIGINT."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

#: a command that runs until stopped, stopped
STOPPED = 0
#: a command that ends by itself, interrupted by Ctrl-C
INTERRUPTED = 130


def _interrupt(_number: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextmanager
def until_stopped() -> Iterator[None]:
    """Run the body until Ctrl-C or SIGTERM, either of which ends it quietly (SIGTERM is raised in it as
    Ctrl-C is: uvicorn, which handles both while it serves, raises the one it got again once it has shut
    down). The caller exits ``STOPPED`` after it."""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def delivering(store: str | None) -> Iterator[None]:
    """A serving command delivers the webhooks of the store it serves while it runs (``sources.store.delivery``;
    only ``serve`` does: an application opening the store sends none). Entered inside ``until_stopped``, so a
    graceful stop lets the requests in flight finish and be recorded before the process ends."""
    if store is None:
        yield
        return
    from ..sources.store.delivery import delivering as running

    with running(store):
        yield
