"""The ``promptdeck`` group (cli/main.py): every command registered by name, its version and help."""

from __future__ import annotations

from click.testing import CliRunner

from promptdeck._version import __version__
from promptdeck.cli.main import main

COMMANDS = {"serve", "check", "render", "test", "ls", "get", "complete", "watch", "pick", "ui", "logout", "skills",
            "skill", "webhook", "publish", "history", "label", "rollback", "diff", "protect", "unprotect",
            "rollout", "bundle"}


def test_every_command_is_registered_by_its_name() -> None:
    assert COMMANDS <= set(main.commands)
    assert all(name == command.name for name, command in main.commands.items())


def test_version_and_help() -> None:
    version = CliRunner().invoke(main, ["--version"], prog_name="promptdeck")
    assert (version.exit_code, version.stdout) == (0, f"promptdeck, version {__version__}\n")
    short = CliRunner().invoke(main, ["-h"], prog_name="promptdeck")
    assert short.exit_code == 0 and short.stdout.startswith("Usage: promptdeck [OPTIONS] COMMAND [ARGS]...")
    assert all(f"  {name} " in short.stdout for name in ("serve", "check", "ls"))


def test_an_unknown_command_is_a_usage_error() -> None:
    done = CliRunner().invoke(main, ["srve"], prog_name="promptdeck")
    assert done.exit_code == 2 and "No such command 'srve'" in done.stderr
