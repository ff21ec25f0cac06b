"""A small stand-in for Langfuse's public prompts API on 127.0.0.1 (the import's ``--url`` tests): the list and
each version, behind Basic authentication with one key pair, recording every Authorization header it got."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

PUBLIC_KEY = "pk-lf-public-1234"
SECRET_KEY = "sk-lf-very-secret-5678"


@contextmanager
def fake_langfuse(records: list[dict[str, Any]], *, page_size: int = 1, body: bytes | None = None,
                  redirect: str | None = None) -> Iterator[tuple[str, list[str]]]:
    """(the server's URL, the Authorization headers it was sent). ``page_size``: prompts per list page (one, so
    the paging is used); ``body``: every answer's bytes instead (a hostile server); ``redirect``: a URL every
    request is sent on to (302)."""
    names = list(dict.fromkeys(r["name"] for r in records))
    seen: list[str] = []
    expected = "Basic " + base64.b64encode(f"{PUBLIC_KEY}:{SECRET_KEY}".encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: object) -> None:  # quiet: pytest runs with warnings as errors, not logs
            pass

        def answer(self, status: int, value: Any) -> None:
            data = body if body is not None else json.dumps(value).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            seen.append(self.headers.get("authorization", ""))
            if redirect is not None:
                self.send_response(302)
                self.send_header("location", redirect + self.path)
                self.send_header("content-length", "0")
                self.end_headers()
                return None
            if self.headers.get("authorization") != expected:
                return self.answer(401, {"message": "Invalid credentials"})
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            if url.path == "/api/public/v2/prompts":
                page = int(query["page"][0])
                chunk = names[(page - 1) * page_size:page * page_size]
                data = [{"name": n, "versions": [r["version"] for r in records if r["name"] == n]} for n in chunk]
                pages = (len(names) + page_size - 1) // page_size
                return self.answer(200, {"data": data, "meta": {"page": page, "totalPages": pages}})
            name = unquote(url.path.removeprefix("/api/public/v2/prompts/"))
            found = [r for r in records if r["name"] == name and str(r["version"]) == query["version"][0]]
            return self.answer(200 if found else 404, found[0] if found else {"message": "not found"})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
