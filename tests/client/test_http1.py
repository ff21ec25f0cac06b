"""The client's HTTP/1.1 layer against scripted servers on real loopback sockets.

Each server here is a few lines of asyncio that read a request head (and body) and write bytes
chosen by the test, so framing, connection reuse, redirects and cookies are checked on the wire.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from promptdeck.client._http1 import HttpClient, HttpError

from .helpers import run

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
async def scripted(handler: Handler) -> AsyncIterator[tuple[str, list[int]]]:
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

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
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

    async def other(lines: list[str], body: bytes, writer: Writer) -> None:
        seen.append((lines[0], header(lines, "authorization"), header(lines, "cookie"), body))
        writer.write(answer(b"elsewhere"))

    async def scenario() -> None:
        async with scripted(other) as (elsewhere, _):
            async def handler(lines: list[str], body: bytes, writer: Writer) -> None:
                seen.append((lines[0], header(lines, "authorization"), header(lines, "cookie"), body))
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
                async with HttpClient(headers={"Authorization": "Bearer secret"}, timeout=5) as http:
                    assert (await http.request("POST", base + "/mcp/", content=b"{}"))[1] == b"here"
                    assert (await http.request("POST", base + "/away", content=b"{}"))[1] == b"elsewhere"
                    assert (await http.request("POST", base + "/see-other", content=b"{}"))[1] == b"here"
        assert seen == [
            ("POST /mcp/ HTTP/1.1", "Bearer secret", None, b"{}"),
            ("POST /mcp HTTP/1.1", "Bearer secret", "lb=node7", b"{}"),  # 307: method, body and cookie kept
            ("POST /away HTTP/1.1", "Bearer secret", "lb=node7", b"{}"),
            ("POST /x HTTP/1.1", None, None, b"{}"),  # another origin: no token, no cookie
            ("POST /see-other HTTP/1.1", "Bearer secret", "lb=node7", b"{}"),
            ("GET /mcp HTTP/1.1", "Bearer secret", "lb=node7", b""),  # 303: GET without the body
        ]

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
                with pytest.raises(HttpError, match="more than 10 redirects"):
                    await http.request("GET", base + "/loop")
                async with http.stream("GET", base + "/big") as response:
                    with pytest.raises(HttpError, match="over 1000 bytes"):
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
                with pytest.raises(HttpError, match="not HTTP/1.1"):
                    await http.request("GET", base + "/garbage")
                with pytest.raises(HttpError, match="closed the connection"):
                    await http.request("GET", base + "/cut")
                with pytest.raises(HttpError, match="no answer from .* within 0.5 s"):
                    await http.request("GET", base + "/silent")
                with pytest.raises(HttpError, match="line break or NUL"):
                    await http.request("GET", base + "/x", headers={"x-evil": "a\r\nx-injected: 1"})
                with pytest.raises(HttpError, match="not an http"):
                    await http.request("GET", "ftp://127.0.0.1/")
        with pytest.raises(HttpError, match="refused|Connect call failed"):
            await HttpClient(timeout=5).request("GET", base + "/gone")

    run(scenario())
