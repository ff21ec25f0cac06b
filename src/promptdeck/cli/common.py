"""What every command shares: how it fails, and how it reads ``-a NAME=VALUE`` arguments."""

from __future__ import annotations

import sys
from typing import NoReturn

from .terminal import echo


def fail(message: str, code: int = 1) -> NoReturn:
    echo(f"promptdeck: {message}", err=True)
    sys.exit(code)


def parse_args(pairs: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            fail(f"-a takes name=value, got {pair!r}", 2)
        out[key] = value
    return out
