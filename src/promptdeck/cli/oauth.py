"""OAuth for the client commands: their sign-in options, the browser, and ``promptdeck logout``."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any

import click

from ..protocol.errors import PromptdeckError
from .common import fail
from .terminal import echo, shown

if TYPE_CHECKING:
    from ..client.oauth import OAuth

OPTIONS = (
    click.option("--client-id", metavar="ID", help="OAuth: a client id registered with the server's authorization "
                 "server (default: register dynamically where it allows)."),
    click.option("--client-secret-file", type=click.Path(dir_okay=False), metavar="PATH",
                 help="OAuth: a file holding the client's secret (mode 600), for a confidential client."),
    click.option("--client-credentials", is_flag=True, help="OAuth: sign in as a service with the client "
                 "credentials grant (needs --client-id and --client-secret-file), without a browser."),
    click.option("--no-browser", is_flag=True, help="OAuth: print the sign-in address instead of opening a browser."),
)


def _secret(path: str) -> str:
    """The client secret in ``path``, refused when other users may read the file (as the token file is)."""
    try:
        info = os.stat(path)
        with open(path, encoding="utf-8") as file:
            secret = file.read(64 * 1024).strip()
    except OSError as exc:
        fail(f"--client-secret-file {path}: {exc.strerror}", 2)
    if info.st_mode & 0o077:
        fail(f"--client-secret-file {path} may be read by other users (mode {stat.S_IMODE(info.st_mode):04o}); "
             f"it holds a secret: chmod 600 {path}", 2)
    if not secret:
        fail(f"--client-secret-file {path} is empty", 2)
    return secret


def make_auth(options: dict[str, Any], headers: dict[str, str]) -> OAuth | None:
    """The OAuth sign-in of a client command, or None: for a command TARGET, or when a token is given."""
    target: str = options["target"]
    given = options.get("token") or any(name.lower() == "authorization" for name in headers)
    wanted = options.get("client_id") or options.get("client_secret_file") or options.get("client_credentials")
    if not target.startswith(("http://", "https://")):
        if wanted:
            fail("the OAuth options go with an http(s) TARGET", 2)
        return None
    if given:
        if wanted:
            fail("choose one of --token (or -H Authorization) and the OAuth options", 2)
        return None
    if options.get("client_credentials") and not (options.get("client_id") and options.get("client_secret_file")):
        fail("--client-credentials needs --client-id and --client-secret-file", 2)
    secret = _secret(options["client_secret_file"]) if options.get("client_secret_file") else None
    if secret is not None and not options.get("client_id"):
        fail("--client-secret-file goes with --client-id", 2)
    from ..client.oauth import OAuth

    no_browser = bool(options.get("no_browser"))
    try:
        return OAuth(client_id=options.get("client_id"), client_secret=secret,
                     client_credentials=bool(options.get("client_credentials")),
                     open_url=lambda url: _show(url, no_browser), timeout=options.get("timeout") or 30.0)
    except PromptdeckError as exc:
        if wanted:
            fail(str(exc))  # asked for OAuth without the oauth extra: say what to install
        return None  # no oauth extra: a server's 401 is reported as it always was


def _show(url: str, no_browser: bool) -> None:
    """Tell the person where to sign in, and open it in their browser unless told not to."""
    echo(f"promptdeck: sign in at {shown(url)}", err=True)
    if no_browser:
        return
    import webbrowser

    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        echo("promptdeck: no browser found: open the address above", err=True)
        return
    # A browser that runs in this terminal (lynx, w3m) would take it from the command waiting for the sign-in.
    if isinstance(browser, webbrowser.UnixBrowser) and not browser.background:
        echo("promptdeck: no graphical browser found: open the address above", err=True)
        return
    browser.open(url)


@click.command()
@click.argument("target")
def logout(target: str) -> None:
    """Forget the OAuth tokens kept for the MCP server at TARGET (its URL) in the token file."""
    try:
        from ..client.oauth_store import TokenStore

        store = TokenStore()
        removed = store.forget(target)
    except PromptdeckError as exc:
        fail(str(exc))
    echo(f"{'removed' if removed else 'no'} tokens for {target} ({store.path})", err=True)
