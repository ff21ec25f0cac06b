"""HTTP/1.1 spoken byte by byte over a socket, for the tests that send what httpx will not: raw request heads,
partial reads, a response parsed by hand."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit


def connect(url: str) -> socket.socket:
    """A raw connection to the server of ``url``, for requests httpx would not send or finish."""
    parts = urlsplit(url)
    return socket.create_connection((parts.hostname, parts.port), timeout=10)


def request_head(method: str, url: str, headers: dict[str, str]) -> bytes:
    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    lines = [f"{method} {target} HTTP/1.1", f"host: {parts.netloc}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def read_until(sock: socket.socket, marker: bytes) -> bytes:
    """Bytes from ``sock`` up to and including ``marker`` (or all of them if the peer closes first)."""
    data = b""
    while marker not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    """A response head (without its blank line): (status, lower-cased headers)."""
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split(" ")[1]), headers


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One response with a Content-Length body: (status, lower-cased headers, body)."""
    data = read_until(sock, b"\r\n\r\n")
    head, _, body = data.partition(b"\r\n\r\n")
    status, headers = parse_head(head)
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "connection closed inside the body"
        body += chunk
    return status, headers, body[:length]
