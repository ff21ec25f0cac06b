"""Folders kept for the user alone (client/own_folder.py): made 0700, refused when others may write to them or
when they are not folders, the message naming the folder and the fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from promptdeck.client.own_folder import check_own_folder, make_own_folder
from promptdeck.protocol.errors import OAuthError, PromptdeckError


class CacheError(PromptdeckError):
    """The error type the caller chooses: the folder's own."""


def test_an_absent_folder_is_fine_to_check(tmp_path: Path) -> None:
    check_own_folder(tmp_path / "not-yet", "the prompt cache", CacheError)


def test_made_with_its_parents_mode_0700(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b"
    make_own_folder(folder, "the prompt cache", CacheError)
    assert folder.is_dir() and folder.stat().st_mode & 0o777 == 0o700
    make_own_folder(folder, "the prompt cache", CacheError)  # again: already there, still fine


def test_a_folder_others_may_write_is_refused_with_the_chmod_that_fixes_it(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o777)
    with pytest.raises(CacheError) as caught:
        check_own_folder(folder, "the prompt cache", CacheError)
    message = str(caught.value)
    assert message.startswith(f"the prompt cache {str(folder)!r} may be written by other users (mode 0777)")
    assert message.endswith(f"chmod 700 {folder}")
    os.chmod(folder, 0o755)  # others may read: nothing they can plant
    check_own_folder(folder, "the prompt cache", CacheError)


def test_a_file_where_the_folder_should_be_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "tokens"
    file.write_text("x")
    with pytest.raises(OAuthError, match=r"the token folder '.*tokens' is not a folder"):
        make_own_folder(file, "the token folder", OAuthError)
    with pytest.raises(OAuthError, match="cannot be made"):
        make_own_folder(file / "below", "the token folder", OAuthError)
