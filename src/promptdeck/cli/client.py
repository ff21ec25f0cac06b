"""Commands on any MCP server's prompts: ``ls``, ``get``, ``complete``, ``watch``, ``pick`` and ``ui``."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..logs import announce, setup_logging
from ..protocol.errors import ClientError, McpError, PromptdeckError
from .common import fail, parse_args
from .oauth import OPTIONS as OAUTH_OPTIONS
from .oauth import make_auth
from .program import program, word
from .stopping import INTERRUPTED, until_stopped
from .terminal import CLEAR_LINE, Shown, echo, shown

if TYPE_CHECKING:
    from ..client.session import Client

T = TypeVar("T")


TARGET_HELP = ("TARGET is an http(s) URL or one quoted command line that starts a stdio server (a folder's "
               f"prompts: {word(f'{program()} serve FOLDER')}).")


def client_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options every client command takes."""
    for option in reversed((
        click.argument("target"),
        click.option("--era", type=click.Choice(["auto", "modern", "legacy"]), default="auto", show_default=True,
                     help="Protocol era: 2026-07-28 (modern), initialize-based (legacy), or detect."),
        click.option("--token", envvar="PROMPTDECK_TOKEN", metavar="TOKEN",
                     help="HTTP: bearer token (default: $PROMPTDECK_TOKEN)."),
        click.option("-H", "--header", "headers", multiple=True, metavar="'NAME: VALUE'",
                     help="HTTP: an extra request header (repeatable)."),
        click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True,
                     metavar="SECONDS", help="How long to wait for each answer."),
        *OAUTH_OPTIONS,
    )):
        command = option(command)
    return command


def _headers(options: dict[str, Any]) -> dict[str, str]:
    """The -H headers of a client command; refused (with --token) for a TARGET that is a command. Called
    first by every client command: a TARGET that cannot be one is refused here, in one line."""
    from .targets import target_problem

    problem = target_problem(options["target"], click.get_current_context().info_name or "ls")
    if problem is not None:
        fail(*problem)
    headers: dict[str, str] = {}
    for header in options["headers"]:
        name, sep, value = header.partition(":")
        if not sep or not name.strip():
            fail(f"-H takes 'Name: value', got {header!r}", 2)
        headers[name.strip()] = value.strip()
    if not options["target"].startswith(("http://", "https://")) and (headers or options["token"]):
        fail("--token and -H go with an http(s) TARGET", 2)
    return headers


def run_client(options: dict[str, Any], work: Callable[[Client], Awaitable[T]], *, runs_until_stopped: bool = False,
                ) -> T | None:
    """Connect to TARGET, run ``work`` with the client, and turn failures into one line and an exit code. A
    command that ``runs_until_stopped`` (watch) ends quietly on Ctrl-C or SIGTERM (None); any other exits
    130 on Ctrl-C (``stopping``)."""
    from ..client.session import connect

    headers = _headers(options)
    target = options["target"]
    auth = make_auth(options, headers)

    async def session() -> T:
        async with connect(target, era=options["era"], token=options["token"], headers=headers or None,
                           timeout=options["timeout"], auth=auth) as client:
            return await work(client)

    try:
        if runs_until_stopped:
            with until_stopped():
                asyncio.run(session())
            return None
        return asyncio.run(session())
    except McpError as exc:
        fail(f"error {exc.code}: {shown(exc.message)}")
    except PromptdeckError as exc:
        fail(shown(exc))
    except KeyboardInterrupt:
        sys.exit(INTERRUPTED)


def _progress(prompts: int, pages: int) -> None:
    # Only worth showing on a terminal and for listings that take more than a page or two.
    if pages >= 3 and sys.stderr.isatty():
        echo(Shown(f"\rlisting: {prompts:,} prompts, {pages} pages"), err=True, nl=False)


@click.command(epilog=TARGET_HELP)
@client_options
@click.option("--json", "as_json", is_flag=True, help="Print the prompts as JSON.")
def ls(as_json: bool, **options: Any) -> None:
    """List the prompts of the MCP server at TARGET (all pages)."""
    from .render_text import format_table

    async def work(client: Client) -> None:
        prompts = await client.list_prompts(progress=_progress)
        if sys.stderr.isatty():
            echo(CLEAR_LINE, err=True, nl=False)
        if as_json:
            import msgspec

            echo(json.dumps(msgspec.to_builtins(prompts), indent=2, ensure_ascii=False))
        else:
            echo(format_table(prompts, _terminal_width()))

    run_client(options, work)


def _terminal_width() -> int:
    import shutil

    return shutil.get_terminal_size((120, 24)).columns if sys.stdout.isatty() else 10_000


@click.command(epilog=TARGET_HELP)
@client_options
@click.argument("prompt")
@click.option("-a", "--arg", "pairs", multiple=True, metavar="NAME=VALUE", help="An argument (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the raw prompts/get result.")
def get(prompt: str, pairs: tuple[str, ...], as_json: bool, **options: Any) -> None:
    """Render PROMPT on the MCP server at TARGET and show its messages."""
    arguments = parse_args(pairs)

    async def work(client: Client) -> None:
        if as_json:
            params: dict[str, Any] = {"name": prompt, "arguments": arguments} if arguments else {"name": prompt}
            echo(json.dumps(await client.request("prompts/get", params, name=prompt), indent=2,
                            ensure_ascii=False))
            return
        from .render_text import format_messages

        echo(format_messages(await client.get_prompt(prompt, **arguments), color=sys.stdout.isatty()))

    run_client(options, work)


@click.command(epilog=TARGET_HELP)
@client_options
@click.argument("prompt")
@click.argument("argument")
@click.argument("prefix", default="")
@click.option("-a", "--arg", "pairs", multiple=True, metavar="NAME=VALUE",
              help="An argument already chosen, as context (repeatable).")
def complete(prompt: str, argument: str, prefix: str, pairs: tuple[str, ...], **options: Any) -> None:
    """Print the values the server at TARGET suggests for ARGUMENT of PROMPT, one a line."""
    context = parse_args(pairs)

    async def work(client: Client) -> None:
        completion = await client.complete(prompt, argument, prefix, context)
        for value in completion.values:
            echo(shown(value))
        if completion.has_more or (completion.total or 0) > len(completion.values):
            more = f"{completion.total:,} in all" if completion.total else "more"
            echo(f"({len(completion.values)} shown, {more})", err=True)

    run_client(options, work)


@click.command(epilog=TARGET_HELP)
@client_options
def watch(**options: Any) -> None:
    """Print the prompt list of the server at TARGET, then each change to it as it happens (Ctrl-C stops)."""
    import time

    async def work(client: Client) -> None:
        prompts = await client.list_prompts()
        echo(f"{len(prompts)} prompts on {shown(client.server_info.get('name', 'the server'))} "
             f"({client.protocol_version}); watching for changes", err=True)
        async for change in client.watch():
            marks = [f"+{shown(n)}" for n in change.added] + [f"-{shown(n)}" for n in change.removed]
            marks += [f"~{shown(n)}" for n in change.changed]
            stamp = time.strftime("%H:%M:%S")
            summary = " ".join(marks) or "(list re-sent, no difference)"
            echo(f"{stamp} {len(change.prompts)} prompts: {summary}")
        raise ClientError("the server ended the subscription")

    run_client(options, work, runs_until_stopped=True)


@click.command(epilog=TARGET_HELP)
@client_options
def pick(**options: Any) -> None:
    """Choose a prompt of the server at TARGET from a slash-command palette, fill in its arguments with the
    server's completions as you type, then copy the result to the clipboard or print it.

    Ctrl-C leaves with exit code 130, Esc with 1.
    """
    try:
        from . import picker as _picker
    except ModuleNotFoundError as exc:
        if exc.name != "prompt_toolkit":
            raise
        from ..extras import needs  # the command that works from a clone: not on PyPI

        fail(needs("pick (prompt_toolkit)", "pick"))
    problem = _picker.terminal_problem()
    if problem:
        fail(problem, 2)
    sys.exit(run_client(options, _picker.run))


@click.command(epilog=TARGET_HELP)
@client_options
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="The local port of the page (0: a free one).")
@click.option("--no-open", is_flag=True, help="Print the page's address without opening a browser.")
@click.option("-v", "--verbose", count=True, help="Log more to stderr (-v info, -vv debug).")
def ui(port: int, no_open: bool, verbose: int, **options: Any) -> None:
    """Open the web catalog and playground in front of the MCP server at TARGET, served on 127.0.0.1 only."""
    setup_logging(verbose)
    headers = _headers(options)
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        from ..extras import needs  # the command that works from a clone: not on PyPI

        fail(needs("ui", "http"))
    from ..client.remote import RemoteSource
    from ..server.app import PromptServer
    from ..server.http.runner import bind
    from ..server.http.runner import serve as run

    source = RemoteSource(options["target"], era=options["era"], token=options["token"], headers=headers,
                          timeout=options["timeout"], auth=make_auth(options, headers))
    server = PromptServer("promptdeck-ui")
    try:
        server.add_source(source)
        listening = bind("127.0.0.1", port)
    except PromptdeckError as exc:
        source.close()
        fail(str(exc))
    # Anyone on this machine can reach 127.0.0.1: the page's /mcp asks for a token made for this run (or
    # $PROMPTDECK_UI_TOKEN). The browser is never given it on its command line, which every local user can
    # read: it opens the page with a one-time code, which the page exchanges for a token (server.signin).
    from ..server.web.signin import SignIn

    given = os.environ.get("PROMPTDECK_UI_TOKEN")
    try:
        signin = SignIn(given or secrets.token_urlsafe(24))
    except PromptdeckError as exc:
        source.close()
        fail(f"$PROMPTDECK_UI_TOKEN: {exc}")
    page = f"http://127.0.0.1:{listening.getsockname()[1]}/"
    # Ctrl-C and SIGTERM are how this command ends (uvicorn stops serving, then raises the signal again),
    # armed before the first line is out: through ``finally``, so a stdio server started for TARGET is
    # stopped too rather than left to notice its closed stdin.
    try:
        with until_stopped():
            announce(f"serving the {len(server.catalog)} prompts of {options['target']} on {page}")
            if no_open or not _open_browser(f"{page}#code={signin.code()}"):
                # Printed on this terminal only, whose output is this user's: for a browser elsewhere (through
                # an SSH tunnel, say), which signs in on the page's form.
                how = "the token in $PROMPTDECK_UI_TOKEN" if given else f"the token {signin.secret}"
                announce(f"{'' if no_open else 'no graphical browser found: '}open {page} and sign in with {how}")
            run(server, "127.0.0.1", listening.getsockname()[1], sock=listening, watch=False, ui=True, auth=signin,
                signin=signin)
    finally:
        source.close()


def _open_browser(url: str) -> bool:
    """Open ``url`` in a graphical browser; False when there is none. A browser that runs in the terminal
    (lynx, w3m, links: what ``webbrowser`` picks on a machine with no display) is not started: it would
    take the terminal from this command, which serves the page until Ctrl-C."""
    import webbrowser

    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        return False
    if type(browser) is webbrowser.GenericBrowser or (isinstance(browser, webbrowser.UnixBrowser)
                                                      and not browser.background):
        return False
    return bool(browser.open(url))
