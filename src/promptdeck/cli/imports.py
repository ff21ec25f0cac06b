"""``promptdeck import SOURCE-KIND INPUT (--to FOLDER | --store URL)``: other tools' prompts into a library
folder or a store (``importers``), then the report: prompts, versions and labels imported, every warning."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

import click

from ..importers import SOURCES
from ..protocol.errors import PromptdeckError
from .common import AUTHOR_OPTION, author_of, fail, open_store
from .terminal import echo

if TYPE_CHECKING:
    from ..importers.model import Imported


@click.command(name="import")
@click.argument("kind", metavar="SOURCE-KIND", type=click.Choice(list(SOURCES)))
@click.argument("source", metavar="INPUT", required=False)
@click.option("--to", "folder", default=None, metavar="FOLDER", help="Write each prompt's latest labelled "
              "version into this library folder.")
@click.option("--store", "url", default=None, metavar="URL", help="Publish every version into this store and "
              "point its labels (sqlite:///path.db, a path ending in .db, or postgresql://…).")
@click.option("--url", "server", default=None, metavar="URL", help="langfuse: fetch the prompts from this "
              "Langfuse server instead of INPUT (keys in $LANGFUSE_PUBLIC_KEY and $LANGFUSE_SECRET_KEY).")
@click.option("--public-key", default=None, envvar="LANGFUSE_PUBLIC_KEY", show_envvar=True,
              help="With --url: Langfuse's public key.")
@click.option("--secret-key", default=None, envvar="LANGFUSE_SECRET_KEY", show_envvar=True,
              help="With --url: Langfuse's secret key (the variable is safer than the option, which other "
                   "users may see in the process list).")
@click.option("--name", default=None, help="langsmith: the prompt's name, for a manifest alone (default: the "
              "file's name).")
@click.option("--force", is_flag=True, help="With --to: replace files of FOLDER that hold other text.")
@AUTHOR_OPTION
def import_command(kind: str, source: str | None, folder: str | None, url: str | None, server: str | None,
                   public_key: str | None, secret_key: str | None, name: str | None, force: bool,
                   author: str | None) -> None:
    """Import prompts from another tool: langfuse (its prompts API's JSON, or --url), langsmith (Prompt Hub
    manifests and commits), promptlayer (its template export), openai (v1/prompts objects) or humanloop
    (.prompt files). Nothing is written when the input has a problem (docs/import.md)."""
    from ..importers import read
    from ..importers.targets import Report, into_folder, into_store, prepare

    if (folder is None) == (url is None):
        fail("import takes --to FOLDER or --store URL (one of them)", 2)
    if (source is None) == (server is None):
        fail("import takes INPUT, or --url for langfuse (one of them)", 2)
    if server is not None and kind != "langfuse":
        fail("--url fetches from a Langfuse server: only langfuse takes it", 2)
    report = Report()
    try:
        if server is not None:
            if not public_key or not secret_key:
                fail("--url needs Langfuse's keys: set $LANGFUSE_PUBLIC_KEY and $LANGFUSE_SECRET_KEY", 2)
            prompts = _fetched(server, public_key, secret_key)
            where = server
        else:
            assert source is not None
            prompts = read(kind, source, name)
            where = source
        prepared = prepare(prompts, where, report)
        if folder is not None:
            if os.path.exists(folder) and not os.path.isdir(folder):
                fail(f"{folder!r} is not a folder")
            into_folder(prepared, folder, force, report)
        else:
            assert url is not None
            with open_store(url, create=True) as opened:
                into_store(prepared, opened, author_of(author), report)
    except PromptdeckError as exc:
        fail(str(exc))
    for warning in report.warnings:
        echo(f"warning: {warning}", err=True)
    what = ("file", "written") if folder is not None else ("version", "published")
    echo(f"imported {report.prompts} prompt{'s' * (report.prompts != 1)} from {kind}: {report.versions} "
         f"{what[0]}{'s' * (report.versions != 1)} {what[1]}, "
         f"{report.unchanged} already there, {report.labels} label{'s' * (report.labels != 1)} moved, "
         f"{len(report.warnings)} warning{'s' * (len(report.warnings) != 1)}")


def _fetched(server: str, public_key: str, secret_key: str) -> list[Imported]:
    from ..extras import needs
    from ..importers.fetch import fetch

    try:
        import aiohttp  # noqa: F401
    except ImportError:
        fail(needs("import --url", "http"))
    return asyncio.run(fetch(server, public_key, secret_key))
