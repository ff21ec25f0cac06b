"""A store served to writers whose runs of a prompt's tests are bounded (tests/attack/test_bounded_runs.py and
its neighbours)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.http_server import promptdeck_http

WRITERS = {name: {"authorization": f"Bearer {name}-token-0123456789"} for name in ("ann", "cat", "dan")}


def cli(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@contextmanager
def serving(tmp: Path, url: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    library = tmp / "lib"
    library.mkdir()
    (library / "greet.md").write_text("Hello!\n")
    cli("publish", str(library), "--store", url, "--label", "production", "-m", "first")
    tokens = tmp / "tokens"
    tokens.write_text("".join(f"{name}:{name}-token-0123456789 store:write\n" for name in WRITERS)
                      + "bob:bob-token-0123456789\n")
    started: list[subprocess.Popen[bytes]] = []
    with promptdeck_http("serve", "--store", url, "--label", "production", "--http", "{host}:{port}",
                         "--token-file", str(tokens), log=tmp / "serve.log", started=started) as endpoint:
        yield endpoint.removesuffix("/mcp") + "/api/store", started[0]
