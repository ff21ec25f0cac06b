"""Usage: which prompt, version, label and rollout arm was rendered, for which client, counted in memory.

The render path makes one report (``Rendered``) and hands it to ``Usage.count`` (a dict increment, nothing
else) and to ``LAST``, where the audit line of the same request reads it. A store source drains the window in
batches from its own thread (``sources/store/usage.py``); a folder-served library keeps the drained counts in
memory (``Usage.hours``), so both answer the same questions.

Bounds: a client name is what the client says (``clientInfo.name``), so it is cut to ``MAX_CLIENT_CHARS``
printable characters (no control character or newline reaches a log line or a row), and a window holds at most
``MAX_KEYS`` keys: a render with a new key beyond that counts under client ``OTHER``. Drained, each prompt and
hour keeps at most ``MAX_CLIENTS`` client names, the rest folded into ``OTHER`` too.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import NamedTuple

#: how many characters of a client's name are kept
MAX_CLIENT_CHARS = 64
#: distinct client names kept per prompt and hour; the others count as ``OTHER``
MAX_CLIENTS = 16
#: distinct keys one window holds before new ones fold into ``OTHER``
MAX_KEYS = 4096
#: the client of renders past the caps, and of a client that gave no usable name
OTHER = "other"
UNKNOWN = "unknown"
#: a render of a prompt under no rollout
NO_ARM = ""


class Rendered(NamedTuple):
    """What one render rendered: the prompt, its version and label (0 and "" for a folder's), the rollout arm
    ("rollout", "label" for a prompt under rollout that got the label's version, else ``NO_ARM``)."""

    prompt: str
    version: int
    label: str
    arm: str


class Key(NamedTuple):
    """One row of usage: a prompt's renders in one hour (epoch seconds at the hour's start)."""

    prompt: str
    hour: int
    version: int
    label: str
    arm: str
    client: str


#: The report of the render this request made, read by its audit line (``server/http/app.py``).
LAST: ContextVar[Rendered | None] = ContextVar("promptdeck_rendered", default=None)


def client_name(raw: object) -> str:
    """A client's self-given name made safe to count and log: printable, no newline, at most
    ``MAX_CLIENT_CHARS`` characters; ``UNKNOWN`` when it is no string or nothing is left."""
    if not isinstance(raw, str):
        return UNKNOWN
    kept = "".join(c for c in raw[:MAX_CLIENT_CHARS * 4] if c.isprintable())[:MAX_CLIENT_CHARS].strip()
    return kept or UNKNOWN


def hour_of(seconds: float) -> int:
    return int(seconds) // 3600 * 3600


class Usage:
    """The renders counted since the last drain (``window``), and, for a library with no store, every
    drained hour (``hours``)."""

    def __init__(self, keep: bool = True) -> None:
        self.window: dict[tuple[Rendered, str], int] = {}
        #: kept here when no store takes the drained counts (a folder-served library)
        self.keep = keep
        self.hours: dict[Key, int] = {}

    def count(self, rendered: Rendered, client: str) -> None:
        """One render: on the request's path, so a dict increment and no more. Unlocked: a count lost to a
        race between threads is tolerable; a key is never lost."""
        LAST.set(rendered)
        window = self.window
        key = (rendered, client)
        n = window.get(key)
        if n is None and len(window) >= MAX_KEYS:
            key = (rendered, OTHER)
            n = window.get(key)
        window[key] = (n or 0) + 1

    def drain(self, now: float | None = None) -> dict[Key, int]:
        """The window's counts as rows of the hour of ``now``, clients past ``MAX_CLIENTS`` a prompt folded
        into ``OTHER``; the window starts again empty. Kept in ``hours`` when ``keep``."""
        window, self.window = self.window, {}
        hour = hour_of(time.time() if now is None else now)
        rows: dict[Key, int] = {}
        clients: dict[str, set[str]] = {}
        for (r, client), n in sorted(window.items(), key=lambda item: -item[1]):
            client = _kept(clients.setdefault(r.prompt, set()), client)
            key = Key(r.prompt, hour, r.version, r.label, r.arm, client)
            rows[key] = rows.get(key, 0) + n
        if self.keep:
            fold(self.hours, rows)
        return rows


def fold(into: dict[Key, int], rows: dict[Key, int]) -> None:
    """Add ``rows`` to ``into``, keeping at most ``MAX_CLIENTS`` client names per prompt and hour."""
    clients: dict[tuple[str, int], set[str]] = {}
    for key in into:
        if key.client != OTHER:
            clients.setdefault((key.prompt, key.hour), set()).add(key.client)
    for key, n in rows.items():
        client = _kept(clients.setdefault((key.prompt, key.hour), set()), key.client)
        if client != key.client:
            key = key._replace(client=client)
        into[key] = into.get(key, 0) + n


def _kept(seen: set[str], client: str) -> str:
    """``client``, or ``OTHER`` when ``seen`` holds ``MAX_CLIENTS`` other names already."""
    if client == OTHER or client in seen:
        return client
    if len(seen) >= MAX_CLIENTS:
        return OTHER
    seen.add(client)
    return client


_UNITS = {"h": 3600, "d": 86400, "w": 7 * 86400}


def since_seconds(text: str, now: float) -> float:
    """When ``--since``/``since=`` starts: ``7d``, ``24h``, ``2w`` back from ``now``, or epoch seconds. A
    ValueError names what is accepted."""
    text = text.strip()
    try:
        if text[-1:] in _UNITS and text[:-1].isdigit() and len(text) <= 8:
            return now - int(text[:-1]) * _UNITS[text[-1]]
        if text.isdigit() and len(text) <= 12:
            return float(text)
    except ValueError:
        pass
    raise ValueError(f"since {text[:40]!r}: give hours, days or weeks back (24h, 7d, 2w) or epoch seconds")
