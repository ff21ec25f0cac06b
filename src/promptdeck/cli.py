"""The ``promptdeck`` command. The only module that prints to a terminal or exits."""

from __future__ import annotations

import base64
import json
import sys
from typing import Any, NoReturn

import click

from ._serve import setup_logging
from ._version import __version__
from .protocol.errors import PromptdeckError
from .protocol.revisions import LATEST, REVISIONS


def _fail(message: str, code: int = 1) -> NoReturn:
    click.echo(f"promptdeck: {message}", err=True)
    sys.exit(code)


def _parse_args(pairs: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            _fail(f"-a takes name=value, got {pair!r}", 2)
        out[key] = value
    return out


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="promptdeck")
def main() -> None:
    """Serve a prompt library to MCP clients, and check or preview its prompts."""


@main.command()
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option("--name", default="promptdeck", show_default=True, help="Server name clients see.")
@click.option("--page-size", default=100, show_default=True, type=click.IntRange(1, 10_000),
              help="Prompts per prompts/list page.")
@click.option("--list-ttl", default=60_000, show_default=True, type=click.IntRange(0), metavar="MS",
              help="How long 2026-07-28 clients may cache prompts/list (ttlMs).")
@click.option("--no-watch", is_flag=True, help="Do not reload prompt files when they change.")
@click.option("-v", "--verbose", count=True, help="Log more to stderr (-v info, -vv debug).")
@click.option("--http", "http", metavar="[HOST:]PORT", help="Serve Streamable HTTP on HOST (default 127.0.0.1).")
@click.option("--stateless", is_flag=True, help="HTTP: keep no sessions (for replicas behind a load balancer).")
@click.option("--json-response", is_flag=True, help="HTTP: answer POSTs with JSON instead of SSE.")
@click.option("--allow-host", multiple=True, metavar="HOST", help="HTTP: accept this Host (besides loopback).")
@click.option("--allow-origin", multiple=True, metavar="ORIGIN", help="HTTP: accept this Origin (besides loopback).")
@click.option("--token-file", type=click.Path(dir_okay=False), help="HTTP: require bearer tokens, name:token a line "
              "(default: $PROMPTDECK_TOKENS, comma-separated; neither: no authentication).")
@click.option("--rate-limit", type=click.IntRange(1), metavar="N", help="HTTP: at most N requests a minute per "
              "principal (429 past it).")
@click.option("--oauth-issuer", metavar="URL", help="HTTP: accept JWT access tokens from this OAuth 2.1 "
              "authorization server (its keys are found through its metadata unless --oauth-jwks says).")
@click.option("--oauth-jwks", metavar="URL", help="HTTP: the issuer's JWKS URL.")
@click.option("--oauth-audience", metavar="AUD", help="HTTP: the audience tokens must carry (default: the "
              "resource URL).")
@click.option("--resource-url", metavar="URL", help="HTTP: this endpoint's public URL, for OAuth metadata "
              "(default: http://HOST:PORT/mcp).")
@click.option("--require-scope", multiple=True, metavar="SCOPE", help="HTTP: every request needs this scope "
              "(403 insufficient_scope otherwise; repeatable).")
def serve(folders: tuple[str, ...], name: str, page_size: int, list_ttl: int, no_watch: bool, verbose: int,
          http: str | None, stateless: bool, json_response: bool, allow_host: tuple[str, ...],
          allow_origin: tuple[str, ...], token_file: str | None, rate_limit: int | None,
          oauth_issuer: str | None, oauth_jwks: str | None, oauth_audience: str | None, resource_url: str | None,
          require_scope: tuple[str, ...]) -> None:
    """Serve the prompt library in FOLDERS over stdio (what MCP clients launch), or over HTTP."""
    http_only = (stateless, json_response, allow_host, allow_origin, token_file, rate_limit, oauth_issuer,
                 oauth_jwks, oauth_audience, resource_url, require_scope)
    if http is None:
        if any(http_only):
            _fail("--stateless, --json-response, --allow-host, --allow-origin, --token-file, --rate-limit and "
                  "the OAuth options go with --http", 2)
        from ._serve import serve_stdio_folders

        sys.exit(serve_stdio_folders(list(folders), name, page_size, not no_watch, verbose, list_ttl))
    host, _, port_text = http.rpartition(":")
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        _fail(f"--http takes [HOST:]PORT, got {http!r}", 2)
    setup_logging(verbose)
    from .server.app import PromptServer
    from .server.guard import BearerTokens
    from .server.http import Authenticator, run

    if oauth_issuer is None and (oauth_jwks or oauth_audience or require_scope):
        _fail("--oauth-jwks, --oauth-audience and --require-scope go with --oauth-issuer", 2)
    if oauth_issuer is not None and token_file is not None:
        _fail("choose one of --token-file and --oauth-issuer", 2)
    host = host.strip("[]") or "127.0.0.1"
    shown = f"[{host}]" if ":" in host else host
    server = PromptServer(name, page_size=page_size, list_ttl_ms=list_ttl)
    auth: Authenticator | None = None
    metadata = None
    try:
        if oauth_issuer is not None:
            from .server.oauth import OAuthResource

            oauth = OAuthResource(issuer=oauth_issuer, resource=resource_url or f"http://{shown}:{port_text}/mcp",
                                  jwks_url=oauth_jwks, audience=oauth_audience, required_scopes=require_scope,
                                  name=name)
            auth, metadata = oauth, (oauth.metadata_path, oauth.metadata())
        else:
            auth = BearerTokens.load(token_file)
        for folder in folders:
            server.add_folder(folder)
    except PromptdeckError as exc:
        _fail(str(exc))
    click.echo(f"promptdeck: serving {len(server.catalog)} prompts on http://{shown}:{port_text}/mcp", err=True)
    run(server, host, int(port_text), stateless=stateless, json_response=json_response, watch=not no_watch,
        allowed_hosts=allow_host, allowed_origins=allow_origin, auth=auth, rate_limit=rate_limit, metadata=metadata)


@main.command()
@click.argument("folder", type=click.Path(file_okay=False))
def check(folder: str) -> None:
    """Validate every prompt file in FOLDER; exit 1 if any has a problem."""
    from .sources.files import FileSource

    try:
        source = FileSource(folder)
        source.load(compile_all=True)
        prompts = source.prompts()
    except PromptdeckError as exc:
        _fail(str(exc))
    problems = [e for rel in sorted(source.errors) for e in source.errors[rel]]
    for problem in problems:
        click.echo(str(problem))
    files = len(source.errors)
    summary = f"{len(prompts)} prompts ok"
    if problems:
        summary += f"; {len(problems)} problem{'s' * (len(problems) != 1)} in {files} file{'s' * (files != 1)}"
    click.echo(summary, err=bool(problems))
    sys.exit(1 if problems else 0)


@main.command()
@click.argument("folder", type=click.Path(file_okay=False))
@click.argument("prompt")
@click.option("-a", "--arg", "pairs", multiple=True, metavar="NAME=VALUE", help="An argument (repeatable).")
@click.option("--revision", type=click.Choice(sorted(REVISIONS)), default=LATEST.version, show_default=True,
              help="Protocol revision to shape the output for.")
@click.option("--json", "as_json", is_flag=True, help="Print the raw prompts/get result.")
def render(folder: str, prompt: str, pairs: tuple[str, ...], revision: str, as_json: bool) -> None:
    """Show the messages a client gets for PROMPT, with the errors a client would get."""
    setup_logging(0)
    from .server.app import PromptServer
    from .server.local import LocalClient

    server = PromptServer()
    try:
        server.add_folder(folder, compile_all=True)
    except PromptdeckError as exc:
        _fail(str(exc))
    client = LocalClient(server, revision)
    response = client.request("prompts/get", {"name": prompt, "arguments": _parse_args(pairs)})
    if "error" in response:
        error = response["error"]
        _fail(f"error {error['code']}: {error['message']}")
    result = response["result"]
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
        return
    _print_messages(result)


def _print_messages(result: dict[str, Any]) -> None:
    width = 72
    for message in result["messages"]:
        click.secho(f"── {message['role']} ".ljust(width, "─"), bold=True)
        click.echo(_describe_content(message["content"]))
    if result.get("description"):
        click.secho(f"({result['description']})", dim=True)


def _describe_content(content: dict[str, Any]) -> str:
    kind = content["type"]
    if kind == "text":
        return str(content["text"])
    if kind in ("image", "audio"):
        size = len(base64.b64decode(content["data"]))
        return f"[{kind} {content['mimeType']}, {size:,} bytes]"
    if kind == "resource":
        res = content["resource"]
        head = f"[resource {res['uri']} ({res.get('mimeType', '?')})]"
        if "text" in res:
            return f"{head}\n{res['text']}"
        return f"{head} {len(base64.b64decode(res['blob'])):,} bytes"
    if kind == "resource_link":
        return f"[link {content.get('title') or content['name']}: {content['uri']}]"
    return json.dumps(content)


if __name__ == "__main__":  # pragma: no cover
    main()
