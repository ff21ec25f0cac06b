"""Commands on a library folder: ``check`` and ``render``."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, NamedTuple

import click

from ..logs import setup_logging
from ..protocol.errors import PromptdeckError
from ..protocol.revisions import LATEST, REVISIONS
from .common import fail, parse_args
from .folder_format import FORMAT_OPTION
from .library_folder import LIBRARY_FOLDER
from .terminal import echo

if TYPE_CHECKING:
    from ..prompts.spec import Prompt
    from ..server.app import PromptServer
    from ..sources.files.source import FileSource


class Checked(NamedTuple):
    """What ``check`` finds in a library's folders (``check_library``)."""

    problems: list[str]
    #: prompt name -> the prompt served
    prompts: dict[str, Prompt]
    #: how many files have a problem
    files: int
    #: how many skills are served; None when no folder has a skill folder with anything in it
    skills: int | None
    #: the folders as loaded, in order: what an export of them reads its skills from, without loading them again
    sources: list[FileSource]

@click.command()
@click.argument("folders", nargs=-1, required=True, type=LIBRARY_FOLDER)
@click.option("--graph", is_flag=True, help="Also print what each prompt uses (partials, read files, prompts) "
              "and what uses each of them.")
@click.option("--json", "as_json", is_flag=True, help="With --graph: print it, and the problems, as JSON.")
@FORMAT_OPTION
def check(folders: tuple[str, ...], folder_format: str | None, graph: bool, as_json: bool) -> None:
    """Validate every prompt file and skill in FOLDERS; exit 1 if any has a problem."""
    if as_json and not graph:
        fail("--json goes with --graph", 2)
    problems, prompts, files, skills, sources = check_library(folders, folder_format, skills=True)
    if as_json:
        from ..prompts.graph import Graph

        found = Graph(prompts.values()).as_json()
        for name, entry in found["prompts"].items():
            entry["file"] = prompts[name].source
        echo(json.dumps({**found, "problems": problems}, indent=2, ensure_ascii=False))
    else:
        from ..sources.files.library import read_gate_warnings

        for problem in problems:
            echo(problem)
        from ..sources.files.native.github_models import warnings as github_models_warnings

        for source in sources:  # warnings: the library is served as it is
            for warning in read_gate_warnings(source.library.root, prompts.values()):
                echo(warning)
        for prompt in prompts.values():  # what a format's file says that promptdeck keeps but does not run
            for said in github_models_warnings(prompt):
                echo(f"{prompt.source}: warning: {said}")
        if graph:
            from .graph_text import graph_lines

            for line in graph_lines(prompts):
                echo(line)
    counted = f"{len(prompts)} prompt{'s' * (len(prompts) != 1)}"
    if skills is not None:  # a library with skill folders: "3 prompts, 2 skills ok"
        counted += f", {skills} skill{'s' * (skills != 1)}"
    summary = f"{counted} ok"
    if problems:
        summary += f"; {len(problems)} problem{'s' * (len(problems) != 1)} in {files} file{'s' * (files != 1)}"
    echo(summary, err=bool(problems) or as_json)
    sys.exit(1 if problems else 0)


def library_problems(folders: tuple[str, ...], folder_format: str | None = None, *, skills: bool = False) \
        -> tuple[list[str], dict[str, Prompt], int]:
    """What ``check`` finds in the prompt files of FOLDERS: (problems, prompt name -> the prompt served, files
    with a problem). Skills are read only with ``skills`` (as ``check``, ``publish`` and ``export`` read them)."""
    checked = check_library(folders, folder_format, skills=skills)
    return checked.problems, checked.prompts, checked.files


def check_library(folders: tuple[str, ...], folder_format: str | None, *, skills: bool) -> Checked:
    """``library_problems``, and with ``skills`` the skills too, and the sources loaded."""
    from ..sources.files.source import FileSource

    problems: list[str] = []
    prompts: dict[str, Prompt] = {}
    shown: dict[str, str] = {}
    served: dict[tuple[str, ...], str] = {}
    files = 0
    any_skills = False
    sources: list[FileSource] = []
    for folder in folders:
        try:
            source = FileSource(folder, format=folder_format, skills=skills)
            source.load(compile_all=True)
            found = source.prompts()  # before reading errors: this is where name clashes are found
        except PromptdeckError as exc:
            fail(str(exc))
        sources.append(source)
        # With several folders, paths are shown from where the command was run, so each is findable.
        prefix = f"{folder.rstrip('/')}/" if len(folders) > 1 else ""
        errors = [*(e for errors in source.errors.values() for e in errors), *source.composition]
        if source.skill_set is not None:
            skill_errors = source.skill_set.errors
            any_skills = any_skills or bool(skill_errors) or bool(source.skill_set.origins())
            errors += [e for found_ in skill_errors.values() for e in found_]
        # A SKILL.md is read as a prompt and as a skill: a YAML error in it is one problem, not two.
        ordered = sorted(errors, key=lambda e: e.path)  # stable: a file's problems in the order found
        problems += list(dict.fromkeys(f"{prefix}{e}" for e in ordered))
        files += len({e.path for e in ordered})
        for prompt in found:
            if prompt.name in prompts:  # as served: the first folder's prompt wins
                problems.append(f"{prefix}{source.shown(prompt.source)}: prompt {prompt.name!r} is hidden by "
                                f"{shown[prompt.name]}, which has the same name")
                files += 1
            else:
                prompts[prompt.name] = prompt
                shown[prompt.name] = f"{prefix}{source.shown(prompt.source)}"
        for path, skill in source.skills().items():
            if path in served:
                problems.append(f"{prefix}{source.shown(skill.origin)}: skill {'/'.join(path)} is hidden by "
                                f"{served[path]}, which has the same path")
                files += 1
            else:
                served[path] = f"{prefix}{source.shown(skill.origin)}"
    return Checked(problems, prompts, files, len(served) if any_skills else None, sources)


@click.command()
@click.argument("folder", type=LIBRARY_FOLDER)
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
        broken = _broken_file(server, prompt) if error.get("data", {}).get("prompt") == prompt else []
        if broken:  # "unknown prompt" hid why: the file that would serve it did not load
            fail(f"prompt {prompt!r} is not served: its file has {len(broken)} problem"
                 f"{'s' * (len(broken) != 1)}:\n" + "\n".join(broken))
        fail(f"error {error['code']}: {error['message']}")
    result = response["result"]
    if as_json:
        echo(json.dumps(result, indent=2, ensure_ascii=False))
        return
    from .render_text import format_messages

    echo(format_messages(result))


def _broken_file(server: PromptServer, prompt: str) -> list[str]:
    """The problems of the file that would serve ``prompt`` (by its path, as files are named) but failed to
    load, or none."""
    import os

    from ..sources.files.source import FileSource

    for source in server.sources:
        if isinstance(source, FileSource):
            for rel, errors in source.errors.items():
                stem = os.path.splitext(source.shown(rel))[0]
                if prompt in (stem.replace("/", "."), os.path.basename(stem)):
                    return [str(error) for error in errors]
    return []
