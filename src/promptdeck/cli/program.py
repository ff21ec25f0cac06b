"""The ``promptdeck`` command as the user typed it, for every hint that tells them what to type next.

A README user runs ``.venv/bin/promptdeck`` (promptdeck is not on PyPI), so a hint saying a bare
``promptdeck ls ...`` names a command their shell does not have. Every hint, and click's usage lines, take
the program's name from here: the path as typed (relative kept), a bare name when that is what PATH finds,
or ``PYTHON -m promptdeck``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys


def program() -> str:
    """The command that started this process, ready to paste into a shell."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) in ("__main__.py", "-m", "-c", ""):  # python -m promptdeck
        python = sys.orig_argv[0] if sys.orig_argv else sys.executable
        return f"{shlex.quote(python)} -m promptdeck"
    name = os.path.basename(argv0)
    if os.path.isabs(argv0):  # found on PATH by the shell: say it as typed, by name, when PATH finds it
        found = shutil.which(name)
        if found is not None and os.path.realpath(found) == os.path.realpath(argv0):
            return shlex.quote(name)
    return shlex.quote(argv0)


def command_line(*words: str) -> str:
    """``program()`` followed by ``words``, each quoted for a POSIX shell: a command line to paste."""
    return " ".join([program(), *map(shlex.quote, words)])


def word(text: str) -> str:
    """``text`` as one shell word: in double quotes when that keeps it as it is (a command line given as a
    TARGET reads best so), else ``shlex.quote``d."""
    if not any(c in text for c in '"$`\\!'):
        return f'"{text}"'
    return shlex.quote(text)
