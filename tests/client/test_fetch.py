"""The client's HTTP/1.1 layer against scripted servers on real loopback sockets.

Each server here is a few lines of asyncio that read a request head (and body) and write bytes
chosen by the test, so framing, connection reuse, redirects and cookies are checked on the wire.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from promptdeck.client.fetch import HttpClient, TransportError, proxy_for
from tests.support.client_servers import run

Reader = asyncio.StreamReader
Writer = asyncio.StreamWriter
#: what a scripted server is given: the request (head lines, body), and the writer to answer on
Handler = Callable[[list[str], bytes, Writer], Awaitable[None]]


async def read_request(reader: Reader) -> tuple[list[str], bytes] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")[:-2]
    length = next((int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:")), 0)
    return lines, await reader.readexactly(length)


@asynccontextmanager
async def scripted(handler: Handler, tls: ssl.SSLContext | None = None) -> AsyncIterator[tuple[str, list[int]]]:
    """(base URL, list of connection numbers per request) of a server answering with ``handler``."""
    served: list[int] = []
    count = 0

    async def connection(reader: Reader, writer: Writer) -> None:
        nonlocal count
        count += 1
        number = count
        try:
            while (request := await read_request(reader)) is not None:
                served.append(number)
                await handler(*request, writer)
                await writer.drain()
                if writer.is_closing():
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0, ssl=tls)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", served
    finally:
        server.close()


def header(lines: list[str], name: str) -> str | None:
    found = [line.split(":", 1)[1].strip() for line in lines[1:] if line.lower().startswith(name + ":")]
    return found[-1] if found else None


def answer(body: bytes, *headers: str, status: str = "200 OK") -> bytes:
    head = "".join(f"{h}\r\n" for h in headers)
    return f"HTTP/1.1 {status}\r\n{head}content-length: {len(body)}\r\n\r\n".encode() + body


def test_connections_are_kept_and_bodies_framed_every_way() -> None:
    async def handler(lines: list[str], body: bytes, writer: Writer) -> None:
        path = lines[0].split()[1]
        if path == "/length":
            writer.write(answer(b"sized " + body))
        elif path == "/chunked":
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
        elif path == "/interim":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" + answer(b"after 100"))
        elif path == "/close":  # no length: the body ends with the connection
            writer.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nto the end")
            writer.close()

    async def scenario() -> None:
        async with scripted(handler) as (base, served):
            async with HttpClient(timeout=5) as http:
                for _ in range(3):
                    response, body = await http.request("POST", base + "/length", content=b"x")
                    assert (response.status_code, body) == (200, b"sized x")
                assert (await http.request("GET", base + "/chunked"))[1] == b"abcde"
                assert (await http.request("GET", base + "/interim"))[1] == b"after 100"
                assert served == [1] * 5  # one connection for all of them
                assert (await http.request("GET", base + "/close"))[1] == b"to the end"
                assert (await http.request("GET", base + "/length"))[1] == b"sized "
                assert served[-1] == 2  # a new connection after the server closed its own

    run(scenario())


def test_a_kept_connection_the_server_closed_is_replaced_without_losing_the_request() -> None:
    async def handler(lines: list[str], body: bytes, writer: Writer) -> None:
        writer.write(answer(body))
        writer.close()  # without saying so: the client finds out on its next request

    async def scenario() -> None:
        async with scripted(handler) as (base, served):
            async with HttpClient(timeout=5) as http:
                for n in range(3):
                    assert (await http.request("POST", base, content=b"%d" % n))[1] == b"%d" % n
                assert served == [1, 2, 3]

    run(scenario())


def test_a_stream_left_early_closes_its_connection() -> None:
    async def handler(lines: list[str], body: bytes, writer: Writer) -> None:
        if lines[0].startswith("GET /stream"):
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                         b"6\r\nline1\n\r\n")
        else:
            writer.write(answer(b"ok"))

    async def scenario() -> None:
        async with scripted(handler) as (base, served):
            async with HttpClient(timeout=5) as http:
                async with http.stream("GET", base + "/stream") as response:
                    assert [line async for line in _first(response.lines())] == ["line1"]
                assert (await http.request("GET", base + "/other"))[1] == b"ok"
                assert served == [1, 2]

    run(scenario())


async def _first(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    yield await anext(lines)


def test_redirects_keep_the_method_and_drop_credentials_across_origins() -> None:
    seen: list[tuple[str, str | None, str | None, bytes]] = []
    keys: list[str | None] = []  # the user's own -H header, an API key, as each request carried it

    async def other(lines: list[str], body: bytes, writer: Writer) -> None:
        seen.append((lines[0], header(lines, "authorization"), header(lines, "cookie"), body))
        keys.append(header(lines, "x-api-key"))
        writer.write(answer(b"elsewhere"))

    async def scenario() -> None:
        async with scripted(other) as (elsewhere, _):
            async def handler(lines: list[str], body: bytes, writer: Writer) -> None:
                seen.append((lines[0], header(lines, "authorization"), header(lines, "cookie"), body))
                keys.append(header(lines, "x-api-key"))
                path = lines[0].split()[1]
                if path == "/mcp/":
                    writer.write(answer(b"", "location: /mcp", "set-cookie: lb=node7; Path=/; HttpOnly",
                                        status="307 Temporary Redirect"))
                elif path == "/mcp":
                    writer.write(answer(b"here"))
                elif path == "/away":
                    writer.write(answer(b"", f"location: {elsewhere}/x", status="308 Permanent Redirect"))
                elif path == "/see-other":
                    writer.write(answer(b"", "location: /mcp", status="303 See Other"))

            async with scripted(handler) as (base, _):
                async with HttpClient(headers={"Authorization": "Bearer secret", "X-Api-Key": "k"}, timeout=5) as http:
                    assert (await http.request("POST", base + "/mcp/", content=b"{}"))[1] == b"here"
                    assert (await http.request("POST", base + "/away", content=b"{}"))[1] == b"elsewhere"
                    assert (await http.request("POST", base + "/see-other", content=b"{}"))[1] == b"here"
        assert seen == [
            ("POST /mcp/ HTTP/1.1", "Bearer secret", None, b"{}"),
            ("POST /mcp HTTP/1.1", "Bearer secret", "lb=node7", b"{}"),  # 307: method, body and cookie kept
            ("POST /away HTTP/1.1", "Bearer secret", "lb=node7", b"{}"),
            # Another origin: no token. The cookie goes along, as RFC 6265 has it: cookies belong to a
            # host, not to a port, and both servers here are 127.0.0.1.
            ("POST /x HTTP/1.1", None, "lb=node7", b"{}"),
            ("POST /see-other HTTP/1.1", "Bearer secret", "lb=node7", b"{}"),
            ("GET /mcp HTTP/1.1", "Bearer secret", "lb=node7", b""),  # 303: GET without the body
        ]
        assert keys == ["k", "k", "k", None, "k", "k"]  # the -H header stays with its origin too

    run(scenario())


def test_endless_redirects_and_oversized_bodies_are_errors() -> None:
    async def handler(lines: list[str], body: bytes, writer: Writer) -> None:
        if lines[0].startswith("GET /loop"):
            writer.write(answer(b"", "location: /loop", status="302 Found"))
        else:
            writer.write(answer(b"x" * 5000))

    async def scenario() -> None:
        async with scripted(handler) as (base, _):
            async with HttpClient(timeout=5) as http:
                with pytest.raises(TransportError, match="more than 10 redirects"):
                    await http.request("GET", base + "/loop")
                async with http.stream("GET", base + "/big") as response:
                    with pytest.raises(TransportError, match="over 1000 bytes"):
                        await response.read(limit=1000)

    run(scenario())


def test_unanswered_refused_and_garbled_exchanges_fail_clearly() -> None:
    async def handler(lines: list[str], body: bytes, writer: Writer) -> None:
        path = lines[0].split()[1]
        if path == "/garbage":
            writer.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
        elif path == "/cut":
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly part")
            writer.close()
        # /silent: no answer at all

    async def scenario() -> None:
        async with scripted(handler) as (base, _):
            async with HttpClient(timeout=0.5) as http:
                with pytest.raises(TransportError, match="not HTTP/1.1"):
                    await http.request("GET", base + "/garbage")
                with pytest.raises(TransportError, match="closed the connection"):
                    await http.request("GET", base + "/cut")
                with pytest.raises(TransportError, match="no answer from .* within 0.5 s"):
                    await http.request("GET", base + "/silent")
                with pytest.raises(TransportError, match="line break or NUL"):
                    await http.request("GET", base + "/x", headers={"x-evil": "a\r\nx-injected: 1"})
                with pytest.raises(TransportError, match="not an http"):
                    await http.request("GET", "ftp://127.0.0.1/")
        async with HttpClient(timeout=5) as http:
            with pytest.raises(TransportError, match="cannot connect to 127.0.0.1"):
                await http.request("GET", base + "/gone")

    run(scenario())


# -- proxies ----------------------------------------------------------------------------------------


def test_which_requests_go_through_a_proxy() -> None:
    proxies = {"http": "http://user:p%40ss@proxy.example:3128", "https": "proxy.example:8080",
               "no": "internal.example,.corp.example"}
    plain = proxy_for("http", "mcp.example", proxies)
    assert plain is not None and (plain.host, plain.port) == ("proxy.example", 3128)
    assert plain.authorization == "Basic " + base64.b64encode(b"user:p@ss").decode()
    assert proxy_for("https", "mcp.example", proxies) == ("proxy.example", 8080, None)
    for host in ("127.0.0.1", "localhost", "::1", "internal.example", "a.corp.example"):
        assert proxy_for("https", host, proxies) is None, host
    assert proxy_for("https", "mcp.example", {"all": "http://any.example"}) == ("any.example", 80, None)
    assert proxy_for("https", "mcp.example", {}) is None
    with pytest.raises(TransportError, match="only http:// proxies"):
        proxy_for("https", "mcp.example", {"https": "socks5://proxy.example:1080"})


def self_signed(folder: Path, name: str) -> Path:
    """A certificate and key (one PEM file) for ``name``, signed by itself."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    path = folder / f"{name}.pem"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return path


def test_https_goes_through_a_connect_tunnel_and_http_through_absolute_requests(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The target's name never resolves here: only the proxy (on loopback) is reached, as a client behind
    a proxy that alone may resolve and reach the outside would have it."""
    pem = self_signed(tmp_path, "mcp.example")
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(pem)
    client_tls = ssl.create_default_context(cafile=str(pem))
    heads: list[str] = []

    async def scenario() -> None:
        async def origin(lines: list[str], body: bytes, writer: Writer) -> None:
            writer.write(answer(b"origin: " + lines[0].encode() + b" " + body))

        async with scripted(origin, tls=server_tls) as (tls_base, _):
            tls_port = int(tls_base.rsplit(":", 1)[1])

            async def proxy(reader: Reader, writer: Writer) -> None:
                request = await read_request(reader)
                assert request is not None
                lines, body = request
                heads.append(lines[0] + " | " + str(header(lines, "proxy-authorization")))
                if lines[0].startswith("CONNECT mcp.example:443 "):
                    if header(lines, "proxy-authorization") is None:
                        writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n")
                        writer.close()
                        return
                    up_reader, up_writer = await asyncio.open_connection("127.0.0.1", tls_port)
                    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
                else:  # an http:// request in absolute form: answered here, as a caching proxy may
                    writer.write(answer(b"via proxy: " + lines[0].encode()))
                    await writer.drain()
                    writer.close()

            listener = await asyncio.start_server(proxy, "127.0.0.1", 0)
            port = listener.sockets[0].getsockname()[1]
            try:
                monkeypatch.setenv("https_proxy", f"http://me:secret@127.0.0.1:{port}")
                monkeypatch.setenv("http_proxy", f"http://me:secret@127.0.0.1:{port}")
                async with HttpClient(timeout=5, ssl_context=client_tls) as http:
                    assert (await http.request("POST", "https://mcp.example/mcp", content=b"{}"))[1] == (
                        b"origin: POST /mcp HTTP/1.1 {}")
                    assert (await http.request("GET", "http://mcp.example:8080/x?y=1"))[1] == (
                        b"via proxy: GET http://mcp.example:8080/x?y=1 HTTP/1.1")
                monkeypatch.setenv("https_proxy", f"http://127.0.0.1:{port}")  # no credentials: 407
                async with HttpClient(timeout=5, ssl_context=client_tls) as http:
                    with pytest.raises(TransportError, match="refused a tunnel to mcp.example:443: .*407"):
                        await http.request("GET", "https://mcp.example/")
                monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # a dead proxy, never used for loopback
                async with scripted(origin) as (loopback, _), HttpClient(timeout=5) as http:
                    assert (await http.request("GET", loopback + "/direct"))[1] == b"origin: GET /direct HTTP/1.1 "
            finally:
                listener.close()

    run(scenario())
    auth = "Basic " + base64.b64encode(b"me:secret").decode()
    assert heads == [f"CONNECT mcp.example:443 HTTP/1.1 | {auth}",
                     f"GET http://mcp.example:8080/x?y=1 HTTP/1.1 | {auth}",
                     "CONNECT mcp.example:443 HTTP/1.1 | None"]


async def pipe(reader: Reader, writer: Writer) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()
