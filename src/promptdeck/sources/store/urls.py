"""Where a store lives: its URL, which database it names, and how it is shown without its secrets; a SQLite
store's file, made private."""

from __future__ import annotations

import logging
import os
import stat

from .model import StoreError

log = logging.getLogger("promptdeck.store")


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql:", "postgres:"))


#: The mode of a SQLite store and its -wal and -shm files: the owner's alone.
PRIVATE_MODE = 0o600
#: Stores already warned about in this process (``warn_if_readable``): a server opens its store often.
_warned: set[str] = set()


def create_private(path: str) -> None:
    """Make the SQLite file at ``path`` with ``PRIVATE_MODE`` if it does not exist yet, whatever the umask.

    A store holds prompts that scopes restrict and the key requestStates are signed with: no other user
    of the machine may read it. sqlite3 would create it with the umask's mode (0644 as a rule); made
    here first, SQLite finds it, and gives the -wal and -shm it creates beside it the same mode.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_MODE)
    except FileExistsError:
        warn_if_readable(path)
        return
    try:
        os.fchmod(fd, PRIVATE_MODE)  # the umask may have taken bits away from the owner, too
    finally:
        os.close(fd)


def warn_if_readable(path: str) -> None:
    """One warning a store, naming its files and the fix, when the store or its -wal or -shm can be read by
    its group or by others (a store made by an older promptdeck, or copied with a loose umask). The fix
    names the database even when only a companion is loose: SQLite gives new ones the database's mode."""
    if path in _warned:
        return
    loose: list[str] = []
    modes: list[int] = []
    for number, name in enumerate((path, f"{path}-wal", f"{path}-shm")):
        try:
            mode = stat.S_IMODE(os.stat(name).st_mode)
        except OSError:
            continue  # not there (yet): sqlite3 says so if the database itself is missing
        if number == 0 or mode & 0o044:
            loose.append(name)
            modes.append(mode)
    if any(mode & 0o044 for mode in modes):
        _warned.add(path)
        log.warning("the store %s can be read by other users (mode %s), and it holds restricted prompts and the "
                    "requestState signing key: chmod 600 %s", path, "/".join(f"{mode:03o}" for mode in modes),
                    " ".join(loose))


def sqlite_path(url: str) -> str:
    """``sqlite:///rel/path.db`` and ``sqlite:////abs/path.db`` (SQLAlchemy's convention), or a bare path."""
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///"):]
        if path and path != "/":
            return path
    elif not url.startswith("sqlite:"):
        return url
    raise StoreError(f"a SQLite store URL is sqlite:///path.db (or a path ending in .db), not {shown_url(url)!r}")


#: libpq's connection parameters that are secrets, which a URL's query may carry (``?password=…``).
SECRET_PARAMETERS = frozenset({"password", "sslpassword"})
#: The environment variable libpq reads a password from.
PASSWORD_ENV = "PGPASSWORD"


def shown_url(url: str) -> str:
    """A store URL fit for a message or a log line: the password of its userinfo and the value of every
    secret parameter of its query (``password=``, ``sslpassword=``, in any case, its name percent-encoded
    or not: libpq decodes names too) written as ``***``. Anything that only looks like a URL is masked
    the same way, since a mistyped scheme still carries the password it was given."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    # libpq ends the userinfo at the first '/', not at '?' or '#' as RFC 3986 does: a password holding
    # those is still the password, so the authority is cut as libpq cuts it (urlsplit would not).
    authority, slash, tail = rest.partition("/")
    if "@" not in authority and ":" in authority:
        # A password holding an unencoded '/': libpq refuses such a URL, but the message that quotes it must
        # not show the rest of the password, so here the userinfo runs to the last '@' before the query.
        before_query = rest.partition("?")[0]
        userinfo, at, after = before_query.rpartition("@")
        if at:
            hosts, slash, tail = after.partition("/")
            authority, tail = f"{userinfo}@{hosts}", tail + rest[len(before_query):]
    if "@" in authority:
        userinfo, _, hosts = authority.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        authority = f"{user}{':***' if colon else ''}@{hosts}"
    head, question, query = f"{scheme}://{authority}{slash}{tail}".partition("?")
    return head + question + "&".join(_masked_parameter(pair) for pair in query.split("&")) if question else head


def _masked_parameter(pair: str) -> str:
    from urllib.parse import unquote

    name, equals, _value = pair.partition("=")
    return f"{name}=***" if equals and unquote(name).strip().lower() in SECRET_PARAMETERS else pair


def store_secrets(url: str) -> list[str]:
    """The secrets a store's URL and libpq's environment hold, as written and percent-decoded: what must
    never reach a message (``without_secrets``)."""
    from urllib.parse import unquote

    found: list[str] = []
    rest = url.partition("://")[2]
    authority = rest.partition("/")[0]
    if "@" in authority:
        found.append(authority.rpartition("@")[0].partition(":")[2])
    for pair in url.partition("?")[2].split("&"):
        name, _, value = pair.partition("=")
        if unquote(name).strip().lower() in SECRET_PARAMETERS:
            found.append(value)
    found.append(os.environ.get(PASSWORD_ENV, ""))
    found += [unquote(secret) for secret in found]
    # Longest first, so a secret that holds another is replaced whole.
    return sorted({secret for secret in found if secret}, key=len, reverse=True)


def without_secrets(text: str, url: str) -> str:
    """``text`` (a driver's message, say) with the store URL's secrets and ``$PGPASSWORD`` replaced by ``***``:
    libpq quotes the part of a URL it cannot parse, which may be the password (``invalid percent-encoded
    token: "…"``)."""
    for secret in store_secrets(url):
        text = text.replace(secret, "***")
    return text
