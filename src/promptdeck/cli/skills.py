"""Commands on any MCP server's skills (the skills extension): ``skills`` lists them, ``skill`` fetches one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .client import TARGET_HELP, client_options, run_client
from .terminal import echo, shown

if TYPE_CHECKING:
    from ..client.session import Client

#: Where ``skill`` writes when no --to is given: the project folder Claude Code loads skills from.
DEFAULT_INTO = Path(".claude/skills")


@click.command(epilog=TARGET_HELP)
@client_options
@click.option("--json", "as_json", is_flag=True, help="Print the skills/list entries as JSON.")
def skills(as_json: bool, **options: Any) -> None:
    """List the skills of the MCP server at TARGET (all pages)."""

    async def work(client: Client) -> None:
        found = await client.list_skills()
        if as_json:
            import msgspec

            echo(json.dumps(msgspec.to_builtins(found), indent=2, ensure_ascii=False))
            return
        if not found:
            echo("no skills listed", err=True)
            return
        uris = [shown(skill.uri) for skill in found]
        width = max(len(uri) for uri in uris)
        for uri, skill in zip(uris, found, strict=True):
            files = f"  ({len(skill.files)} files)" if isinstance(skill.resources, tuple) else ""
            description = shown(" ".join(skill.description.split()))
            echo(f"{uri:<{width}}  {description[:100]}{files}")

    run_client(options, work)


@click.command(epilog=TARGET_HELP)
@client_options
@click.argument("uri")
@click.option("--to", "into", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_INTO,
              show_default=True, help="The folder of skills to write into: the skill becomes DIR/NAME/.")
@click.option("--replace", is_flag=True, help="Replace DIR/NAME if it is already there.")
def skill(uri: str, into: Path, replace: bool, **options: Any) -> None:
    """Fetch the skill URI (its SKILL.md, skill://…/NAME/SKILL.md) from TARGET, check every file against
    its digest, and write it as a folder a tool loads."""
    from ..client.skill_folder import fetch_skill

    if not uri.endswith("/SKILL.md") and uri.startswith("skill://"):
        uri = uri.rstrip("/") + "/SKILL.md"  # the skill's folder URI names it as well

    async def work(client: Client) -> Path:
        return await fetch_skill(client, uri, into, replace=replace)

    written = run_client(options, work)
    if written is not None:
        count = sum(1 for path in written.rglob("*") if path.is_file())
        echo(f"wrote {shown(written)}/ ({count} {'file' if count == 1 else 'files'}, every digest checked)")
