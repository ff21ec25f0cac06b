"""A terminal for the picker's tests: ``promptdeck`` run under a real pseudo-terminal, its screen read back."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

DEADLINE = 60.0


class Terminal:
    """One detached tmux session (on a socket of its own) running `promptdeck pick`."""

    def __init__(self, workdir: Path) -> None:
        self.socket = f"promptdeck-pick-{uuid.uuid4().hex[:12]}"
        self.workdir = workdir
        self.config = workdir / "tmux.conf"
        # on: programs in the pane may set tmux's paste buffer with OSC 52, which the copy test reads back.
        self.config.write_text("set -g set-clipboard on\nset -g remain-on-exit on\n")
        self.status = workdir / "exit-status"

    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "TERM": os.environ.get("TERM") or "xterm-256color"}
        return subprocess.run(["tmux", "-u", "-L", self.socket, "-f", str(self.config), *args],
                              capture_output=True, text=True, timeout=30, env=env, check=False)

    def start(self, *args: str, env: dict[str, str] | None = None, stdout: Path | None = None) -> None:
        command = shlex.join(["env", "PYTHONIOENCODING=utf-8", *(f"{k}={v}" for k, v in (env or {}).items()),
                              sys.executable, "-m", "promptdeck", "pick", *args])
        if stdout is not None:
            command += f" > {shlex.quote(str(stdout))}"
        command += f"; echo $? > {shlex.quote(str(self.status))}"
        started = self.tmux("new-session", "-d", "-s", "pick", "-x", "120", "-y", "40", "-c", str(self.workdir),
                            "sh", "-c", command)
        assert started.returncode == 0, started.stderr

    def screen(self) -> str:
        """Everything shown so far (what scrolled off too), wrapped lines joined, without tmux's own notes."""
        shown = self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "pick").stdout
        return "\n".join(line for line in shown.splitlines() if not line.startswith("Pane is dead"))

    def wait_until(self, check: Callable[[str], bool], what: str) -> str:
        """The screen once ``check`` holds for it."""
        end = time.monotonic() + DEADLINE
        while True:
            screen = self.screen()
            if check(screen):
                return screen
            if time.monotonic() > end:
                raise AssertionError(f"never saw {what}; the screen:\n{screen}")
            time.sleep(0.1)

    def wait_for(self, *needles: str) -> str:
        """The screen once it shows every one of ``needles``."""
        return self.wait_until(lambda screen: all(needle in screen for needle in needles), repr(needles))

    def keys(self, *keys: str) -> None:
        """Named keys (`Enter`, `Tab`, `Down`, `C-c`, `Escape`) or single characters."""
        self.tmux("send-keys", "-t", "pick", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "pick", "-l", text)

    def answer(self, shown: str, *keys: str) -> None:
        """Once the screen shows ``shown``, press ``keys``."""
        self.wait_for(shown)
        self.keys(*keys)

    def exit_code(self) -> int:
        end = time.monotonic() + DEADLINE
        while not self.status.exists() or not self.status.read_text().strip():
            if time.monotonic() > end:
                raise AssertionError(f"pick did not exit; the screen:\n{self.screen()}")
            time.sleep(0.1)
        return int(self.status.read_text())

    def close(self) -> None:
        self.tmux("kill-server")
