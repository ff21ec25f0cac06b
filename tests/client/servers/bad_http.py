"""A raw HTTP server (the standard library's, no MCP SDK) with one odd or broken behaviour per MODE.

    python bad_http.py MODE PORT

``html404``         every request: 404 with an HTML page (no MCP here at all)
``text-plain``      every POST: 200 with ``text/plain``
``crlf``            a correct 2026-07-28 server answering over SSE written the unusual ways the format
                    allows: CRLF line ends, comments, an id-only priming event, a retry-only event, and
                    the JSON split over many ``data:`` lines
``cut``             2026-07-28: server/discover fine, but prompts/get's event stream ends before the answer
``foreign-sse``     no Streamable HTTP (404 to POST); GET is a 2024-11-05 event stream whose endpoint
                    event points to another origin
``hang-modern``     2026-07-28: prompts/get is never answered
``hang-legacy``     a legacy server (server/discover is an empty 400) that never answers prompts/get
``resume``          a legacy server whose prompts/get stream ends after an event id; the answer comes on
                    the GET that resumes from it (Last-Event-ID), as 2025-11-25 allows
``gated-get``       a legacy server (listChanged) whose GET stream opens only once the file LOG.gate
                    exists; it logs ``{"get": "waiting"}`` and ``{"get": "open"}`` to LOG as that happens
``no-get``          a legacy server that offers listChanged but answers its GET stream 405
``garbage-get``     2026-07-28: prompts/get is answered 200 application/json with bytes that are not JSON
``huge-get``        2026-07-28: prompts/get is answered with a JSON body of 100 MB, sent without a length
Listens on 127.0.0.1 only; with LOG (a third argument) appends every request body it reads to it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODE, PORT = sys.argv[1], int(sys.argv[2])
LOG = sys.argv[3] if len(sys.argv) > 3 else None
MODERN = "2026-07-28"
LEGACY_MODES = ("hang-legacy", "resume", "gated-get", "no-get")
SESSION = "session-1"
#: resume: the id of the prompts/get whose answer waits for the resuming GET
parked: list[Any] = []
INFO = {"io.modelcontextprotocol/serverInfo": {"name": f"raw-{MODE}", "version": "0"}}


def result_for(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "server/discover":
        return {"resultType": "complete", "supportedVersions": [MODERN], "capabilities": {"prompts": {}},
                "_meta": INFO}
    if method == "prompts/list":
        return {"resultType": "complete", "prompts": [{"name": "crlf", "description": "line\r\nends"}],
                "ttlMs": 0, "_meta": INFO}
    if method == "prompts/get":
        text = f"Hello, {params.get('arguments', {}).get('who', 'nobody')}!"
        return {"resultType": "complete", "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
                "_meta": INFO}
    raise KeyError(method)


def event_lines(message: dict[str, Any]) -> bytes:
    """One SSE event with the JSON spread over several data lines, CRLF-terminated."""
    lines = json.dumps(message, indent=1).split("\n")
    return b"".join(b"data: " + line.encode() + b"\r\n" for line in lines) + b"\r\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def reply(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def stream(self, chunks: list[bytes]) -> None:
        """An event stream that ends (the connection closes) after ``chunks``."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(chunk)
            self.wfile.flush()
        self.close_connection = True

    def note(self, entry: dict[str, Any]) -> None:
        if LOG is not None:
            with open(LOG, "ab") as log:
                log.write(json.dumps(entry).encode() + b"\n")

    def gated(self) -> None:
        """gated-get: hold the GET stream's headers until the test opens the gate, then keep it open."""
        self.note({"get": "waiting"})
        while not os.path.exists(f"{LOG}.gate"):
            time.sleep(0.02)
        self.note({"get": "open"})
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        try:
            while True:  # comments until the client goes away
                self.wfile.write(b": still here\n\n")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            self.close_connection = True

    def do_GET(self) -> None:
        if MODE == "gated-get":
            self.gated()
            return
        if MODE == "resume" and self.headers.get("last-event-id") == "ev-1" and parked:
            if self.headers.get("mcp-session-id") != SESSION:
                self.reply(400, "text/plain", b"no session")
                return
            response = {"jsonrpc": "2.0", "id": parked.pop(), "result": {"messages": [
                {"role": "user", "content": {"type": "text", "text": "resumed"}}]}}
            self.stream([b"id: ev-2\n" + event_lines(response).replace(b"\r\n", b"\n")])
            return
        if MODE == "foreign-sse":
            self.stream([b"event: endpoint\ndata: http://elsewhere.invalid:1/messages?session=1\n\n"])
            return
        self.reply(404 if MODE == "html404" else 405, "text/html", b"<h1>Not Found</h1>")

    def legacy(self, message: dict[str, Any], method: str) -> bool:
        """The legacy server's own answers; False for what it answers like the modern one."""
        if method == "server/discover":
            self.reply(400, "text/plain", b"")
        elif method == "initialize":
            prompts = {"listChanged": True} if MODE in ("gated-get", "no-get") else {}
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"prompts": prompts},
                      "serverInfo": {"name": f"raw-{MODE}", "version": "0"}}
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("mcp-session-id", SESSION)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif method == "prompts/get" and MODE == "resume":
            parked.append(message["id"])
            self.stream([b"id: ev-1\nretry: 10\ndata:\n\n"])
        else:
            return False
        return True

    def do_DELETE(self) -> None:
        self.reply(405, "text/plain", b"")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if MODE in ("html404", "foreign-sse"):
            self.reply(404, "text/html", b"<html><body><h1>Not Found</h1></body></html>")
            return
        if MODE == "text-plain":
            self.reply(200, "text/plain", b"hello")
            return
        message = json.loads(body)
        self.note(message)
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message:
            self.reply(202, "text/plain", b"")
            return
        if method == "prompts/get" and MODE == "garbage-get":
            self.reply(200, "application/json", b"\x00\xff{garbage, not JSON")
            return
        if method == "prompts/get" and MODE == "huge-get":
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                self.wfile.write(b'{"jsonrpc": "2.0", "id": ' + json.dumps(message["id"]).encode() + b', "result": "')
                chunk = b"x" * (1 << 20)
                for _ in range(100):
                    self.wfile.write(chunk)
                self.wfile.write(b'"}')
            except OSError:
                pass  # the client stopped reading: what it should do
            return
        if method == "prompts/get" and MODE.startswith("hang"):
            time.sleep(600)  # the client gives up first; the daemon thread dies with the server
            return
        if MODE in LEGACY_MODES and self.legacy(message, method):
            return
        try:
            result = result_for(method, params)
        except KeyError:
            error = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no such method"}}
            self.reply(200, "application/json", json.dumps(error).encode())
            return
        if MODE == "cut" and method == "prompts/get":
            self.stream([b"id: 1\ndata:\n\n", b": the answer never comes\n\n"])
            return
        response = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        self.stream([b": a comment first\r\n\r\n", b"id: prime-1\r\ndata:\r\n\r\n", b"retry: 1500\r\n\r\n",
                     event_lines(response)])


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
