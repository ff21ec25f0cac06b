"""The local application (promptdeck.application) as its tests drive it: a modelled library, threads that
render at once, waiting on a condition, publishing into a store."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from tests.support.cli import pd

MODELLED = """---
description: Greets someone
arguments:
  - {name: who, description: Whom to greet, required: true}
model: {name: gpt-4.1-mini, temperature: 0.2, max_tokens: 200}
---
Hello, {{ who }}!
"""
SCOPED = """---
description: For HR only
scopes: [prompts:hr]
---
Payroll questions.
"""


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 60) -> None:
    """Returns once ``condition()`` holds; the deadline only guards against a hang (generous for a loaded
    machine)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.05)


def in_threads(count: int, work: Callable[[int], object]) -> None:
    """``work(index)`` on ``count`` threads started together; the first failures of any are raised here."""
    barrier = threading.Barrier(count)
    failures: list[BaseException] = []

    def run(index: int) -> None:
        try:
            barrier.wait(30)
            work(index)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures, failures[:3]


def publish(folder: Path, url: str) -> None:
    """``promptdeck publish FOLDER`` into ``url``, label production."""
    pd("publish", str(folder), "--store", url, "--label", "production")
