"""How the commands that run until stopped end (cli/stopping.py): Ctrl-C and SIGTERM end the body quietly,
and the SIGTERM handler that was there before comes back."""

from __future__ import annotations

import os
import signal
import time

from promptdeck.cli.stopping import INTERRUPTED, STOPPED, delivering, until_stopped


def test_sigterm_ends_the_body_quietly_and_the_old_handler_returns() -> None:
    before = signal.getsignal(signal.SIGTERM)
    reached: list[str] = []
    with until_stopped():
        reached.append("started")
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the signal arrives at the next bytecode boundary
            time.sleep(0.01)
        reached.append("not stopped")
    assert reached == ["started"]
    assert signal.getsignal(signal.SIGTERM) is before


def test_ctrl_c_ends_the_body_quietly() -> None:
    with until_stopped():
        raise KeyboardInterrupt
    assert (STOPPED, INTERRUPTED) == (0, 130)


def test_another_error_passes_and_the_handler_still_returns() -> None:
    before = signal.getsignal(signal.SIGTERM)
    try:
        with until_stopped():
            raise RuntimeError("a real failure")
    except RuntimeError as exc:
        assert str(exc) == "a real failure"
    else:
        raise AssertionError("the error was swallowed")
    assert signal.getsignal(signal.SIGTERM) is before


def test_no_store_delivers_nothing() -> None:
    with delivering(None):
        pass
