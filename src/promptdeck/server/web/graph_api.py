"""The web page's view of the composition graph: ``GET /api/graph?prompt=NAME`` says what the prompt uses (its
partials and read files, the prompts it composes, whether some part is named by an expression), every part
its render may pull in, the prompts that compose it, and every prompt a change to it reaches
(``prompts.graph``).

Served beside ``/mcp`` when the page is on, behind the same Host/Origin checks, authentication and rate limit
(``StreamableHttpApp`` routes here after them), so it answers with exactly its principal's sight: the graph is
made of the prompts the principal may see (``Catalog.view``), a prompt it may not see is a 404 as an unknown
one is, and no name of a prompt it may not see, nor a file only such prompts use, is ever in an answer.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

from ...prompts.graph import Graph
from ...protocol.errors import HttpError
from ...protocol.jsonrpc import encode_json
from ..asgi import Receive, Scope, Send, get_query, respond

if TYPE_CHECKING:
    from ...prompts.catalog import Catalog
    from ...prompts.spec import Offered
    from ..app import PromptServer
    from ..security.principals import Principal

PATH = "/api/graph"
#: Graphs kept, one per catalog and sight: principals mostly share a few sets of scopes.
KEPT_GRAPHS = 8
#: Past this many prompts in sight, "used by" is not worked out: it asks every prompt what it uses, which
#: parses and compiles each one a large library (or a store label) has not compiled yet. What the prompt
#: itself uses is still answered, from it and the prompts it composes; ``usedBy``/``affects`` are then null.
MAX_GRAPH_PROMPTS = 5000


class GraphApi:
    """``GET /api/graph?prompt=NAME`` for ``server`` (see the module docstring)."""

    def __init__(self, server: PromptServer) -> None:
        self.server = server
        self._graphs: dict[tuple[int, frozenset[str] | None], tuple[Catalog, Graph]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def serves(path: str) -> bool:
        return path == PATH

    async def __call__(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        query = get_query(scope, PATH)
        name = query.get("prompt")
        if not name:
            raise HttpError(400, "the query needs prompt=…")
        seen = self.server.catalog.view(principal.scopes)
        if name not in seen:
            raise HttpError(404, f"no prompt {name[:128]!r}")
        # Building a graph asks every prompt what it uses, which compiles the templates of a large library
        # not compiled yet: off the event loop.
        if len(seen) > MAX_GRAPH_PROMPTS:
            entry = await asyncio.to_thread(_uses_only, seen, name)
        else:
            graph = await asyncio.to_thread(self._graph, seen, principal.scopes)
            entry = graph.entry(name, seen.__contains__)
        body = {"prompt": name, **entry}
        await respond(send, 200, encode_json(body), headers=[(b"cache-control", b"no-store"),
                                                             (b"x-content-type-options", b"nosniff")])

    def _graph(self, seen: Catalog, scopes: frozenset[str] | None) -> Graph:
        """The graph of the prompts in ``seen``, kept while the server's catalog is the same one."""
        catalog = self.server.catalog
        key = (id(catalog), scopes)
        with self._lock:
            kept = self._graphs.get(key)
            if kept is not None and kept[0] is catalog:
                return kept[1]
        graph = Graph(seen)
        with self._lock:
            if len(self._graphs) >= KEPT_GRAPHS:
                self._graphs.clear()
            self._graphs[key] = (catalog, graph)
        return graph


def _uses_only(seen: Catalog, name: str) -> dict[str, Any]:
    """The entry of ``name`` in a library too large to ask every prompt: the graph of it and of the prompts it
    composes (at most ``MAX_GRAPH_PROMPTS``), with who uses it left unknown (null)."""
    found: dict[str, Offered] = {}
    todo = [name]
    while todo and len(found) < MAX_GRAPH_PROMPTS:
        prompt = seen.get(todo.pop())
        if prompt is None or prompt.name in found:
            continue
        found[prompt.name] = prompt
        todo.extend(prompt.parsed().uses.prompts)
    entry = Graph(found.values()).entry(name, seen.__contains__)
    return {**entry, "usedBy": None, "affects": None}
