"""A local stand-in for the model providers' HTTP APIs: it records each request's path, headers and JSON body
and answers as the provider would, so the providers' own SDK clients can send promptdeck's conversions
without a network. The SDKs are pointed at it through the base URLs they document (``OPENAI_BASE_URL``,
``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``) or their clients' ``base_url``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "A bar chart of requests per second."
GEMINI_MODEL = "gemini-2.5-flash"

#: What each provider's API answers (the fields its SDK reads to give the answer's text).
REPLIES: dict[str, dict[str, Any]] = {
    "/v1/chat/completions": {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4.1-mini",
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": ANSWER}}]},
    "/v1/responses": {"id": "resp_1", "object": "response", "created_at": 0, "model": "gpt-4.1-mini",
                      "status": "completed", "output": [{
                          "type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                          "content": [{"type": "output_text", "text": ANSWER, "annotations": []}]}]},
    "/v1/messages": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                     "content": [{"type": "text", "text": ANSWER}], "stop_reason": "end_turn",
                     "usage": {"input_tokens": 1, "output_tokens": 1}},
    f"/v1/models/{GEMINI_MODEL}:generateContent": {"candidates": [{
        "content": {"role": "model", "parts": [{"text": ANSWER}]}, "finishReason": "STOP"}]},
}


@dataclass
class Request:
    path: str
    headers: dict[str, str]  #: lower-cased names
    body: Any


@dataclass
class ProviderApi:
    url: str
    received: list[Request] = field(default_factory=list)

    def take(self) -> Request:
        """The one request received since the last ``take``."""
        [request] = self.received
        self.received.clear()
        return request


@contextmanager
def provider_api() -> Iterator[ProviderApi]:
    """The stand-in, serving on a free local port until the block ends."""
    api = ProviderApi("")

    class Recording(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers["Content-Length"]))
            headers = {name.lower(): value for name, value in self.headers.items()}
            api.received.append(Request(self.path, headers, json.loads(body)))
            reply = json.dumps(REPLIES[self.path.split("?")[0]]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recording)
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
