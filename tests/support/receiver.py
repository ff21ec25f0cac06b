"""A real webhook receiver on 127.0.0.1: a threaded HTTP server that verifies each request with the
``standardwebhooks`` library (the Standard Webhooks reference code, not ours) and records it.

``Receiver.answer`` decides what each request gets: a status (200 by default), a redirect, a stall
(no answer until released, the connection held open), or an endless body.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    verified: Any  # the JSON body, once the signature checked out; None if it did not
    at: float
    #: whether it was answered at once (not stalled)
    answered: bool = False


@dataclass
class Receiver:
    url: str
    secret: str
    received: list[Received] = field(default_factory=list)
    #: what to answer a request: ("status", code) | ("redirect", url) | ("stall", None) | ("endless", None)
    answer: Callable[[Received], tuple[str, Any]] = lambda _: ("status", 200)
    release: threading.Event = field(default_factory=threading.Event)
    endless_sent: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ids(self, answered_only: bool = True) -> list[str]:
        with self.lock:
            return [r.headers["webhook-id"] for r in self.received if r.answered or not answered_only]

    def bodies(self) -> list[Any]:
        with self.lock:
            return [r.verified for r in self.received if r.answered]

    def wait_for(self, count: int, seconds: float = 20) -> list[Any]:
        """The verified bodies once ``count`` requests were answered; AssertionError after ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if len(self.bodies()) >= count:
                return self.bodies()
            time.sleep(0.05)
        raise AssertionError(f"{len(self.bodies())} of {count} webhook requests arrived: {self.ids(False)}")


@contextmanager
def receiver(secret: str) -> Iterator[Receiver]:
    """A receiver checking signatures with ``secret``, serving until the block ends."""
    verifier = Webhook(secret)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                verified = verifier.verify(body, headers)
            except WebhookVerificationError:
                verified = None
            got = Received(headers, body, verified, time.time())
            with box.lock:
                box.received.append(got)
            kind, value = box.answer(got)
            try:
                if kind == "stall":
                    box.release.wait(30)
                    self.send_response(200)
                    self.end_headers()
                elif kind == "redirect":
                    self.send_response(302)
                    self.send_header("location", value)
                    self.end_headers()
                elif kind == "endless":
                    self.send_response(200)
                    self.send_header("content-type", "text/plain")
                    self.end_headers()
                    chunk = b"x" * 65536
                    while box.endless_sent < 200 * 1024 * 1024:
                        self.wfile.write(chunk)
                        box.endless_sent += len(chunk)
                else:
                    self.send_response(int(value))
                    self.send_header("content-length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                self.wfile.flush()
                got.answered = kind != "stall"  # a stalled request is the one whose sender is killed
            except OSError:
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    box = Receiver(f"http://127.0.0.1:{server.server_address[1]}/hook", secret)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield box
    finally:
        box.release.set()
        server.shutdown()
        server.server_close()


def payload(received: Received) -> dict[str, Any]:
    """The JSON body of a request, verified or not (for the tests that expect a refusal)."""
    return dict(json.loads(received.body))
