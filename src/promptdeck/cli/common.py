"""What every command shares: how it fails, how it reads ``-a NAME=VALUE`` arguments, and what the commands
on a store (``store``, ``govern``, ``webhooks``, ``serve --label``) take: the store, the author, a label."""

from __future__ import annotations

import datetime
import getpass
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NoReturn

import click

from ..protocol.errors import PromptdeckError
from .terminal import echo

if TYPE_CHECKING:
    from ..sources.store.database import Store

STORE_OPTION = click.option("--store", "url", required=True, envvar="PROMPTDECK_STORE", metavar="URL",
                            help="sqlite:///path.db, a path ending in .db, or postgresql://… "
                                 "(default: $PROMPTDECK_STORE).")
AUTHOR_OPTION = click.option("--author", default=None, metavar="NAME",
                             help="Who made the change (default: your user name).")


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


def author_of(given: str | None) -> str:
    """Who a change is recorded as made by: ``--author``, else the user's name."""
    if given:
        return given
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def valid_label(value: str) -> str:
    """``value`` if it is a valid label name; else exit 2 with a clear line."""
    from ..sources.store.model import is_label

    if not is_label(value):
        fail(f"label {value!r} is not valid: use 1-64 letters, digits, '_', '-' and '.'", 2)
    return value


@contextmanager
def open_store(url: str, *, create: bool = False) -> Iterator[Store]:
    """The store at ``url``, open for the ``with`` block; a store that cannot be opened fails the command."""
    from ..sources.store.database import Store

    try:
        with Store(url, create=create) as opened:
            yield opened
    except PromptdeckError as exc:
        fail(str(exc))


def utc_time(seconds: float) -> str:
    """A time as the commands show it: to the second, in UTC."""
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
