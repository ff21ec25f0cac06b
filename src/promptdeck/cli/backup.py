"""``promptdeck store backup`` and ``store restore``: a copy of a store, made while it is served, and put back.

Part of the cli layer (``main`` adds them to the ``store`` group). The store side is ``sources.store.backup``;
a restored store's webhooks wait for ``webhook resume`` (``sources.store.copies``).
"""

from __future__ import annotations

import click

from ..protocol.errors import PromptdeckError
from .common import fail
from .program import command_line
from .terminal import echo

_POSTGRES_WHY = ("a PostgreSQL store is copied with PostgreSQL's tools, which promptdeck does not run (their "
                 "version must match the server's, and they take the password from $PGPASSWORD or ~/.pgpass); "
                 "nothing was done. Run:")


@click.command()
@click.argument("url")
@click.argument("file", type=click.Path(dir_okay=False))
def backup(url: str, file: str) -> None:
    """Copy the store at URL to FILE, while it is served and written (SQLite's online backup). FILE is
    replaced at once when the copy is whole. For a PostgreSQL store, names the pg_dump command to run."""
    from ..sources.store.backup import backup_sqlite, postgres_commands
    from ..sources.store.urls import is_postgres_url

    if is_postgres_url(url):
        fail("\n".join([_POSTGRES_WHY, *postgres_commands("backup", url, file)]))
    try:
        version = backup_sqlite(url, file)
    except PromptdeckError as exc:
        fail(str(exc))
    echo(f"backed up the store (schema {version}) to {file}")


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("url")
@click.option("--force", is_flag=True, help="Replace the store at URL even though it holds one (stop every "
              "process that serves it first).")
def restore(file: str, url: str, force: bool) -> None:
    """Make the store at URL a copy of the backup FILE. Its webhooks stay paused until `webhook resume`,
    so a copy never delivers as if it were the original. For a PostgreSQL store, names the pg_restore command."""
    from ..sources.store.backup import postgres_commands, restore_sqlite
    from ..sources.store.schema import SCHEMA_VERSION
    from ..sources.store.urls import is_postgres_url

    if is_postgres_url(url):
        fail("\n".join([_POSTGRES_WHY, *postgres_commands("restore", url, file)]))
    try:
        version = restore_sqlite(file, url, force=force)
    except PromptdeckError as exc:
        fail(str(exc))
    upgraded = f", upgraded from schema {version} to {SCHEMA_VERSION}" if version < SCHEMA_VERSION else ""
    echo(f"restored the store from {file}{upgraded}; its webhooks are paused "
         f"({command_line('webhook', 'list')} shows them, {command_line('webhook', 'resume')} ID sends again)")


#: What ``main`` adds to the ``store`` group.
COMMANDS = (backup, restore)
