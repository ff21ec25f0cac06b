"""A store's webhooks: where events are sent (``webhook add``), their secrets, and what was sent (``webhook log``).

A webhook is a target URL, the kinds of event it asks for (``event_kinds.EVERY``: every kind, those added
later included), the scopes it holds (which restricted prompts
it may be told of, ``events``), what kinds of address it may reach beyond the public internet, a timeout,
and its secret. The secret is a Standard Webhooks ``whsec_`` secret (base64 of 24 to 64 random bytes), read
from a file only its owner may read; it is kept in the store beside the key requestStates are signed with,
so it is as private as the store (a SQLite file only its owner reads; PostgreSQL's roles). It is never
logged, shown by ``webhook list``, or put in a message.
"""

from __future__ import annotations

import base64
import binascii
import os
import secrets
import stat
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .copies import identity, paused_reason
from .event_kinds import stored
from .model import StoreError, StoreMissing

if TYPE_CHECKING:
    from .connection import Connection

SECRET_PREFIX = "whsec_"
#: The Standard Webhooks secret's size, in random bytes.
MIN_SECRET_BYTES, MAX_SECRET_BYTES = 24, 64
#: The largest secret file read (a secret is under 100 bytes; a path to something else is refused unread).
MAX_SECRET_FILE = 1024
MAX_URL = 2048
#: A request's default and longest timeout, in seconds: connecting, sending and the answer's head and first
#: bytes, all told. A receiver is expected to answer at once and work afterwards.
DEFAULT_TIMEOUT, MAX_TIMEOUT = 10.0, 30.0
#: What a webhook may reach beyond public addresses (``sending.refused``): ``private`` (loopback, RFC 1918,
#: CGNAT, IPv6 unique local) and ``link-local`` (169.254.0.0/16, fe80::/10 and cloud metadata addresses).
ALLOWANCES = ("private", "link-local")


@dataclass(frozen=True, slots=True)
class Webhook:
    id: int
    url: str
    #: the kinds it asks for; ``("*",)`` (``event_kinds.EVERY``): every kind
    kinds: tuple[str, ...]
    scopes: tuple[str, ...]
    allow: tuple[str, ...]
    timeout: float
    author: str
    created: float
    #: why it does not deliver from this database (``copies.paused_reason``); None: it does
    paused: str | None = None


@dataclass(frozen=True, slots=True)
class Attempt:
    at: float
    sender: str
    code: int | None
    error: str | None


@dataclass(frozen=True, slots=True)
class Delivery:
    id: int
    event: int
    kind: str
    webhook: int
    status: str
    attempts: int
    next_try: float | None
    created: float
    #: the ``webhook-id`` it is sent with
    uid: str
    tries: tuple[Attempt, ...]


def parse_secret(text: str, where: str) -> str:
    """The ``whsec_`` secret ``text`` holds (surrounding white space ignored); ``StoreError`` naming ``where``,
    and never the text, when it is not one."""
    text = text.strip()
    if not text.startswith(SECRET_PREFIX):
        raise StoreError(f"{where} does not hold a webhook secret: it starts with {SECRET_PREFIX!r} followed by "
                         "base64 (make one with `promptdeck webhook add … --secret-file NEW --new-secret`)")
    try:
        key = base64.b64decode(text[len(SECRET_PREFIX):], validate=True)
    except (binascii.Error, ValueError):
        raise StoreError(f"{where}: the webhook secret after {SECRET_PREFIX!r} is not valid base64") from None
    if not MIN_SECRET_BYTES <= len(key) <= MAX_SECRET_BYTES:
        raise StoreError(f"{where}: a webhook secret is {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} random bytes; "
                         f"this one is {len(key)}")
    return text


def read_secret(path: str) -> str:
    """The secret in the file at ``path``, which only its owner may read or write."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise StoreError(f"cannot read the secret file {path!r}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise StoreError(f"the secret file {path!r} is not a regular file")
        if info.st_mode & 0o077:
            raise StoreError(f"the secret file {path!r} can be read or written by others (mode "
                             f"{stat.S_IMODE(info.st_mode):03o}): chmod 600 {path}")
        data = os.read(fd, MAX_SECRET_FILE + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_SECRET_FILE:
        raise StoreError(f"the secret file {path!r} is larger than a webhook secret ({MAX_SECRET_FILE} bytes at most)")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise StoreError(f"{path!r} does not hold a webhook secret (it is not ASCII text)") from None
    return parse_secret(text, repr(path))


def new_secret(path: str) -> None:
    """Write a new secret (32 random bytes) to ``path``, made with mode 600; an existing file is refused."""
    text = SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    except FileExistsError:
        raise StoreError(f"{path!r} exists; --new-secret writes a new file (or leave it out to use that one)") from None
    except OSError as exc:
        raise StoreError(f"cannot create the secret file {path!r}: {exc.strerror}") from None
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (text + "\n").encode())
    finally:
        os.close(fd)


def check_target(url: str) -> str:
    """``url`` if a webhook may be sent there: http or https, a host, no user or password, under 2 KB."""
    if len(url) > MAX_URL:
        raise StoreError(f"a webhook URL is at most {MAX_URL} characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise StoreError(f"{url!r} is not a URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise StoreError(f"a webhook is sent over http or https, not to {url!r}")
    if not parts.hostname:
        raise StoreError(f"{url!r} names no host")
    if parts.username is not None or parts.password is not None:
        raise StoreError("a webhook URL carries no user name or password (a receiver checks the signature)")
    if any(ord(c) < 33 or ord(c) == 127 for c in url):
        raise StoreError("a webhook URL holds no spaces or control characters")
    del port
    return url


def shown_target(url: str) -> str:
    """What a log line says of a target: its scheme, host and port (a path or query may be a credential, as
    in a chat service's incoming-webhook URL)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def add(store: Connection, url: str, secret: str, kinds: list[str], *, scopes: list[str], allow: list[str],
        timeout: float, author: str) -> int:
    """Record a webhook; its id. No ``kinds``: every kind, those a later promptdeck adds included."""
    check_target(url)
    parse_secret(secret, "the secret")
    asked = stored(kinds)
    bad = [a for a in allow if a not in ALLOWANCES]
    if bad:
        raise StoreError(f"--allow takes {' or '.join(ALLOWANCES)}, not {bad[0]!r}")
    if not 0 < timeout <= MAX_TIMEOUT:
        raise StoreError(f"a webhook's timeout is more than 0 and at most {MAX_TIMEOUT:g} seconds")
    with store.transaction():
        return int(store.run("INSERT INTO webhooks (url, secret, kinds, scopes, allow, timeout, author, created, "
                             "enabled_in) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id", url, secret,
                             asked, " ".join(sorted(set(scopes))),
                             " ".join(sorted(set(allow))), timeout, author, time.time(), identity(store)).fetchone()[0])


def listed(store: Connection) -> list[Webhook]:
    """The webhooks not removed, oldest first (without their secrets), each with why it is paused."""
    here = identity(store)
    return [Webhook(int(i), str(u), tuple(str(k).split()), tuple(str(s).split()), tuple(str(a).split()), float(t),
                    str(w), float(c), paused_reason(e, here))
            for i, u, k, s, a, t, w, c, e in store.rows(
                "SELECT id, url, kinds, scopes, allow, timeout, author, created, enabled_in FROM webhooks "
                "WHERE removed IS NULL ORDER BY id")]


def remove(store: Connection, hook: int) -> int:
    """Remove a webhook: nothing more is sent to it (its pending deliveries are cancelled; its log stays).
    How many deliveries were cancelled."""
    with store.transaction():
        if not store.rows("SELECT 1 FROM webhooks WHERE id = ? AND removed IS NULL", hook):
            raise StoreMissing(f"no webhook {hook} (promptdeck webhook list shows them)")
        now = time.time()
        store.run("UPDATE webhooks SET removed = ? WHERE id = ?", now, hook)
        return int(store.run("UPDATE deliveries SET status = 'cancelled', finished = ?, lease = NULL "
                             "WHERE webhook = ? AND status = 'pending'", now, hook).rowcount)


def log(store: Connection, hook: int | None = None, limit: int = 50) -> list[Delivery]:
    """The newest deliveries (of one webhook's, or all), newest first, with their attempts."""
    if hook is not None and not store.rows("SELECT 1 FROM webhooks WHERE id = ?", hook):
        raise StoreMissing(f"no webhook {hook} (promptdeck webhook list shows them)")
    where = "WHERE d.webhook = ? " if hook is not None else ""
    rows = store.rows("SELECT d.id, d.event, e.kind, d.webhook, d.status, d.attempts, d.next_try, e.created, e.uid "
                      f"FROM deliveries d JOIN events e ON e.id = d.event {where}ORDER BY d.id DESC LIMIT ?",
                      *([hook] if hook is not None else []), limit)
    found = []
    for did, event, kind, webhook, status, attempts, next_try, created, uid in rows:
        tries = tuple(Attempt(float(at), str(sender), code, error) for at, sender, code, error in store.rows(
            "SELECT at, sender, code, error FROM delivery_attempts WHERE delivery = ? ORDER BY attempt", did))
        found.append(Delivery(int(did), int(event), str(kind), int(webhook), str(status), int(attempts),
                              float(next_try) if status == "pending" else None, float(created), str(uid), tries))
    return found
