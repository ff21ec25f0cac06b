"""The web catalog and playground: static files served beside ``/mcp`` (``serve --http``, off with ``--no-ui``).

The app is hand-written HTML, CSS and JavaScript modules shipped in the package
(``server/web/static``); nothing is built or fetched at run time. The pages hold no
data, so they need no authentication: everything they show comes from the
server's own MCP endpoint, asked with plain ``fetch`` in the 2026-07-28 era and
with the principal's own bearer token, so the page has exactly that
principal's rights.

Files are read once, when the app is made, and served by exact name (no path
is ever joined to a folder). Every answer carries a strict Content-Security-Policy
(scripts, styles, connections only from this origin; images and audio also from
``data:`` URLs, which is how prompt messages carry them), ``nosniff`` and
``no-referrer``. Host and Origin are checked by ``StreamableHttpApp`` before a
request reaches this module, exactly as for ``/mcp``.
"""

from __future__ import annotations

import hashlib
import html
from importlib import resources

from ..asgi import Receive, Scope, Send, header

#: The app's own files, by the name they are served under (``/ui/NAME``), and their media types.
ASSETS = {
    "app.css": b"text/css; charset=utf-8",
    "app.js": b"text/javascript; charset=utf-8",
    "mcp.js": b"text/javascript; charset=utf-8",
    "dom.js": b"text/javascript; charset=utf-8",
    "catalog.js": b"text/javascript; charset=utf-8",
    "form.js": b"text/javascript; charset=utf-8",
    "messages.js": b"text/javascript; charset=utf-8",
    "useit.js": b"text/javascript; charset=utf-8",
    "markdown.js": b"text/javascript; charset=utf-8",
    "store.js": b"text/javascript; charset=utf-8",
    "versions.js": b"text/javascript; charset=utf-8",
    "promote.js": b"text/javascript; charset=utf-8",
    "diff.js": b"text/javascript; charset=utf-8",
    "editor.js": b"text/javascript; charset=utf-8",
    "tests.js": b"text/javascript; charset=utf-8",
    "skills.js": b"text/javascript; charset=utf-8",
    "graph.js": b"text/javascript; charset=utf-8",
    "proposals.js": b"text/javascript; charset=utf-8",
    "usage.js": b"text/javascript; charset=utf-8",
    # markdown-it 14.3.3 (MIT), vendored as published on npm: dist/markdown-it.min.js, sha256 494ba53d…25cfb0.
    "markdown-it.min.js": b"text/javascript; charset=utf-8",
    "markdown-it.LICENSE.txt": b"text/plain; charset=utf-8",
    "icon.svg": b"image/svg+xml",
}
PREFIX = "/ui/"
CSP = (b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self' data:; "
       b"connect-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'; object-src 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    # For browsers that predate frame-ancestors.
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]
#: Always revalidated (cheap: an ETag match is a 304), so a new version of promptdeck is seen at once.
CACHE_CONTROL = b"no-cache"


class _File:
    __slots__ = ("body", "content_type", "etag")

    def __init__(self, body: bytes, content_type: bytes) -> None:
        self.body = body
        self.content_type = content_type
        self.etag = b'"' + hashlib.sha256(body).hexdigest()[:32].encode() + b'"'


class WebUi:
    """Answers ``GET``/``HEAD`` for ``/`` and ``/ui/NAME``; ``endpoint`` is the MCP path the page talks to."""

    def __init__(self, endpoint: str = "/mcp") -> None:
        static = resources.files(__package__ or "promptdeck.server.web") / "static"
        index = static.joinpath("index.html").read_bytes()
        # The one value the page needs from the server: where its MCP endpoint is. Relative to the page, so
        # the app still works mounted under a prefix.
        index = index.replace(b"{{endpoint}}", html.escape(endpoint.lstrip("/"), quote=True).encode())
        self.files = {"/": _File(index, b"text/html; charset=utf-8")}
        for name, content_type in ASSETS.items():
            self.files[PREFIX + name] = _File(static.joinpath(name).read_bytes(), content_type)

    def serves(self, path: str) -> bool:
        """Whether ``path`` belongs to the app (its files, or an unknown name under ``/ui/``: a 404 here)."""
        return path == "/" or path.startswith(PREFIX)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope["method"]
        if method not in ("GET", "HEAD"):
            await _send(send, 405, b"method not allowed", b"text/plain; charset=utf-8", [(b"allow", b"GET, HEAD")])
            return
        file = self.files.get(scope["path"])
        if file is None:
            await _send(send, 404, b"not found", b"text/plain; charset=utf-8")
            return
        headers = [(b"etag", file.etag), (b"cache-control", CACHE_CONTROL)]
        if _matches(header(scope, b"if-none-match"), file.etag):
            await _send(send, 304, b"", None, headers)
            return
        await _send(send, 200, b"" if method == "HEAD" else file.body, file.content_type, headers,
                    length=len(file.body))


def _matches(if_none_match: str | None, etag: bytes) -> bool:
    if if_none_match is None:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in tags or etag.decode() in tags


async def _send(send: Send, status: int, body: bytes, content_type: bytes | None,
                headers: list[tuple[bytes, bytes]] | None = None, length: int | None = None) -> None:
    out = list(SECURITY_HEADERS)
    if content_type is not None:
        out.append((b"content-type", content_type))
    if status != 304:
        out.append((b"content-length", b"%d" % (len(body) if length is None else length)))
    out.extend(headers or ())
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": body})
