"""How to add one of promptdeck's optional extras (pyproject.toml), for the message that says one is missing.

promptdeck is not on PyPI, so ``pip install 'promptdeck[http]'`` fails for everyone. What works is pip
installing the clone with the extra, with the pip of the Python that runs promptdeck now (``.venv/bin/pip``
for a README user); this module says that command, whichever layer finds the extra missing.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path


def _shown(path: str, base: str) -> str:
    """``path`` relative to ``base`` when below it (``.venv/bin/pip``), else as it is."""
    relative = os.path.relpath(path, base)
    return shlex.quote(path if relative.startswith("..") else relative)


def install_command(extra: str) -> str:
    """The shell command that adds ``extra`` (``http``, ``oauth``, ...) to the promptdeck running now."""
    here = os.getcwd()
    pip = Path(sys.executable).with_name("pip")
    clone = Path(__file__).resolve().parents[2]  # src/promptdeck/extras.py in a clone (an editable install)
    if not (clone / "pyproject.toml").is_file():  # a built wheel: its clone is wherever it was built
        runner = shlex.quote(str(pip)) if pip.exists() else f"{shlex.quote(sys.executable)} -m pip"
        return f"{runner} install '.[{extra}]' in a clone of promptdeck (docs/install.md)"
    base = here if os.path.samefile(here, clone) else str(clone)
    runner = _shown(str(pip), base) if pip.exists() else f"{_shown(sys.executable, base)} -m pip"
    cd = "" if base == here else f"cd {shlex.quote(str(clone))} && "
    return f"{cd}{runner} install -e '.[{extra}]'"


def needs(what: str, extra: str) -> str:
    """``serving over HTTP needs the http extra: .venv/bin/pip install -e '.[http]'``."""
    return f"{what} needs the {extra} extra: {install_command(extra)}"
