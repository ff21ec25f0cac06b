"""``promptdeck pick``: a slash-command palette and argument form over any MCP server (the cli layer's)."""

from __future__ import annotations

import sys

from .client.session import Client


def terminal_problem() -> str | None:
    """Why the picker cannot run here (no terminal to talk to), or None."""
    if not sys.stdin.isatty() or not (sys.stdout.isatty() or sys.stderr.isatty()):
        return "pick needs a terminal (stdin, and stdout or stderr)"
    return None


async def run(client: Client) -> int:
    """Pick, fill in, render, then copy or print; returns the exit code."""
    raise NotImplementedError
