"""The command line run as a real process, as the CLI tests, the store tests and the export tests run it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.libraries import EXAMPLES


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``promptdeck ARGS``, whatever its exit status."""
    return subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True, timeout=60)


def pd(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``promptdeck ARGS`` with no stdin; with ``check``, it must succeed."""
    done = subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=300, check=False)
    if check:
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def library(tmp_path: Path, name: str = "lib") -> Path:
    """A copy of examples/prompts under ``tmp_path``."""
    folder = tmp_path / name
    shutil.copytree(EXAMPLES, folder)
    return folder
