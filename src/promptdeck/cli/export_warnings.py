"""How ``export --to FORMAT`` reports what a format could not carry: one warning a line, naming its file."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from .terminal import echo, shown

if TYPE_CHECKING:
    from ..export.writers import Written


def warn(written: list[Written]) -> None:
    """Each warning on a line of its own, naming its file. One that most files share is about the format
    rather than a prompt (Claude Code splits arguments at spaces): said once, with how many files it
    concerns, rather than on every file's lines."""
    shared = Counter(warning for item in written for warning in dict.fromkeys(item.warnings))
    common = {warning for warning, count in shared.items() if count > 1 and count * 2 > len(written)}
    for item in written:
        for warning in dict.fromkeys(item.warnings):
            if warning not in common:
                echo(f"{shown(item.path)}: warning: {shown(warning)}", err=True)
    for warning in common:
        echo(f"warning: {shown(warning)} (in {shared[warning]} of the {len(written)} files)", err=True)
