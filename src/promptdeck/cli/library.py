"""Commands on a library folder: ``check`` and ``render``."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from ..logs import setup_logging
from ..protocol.errors import PromptdeckError
from ..protocol.revisions import LATEST, REVISIONS
from .common import fail, parse_args
from .folder_format import FORMAT_OPTION

if TYPE_CHECKING:
    from ..prompts.spec import Prompt

@click.command()
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False))
@FORMAT_OPTION
def check(folders: tuple[str, ...], folder_format: str | None) -> None:
    """Validate every prompt file in FOLDERS; exit 1 if any has a problem."""
    problems, prompts, files = library_problems(folders, folder_format)
    for problem in problems:
        click.echo(problem)
    summary = f"{len(prompts)} prompt{'s' * (len(prompts) != 1)} ok"
    if problems:
        summary += f"; {len(problems)} problem{'s' * (len(problems) != 1)} in {files} file{'s' * (files != 1)}"
    click.echo(summary, err=bool(problems))
    sys.exit(1 if problems else 0)


def library_problems(folders: tuple[str, ...], folder_format: str | None = None) \
        -> tuple[list[str], dict[str, Prompt], int]:
    """What ``check`` finds in FOLDERS: (problems, prompt name -> the prompt served, files with a problem)."""
    from ..sources.files.source import FileSource

    problems: list[str] = []
    prompts: dict[str, Prompt] = {}
    shown: dict[str, str] = {}
    files = 0
    for folder in folders:
        try:
            source = FileSource(folder, format=folder_format)
            source.load(compile_all=True)
            found = source.prompts()  # before reading errors: this is where name clashes are found
        except PromptdeckError as exc:
            fail(str(exc))
        # With several folders, paths are shown from where the command was run, so each is findable.
        prefix = f"{folder.rstrip('/')}/" if len(folders) > 1 else ""
        problems += [f"{prefix}{e}" for rel in sorted(source.errors) for e in source.errors[rel]]
        files += len(source.errors)
        for prompt in found:
            if prompt.name in prompts:  # as served: the first folder's prompt wins
                problems.append(f"{prefix}{source.shown(prompt.source)}: prompt {prompt.name!r} is hidden by "
                                f"{shown[prompt.name]}, which has the same name")
                files += 1
            else:
                prompts[prompt.name] = prompt
                shown[prompt.name] = f"{prefix}{source.shown(prompt.source)}"
    return problems, prompts, files


@click.command()
@click.argument("folder", type=click.Path(file_okay=False))
@click.argument("prompt")
@click.option("-a", "--arg", "pairs", multiple=True, metavar="NAME=VALUE", help="An argument (repeatable).")
@click.option("--revision", type=click.Choice(sorted(REVISIONS)), default=LATEST.version, show_default=True,
              help="Protocol revision to shape the output for.")
@click.option("--json", "as_json", is_flag=True, help="Print the raw prompts/get result.")
@FORMAT_OPTION
def render(folder: str, prompt: str, pairs: tuple[str, ...], revision: str, as_json: bool,
           folder_format: str | None) -> None:
    """Show the messages a client gets for PROMPT, with the errors a client would get."""
    setup_logging(0)
    from ..server.app import PromptServer
    from ..server.local import LocalClient

    server = PromptServer()
    try:
        server.add_folder(folder, compile_all=True, format=folder_format)
    except PromptdeckError as exc:
        fail(str(exc))
    client = LocalClient(server, revision)
    response = client.request("prompts/get", {"name": prompt, "arguments": parse_args(pairs)})
    if "error" in response:
        error = response["error"]
        fail(f"error {error['code']}: {error['message']}")
    result = response["result"]
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
        return
    from .render_text import format_messages

    click.echo(format_messages(result))
