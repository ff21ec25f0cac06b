"""Attacks on the token file re-read without a restart (server/security/token_file.py).

- A symlink swapped to point elsewhere is followed, as ``--token-file`` follows it at startup (``open``): whoever
  may repoint it may already write the tokens, and a Kubernetes secret is updated exactly so. Repointed at a
  FIFO or a device it is refused without blocking the request; left dangling it keeps the tokens.
- A huge file (even a sparse one of gigabytes) is refused after reading at most ``MAX_BYTES`` + 1 of it.
- A file caught mid-rotation (half-written, or wrong) keeps the whole old set; one log line, no token in it.
- With ``--workers``, every worker reads the file again: a removed token is a 401 on every connection.
- A session a removed token opened refuses that token at its next request; it is its name's, so it goes on with
  the name's new token. A stream already open stays open until it ends (docs/http.md says so).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from promptdeck.protocol.errors import LibraryError
from promptdeck.server.security import token_file
from promptdeck.server.security.principals import Principal
from promptdeck.server.security.token_file import MAX_BYTES, TokenFile
from tests.support.http_server import listens, promptdeck_http
from tests.support.token_files import INITIALIZE, NEW, OLD, Clock, status, who


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]


def test_a_symlink_swapped_elsewhere_is_followed_and_a_fifo_or_device_is_refused(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "v1").write_text(f"ci:{OLD}\n")
    (tmp_path / "v2").write_text(f"ops:{NEW}\n")
    link = tmp_path / "tokens"
    link.symlink_to(tmp_path / "v1")
    tokens = TokenFile(str(link), clock=Clock(step=1.0))

    def repoint(target: Path | str) -> None:
        beside = tmp_path / "tokens.new"
        beside.symlink_to(target)
        os.replace(beside, link)

    repoint(tmp_path / "v2")
    assert who(tokens, NEW) == Principal("ops") and who(tokens, OLD) is None
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in (fifo, "/dev/zero", tmp_path / "missing"):
        repoint(target)
        for _ in range(2):  # did not block on the FIFO, did not read /dev/zero; each reported once
            assert who(tokens, NEW) == Principal("ops")
    assert [line.split("; ")[0] for line in warnings(caplog)] == [
        f"token file {str(link)!r} is not a regular file", f"token file {str(link)!r} is not a regular file",
        f"cannot read token file {str(link)!r}: No such file or directory"]


def test_a_huge_token_file_is_refused_without_reading_it(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tokens"
    path.write_text(f"ci:{OLD}\n")
    tokens = TokenFile(str(path), clock=Clock(step=1.0))
    with path.open("r+b") as fh:
        fh.truncate(8 << 30)  # 8 GiB, sparse: reading it whole would take the server's memory
    asked: list[int] = []
    real_open = os.fdopen

    def counting(fd: int, mode: str) -> Any:
        handle: Any = real_open(fd, mode)
        read = handle.read

        def bounded(size: int = -1) -> bytes:
            asked.append(size)
            data: bytes = read(size)
            return data

        handle.read = bounded
        return handle

    monkeypatch.setattr(os, "fdopen", counting)
    assert who(tokens, OLD) == Principal("ci")
    assert asked == [MAX_BYTES + 1]
    assert warnings(caplog) == [f"token file {str(path)!r} is larger than {MAX_BYTES} bytes; "
                                "still using the 1 tokens read before"]
    monkeypatch.undo()
    with pytest.raises(LibraryError, match="larger than"):
        TokenFile(str(path))  # at startup too


def test_a_bad_file_mid_rotation_keeps_the_whole_old_set(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "tokens"
    path.write_text(f"ci:{OLD} prompts\n")
    tokens = TokenFile(str(path), clock=Clock(step=1.0))
    with path.open("a") as fh:  # an editor writing in place, caught after the new token's first bytes
        fh.write(f"ci:{NEW[:20]}")
        fh.flush()
        assert who(tokens, NEW[:20]) is None and who(tokens, OLD) is not None
        fh.write(f"{NEW[20:]} prompts\n")
    assert who(tokens, NEW) == who(tokens, OLD) == Principal("ci", frozenset({"prompts"}))
    path.write_text(f"ci:{NEW} prompts\nci:{NEW} prompts\n")  # the removal gone wrong: the new token twice
    for _ in range(3):
        assert who(tokens, OLD) == who(tokens, NEW) == Principal("ci", frozenset({"prompts"}))
    lines = warnings(caplog)
    assert len(lines) == 2 and "no newline at the end" in lines[0] and "the same token as line 1" in lines[1]
    assert not any(NEW[:10] in line or OLD[:10] in line for line in lines)
    path.write_text(f"ci:{NEW} prompts\n")
    assert who(tokens, OLD) is None and who(tokens, NEW) is not None


def statuses(endpoint: str, token: str, count: int) -> set[int]:
    return {status(endpoint, token) for _ in range(count)}


def test_every_worker_reads_the_file_again(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "hello.md").write_text("Hello.\n")
    path = tmp_path / "tokens"
    path.write_text(f"ci:{OLD}\nci:{NEW}\n")
    started: list[subprocess.Popen[bytes]] = []
    with promptdeck_http("serve", str(tmp_path / "prompts"), "--http", "{host}:{port}", "--no-watch", "--stateless",
                         "--workers", "2", "--token-file", str(path), started=started) as endpoint:
        (server,) = started
        assert statuses(endpoint, OLD, 10) == {200}
        (tmp_path / "tokens.new").write_text(f"ci:{NEW}\n")
        os.replace(tmp_path / "tokens.new", path)
        deadline = time.monotonic() + 60
        while statuses(endpoint, OLD, 1) != {401}:
            assert time.monotonic() < deadline
        # A worker looks at the file at most once a second: past that, none may still take the old token.
        time.sleep(token_file.CHECK_SECONDS + 0.1)
        assert statuses(endpoint, OLD, 20) == {401}
        assert statuses(endpoint, NEW, 20) == {200}
        os.kill(server.pid, signal.SIGHUP)  # forwarded to the workers, which read the file; nobody dies
        assert statuses(endpoint, NEW, 5) == {200}
        port = int(endpoint.rsplit(":", 1)[1].split("/", 1)[0])
        assert server.poll() is None and listens(server.pid, port)


def test_a_session_opened_with_a_removed_token_refuses_it_and_goes_on_with_the_new_one(tmp_path: Path) -> None:
    """What a removed token opened: its next request with that token is a 401; the session is its name's, so a
    client that switched to the new token keeps it (that is what lets a rotation lose nothing)."""
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "hello.md").write_text("Hello.\n")
    path = tmp_path / "tokens"
    path.write_text(f"ci:{OLD}\nci:{NEW}\n")
    started: list[subprocess.Popen[bytes]] = []
    with promptdeck_http("serve", str(tmp_path / "prompts"), "--http", "{host}:{port}", "--no-watch",
                         "--token-file", str(path), started=started) as endpoint, httpx.Client(timeout=30) as client:
        accept = {"accept": "application/json, text/event-stream"}
        opened = client.post(endpoint, json=INITIALIZE, headers={**accept, "authorization": f"Bearer {OLD}"})
        assert opened.status_code == 200
        session = {**accept, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}

        def ping(token: str) -> int:
            return client.post(endpoint, json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
                               headers={**session, "authorization": f"Bearer {token}"}).status_code

        assert ping(OLD) == 200
        (tmp_path / "tokens.new").write_text(f"ci:{NEW}\n")
        os.replace(tmp_path / "tokens.new", path)
        os.kill(started[0].pid, signal.SIGHUP)
        deadline = time.monotonic() + 60
        while ping(OLD) != 401:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert ping(NEW) == 200
