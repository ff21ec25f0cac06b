"""The token file re-read without a restart (server/security/token_file.py): a change is picked up at the next
check, a forced reload (SIGHUP) reads whatever the file stats, a bad file keeps the tokens in force and is
reported once, and a request sees one whole set."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest

from promptdeck.protocol.errors import AuthError, LibraryError
from promptdeck.server.security.principals import Principal
from promptdeck.server.security.token_file import TokenFile
from tests.support.token_files import NEW, OLD, Clock, who


def write(path: Path, text: str) -> None:
    """Write beside and rename over, as the docs tell an operator to."""
    beside = path.with_name(path.name + ".new")
    beside.write_text(text)
    os.replace(beside, path)


def test_a_changed_file_is_read_at_the_next_check_and_not_before(tmp_path: Path) -> None:
    path, clock = tmp_path / "tokens", Clock()
    write(path, f"ci:{OLD} prompts\n")
    tokens = TokenFile(str(path), clock=clock)
    assert who(tokens, OLD) == Principal("ci", frozenset({"prompts"}))
    write(path, f"ci:{OLD} prompts\nci:{NEW} prompts\n")
    assert who(tokens, NEW) is None  # within the second since the last look: not yet
    clock.now += 1.0
    assert who(tokens, NEW) == who(tokens, OLD) == Principal("ci", frozenset({"prompts"}))
    write(path, f"ci:{NEW} prompts\n")
    clock.now += 1.0
    assert who(tokens, OLD) is None and who(tokens, NEW) is not None
    with pytest.raises(AuthError) as refused:
        asyncio.run(tokens.authenticate(f"Bearer {OLD}"))
    assert refused.value.status == 401


def test_reload_soon_reads_at_the_next_request_whatever_the_clock(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    write(path, f"ci:{OLD}\n")
    tokens = TokenFile(str(path), clock=Clock())
    write(path, f"ci:{NEW}\n")
    assert who(tokens, NEW) is None
    tokens.reload_soon()
    assert who(tokens, NEW) is not None and who(tokens, OLD) is None


def test_an_unchanged_file_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, clock = tmp_path / "tokens", Clock()
    write(path, f"ci:{OLD}\n")
    tokens = TokenFile(str(path), clock=clock)
    import promptdeck.server.security.token_file as module

    def never(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("read again although unchanged")

    monkeypatch.setattr(module, "read_tokens", never)
    for _ in range(3):
        clock.now += 1.0
        assert tokens.check() is False


@pytest.mark.parametrize(("text", "fault"), [
    (b"ci-without-a-colon\n", ":1: expected name:token"),
    (f"ci:{NEW}\nops:{NEW}\n".encode(), ":2: the same token as line 1"),
    (f"ci:{NEW}\nops:{NEW[:10]}".encode(), ":2: no newline at the end"),  # caught half-written
    (b"", "no bearer tokens given"),
    (b"ci:\xff\xfe-not-utf-8-0123456789\n", "is not UTF-8 text"),
])
def test_a_bad_file_keeps_the_tokens_and_is_reported_once(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                          text: bytes, fault: str) -> None:
    path, clock = tmp_path / "tokens", Clock()
    write(path, f"ci:{OLD}\n")
    tokens = TokenFile(str(path), clock=clock)
    path.with_name("x").write_bytes(text)
    os.replace(path.with_name("x"), path)
    caplog.set_level(logging.INFO, logger="promptdeck.tokens")
    for _ in range(3):
        clock.now += 1.0
        assert who(tokens, OLD) == Principal("ci")
        assert who(tokens, NEW) is None
    tokens.reload_soon()
    assert who(tokens, OLD) == Principal("ci")
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1, lines
    assert repr(str(path)) in lines[0] and fault in lines[0] and "still using the 1 tokens" in lines[0]
    assert NEW not in lines[0] and NEW[:10] not in lines[0]
    write(path, f"ci:{NEW}\n")  # fixed: read, and a later bad file is reported again
    clock.now += 1.0
    assert who(tokens, NEW) == Principal("ci")
    write(path, "garbage\n")
    clock.now += 1.0
    assert who(tokens, NEW) == Principal("ci")
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 2


def test_a_removed_file_keeps_the_tokens_and_is_an_error_at_startup(tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    path, clock = tmp_path / "tokens", Clock()
    write(path, f"ci:{OLD}\n")
    tokens = TokenFile(str(path), clock=clock)
    path.unlink()
    for _ in range(2):
        clock.now += 1.0
        assert who(tokens, OLD) == Principal("ci")
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        f"cannot read token file {str(path)!r}: No such file or directory; still using the 1 tokens read before"]
    with pytest.raises(LibraryError, match="cannot read token file"):
        TokenFile(str(path))


def test_a_path_with_a_newline_is_logged_escaped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "a\nWARNING forged"
    folder.mkdir()
    path, clock = folder / "tokens", Clock()
    write(path, f"ci:{OLD}\n")
    tokens = TokenFile(str(path), clock=clock)
    write(path, "bad\n")
    clock.now += 1.0
    tokens.check()
    (line,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "\n" not in line and "\\nWARNING forged" in line
