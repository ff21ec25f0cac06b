"""The FOLDER argument of the commands that read a library (check, render, serve, publish).

A library is a folder, and a prompt's name, its partials and the prompts it composes are found from that
folder; one file cannot be read as a library without guessing where its library starts. So a file given
as FOLDER is refused with the command to run on the folder it is in, rather than click's "Directory ... is
a file".
"""

from __future__ import annotations

import os

import click

from .program import command_line


class LibraryFolder(click.ParamType[str]):
    name = "folder"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> str:
        path = os.fspath(value) if isinstance(value, str | os.PathLike) else str(value)
        if os.path.isfile(path):
            command = ctx.info_name if ctx is not None and ctx.info_name else "check"
            folder = os.path.dirname(path.rstrip("/")) or "."
            self.fail(f"{path!r} is a file: {command} reads a library's folder, where a prompt's name and what it "
                      f"composes are found; the folder it is in: {command_line(command, folder)}",
                      param, ctx)
        return path


#: a library's folder; a file given in its place gets the command for its folder
LIBRARY_FOLDER = LibraryFolder()
