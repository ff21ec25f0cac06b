"""The ``promptdeck`` command. The only module that prints to a terminal or exits."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from .._version import __version__
from ..logs import FORMATS, announce, setup_logging
from ..protocol.errors import ClientError, McpError, PromptdeckError
from ..protocol.revisions import LATEST, REVISIONS
from .folder_format import FORMAT_OPTION
from .stopping import INTERRUPTED, run_until_stopped, until_stopped

if TYPE_CHECKING:
    from ..client.session import Client
    from ..prompts.spec import Prompt
    from ..server.tools import ToolOptions

T = TypeVar("T")


def fail(message: str, code: int = 1) -> NoReturn:
    click.echo(f"promptdeck: {message}", err=True)
    sys.exit(code)


def _parse_args(pairs: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            fail(f"-a takes name=value, got {pair!r}", 2)
        out[key] = value
    return out


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="promptdeck")
def main() -> None:
    """Serve a prompt library to MCP clients, and check or preview its prompts."""


def _tool_options(context: click.Context, tools: bool, per_prompt: int, names: tuple[str, str],
                  prefix: str) -> ToolOptions | None:
    """The --tools options as ``ToolOptions`` (None without --tools); a tool option alone is a mistake."""
    from ..server.tools import ToolOptions

    given = [f"--{option.replace('_', '-')}" for option in ("tools_per_prompt", "tool_names", "tool_prefix")
             if context.get_parameter_source(option) is not click.core.ParameterSource.DEFAULT]
    if not tools:
        if given:
            fail(f"{', '.join(given)}: options of --tools, which is not given", 2)
        return None
    try:
        return ToolOptions(per_prompt_limit=per_prompt, list_name=names[0], get_name=names[1], prefix=prefix)
    except ValueError as exc:
        fail(f"--tools: {exc}", 2)


@main.command()
@click.argument("folders", nargs=-1, type=click.Path(file_okay=False))
@FORMAT_OPTION
@click.option("--store", metavar="URL", help="Also serve a label of this versioned store (sqlite:///path.db, "
              "a path ending in .db, or postgresql://…).")
@click.option("--label", "labels", multiple=True, metavar="LABEL",
              help="With --store: the label to serve (default: production), followed as it moves. With --http, "
              "repeat it to serve several: the first on /mcp, each other on /mcp/LABEL.")
@click.option("--name", default="promptdeck", show_default=True, help="Server name clients see.")
@click.option("--page-size", default=100, show_default=True, type=click.IntRange(1, 10_000),
              help="Prompts per prompts/list page.")
@click.option("--list-ttl", default=60_000, show_default=True, type=click.IntRange(0), metavar="MS",
              help="How long 2026-07-28 clients may cache prompts/list (ttlMs).")
@click.option("--no-watch", is_flag=True, help="Do not reload prompt files when they change.")
@click.option("--tools", is_flag=True, help="Also offer the prompts as tools, for clients that call tools but "
              "show no prompts (docs/tools.md).")
@click.option("--tools-per-prompt", type=click.IntRange(0, 1000), default=16, show_default=True, metavar="N",
              help="With --tools: one tool per prompt while a client sees at most N prompts; past that, a list "
              "tool and a get tool (0: always those two).")
@click.option("--tool-names", type=(str, str), default=("list_prompts", "get_prompt"), show_default=True,
              metavar="LIST GET", help="With --tools: the names of the list tool and the get tool.")
@click.option("--tool-prefix", default="", metavar="PREFIX", help="With --tools: put before each per-prompt "
              "tool's name.")
@click.option("-v", "--verbose", count=True, help="Log more to stderr (-v info, -vv debug).")
@click.option("--log-format", type=click.Choice(FORMATS), default="text", show_default=True,
              help="Log lines as escaped text or as one JSON object each.")
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
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True, help="HTTP: serving "
              "processes, each with its own socket on the port (needs --stateless: sessions live in one process).")
@click.option("--trusted-proxy", multiple=True, metavar="ADDR", help="HTTP: take the client's address from "
              "X-Forwarded-For when the connection comes from this proxy (repeatable; rate limits and logs use it).")
@click.option("--tls-cert", type=click.Path(dir_okay=False, exists=True), help="HTTP: serve https with this "
              "certificate (PEM; with --tls-key).")
@click.option("--tls-key", type=click.Path(dir_okay=False, exists=True), help="HTTP: the certificate's private key.")
@click.option("--require-scope", multiple=True, metavar="SCOPE", help="HTTP: every request needs this scope "
              "(403 insufficient_scope otherwise; repeatable).")
@click.option("--max-connections", type=click.IntRange(1), default=1000, show_default=True, metavar="N",
              help="HTTP: open connections per worker (503 past it).")
@click.option("--max-sessions", type=(click.IntRange(1), click.IntRange(1)), default=(1000, 100), show_default=True,
              metavar="TOTAL PER_PRINCIPAL", help="HTTP: open sessions in all and per principal (503 / 429 past).")
@click.option("--max-streams", type=(click.IntRange(1), click.IntRange(1)), default=(1000, 100), show_default=True,
              metavar="TOTAL PER_PRINCIPAL", help="HTTP: open GET, /sse and subscriptions/listen streams in all and "
              "per principal.")
@click.option("--session-idle", type=click.IntRange(1), default=1800, show_default=True, metavar="SECONDS",
              help="HTTP: a session unused this long is closed.")
@click.option("--keep-alive", type=click.FloatRange(0.1), default=5.0, show_default=True, metavar="SECONDS",
              help="HTTP: an idle connection is closed after this long.")
@click.option("--no-ui", is_flag=True, help="HTTP: do not serve the web catalog and playground on / "
              "(docs/web.md).")
@click.option("--write-scope", default="store:write", show_default=True, metavar="SCOPE",
              help="HTTP with --store: the scope a principal needs to save versions, move labels and roll back "
              "from the web page (without authentication the page is read-only).")
@click.option("--max-body", type=click.IntRange(1024), default=4 * 1024 * 1024, show_default=True, metavar="BYTES",
              help="HTTP: the largest request body (413 past it).")
def serve(folders: tuple[str, ...], name: str, page_size: int, list_ttl: int, no_watch: bool, verbose: int,
          log_format: str, http: str | None, stateless: bool, json_response: bool, allow_host: tuple[str, ...],
          allow_origin: tuple[str, ...], token_file: str | None, rate_limit: int | None,
          oauth_issuer: str | None, oauth_jwks: str | None, oauth_audience: str | None, resource_url: str | None,
          require_scope: tuple[str, ...], workers: int, trusted_proxy: tuple[str, ...], tls_cert: str | None,
          tls_key: str | None, max_connections: int, max_sessions: tuple[int, int], max_streams: tuple[int, int],
          session_idle: int, keep_alive: float, max_body: int, no_ui: bool, write_scope: str, store: str | None,
          labels: tuple[str, ...],
          tools: bool, tools_per_prompt: int, tool_names: tuple[str, str], tool_prefix: str,
          folder_format: str | None) -> None:
    """Serve the prompt library in FOLDERS (and/or a store's label) over stdio (what MCP clients launch),
    or over HTTP."""
    if not folders and store is None:
        fail("serve needs a FOLDER or --store URL", 2)
    if labels and store is None:
        fail("--label goes with --store", 2)
    from .store import valid_label

    labels = tuple(valid_label(label) for label in labels) or ("production",)
    if len(set(labels)) != len(labels):
        fail(f"--label: a label is given twice ({', '.join(labels)})", 2)
    context = click.get_current_context()
    tool_options = _tool_options(context, tools, tools_per_prompt, tool_names, tool_prefix)
    http_only = [option for option in ("stateless", "json_response", "allow_host", "allow_origin", "token_file",
                                       "rate_limit", "oauth_issuer", "oauth_jwks", "oauth_audience", "resource_url",
                                       "require_scope", "trusted_proxy", "tls_cert", "tls_key", "workers",
                                       "max_connections", "max_sessions", "max_streams", "session_idle",
                                       "keep_alive", "max_body", "no_ui", "write_scope")
                 if context.get_parameter_source(option) is not click.core.ParameterSource.DEFAULT]
    if http is None:
        if http_only:
            named = ", ".join("--" + option.replace("_", "-") for option in http_only)
            fail(f"{named}: HTTP options, which go with --http", 2)
        if len(labels) > 1:
            fail("stdio serves one label; serve several with --http (each on its own endpoint)", 2)
        from .serve_stdio import serve_stdio_folders

        sys.exit(serve_stdio_folders(list(folders), name, page_size, not no_watch, verbose, list_ttl, log_format,
                                     store, labels[0], tool_options, folder_format))
    host, _, port_text = http.rpartition(":")
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        fail(f"--http takes [HOST:]PORT, got {http!r}", 2)
    setup_logging(verbose, log_format)
    try:
        import httptools  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        fail("serving over HTTP needs the http extra: pip install 'promptdeck[http]'")
    if (tls_cert is None) != (tls_key is None):
        fail("--tls-cert and --tls-key go together", 2)
    if max_sessions[1] > max_sessions[0] or max_streams[1] > max_streams[0]:
        fail("--max-sessions and --max-streams: the share per principal cannot exceed the total", 2)
    if workers > 1 and not stateless:
        fail("--workers needs --stateless: a session lives in the one process that opened it", 2)
    from ..server.app import PromptServer
    from ..server.http.runner import bind
    from ..server.http.runner import serve as run
    from ..server.security.principals import Authenticator
    from ..server.security.tokens import BearerTokens

    if oauth_issuer is None and (oauth_jwks or oauth_audience or require_scope):
        fail("--oauth-jwks, --oauth-audience and --require-scope go with --oauth-issuer", 2)
    if oauth_issuer is not None and token_file is not None:
        fail("choose one of --token-file and --oauth-issuer", 2)
    host = host.strip("[]") or "127.0.0.1"
    shown = f"[{host}]" if ":" in host else host
    # One server per label: the first on /mcp, each other on /mcp/LABEL (see server.endpoints).
    servers = {"/mcp" if number == 0 else f"/mcp/{label}": PromptServer(name, page_size=page_size,
                                                                          list_ttl_ms=list_ttl,
                                                                          tools=tool_options or False)
               for number, label in enumerate(labels)}
    auth: Authenticator | None = None
    metadata = None
    try:
        if oauth_issuer is not None:
            from ..server.security.oauth import OAuthResource

            oauth = OAuthResource(issuer=oauth_issuer, resource=resource_url or f"http://{shown}:{port_text}/mcp",
                                  jwks_url=oauth_jwks, audience=oauth_audience, required_scopes=require_scope,
                                  name=name)
            auth, metadata = oauth, (oauth.metadata_path, oauth.metadata())
        else:
            auth = BearerTokens.load(token_file)
        for server, label in zip(servers.values(), labels, strict=True):
            for folder in folders:
                server.add_folder(folder, format=folder_format)
            if store is not None:
                server.add_store(store, label=label)
    except PromptdeckError as exc:
        fail(str(exc))
    try:
        listening = bind(host, int(port_text), shared=workers > 1)  # before announcing: a port in use is one line
    except PromptdeckError as exc:
        fail(str(exc))
    scheme = "https" if tls_cert else "http"
    for (path, server), label in zip(servers.items(), labels, strict=True):
        of_label = f" (label {label})" if store is not None else ""
        prompts = len(server.catalog)
        announce(f"serving {prompts} prompt{'s' * (prompts != 1)} on {scheme}://{shown}:{port_text}{path}{of_label}")
    if not no_ui:
        announce(f"web page: {scheme}://{shown}:{port_text}/ (catalog and playground; --no-ui leaves it out)")
    run_until_stopped(run, servers if len(servers) > 1 else servers["/mcp"], host, int(port_text), sock=listening,
        tls=(tls_cert, tls_key) if tls_cert and tls_key else None,
        trusted_proxies=trusted_proxy, workers=workers,
        connection_limits={"limit_concurrency": max_connections, "timeout_keep_alive": keep_alive},
        max_sessions=max_sessions[0], max_sessions_per_principal=max_sessions[1], max_streams=max_streams[0],
        max_streams_per_principal=max_streams[1], session_idle_seconds=session_idle, max_body_bytes=max_body,
        stateless=stateless, json_response=json_response, watch=not no_watch, allowed_hosts=allow_host,
        allowed_origins=allow_origin, auth=auth, rate_limit=rate_limit, metadata=metadata, ui=not no_ui,
        write_scope=write_scope)


@main.command()
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False))
@FORMAT_OPTION
def check(folders: tuple[str, ...], folder_format: str | None) -> None:
    """Validate every prompt file in FOLDERS; exit 1 if any has a problem."""
    problems, prompts, files = library_problems(folders, folder_format)
    for problem in problems:
        click.echo(problem)
    summary = f"{len(prompts)} prompt{'s' * (len(prompts) != 1)} ok"
    if problems:
        summary += f"; {len(problems)} problem{'s' * (len(problems) != 1)} in {files} file{'s' * (files != 1)}"
    click.echo(summary, err=bool(problems))
    sys.exit(1 if problems else 0)


def library_problems(folders: tuple[str, ...], folder_format: str | None = None) \
        -> tuple[list[str], dict[str, Prompt], int]:
    """What ``check`` finds in FOLDERS: (problems, prompt name -> the prompt served, files with a problem)."""
    from ..sources.files.source import FileSource

    problems: list[str] = []
    prompts: dict[str, Prompt] = {}
    shown: dict[str, str] = {}
    files = 0
    for folder in folders:
        try:
            source = FileSource(folder, format=folder_format)
            source.load(compile_all=True)
            found = source.prompts()  # before reading errors: this is where name clashes are found
        except PromptdeckError as exc:
            fail(str(exc))
        # With several folders, paths are shown from where the command was run, so each is findable.
        prefix = f"{folder.rstrip('/')}/" if len(folders) > 1 else ""
        problems += [f"{prefix}{e}" for rel in sorted(source.errors) for e in source.errors[rel]]
        files += len(source.errors)
        for prompt in found:
            if prompt.name in prompts:  # as served: the first folder's prompt wins
                problems.append(f"{prefix}{source.shown(prompt.source)}: prompt {prompt.name!r} is hidden by "
                                f"{shown[prompt.name]}, which has the same name")
                files += 1
            else:
                prompts[prompt.name] = prompt
                shown[prompt.name] = f"{prefix}{source.shown(prompt.source)}"
    return problems, prompts, files


@main.command()
@click.argument("folder", type=click.Path(file_okay=False))
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
    response = client.request("prompts/get", {"name": prompt, "arguments": _parse_args(pairs)})
    if "error" in response:
        error = response["error"]
        fail(f"error {error['code']}: {error['message']}")
    result = response["result"]
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
        return
    from .render_text import format_messages

    click.echo(format_messages(result))


# -- the client side: any MCP server's prompts ------------------------------------------------------

_TARGET_HELP = ("TARGET is an http(s) URL or one quoted command line that starts a stdio server (a folder's "
                "prompts: \"promptdeck serve FOLDER\").")


def _client_options(command: Callable[..., Any]) -> Callable[..., Any]:
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


def _run_client(options: dict[str, Any], work: Callable[[Client], Awaitable[T]], *, runs_until_stopped: bool = False,
                ) -> T | None:
    """Connect to TARGET, run ``work`` with the client, and turn failures into one line and an exit code. A
    command that ``runs_until_stopped`` (watch) ends quietly on Ctrl-C or SIGTERM (None); any other exits
    130 on Ctrl-C (``stopping``)."""
    from ..client.session import connect

    headers = _headers(options)
    target = options["target"]

    async def session() -> T:
        async with connect(target, era=options["era"], token=options["token"], headers=headers or None,
                           timeout=options["timeout"]) as client:
            return await work(client)

    try:
        if runs_until_stopped:
            with until_stopped():
                asyncio.run(session())
            return None
        return asyncio.run(session())
    except McpError as exc:
        fail(f"error {exc.code}: {exc.message}")
    except PromptdeckError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        sys.exit(INTERRUPTED)


def _progress(prompts: int, pages: int) -> None:
    # Only worth showing on a terminal and for listings that take more than a page or two.
    if pages >= 3 and sys.stderr.isatty():
        click.echo(f"\rlisting: {prompts:,} prompts, {pages} pages", err=True, nl=False)


@main.command(epilog=_TARGET_HELP)
@_client_options
@click.option("--json", "as_json", is_flag=True, help="Print the prompts as JSON.")
def ls(as_json: bool, **options: Any) -> None:
    """List the prompts of the MCP server at TARGET (all pages)."""
    from .render_text import format_table

    async def work(client: Client) -> None:
        prompts = await client.list_prompts(progress=_progress)
        if sys.stderr.isatty():
            click.echo("\r\033[K", err=True, nl=False)
        if as_json:
            import msgspec

            click.echo(json.dumps(msgspec.to_builtins(prompts), indent=2, ensure_ascii=False))
        else:
            click.echo(format_table(prompts, _terminal_width()))

    _run_client(options, work)


def _terminal_width() -> int:
    import shutil

    return shutil.get_terminal_size((120, 24)).columns if sys.stdout.isatty() else 10_000


@main.command(epilog=_TARGET_HELP)
@_client_options
@click.argument("prompt")
@click.option("-a", "--arg", "pairs", multiple=True, metavar="NAME=VALUE", help="An argument (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the raw prompts/get result.")
def get(prompt: str, pairs: tuple[str, ...], as_json: bool, **options: Any) -> None:
    """Render PROMPT on the MCP server at TARGET and show its messages."""
    arguments = _parse_args(pairs)

    async def work(client: Client) -> None:
        if as_json:
            params: dict[str, Any] = {"name": prompt, "arguments": arguments} if arguments else {"name": prompt}
            click.echo(json.dumps(await client.request("prompts/get", params, name=prompt), indent=2,
                                  ensure_ascii=False))
            return
        from .render_text import format_messages

        click.echo(format_messages(await client.get_prompt(prompt, **arguments), color=sys.stdout.isatty()))

    _run_client(options, work)


@main.command(epilog=_TARGET_HELP)
@_client_options
@click.argument("prompt")
@click.argument("argument")
@click.argument("prefix", default="")
@click.option("-a", "--arg", "pairs", multiple=True, metavar="NAME=VALUE",
              help="An argument already chosen, as context (repeatable).")
def complete(prompt: str, argument: str, prefix: str, pairs: tuple[str, ...], **options: Any) -> None:
    """Print the values the server at TARGET suggests for ARGUMENT of PROMPT, one a line."""
    context = _parse_args(pairs)

    async def work(client: Client) -> None:
        completion = await client.complete(prompt, argument, prefix, context)
        for value in completion.values:
            click.echo(value)
        if completion.has_more or (completion.total or 0) > len(completion.values):
            more = f"{completion.total:,} in all" if completion.total else "more"
            click.echo(f"({len(completion.values)} shown, {more})", err=True)

    _run_client(options, work)


@main.command(epilog=_TARGET_HELP)
@_client_options
def watch(**options: Any) -> None:
    """Print the prompt list of the server at TARGET, then each change to it as it happens (Ctrl-C stops)."""
    import time

    async def work(client: Client) -> None:
        prompts = await client.list_prompts()
        click.echo(f"{len(prompts)} prompts on {client.server_info.get('name', 'the server')} "
                   f"({client.protocol_version}); watching for changes", err=True)
        async for change in client.watch():
            marks = [f"+{n}" for n in change.added] + [f"-{n}" for n in change.removed]
            marks += [f"~{n}" for n in change.changed]
            stamp = time.strftime("%H:%M:%S")
            summary = " ".join(marks) or "(list re-sent, no difference)"
            click.echo(f"{stamp} {len(change.prompts)} prompts: {summary}")
        raise ClientError("the server ended the subscription")

    _run_client(options, work, runs_until_stopped=True)


@main.command(epilog=_TARGET_HELP)
@_client_options
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
        fail("pick needs prompt_toolkit: pip install 'promptdeck[pick]'")
    problem = _picker.terminal_problem()
    if problem:
        fail(problem, 2)
    sys.exit(_run_client(options, _picker.run))


@main.command(epilog=_TARGET_HELP)
@_client_options
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
        fail("ui needs the http extra: pip install 'promptdeck[http]'")
    from ..client.remote import RemoteSource
    from ..server.app import PromptServer
    from ..server.http.runner import bind
    from ..server.http.runner import serve as run

    source = RemoteSource(options["target"], era=options["era"], token=options["token"], headers=headers,
                          timeout=options["timeout"])
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
    announce(f"serving the {len(server.catalog)} prompts of {options['target']} on {page}")
    if no_open or not _open_browser(f"{page}#code={signin.code()}"):
        # Printed on this terminal only, whose output is this user's: for a browser elsewhere (through an
        # SSH tunnel, say), which signs in on the page's form.
        how = "the token in $PROMPTDECK_UI_TOKEN" if given else f"the token {signin.secret}"
        announce(f"{'' if no_open else 'no graphical browser found: '}open {page} and sign in with {how}")
    # Ctrl-C and SIGTERM are how this command ends (uvicorn stops serving, then raises the signal again):
    # through ``finally``, so a stdio server started for TARGET is stopped too rather than left to notice
    # its closed stdin.
    try:
        run_until_stopped(run, server, "127.0.0.1", listening.getsockname()[1], sock=listening, watch=False,
                          ui=True, auth=signin, signin=signin)
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


if __name__ == "__main__":  # pragma: no cover
    main()


from . import store as _store_cli  # noqa: E402, F401 - registers publish, label, rollback, history, diff, export, store
