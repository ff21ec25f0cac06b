"""``promptdeck serve`` over stdio, shared by the click command and the fast front door."""

from __future__ import annotations

import logging
import sys


def setup_logging(verbose: int) -> None:
    """Log promptdeck's records to stderr: warnings by default, -v info, -vv debug."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("promptdeck %(levelname)s %(message)s"))
    root = logging.getLogger("promptdeck")
    root.addHandler(handler)
    root.setLevel(max(logging.WARNING - 10 * verbose, logging.DEBUG))


def serve_stdio_folders(folders: list[str], name: str, page_size: int, watch: bool, verbose: int,
                        list_ttl_ms: int = 60_000) -> int:
    """Serve FOLDERS on stdin/stdout; returns the exit code (1 when a folder cannot be served)."""
    setup_logging(verbose)
    from .protocol.errors import PromptdeckError
    from .server.app import PromptServer

    server = PromptServer(name, page_size=page_size, list_ttl_ms=list_ttl_ms)
    try:
        for folder in folders:
            server.add_folder(folder, defer=True)
    except PromptdeckError as exc:
        sys.stderr.write(f"promptdeck: {exc}\n")
        return 1
    try:
        server.serve(watch=watch)
    except KeyboardInterrupt:
        pass
    return 0
