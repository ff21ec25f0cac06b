"""The web page's store API as its tests reach it: a store made with the real ``promptdeck publish``, served by a
real ``promptdeck serve --http`` with three principals, and requests to ``/api/store``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.support.cli import pd
from tests.support.http_server import http_server

WRITER = "alice:writer-token-0123456789 store:write"
READER = "bob:reader-token-0123456789"
HR = "carol:hr-token-0123456789 hr"
ALICE = {"authorization": "Bearer writer-token-0123456789"}
BOB = {"authorization": "Bearer reader-token-0123456789"}
CAROL = {"authorization": "Bearer hr-token-0123456789"}


GREET_1 = "---\ndescription: Say hello\narguments:\n  - name: who\n---\nHello {{ who }}!\n"
GREET_2 = ("---\ndescription: Say hello\narguments:\n  - name: who\n  - name: mood\n    required: false\n---\n"
           "Hi {{ who }}{% if mood is defined %} ({{ mood }}){% endif %}!\n")
SECRET = "---\nscopes: [hr]\n---\nSalaries are private.\n"


def cli(*args: str) -> str:
    """``promptdeck ARGS``, which must succeed: its stdout."""
    return pd(*args).stdout


def make_store(tmp: Path, url: str | None = None) -> str:
    """A store (SQLite unless ``url``) whose label production has greet at version 1 and whose newest greet
    is version 2."""
    library, url = tmp / "lib", url or f"sqlite:///{tmp / 'store.db'}"
    library.mkdir()
    (library / "greet.md").write_text(GREET_1)
    (library / "salaries.md").write_text(SECRET)
    (library / "note.md").write_text("Write {{ read('material/tone.txt') }} here.\n")
    (library / "material").mkdir()
    (library / "material" / "tone.txt").write_text("kindly")
    cli("publish", str(library), "--store", url, "--label", "production", "-m", "first", "--author", "root")
    (library / "greet.md").write_text(GREET_2)
    cli("publish", str(library), "--store", url, "-m", "<b>mood</b> added", "--author", "bob")
    return url


@contextmanager
def serving(tmp: Path, url: str, log: Path | None = None) -> Iterator[tuple[str, str]]:
    """``serve --store URL --http`` of label production for the writer, reader and hr tokens: (its base URL,
    ``url``). With ``log``, its stderr goes there at ``-v`` (the audit lines)."""
    tokens = tmp / "tokens"
    tokens.write_text("\n".join((WRITER, READER, HR)) + "\n")
    verbose = ("-v",) if log is not None else ()
    with http_server("", "--store", url, "--label", "production", "--token-file", str(tokens), *verbose,
                     log=log) as endpoint:
        yield endpoint.removesuffix("/mcp"), url


def get(base: str, route: str, headers: dict[str, str], **params: Any) -> httpx.Response:
    return httpx.get(f"{base}/api/store{route}", headers=headers, params=params, timeout=30)


def post(base: str, route: str, headers: dict[str, str], body: Any) -> httpx.Response:
    return httpx.post(f"{base}/api/store{route}", headers=headers, json=body, timeout=30)


def history(url: str, prompt: str = "greet") -> str:
    return cli("history", prompt, "--store", url)
