"""The ``promptdeck`` command's front door.

``promptdeck serve FOLDER...`` over stdio is what MCP clients launch, every
time they start, and importing click costs about a third of a cold start. So
the plain forms of that one command are read here, without click; anything
else (other commands, ``--help``, an option this reader does not know, a
mistake) goes to the click CLI in ``cli.py``, which stays the single
definition of the interface and of its error messages.
"""

from __future__ import annotations

import sys


def _plain_serve(argv: list[str]) -> tuple[list[str], str, int, bool, int, bool, bool] | None:
    """(folders, name, page size, watch, verbosity, text resources, skills) for a plain stdio ``serve``, else
    None."""
    if not argv or argv[0] != "serve":
        return None
    folders: list[str] = []
    name, page_size, watch, verbose, text_resources, skills = "promptdeck", 100, True, 0, False, True
    args = iter(argv[1:])
    for arg in args:
        if arg == "--no-watch":
            watch = False
        elif arg == "--text-resources":
            text_resources = True
        elif arg == "--no-skills":
            skills = False
        elif arg in ("-v", "--verbose"):
            verbose += 1
        elif arg == "-vv":
            verbose += 2
        elif arg in ("--name", "--page-size"):
            value = next(args, None)
            if value is None:
                return None
            if arg == "--name":
                name = value
            elif value.isdigit() and 1 <= int(value) <= 10_000:
                page_size = int(value)
            else:
                return None
        elif arg.startswith("-"):
            return None
        else:
            folders.append(arg)
    return (folders, name, page_size, watch, verbose, text_resources, skills) if folders else None


def main() -> None:
    plain = _plain_serve(sys.argv[1:])
    if plain is None:
        from .main import main as click_main
        from .program import program

        # Its usage lines name the command as typed (.venv/bin/promptdeck); shell completion keeps the variable
        # click would name from a bare promptdeck, not one made of a path.
        click_main(prog_name=program(), complete_var="_PROMPTDECK_COMPLETE")
        return
    from .serve_stdio import serve_stdio_folders

    folders, name, page_size, watch, verbose, text_resources, skills = plain
    sys.exit(serve_stdio_folders(folders, name, page_size, watch, verbose, text_resources=text_resources,
                                 skills=skills))
