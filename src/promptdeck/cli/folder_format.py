"""``--format``: how the commands that read a folder (serve, check, render, export, publish) are told the
format of its files when the folder's path does not say it (docs/native-formats.md)."""

from __future__ import annotations

import click

from ..sources.files.paths import FOLDER_FORMATS

FORMAT_OPTION = click.option(
    "--format", "folder_format", type=click.Choice(sorted(FOLDER_FORMATS)), default=None,
    help="Read each FOLDER's files in this tool's format (claude-command: as .claude/commands/, ...; "
    "promptdeck: as a library). Default: as the folder's path says (~/.claude/commands holds Claude Code "
    "commands, ~/.gemini/commands Gemini CLI's, ...), else a promptdeck library.")
