"""How one HTTP endpoint is set up: every choice ``serve --http`` offers about it, in one frozen object."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...protocol.jsonrpc import MAX_BATCH_RESPONSE_BYTES
from ..asgi import BODY_SECONDS
from ..security.principals import DEFAULT_WRITE_SCOPE


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """The settings of a ``StreamableHttpApp`` (``serve --http`` names each one in its help)."""

    #: where the MCP endpoint is
    path: str = "/mcp"
    #: answer POSTs with JSON rather than an SSE stream
    json_response: bool = False
    #: keep no sessions: any replica answers any request
    stateless: bool = False
    #: Host and Origin values accepted besides loopback (DNS rebinding)
    allowed_hosts: frozenset[str] = field(default_factory=frozenset)
    allowed_origins: frozenset[str] = field(default_factory=frozenset)
    #: how long a session may stay idle before it ends (before it leaves this replica's memory, when
    #: replicas share the key session ids are signed with: ``session_ids``)
    session_idle_seconds: float = 1800
    #: how long after its initialize a session may be taken up by a replica that does not hold it
    session_lifetime_seconds: float = 86400
    #: how long a client is told to wait before it reconnects a dropped GET stream (SSE ``retry``)
    stream_retry_seconds: float = 3.0
    #: sessions of both transports, in all and per principal
    max_sessions: int = 1000
    max_sessions_per_principal: int = 100
    #: open streams (GET, 2024-11-05 /sse, 2026-07-28 subscriptions/listen), in all and per principal
    max_streams: int = 1000
    max_streams_per_principal: int = 100
    #: a request body's size, and how long it may take to arrive
    max_body_bytes: int = 4 * 1024 * 1024
    body_seconds: float = BODY_SECONDS
    #: a batch's joined answers
    max_batch_response_bytes: int = MAX_BATCH_RESPONSE_BYTES
    #: follow the library's folders and tell clients of changes
    watch: bool = True
    #: JSON-RPC requests a minute per principal; None: no limit
    rate_limit: int | None = None
    #: serve the 2024-11-05 HTTP+SSE transport on /sse and /messages (stateful mode only)
    legacy_sse: bool = True
    #: serve the web catalog and playground (and, with a store, its store API)
    ui: bool = False
    #: the scope that lets a principal write to the store through the store API
    write_scope: str = DEFAULT_WRITE_SCOPE
