"""Where a publish came from: the git commit, branch and dirtiness of the folder's work tree.

Read with the ``git`` binary, each call bounded in time (``GIT_SECONDS``). A folder that is not in a git
work tree, a repository without a commit yet, a missing ``git``, a git that hangs or refuses (an unsafe
owner): no provenance, never an error. A folder below the repository's root works too: dirtiness is that of
the folder's own files (``git status -- .``), which is what the publish records.

The repository's configuration is not trusted to run commands: ``core.fsmonitor`` (a command git would run
on ``status``) is turned off for these calls.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import NamedTuple

#: How long one git call may take, in seconds.
GIT_SECONDS = 5.0
#: The file in a folder where its labels' bases are kept (``sync.BASE_FILE``): not a change of the library.
_IGNORED = ".promptdeck-base"


class Provenance(NamedTuple):
    """A publish's git provenance."""

    commit: str
    #: None: a detached HEAD
    branch: str | None
    #: whether the folder had changes not committed (tracked or untracked files)
    dirty: bool

    def text(self) -> str:
        """As history shows it: ``git 1a2b3c4d5e6f main, dirty``."""
        return f"git {self.commit[:12]} {self.branch or '(detached)'}" + (", dirty" if self.dirty else "")


def _git(folder: str, *args: str) -> str | None:
    git = shutil.which("git")
    if git is None:
        return None
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run([git, "-c", "core.fsmonitor=false", "-C", folder, *args], capture_output=True,
                              timeout=GIT_SECONDS, env=env, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace").strip()


def provenance(folder: str | os.PathLike[str]) -> Provenance | None:
    """The git provenance of ``folder``, or None when it has none (see the module's docstring)."""
    where = os.fspath(folder)
    if _git(where, "rev-parse", "--is-inside-work-tree") != "true":
        return None
    commit = _git(where, "rev-parse", "--verify", "-q", "HEAD")
    if not commit or len(commit) > 64 or not all(c in "0123456789abcdef" for c in commit):
        return None
    branch = _git(where, "symbolic-ref", "--short", "-q", "HEAD") or None
    status = _git(where, "status", "--porcelain", "--untracked-files=normal", "--", ".", f":(exclude){_IGNORED}")
    if status is None:
        return None
    return Provenance(commit, branch[:200] if branch else None, bool(status))
