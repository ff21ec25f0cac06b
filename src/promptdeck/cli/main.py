"""The ``promptdeck`` command: its group, and every command registered here, by name, in one place.

``cli`` is the only package that prints to a terminal or exits. Each command lives in a module by what it
works on: ``serve``, ``library`` (check, render), ``client`` (any MCP server's prompts), ``store`` (the
versioned store), ``webhooks`` (a store's webhooks). ``entry`` is the front door, which serves plain stdio
without importing click.
"""

from __future__ import annotations

import click

from .._version import __version__
from . import (
    backup,
    bundle,
    client,
    govern,
    imports,
    library,
    oauth,
    promote,
    prompt_tests,
    proposals,
    serve,
    skills,
    store,
    sync,
    usage,
    webhooks,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="promptdeck")
def main() -> None:
    """Serve a prompt library to MCP clients, and check or preview its prompts."""


for command in (serve.serve, library.check, library.render, prompt_tests.test, client.ls, client.get,
                client.complete, client.watch, client.pick, client.ui, oauth.logout, skills.skills, skills.skill,
                *store.COMMANDS, *promote.COMMANDS, sync.pull, *govern.COMMANDS, *proposals.COMMANDS,
                webhooks.webhook, usage.usage, imports.import_command, bundle.bundle):
    main.add_command(command)
for command in backup.COMMANDS:
    store.store.add_command(command)


if __name__ == "__main__":  # pragma: no cover
    main()
