"""What a client command's TARGET is, said before connecting to it: a folder, a URL without its scheme, a
command that is not there, or an http(s) URL with the client's HTTP library missing each get one line that
says what TARGET must be and what to type instead, rather than what starting it as a program gave
("Permission denied", "No such file or directory") or a traceback."""

from __future__ import annotations

import os
import re
import shlex
import shutil

from ..extras import needs
from .program import command_line, program, word

#: ``host:port/...``, ``localhost:8000``, ``[::1]:8000/mcp``: a URL missing ``http://``
_BARE_URL = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[\w.-]+):\d{1,5}(?:/\S*)?\Z")
WHAT = "TARGET is a command that starts a stdio MCP server, or an http(s) URL"


def target_problem(target: str, command: str = "ls") -> tuple[str, int] | None:
    """One line saying why ``target`` cannot be what a client command connects to, with the exit code (2: a
    usage mistake; 1: a missing extra), or None."""
    if target.startswith(("http://", "https://")):
        try:
            import aiohttp  # noqa: F401
        except ImportError:
            return needs("reading an HTTP server", "http"), 1
        return None
    problem = _command_problem(target, command)
    return None if problem is None else (problem, 2)


def _command_problem(target: str, command: str) -> str | None:
    if os.path.isdir(target):
        return _folder(target, command)
    if os.path.isfile(target) and not os.access(target, os.X_OK):
        return f"{target!r} is a file that is not a program: {WHAT}"
    if _BARE_URL.match(target):
        return f"{target!r} is no command: {WHAT}; did you mean http://{target}?"
    try:
        argv = shlex.split(target)
    except ValueError as exc:
        return f"TARGET {target!r} is not one command line ({exc}); {WHAT}"
    if not argv:
        return f"TARGET is empty: {WHAT}"
    program = argv[0]
    if os.path.isdir(program):
        return _folder(program, command)
    if "/" in program and os.path.isfile(program) and not os.access(program, os.X_OK):
        return f"{program!r} is a file that is not a program: {WHAT}"
    if "/" not in program and shutil.which(program) is None:
        return f"no command {program!r} is found on PATH: {WHAT}"
    if "/" in program and not os.path.exists(program):
        return f"{program!r} does not exist: {WHAT}"
    return None


def _folder(folder: str, command: str) -> str:
    return (f"{folder!r} is a folder: {WHAT}; for its prompts, give the command that serves it: "
            f"{program()} {command} {word(command_line('serve', folder))}")
