"""``promptdeck serve``: a library over stdio (what MCP clients launch) or over HTTP."""

from __future__ import annotations

import signal
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from ..logs import FORMATS, announce, setup_logging
from ..protocol.errors import PromptdeckError
from .common import fail, valid_label
from .folder_format import FORMAT_OPTION
from .library_folder import LIBRARY_FOLDER
from .stopping import delivering, until_stopped

if TYPE_CHECKING:
    from ..server.tools import ToolOptions

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


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """Everything ``serve`` was asked, one field per option (each option's help says what it does)."""

    #: what to serve
    folders: tuple[str, ...]
    folder_format: str | None
    store: str | None
    labels: tuple[str, ...]
    #: what clients see
    name: str
    page_size: int
    list_ttl: int
    no_watch: bool
    tools: bool
    tools_per_prompt: int
    tool_names: tuple[str, str]
    tool_prefix: str
    write_tools: bool
    text_resources: bool
    elicit_timeout: float
    no_skills: bool
    #: logs
    verbose: int
    log_format: str
    #: HTTP, and who may use it
    http: str | None
    stateless: bool
    json_response: bool
    allow_host: tuple[str, ...]
    allow_origin: tuple[str, ...]
    token_file: str | None
    rate_limit: int | None
    oauth_issuer: str | None
    oauth_jwks: str | None
    oauth_audience: str | None
    resource_url: str | None
    require_scope: tuple[str, ...]
    workers: int
    trusted_proxy: tuple[str, ...]
    tls_cert: str | None
    tls_key: str | None
    max_connections: int
    max_sessions: tuple[int, int]
    max_streams: tuple[int, int]
    session_idle: int
    session_lifetime: int
    stream_retry: float
    keep_alive: float
    max_body: int
    no_ui: bool
    write_scope: str


#: The options that mean something only with --http.
HTTP_ONLY = ("stateless", "json_response", "allow_host", "allow_origin", "token_file", "rate_limit", "oauth_issuer",
             "oauth_jwks", "oauth_audience", "resource_url", "require_scope", "trusted_proxy", "tls_cert", "tls_key",
             "workers", "max_connections", "max_sessions", "max_streams", "session_idle",
             "session_lifetime", "stream_retry", "keep_alive", "max_body", "no_ui", "write_scope")


@click.command()
@click.argument("folders", nargs=-1, type=LIBRARY_FOLDER)
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
@click.option("--write-tools", is_flag=True, help="With --store: also offer agents tools to read a prompt's "
              "versions and diffs, propose a change for review and comment on a proposal, to principals holding "
              "the write scope (docs/store.md#agents). They never move a label.")
@click.option("--tools-per-prompt", type=click.IntRange(0, 1000), default=16, show_default=True, metavar="N",
              help="With --tools: one tool per prompt while a client sees at most N prompts; past that, a list "
              "tool and a get tool (0: always those two).")
@click.option("--tool-names", type=(str, str), default=("list_prompts", "get_prompt"), show_default=True,
              metavar="LIST GET", help="With --tools: the names of the list tool and the get tool.")
@click.option("--tool-prefix", default="", metavar="PREFIX", help="With --tools: put before each per-prompt "
              "tool's name.")
@click.option("--text-resources", is_flag=True, help="Send embedded text resources and resource links as text "
              "blocks, for clients that take text only (LangChain's and LlamaIndex's MCP adapters; docs/protocol.md).")
@click.option("--elicit-timeout", type=click.FloatRange(0, min_open=True), default=300.0, show_default=True,
              metavar="SECONDS", help="How long a 2025-06-18 or 2025-11-25 session waits for its client to fill in "
              "a form for a prompt's missing arguments (then -32602).")
@click.option("--no-skills", is_flag=True, help="Do not serve the library's Agent Skills (the MCP skills extension, "
              "skills/list, skill:// resources; docs/skills.md).")
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
              help="HTTP: a session unused this long is closed (with --store: dropped from this "
              "replica's memory).")
@click.option("--session-lifetime", type=click.IntRange(1), default=86400, show_default=True, metavar="SECONDS",
              help="HTTP: with --store, how long after its initialize any replica takes up a session (docs/http.md).")
@click.option("--stream-retry", type=click.FloatRange(0.1), default=3.0, show_default=True, metavar="SECONDS",
              help="HTTP: how long a client waits to reconnect a dropped GET stream (outlast a restart).")
@click.option("--keep-alive", type=click.FloatRange(0.1), default=5.0, show_default=True, metavar="SECONDS",
              help="HTTP: an idle connection is closed after this long.")
@click.option("--no-ui", is_flag=True, help="HTTP: do not serve the web catalog and playground on / "
              "(docs/web.md).")
@click.option("--write-scope", default="store:write", show_default=True, metavar="SCOPE",
              help="HTTP with --store: the scope a principal needs to save versions, move labels and roll back "
              "from the web page, and to see and use the --write-tools (without authentication the page is "
              "read-only and the write tools are not offered).")
@click.option("--max-body", type=click.IntRange(1024), default=4 * 1024 * 1024, show_default=True, metavar="BYTES",
              help="HTTP: the largest request body (413 past it).")
def serve(**given: Any) -> None:
    """Serve the prompt library in FOLDERS (and/or a store's label) over stdio (what MCP clients launch),
    or over HTTP."""
    options = ServeOptions(**given)
    if not options.folders and options.store is None:
        fail("serve needs a FOLDER or --store URL", 2)
    if options.labels and options.store is None:
        fail("--label goes with --store", 2)
    if options.write_tools and options.store is None:
        fail("--write-tools goes with --store: they read and propose the store's versions", 2)
    labels = tuple(valid_label(label) for label in options.labels) or ("production",)
    if len(set(labels)) != len(labels):
        fail(f"--label: a label is given twice ({', '.join(labels)})", 2)
    context = click.get_current_context()
    tool_options = _tool_options(context, options.tools, options.tools_per_prompt, options.tool_names,
                                 options.tool_prefix)
    if options.http is None:
        http_only = [option for option in HTTP_ONLY
                     if context.get_parameter_source(option) is not click.core.ParameterSource.DEFAULT]
        if http_only:
            named = ", ".join("--" + option.replace("_", "-") for option in http_only)
            fail(f"{named}: HTTP options, which go with --http", 2)
        if len(labels) > 1:
            fail("stdio serves one label; serve several with --http (each on its own endpoint)", 2)
        from .serve_stdio import serve_stdio_folders

        sys.exit(serve_stdio_folders(list(options.folders), options.name, options.page_size, not options.no_watch,
                                     options.verbose, options.list_ttl, options.log_format, options.store, labels[0],
                                     tool_options, options.folder_format, options.text_resources,
                                     options.elicit_timeout, skills=not options.no_skills,
                                     write_tools=options.write_tools))
    _serve_http(options, options.http, labels, tool_options)


def _serve_http(o: ServeOptions, http: str, labels: tuple[str, ...], tool_options: ToolOptions | None) -> None:
    host, _, port_text = http.rpartition(":")
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        fail(f"--http takes [HOST:]PORT, got {http!r}", 2)
    setup_logging(o.verbose, o.log_format)
    try:
        import httptools  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        from ..extras import needs  # the command that works from a clone: not on PyPI

        fail(needs("serving over HTTP", "http"))
    if (o.tls_cert is None) != (o.tls_key is None):
        fail("--tls-cert and --tls-key go together", 2)
    if o.max_sessions[1] > o.max_sessions[0] or o.max_streams[1] > o.max_streams[0]:
        fail("--max-sessions and --max-streams: the share per principal cannot exceed the total", 2)
    if o.workers > 1 and not o.stateless:
        fail("--workers needs --stateless: a session lives in the one process that opened it", 2)
    from ..server.app import PromptServer
    from ..server.http.runner import bind
    from ..server.http.runner import serve as run
    from ..server.security.principals import Authenticator
    from ..server.security.tokens import BearerTokens

    if o.oauth_issuer is None and (o.oauth_jwks or o.oauth_audience or o.require_scope):
        fail("--oauth-jwks, --oauth-audience and --require-scope go with --oauth-issuer", 2)
    if o.oauth_issuer is not None and o.token_file is not None:
        fail("choose one of --token-file and --oauth-issuer", 2)
    host = host.strip("[]") or "127.0.0.1"
    shown = f"[{host}]" if ":" in host else host
    # One server per label: the first on /mcp, each other on /mcp/LABEL (see server.http.endpoints).
    servers = {"/mcp" if number == 0 else f"/mcp/{label}": PromptServer(o.name, page_size=o.page_size,
                                                                          list_ttl_ms=o.list_ttl,
                                                                          tools=tool_options or False,
                                                                          text_resources=o.text_resources,
                                                                          elicit_seconds=o.elicit_timeout,
                                                                          skills=not o.no_skills)
               for number, label in enumerate(labels)}
    auth: Authenticator | None = None
    metadata = None
    try:
        if o.oauth_issuer is not None:
            from ..server.security.oauth import OAuthResource

            oauth = OAuthResource(issuer=o.oauth_issuer, resource=o.resource_url or f"http://{shown}:{port_text}/mcp",
                                  jwks_url=o.oauth_jwks, audience=o.oauth_audience, required_scopes=o.require_scope,
                                  name=o.name)
            auth, metadata = oauth, (oauth.metadata_path, oauth.metadata())
        elif o.token_file is not None:
            from ..server.security.token_file import TokenFile

            watched = TokenFile(o.token_file)  # re-read when it changes, and on SIGHUP (docs/http.md#rotation)
            signal.signal(signal.SIGHUP, lambda _signum, _frame: watched.reload_soon())
            auth = watched
        else:
            auth = BearerTokens.load(None)
        for server, label in zip(servers.values(), labels, strict=True):
            for folder in o.folders:
                server.add_folder(folder, format=o.folder_format)
            if o.store is not None:
                server.add_store(o.store, label=label)
            if o.write_tools:
                from ..server.web.store_tools import offer

                offer(server, o.write_scope)
    except PromptdeckError as exc:
        fail(str(exc))
    try:
        listening = bind(host, int(port_text), shared=o.workers > 1)  # before announcing: a port in use is one line
    except PromptdeckError as exc:
        fail(str(exc))
    scheme = "https" if o.tls_cert else "http"
    # Stopping is armed before the first line is out: a SIGTERM that follows the announcement at once is a
    # graceful stop too (it once killed the process, exit -15, before uvicorn was running).
    with until_stopped(), delivering(o.store):
        for (path, server), label in zip(servers.items(), labels, strict=True):
            of_label = f" (label {label})" if o.store is not None else ""
            prompts = len(server.catalog)
            announce(f"serving {prompts} prompt{'s' * (prompts != 1)} on {scheme}://{shown}:{port_text}{path}"
                     f"{of_label}")
        if not o.no_ui:
            announce(f"web page: {scheme}://{shown}:{port_text}/ (catalog and playground; --no-ui leaves it out)")
        run(servers if len(servers) > 1 else servers["/mcp"], host, int(port_text), sock=listening,
            tls=(o.tls_cert, o.tls_key) if o.tls_cert and o.tls_key else None,
            trusted_proxies=o.trusted_proxy, workers=o.workers,
            connection_limits={"limit_concurrency": o.max_connections, "timeout_keep_alive": o.keep_alive},
            max_sessions=o.max_sessions[0], max_sessions_per_principal=o.max_sessions[1],
            max_streams=o.max_streams[0], max_streams_per_principal=o.max_streams[1],
            session_idle_seconds=o.session_idle, session_lifetime_seconds=o.session_lifetime,
            stream_retry_seconds=o.stream_retry, max_body_bytes=o.max_body, stateless=o.stateless,
            json_response=o.json_response, watch=not o.no_watch, allowed_hosts=o.allow_host,
            allowed_origins=o.allow_origin, auth=auth, rate_limit=o.rate_limit, metadata=metadata,
            ui=not o.no_ui, write_scope=o.write_scope)
