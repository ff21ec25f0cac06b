"""Folders promptdeck keeps what is the user's alone in: the prompt cache and the OAuth token folder.

What such a folder holds is trusted when read back (a cached render is served as the server's; a token
file is sent as a credential), so a folder that another user owns, or that the group or others may write
to, is refused rather than used: anyone who may write there may plant a render, or swap a file for a
link between our check and our write. promptdeck makes these folders 0700 itself; a folder made by hand
with looser modes gets one error that says how to fix it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..protocol.errors import PromptdeckError

__all__ = ["check_own_folder", "make_own_folder"]


def check_own_folder(path: Path, what: str, error: type[PromptdeckError]) -> None:
    """Raise ``error`` unless ``path`` (when it exists) is a folder of this user's that only it may write.
    ``what`` names the folder in the message (``the prompt cache``)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise error(f"{what} {str(path)!r} cannot be read: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise error(f"{what} {str(path)!r} is not a folder")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise error(f"{what} {str(path)!r} belongs to another user (uid {info.st_uid}); promptdeck keeps it in a "
                    "folder of your own: choose another")
    if info.st_mode & 0o022:
        raise error(f"{what} {str(path)!r} may be written by other users (mode {stat.S_IMODE(info.st_mode):04o}); "
                    f"promptdeck reads back what is in it as its own: chmod 700 {path}")


def make_own_folder(path: Path, what: str, error: type[PromptdeckError]) -> None:
    """Make ``path`` (0700, with its parents) if it is not there, then check it as ``check_own_folder`` does."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except FileExistsError:
        pass  # not a folder: said below
    except OSError as exc:
        raise error(f"{what} {str(path)!r} cannot be made: {exc.strerror}") from None
    check_own_folder(path, what, error)
