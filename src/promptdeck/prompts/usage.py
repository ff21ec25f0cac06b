"""Usage: which prompt, version, label and rollout arm was rendered, for which client, counted in memory.

Every render path hands ``Usage.count`` the prompt it rendered (the version a rollout chose), the arm and the
client: a dict increment keyed by objects it already holds, nothing else. A store source drains the window in
batches from its own thread (``sources/store/usage.py``); a folder-served library keeps the drained counts in
memory (``Usage.hours``), so both answer the same questions. (The audit line names the version and label from
the answer's own ``_meta``, ``server/security/audit.py``.)

Bounds: a client name is what the client says (``clientInfo.name``), so it is cut to ``MAX_CLIENT_CHARS``
printable characters (no control character or newline reaches a log line or a row), and a window holds at most
``MAX_KEYS`` keys: a render with a new key beyond that counts under client ``OTHER``. Drained, each prompt and
hour keeps at most ``MAX_CLIENTS`` client names, the rest folded into ``OTHER`` too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

#: how many characters of a client's name are kept
MAX_CLIENT_CHARS = 64
#: distinct client names kept per prompt and hour; the others count as ``OTHER``
MAX_CLIENTS = 16
#: distinct keys one window holds before new ones fold into ``OTHER``
MAX_KEYS = 4096
#: how often a library with no store moves its counts into ``Usage.hours`` (``keep_hours``)
DRAIN_SECONDS = 10.0
#: the rows a library with no store keeps in memory (``Usage.hours``), and for how long
MAX_KEPT_ROWS = 50_000
KEEP_SECONDS = 90 * 86400
#: the client of renders past the caps, and of a client that gave no usable name
OTHER = "other"
UNKNOWN = "unknown"
#: a render of a prompt under no rollout
NO_ARM = ""
#: where a served prompt's ``meta`` names its version and label (``server.handlers.SERVED_META``)
VERSION, LABEL = "promptdeck.dev/version", "promptdeck.dev/label"


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


def client_name(raw: object) -> str:
    """A client's self-given name made safe to count and log: printable, no newline, at most
    ``MAX_CLIENT_CHARS`` characters; ``UNKNOWN`` when it is no string or nothing is left. A name already safe
    is returned itself (``Usage._first`` tells by identity)."""
    if type(raw) is not str or not raw:
        return UNKNOWN
    if len(raw) <= MAX_CLIENT_CHARS and raw.isprintable() and not raw[0].isspace() and not raw[-1].isspace():
        return raw  # the common case, checked in C
    kept = "".join(c for c in raw[:MAX_CLIENT_CHARS * 4] if c.isprintable())[:MAX_CLIENT_CHARS].strip()
    return kept or UNKNOWN


def hour_of(seconds: float) -> int:
    return int(seconds) // 3600 * 3600


class Counted(Protocol):
    """What a window counts a render under: the prompt (version) rendered, as the catalog offers it."""

    @property
    def name(self) -> str: ...

    @property
    def meta(self) -> Mapping[str, Any]: ...


def rendered(prompt: Counted, arm: str) -> Rendered:
    """What rendering ``prompt`` renders: its version and label from its ``meta`` (0 and "" for a folder's)."""
    meta = prompt.meta
    if not meta:
        return Rendered(prompt.name, 0, "", arm)
    version, label = meta.get(VERSION, 0), meta.get(LABEL, "")
    return Rendered(prompt.name, version if type(version) is int else 0, label if type(label) is str else "", arm)


class Usage:
    """The renders counted since the last drain (``window``), and, for a library with no store, every
    drained hour (``hours``).

    The window is keyed by what the render path already holds: the prompt object the catalog served (hashed
    and compared by identity; with its arm, ``(prompt, arm)``, for a render under a rollout), then the
    client's name as the request gave it. Two dict look-ups and an increment, no tuple made or hashed for the
    common render, nothing decoded or cleaned: ``drain``, off the request's path, turns them into rows
    (version and label from the prompt's ``meta``, the name through ``client_name``). A name that is not
    clean is never a key: ``_first`` counts it under its cleaned form, and past ``MAX_KEYS`` names in all
    under ``OTHER``, so the window stays bounded whatever the clients send."""

    def __init__(self, keep: bool = True) -> None:
        #: prompt (or ``(prompt, arm)``) -> client's name as given -> renders
        self.window: dict[object, dict[object, int]] = {}
        self._names = 0  # client names the window holds, all prompts together
        #: kept here when no store takes the drained counts (a folder-served library)
        self.keep = keep
        self.hours: dict[Key, int] = {}
        # between drains (a thread's, a reader's); never taken on the render path
        self._lock = threading.Lock()
        self._ticking: threading.Event | None = None

    def count(self, prompt: Counted, arm: str, client: object) -> None:
        """One render of ``prompt`` (the version chosen) on ``arm`` for ``client`` (``clientInfo.name`` as
        given, or an application's name). On the request's path, so a dict increment and no more (the hot
        paths write it out: ``handlers.chosen``, ``methods.plain_get``); unlocked: a count lost to a race with
        a drain is tolerable, a key is never lost."""
        clients = self.window.get((prompt, arm) if arm else prompt)
        n = None if clients is None else clients.get(client)
        if n is None:
            self._first(prompt, arm, client)
        else:
            clients[client] = n + 1  # type: ignore[index]

    def _first(self, prompt: Counted, arm: str, raw: object) -> None:
        """A name the window does not hold for this prompt: made safe (``client_name``) and, past ``MAX_KEYS``
        names, ``OTHER``."""
        # None (no name given) stays a key: such renders must not all come here
        client = raw if raw is None else client_name(raw)
        where = (prompt, arm) if arm else prompt
        clients = self.window.get(where)
        if clients is None:
            clients = self.window[where] = {}
        if client not in clients:
            if self._names >= MAX_KEYS:
                client = OTHER
            if client not in clients:
                self._names += 1
        clients[client] = clients.get(client, 0) + 1

    def drain(self, now: float | None = None) -> dict[Key, int]:
        """The window's counts as rows of the hour of ``now``, clients past ``MAX_CLIENTS`` a prompt folded
        into ``OTHER``, busiest clients kept first; the window starts again empty. Kept in ``hours`` when
        ``keep``."""
        with self._lock:
            return self._drain(now)

    def _drain(self, now: float | None) -> dict[Key, int]:
        window, self.window, self._names = self.window, {}, 0
        hour = hour_of(time.time() if now is None else now)
        counted: list[tuple[int, Rendered, object]] = []
        for where, clients in window.items():
            r = rendered(*where) if type(where) is tuple else rendered(where, NO_ARM)  # type: ignore[arg-type]
            counted += [(n, r, client) for client, n in clients.items()]
        rows: dict[Key, int] = {}
        kept: dict[str, set[str]] = {}
        for n, r, client in sorted(counted, key=lambda item: -item[0]):
            key = Key(r.prompt, hour, r.version, r.label, r.arm, _kept(kept.setdefault(r.prompt, set()),
                                                                       client_name(client)))
            rows[key] = rows.get(key, 0) + n
        if self.keep:
            fold(self.hours, rows)
        return rows

    def kept(self, since: float) -> tuple[list[tuple[Key, int]], dict[str, int]]:
        """What a library with no store shows (``/api/usage``, ``Prompts.usage``): the rows of the hours from
        ``since`` on, oldest first, the window drained first; and the last hour each prompt was rendered in."""
        with self._lock:
            self._drain(None)
            hours = list(self.hours.items())
        last: dict[str, int] = {}
        for key, _ in hours:
            last[key.prompt] = max(last.get(key.prompt, 0), key.hour)
        start = hour_of(since)
        return sorted((row for row in hours if row[0].hour >= start), key=lambda row: (row[0].hour, row[0])), last

    def keep_hours(self, seconds: float | None = None) -> None:
        """Drain every ``seconds`` from a daemon thread, so that a library with no store keeps each render under
        its own hour, not the hour it is next read in (``serve --http`` over a folder; once)."""
        if self._ticking is not None or not self.keep:
            return
        ticking = self._ticking = threading.Event()
        every = DRAIN_SECONDS if seconds is None else seconds

        def tick() -> None:
            while not ticking.wait(every):
                self.drain()

        threading.Thread(target=tick, name="promptdeck-usage", daemon=True).start()


def fold(into: dict[Key, int], rows: dict[Key, int]) -> None:
    """Add ``rows`` to ``into``, keeping at most ``MAX_CLIENTS`` client names per prompt and hour, and in all at
    most ``MAX_KEPT_ROWS`` rows of the last ``KEEP_SECONDS`` (the oldest hours dropped first)."""
    if not rows:
        return
    first = min(key.hour for key in rows)
    clients: dict[tuple[str, int], set[str]] = {}
    # ``into`` is filled hour after hour (a drain's rows are of the hour it is), so the rows of the hours
    # ``rows`` adds to are at its end: read back to them only, not the whole history
    for key in reversed(into):
        if key.hour < first:
            break
        if key.client != OTHER:
            clients.setdefault((key.prompt, key.hour), set()).add(key.client)
    for key, n in rows.items():
        client = _kept(clients.setdefault((key.prompt, key.hour), set()), key.client)
        if client != key.client:
            key = key._replace(client=client)
        into[key] = into.get(key, 0) + n
    oldest = first - KEEP_SECONDS
    while into:
        key = next(iter(into))
        if len(into) <= MAX_KEPT_ROWS and key.hour >= oldest:
            break
        del into[key]


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
