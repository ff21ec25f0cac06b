"""``promptdeck serve`` over stdio, shared by the click command and the fast front door."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..logs import setup_logging

if TYPE_CHECKING:
    from ..server.tools import ToolOptions


def serve_stdio_folders(folders: list[str], name: str, page_size: int, watch: bool, verbose: int,
                        list_ttl_ms: int = 60_000, log_format: str = "text", store: str | None = None,
                        label: str = "production", tools: ToolOptions | None = None,
                        folder_format: str | None = None, text_resources: bool = False,
                        elicit_seconds: float | None = None, skills: bool = True, write_tools: bool = False) -> int:
    """Serve FOLDERS (and the ``label`` of ``store``) on stdin/stdout; returns the exit code (1 when a
    folder or the store cannot be served)."""
    setup_logging(verbose, log_format)
    from ..protocol.errors import PromptdeckError
    from ..server.app import PromptServer

    server = PromptServer(name, page_size=page_size, list_ttl_ms=list_ttl_ms, tools=tools or False,
                          text_resources=text_resources, skills=skills)
    if elicit_seconds is not None:  # --elicit-timeout (the front door's plain serve leaves the default)
        server.elicit_seconds = elicit_seconds
    try:
        for folder in folders:
            server.add_folder(folder, defer=True, format=folder_format)
        if store is not None:
            server.add_store(store, label=label)
        if write_tools:  # a local client is trusted with everything: it holds the write scope
            from ..server.web.store_tools import offer

            offer(server)
    except PromptdeckError as exc:
        from .terminal import write

        write(sys.stderr, f"promptdeck: {exc}\n")
        return 1
    from .stopping import STOPPED, delivering, until_stopped

    with until_stopped(), delivering(store):  # Ctrl-C, SIGTERM and the end of stdin are how a stdio server ends: 0
        server.serve(watch=watch)
    return STOPPED
