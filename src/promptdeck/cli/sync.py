"""A folder (a git work tree) and a store's label in step: ``pull``, the base ``publish`` states, and the
three-way ``diff --label`` of what a refused publish would have undone (docs/store.md#git).

Part of the cli layer (``main`` registers ``pull``; ``store.publish`` and ``store.diff`` use the rest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

import click

from ..protocol.errors import PromptdeckError
from .common import AUTHOR_OPTION, STORE_OPTION, author_of, fail, open_store, valid_label
from .program import command_line
from .terminal import echo, shown

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..sources.store.database import Store
    from ..sources.store.sync import Checks

#: The exit code of a publish refused because it would lose work (docs/cli.md#exit-codes).
REFUSED = 3


def SYNC_OPTIONS(command: Callable[..., None]) -> Callable[..., None]:  # noqa: N802 (a decorator, as click's)
    """``publish``'s --base, --force and --delete."""
    for option in reversed((
            click.option("--base", type=click.IntRange(min=1), default=None, metavar="POSITION",
                         help="The label's position this folder's changes start from (default: FOLDER/"
                         ".promptdeck-base, else the base the store records for the label)."),
            click.option("--force", is_flag=True, help="Publish even if the label moved since the base in prompts "
                         "this publish changes again (their changes in the store are undone)."),
            click.option("--delete", is_flag=True, help="Publish even if it deletes more than half of the "
                         "label's prompts."))):
        command = option(command)
    return command


def sync_checks(folder: str, label: str | None, base: int | None, force: bool, delete: bool) -> Checks:
    """What ``publish FOLDER`` is held to: ``--base``, else the label's line of FOLDER's base file."""
    from ..sources.store.sync import Checks, read_bases

    if base is None and label is not None and not force:
        try:
            base = read_bases(folder).get(label)
        except PromptdeckError as exc:
            fail(str(exc))
    return Checks(base, force, delete)


def refused(exc: PromptdeckError, folder: str, label: str | None) -> NoReturn:
    """End a publish the store refused: each deletion it would have made on a line, then one line saying
    why (exit 3 when it would have lost work, else 1)."""
    from ..sources.store.sync import PublishRefused

    if not isinstance(exc, PublishRefused):
        fail(str(exc))
    for path in exc.deleted:
        echo(f"  would delete: {shown(path)}")
    hint = ""
    if (exc.both or exc.store_only) and label is not None:
        hint = (f"; see them: {command_line('diff', '--store', 'URL', '--label', label, folder)}, or "
                f"{command_line('pull', folder, '--store', 'URL', '--label', label)} first")
    fail(f"{exc}{hint}", REFUSED)


def keep_base(folder: str, label: str, opened: Store) -> None:
    """Echo the base the store now records for ``label`` in FOLDER's base file (a warning if it cannot be
    written: the publish is done)."""
    from ..sources.store.sync import BASE_FILE, stored_base, write_base

    position = stored_base(opened.db, label)
    if position is None:
        return
    try:
        write_base(folder, label, position)
    except OSError as exc:
        echo(f"promptdeck: warning: cannot write {folder}/{BASE_FILE} ({exc.strerror}); the next publish takes "
             "its base from the store", err=True)


@click.command()
@click.argument("folder", type=click.Path(file_okay=False))
@STORE_OPTION
@click.option("--label", required=True, metavar="LABEL", help="The label whose files to write.")
@click.option("--force", is_flag=True, help="Overwrite (or delete) files of FOLDER that hold work the store never "
              "had.")
@AUTHOR_OPTION
def pull(folder: str, url: str, label: str, force: bool, author: str | None) -> None:
    """Write LABEL's files into FOLDER: only those that differ; a prompt the label no longer has is deleted.

    Only files the store has versions of are touched; a file holding work the store never had stops the pull
    (unless --force). FOLDER then holds the label's position as its base (FOLDER/.promptdeck-base), and in a
    git work tree `git diff` shows what changed in the store since.
    """
    import os

    from ..sources.store.pull import apply, plan
    from ..sources.store.sync import write_base

    valid_label(label)
    with open_store(url) as opened:
        try:
            position = opened.reads.require_position(label)
            files: dict[str, bytes] = {}
            while page := opened.reads.contents(position, after=max(files, default=""), limit=1000):
                files.update((path, data) for path, _, data in page)
            unread = sorted(set(opened.reads.versions_at(position)) - set(files))
            if unread:  # a file the store could not give (too large, or not a library path) is never deleted
                fail(f"the store's {unread[0]!r} of label {label} cannot be written to a folder (not a library "
                     "path, or larger than a library file may be); nothing was written")
            done = plan(folder, files, opened.reads.digests(), force=force)
            os.makedirs(folder, exist_ok=True)  # only now: a pull refused leaves no folder behind
            apply(folder, done)
            opened.record_base(label, position, author_of(author))
        except PromptdeckError as exc:
            fail(str(exc))
        except OSError as exc:
            fail(f"cannot write into {folder}: {exc.strerror or exc}")
    try:
        write_base(folder, label, position)
    except OSError as exc:
        fail(f"cannot write the base file of {folder}: {exc.strerror}")
    echo(f"pulled label {label} (position {position}) into {folder}: {len(done.write)} written "
         f"({len(done.new)} new), {len(done.delete)} deleted, {done.same} unchanged")
    for path in sorted(done.write):
        echo(f"  {'added' if path in done.new else 'changed'}: {shown(path)}")
    for path in done.delete:
        echo(f"  deleted: {shown(path)}")


def three_way(url: str, label: str, folder: str, base: int | None) -> None:
    """``diff --store URL --label LABEL FOLDER``: for each prompt a publish of FOLDER would change after the
    label moved since FOLDER's base, the base's text against the store's and against the folder's."""
    from ..sources.store.folder import read_library
    from ..sources.store.sync import moved_since, read_bases, stored_base
    from ..sources.store.versions import is_text, text_of, unified

    valid_label(label)
    try:
        content = read_library(folder)
        if base is None:
            base = read_bases(folder).get(label)
    except PromptdeckError as exc:
        fail(str(exc))
    with open_store(url) as opened:
        try:
            now = opened.reads.position(label)
            if now is None:
                opened.reads.require_position(label)
                return
            base = base if base is not None else stored_base(opened.db, label)
            if base is None:
                fail(f"no base for label {label} (no {folder}/.promptdeck-base, none in the store): give --base")
            both, store_only, at_base = moved_since(opened.db, opened.reads, label, base, content, now.id, now.files)

            def text(path: str, version: int | None) -> str:
                data = None if version is None else opened.reads.content(path, version)
                return text_of(data) if is_text(data) else "(not text)\n"

            lines: list[str] = []
            for path in both + store_only:
                side = "changed on both sides" if path in both else "changed in the store only"
                lines.append(f"=== {path}: {side} ===\n")
                older = text(path, at_base.get(path))
                data = content.get(path)
                lines += unified(older, text(path, now.files.get(path)), f"{path}@base (position {base})",
                                 f"{path}@store (position {now.id})")
                lines += unified(older, text_of(data) if is_text(data) else "(not text)\n",
                                 f"{path}@base (position {base})", f"{path}@folder")
        except PromptdeckError as exc:
            fail(str(exc))
    if not lines:
        echo(f"label {label} (position {now.id}) has no change since position {base} that {folder} would undo")
        return
    echo("".join(lines), nl=False)
