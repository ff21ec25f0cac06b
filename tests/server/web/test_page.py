"""The web UI's files over HTTP (server/ui.py): headers, caching, methods, Host/Origin rules, --no-ui.

What the app does in a browser is tested in tests/server/web/test_page_browser.py.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import httpx
import pytest

from promptdeck.server.web.page import ASSETS, CSP
from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLES
from tests.support.paths import REPO

EXPECTED_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                "media-src 'self' data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'; "
                "form-action 'self'; object-src 'none'")
STATIC = Path(str(resources.files("promptdeck.server.web") / "static"))


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with http_server(str(EXAMPLES), "--no-watch") as endpoint:
        yield endpoint.removesuffix("mcp")


def raw_status(base: str, target: bytes) -> int:
    """The status of a GET for ``target`` sent as is (HTTP clients would normalize the dots away)."""
    host, port = base.split("//")[1].rstrip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        head = sock.recv(64)
    return int(head.split(b" ")[1])


def paths() -> list[str]:
    return ["/", *(f"/ui/{name}" for name in ASSETS)]


def test_every_shipped_file_is_served_and_nothing_else_is_listed() -> None:
    # ASSETS is the list of what is served: a file added to static/ but not to it would be a 404 in the app.
    assert sorted(p.name for p in STATIC.iterdir()) == sorted([*ASSETS, "index.html"])
    assert CSP.decode() == EXPECTED_CSP


@pytest.mark.parametrize("path", paths())
def test_each_file_carries_the_security_headers_and_a_validator(base: str, path: str) -> None:
    response = httpx.get(base + path.lstrip("/"))
    assert response.status_code == 200
    headers = response.headers
    assert headers["content-security-policy"] == EXPECTED_CSP
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["x-frame-options"] == "DENY"
    assert headers["cache-control"] == "no-cache"
    expected_type = "text/html; charset=utf-8" if path == "/" else ASSETS[path.removeprefix("/ui/")].decode()
    assert headers["content-type"] == expected_type
    assert int(headers["content-length"]) == len(response.content) > 0
    etag = headers["etag"]
    assert re.fullmatch(r'"[0-9a-f]{32}"', etag)
    again = httpx.get(base + path.lstrip("/"), headers={"if-none-match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    assert again.headers["content-security-policy"] == EXPECTED_CSP
    stale = httpx.get(base + path.lstrip("/"), headers={"if-none-match": '"0123"'})
    assert stale.status_code == 200 and stale.content == response.content
    head = httpx.head(base + path.lstrip("/"))
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == headers["content-length"]


def test_the_page_loads_only_its_own_files_and_names_its_endpoint(base: str) -> None:
    page = httpx.get(base).text
    assert '<meta name="promptdeck-endpoint" content="mcp">' in page
    referenced = re.findall(r'(?:src|href)="([^"#]+)"', page)
    assert sorted(referenced) == ["ui/app.css", "ui/app.js", "ui/icon.svg", "ui/markdown-it.min.js"]
    # No inline script or style, which the CSP would block anyway: the app must not depend on them.
    assert "<style" not in page and " style=" not in page
    assert not re.search(r"<script(?![^>]*\bsrc=)", page)
    for name in ASSETS:
        text = (STATIC / name).read_text()
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text and "eval(" not in text, name
        # The vendored library and its license name their project's home in comments; they load nothing.
        vendored = name.startswith("markdown-it.")
        assert not re.search(r"https?://", text) or name == "icon.svg" or vendored, f"{name} names another origin"


def test_other_methods_and_unknown_names(base: str) -> None:
    refused = httpx.post(base, content=b"x")
    assert refused.status_code == 405 and refused.headers["allow"] == "GET, HEAD"
    assert httpx.get(base + "ui/nope.js").status_code == 404
    assert httpx.get(base + "ui/").status_code == 404
    # Names are looked up exactly, never joined to a folder: a path that climbs finds nothing.
    for raw in (b"/ui/../ui/app.js", b"/ui/%2e%2e/static/app.js", b"/ui/..%2fhttp.py", b"/ui/app.js/",
                b"/ui/./app.js"):
        assert raw_status(base, raw) == 404, raw
    # Other paths are still the MCP app's.
    assert httpx.get(base + "index.html").status_code == 404
    assert httpx.get(base + "healthz").text == "ok"


def test_the_same_host_and_origin_rules_as_mcp(base: str) -> None:
    for path in ("", "ui/app.js"):
        assert httpx.get(base + path, headers={"host": "evil.example"}).status_code == 403
        assert httpx.get(base + path, headers={"origin": "http://evil.example"}).status_code == 403
        assert httpx.get(base + path, headers={"origin": base.rstrip("/")}).status_code == 200


def test_no_ui_leaves_only_the_endpoint(tmp_path: Path) -> None:
    with http_server(str(EXAMPLES), "--no-watch", "--no-ui") as endpoint:
        root = endpoint.removesuffix("mcp")
        assert httpx.get(root).status_code == 404
        assert httpx.get(root + "ui/app.js").status_code == 404
        assert httpx.get(root + "healthz").status_code == 200
    refused = subprocess.run([sys.executable, "-m", "promptdeck", "serve", str(EXAMPLES), "--no-ui"],
                             capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert refused.returncode == 2 and "--no-ui: HTTP options, which go with --http" in refused.stderr


def test_pages_need_no_token_but_the_endpoint_does(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("alice:alice-token-0123456789\n")
    with http_server(str(EXAMPLES), "--no-watch", "--token-file", str(tokens)) as endpoint:
        root = endpoint.removesuffix("mcp")
        assert httpx.get(root).status_code == 200
        assert httpx.get(root + "ui/mcp.js").status_code == 200
        listed = httpx.post(endpoint, json={"jsonrpc": "2.0", "id": 1, "method": "prompts/list"},
                            headers={"accept": "application/json, text/event-stream"})
        assert listed.status_code == 401


def test_the_web_page_shows_screenshots_that_exist() -> None:
    docs = REPO / "docs"
    page = (docs / "web.md").read_text()
    section = page.split("# The web catalog and playground", 1)[1].split("\n## ", 1)[0]
    images = re.findall(r"!\[[^\]]+\]\((ui/[^)]+\.png)\)", section)
    assert sorted(images) == ["ui/catalog-dark-phone.png", "ui/catalog.png", "ui/editor.png",
                              "ui/form.png", "ui/messages.png", "ui/tests.png", "ui/versions.png"]
    for image in images:
        data = (docs / image).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) < 200_000, image
    assert "python -m tests.support.screenshots docs/ui" in section


def test_with_several_endpoints_only_the_default_serves_the_page() -> None:
    from promptdeck.server.app import PromptServer
    from promptdeck.server.http.endpoints import Endpoints

    endpoints = Endpoints.create({"/mcp": PromptServer(), "/mcp/staging": PromptServer()}, ui=True)
    default, staging = endpoints.apps["/mcp"], endpoints.apps["/mcp/staging"]
    assert default.ui is not None and staging.ui is None
    assert b'content="mcp"' in default.ui.files["/"].body
