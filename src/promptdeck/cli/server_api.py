"""A GET of a running ``promptdeck serve --http``'s page API (``/api/usage``, ``/api/store/bundle``) for the CLI.

The standard library's client: one GET needs nothing installed (the http extra's client is asyncio's). What a
server answers is not trusted: the body is read up to ``max_bytes`` and no further, and a redirect is not
followed (urllib's would carry the bearer token to wherever it points), so a server can neither fill the
memory nor send the token elsewhere. Failures end the command with one line (``common.fail``).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, NoReturn

from .common import fail

#: What a refusal's body is read up to: an ``{"error": …}`` of a few lines.
MAX_ERROR_BYTES = 64 * 1024


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 3xx is then raised as an HTTPError, and said


_opener = urllib.request.build_opener(_NoRedirects)


def base_of(server: str) -> str:
    """The server's root from its MCP URL (``http://host:port/mcp`` or the root itself)."""
    base = server.removesuffix("/").removesuffix("/mcp")
    if not base.startswith(("http://", "https://")):
        fail(f"--server {server[:200]!r} is no http:// or https:// URL", 2)
    return base


def get(server: str, route: str, query: dict[str, str], token: str | None, max_bytes: int) -> Any:
    """The JSON ``server`` answers to ``GET route?query``, sent with ``token`` as its bearer token."""
    try:
        return json.loads(get_bytes(server, route, query, token, max_bytes))
    except ValueError:
        fail(f"{base_of(server)} answered {route} with what is not JSON")


def get_bytes(server: str, route: str, query: dict[str, str], token: str | None, max_bytes: int) -> bytes:
    """What ``server`` answers to ``GET route?query`` (a 200), as it sent it."""
    base = base_of(server)
    url = f"{base}{route}" + (f"?{urllib.parse.urlencode(query)}" if query else "")
    request = urllib.request.Request(url, headers={"authorization": f"Bearer {token}"} if token else {})
    try:
        with _opener.open(request, timeout=30) as response:  # the scheme is checked by base_of
            body: bytes = response.read(max_bytes + 1)
    except urllib.error.HTTPError as exc:
        _refused(base, exc)
    except (urllib.error.URLError, OSError) as exc:
        fail(f"cannot reach {base}: {exc}")
    if len(body) > max_bytes:
        fail(f"{base} answered more than the {max_bytes} bytes {route} may take")
    return body


def _refused(base: str, exc: urllib.error.HTTPError) -> NoReturn:
    if 300 <= exc.code < 400:
        fail(f"{base} answered {exc.code}, a redirect to {str(exc.headers.get('location'))[:200]!r}: not followed "
             "(the token would go with it); give the URL it serves at")
    try:
        why = json.loads(exc.read(MAX_ERROR_BYTES)).get("error", exc.reason)
    except (ValueError, AttributeError, OSError):
        why = exc.reason
    fail(f"{base} answered {exc.code}: {str(why)[:300]}")
