"""The HTTP transports' pure pieces (client/http.py): server-sent events read from any split of a stream,
header values made safe, and a refused answer turned into the error it means."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import cast

import pytest

from promptdeck.client.fetch import Response, TransportError, text_lines
from promptdeck.client.http import Event, header_safe, refuse_status, sse_events
from promptdeck.protocol.errors import ConnectionFailed, InvalidParams
from tests.support.client_servers import run


async def _pieces(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


def lines(parts: list[bytes]) -> list[str]:
    async def collect() -> list[str]:
        return [line async for line in text_lines(_pieces(parts))]

    return run(collect())


def events(raw: bytes, size: int | None = None) -> list[Event]:
    """The events in a response body that arrives in reads of ``size`` bytes (all at once by default),
    split into lines exactly as the client reads a stream."""

    async def collect() -> list[Event]:
        step = size or max(len(raw), 1)
        parts = [raw[i:i + step] for i in range(0, len(raw), step)]
        return [event async for event in sse_events(text_lines(_pieces(parts)))]

    return run(collect())



# -- sse_events ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_sse_line_ends_of_every_kind(end: bytes) -> None:
    raw = end.join([b"event: message", b"data: {\"a\": 1}", b"", b"data: second", b"", b""])
    assert events(raw) == [Event("message", '{"a": 1}', None, None), Event("message", "second", None, None)]


@pytest.mark.parametrize("size", [1, 2, 3, 7])
@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_sse_events_survive_any_split_into_reads(end: bytes, size: int) -> None:
    """A CRLF, or a UTF-8 character, cut in two by the network is still one line end or one character."""
    raw = end.join([b"event: message", "data: {\"h\u00e9\": \"\u2603\"}".encode(), b"", b"data: second", b"", b""])
    assert events(raw, size) == [Event("message", '{"h\u00e9": "\u2603"}', None, None),
                                 Event("message", "second", None, None)]


def test_lines_split_only_at_cr_and_lf() -> None:
    """JSON may carry U+2028 and other Unicode line breaks raw: they are not line ends in an event stream."""
    assert lines(["a\u2028b\x0bc\x1cd\u0085e\r\n".encode(), b"f\rg\n", b"\r", b"\n", b"h"]) == [
        "a\u2028b\x0bc\x1cd\u0085e", "f", "g", "", "h"]
    assert lines([b"x\r", b"", b"\ny\r", b"\r\n"]) == ["x", "y", ""]
    assert lines([b"\xff\n", b"ok"]) == ["\ufffd", "ok"]


def test_sse_multi_line_data_is_joined_with_newlines() -> None:
    raw = b"data: {\r\ndata:  \"key\": 1\r\ndata: }\r\n\r\n"
    [event] = events(raw)
    # One space after the colon is the separator; a second one is data.
    assert event.data == '{\n "key": 1\n}'


def test_sse_comments_and_unknown_fields_are_ignored() -> None:
    raw = b": keep-alive\n\n: another\nfoo: bar\ndata: kept\n: inside\n\n"
    assert events(raw) == [Event("message", "kept", None, None)]


def test_sse_id_only_and_retry_only_events_are_yielded() -> None:
    raw = b"id: prime-7\n\nretry: 2500\n\ndata: x\nid: 8\n\n"
    assert events(raw) == [Event("message", "", "prime-7", None), Event("message", "", None, 2500),
                           Event("message", "x", "8", None)]


def test_sse_event_type_and_fields_without_values() -> None:
    raw = b"event: endpoint\ndata: /messages?session=1\n\ndata\n\n"
    assert events(raw) == [Event("endpoint", "/messages?session=1", None, None), Event("message", "", None, None)]


def test_sse_rejects_bad_retry_and_ids_with_nul() -> None:
    raw = b"retry: soon\ndata: a\n\nid: x\x00y\ndata: b\n\n"
    assert events(raw) == [Event("message", "a", None, None), Event("message", "b", None, None)]


def test_sse_event_type_resets_after_each_event() -> None:
    raw = b"event: ping\ndata: 1\n\ndata: 2\n\n"
    assert [event.event for event in events(raw)] == ["ping", "message"]


def test_sse_blank_lines_alone_make_no_events() -> None:
    assert events(b"\n\n\r\n\n") == []


def test_sse_reads_lines_as_they_come() -> None:
    async def lines() -> AsyncIterator[str]:
        for line in ["data: one", "", "data: two", ""]:
            yield line

    async def first() -> Event:
        return await anext(sse_events(lines()))

    assert run(first()) == Event("message", "one", None, None)


# -- header_safe --------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["review", "git.commit", "a b-c_d/e:f", "~!@#$%^&*()"])
def test_header_safe_keeps_plain_ascii(value: str) -> None:
    assert header_safe(value) == value


@pytest.mark.parametrize("value", ["résumé", "日本語", " padded", "trailing ", "line\nbreak", "tab\there",
                                   "=?base64?looks-encoded?=", "nul\x00"])
def test_header_safe_wraps_everything_else_in_base64(value: str) -> None:
    safe = header_safe(value)
    assert safe.startswith("=?base64?") and safe.endswith("?=")
    assert safe.isascii() and safe.isprintable()
    assert base64.b64decode(safe.removeprefix("=?base64?").removesuffix("?=")).decode() == value


def test_an_event_over_the_limit_is_refused() -> None:
    async def lines() -> AsyncIterator[str]:
        for line in ["data: 12345", "data: 67890", ""]:
            yield line

    async def collect() -> list[Event]:
        return [event async for event in sse_events(lines(), limit=8)]

    with pytest.raises(TransportError, match="an event is larger than 8 characters"):
        run(collect())


# -- refuse_status ------------------------------------------------------------------------------------


class Answer:
    """What refuse_status reads of a response: its status, reason, headers and body."""

    def __init__(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.status_code = status
        self.reason_phrase = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
                              429: "Too Many Requests", 500: "Internal Server Error"}[status]
        self.headers = headers or {}
        self.body = body

    async def read(self, limit: int = 0) -> bytes:
        return self.body


def refused(status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> BaseException | None:
    async def check() -> BaseException | None:
        try:
            await refuse_status(cast(Response, Answer(status, body, headers)), "prompts/get")
        except Exception as exc:
            return exc
        return None

    return run(check())


def test_a_2xx_answer_passes() -> None:
    assert refused(200) is None


def test_a_json_rpc_error_in_a_refusal_is_raised_as_that_error() -> None:
    error = refused(400, b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "unknown prompt"}}')
    assert isinstance(error, InvalidParams) and error.message == "unknown prompt"


def test_auth_and_rate_limits_say_what_the_server_wants() -> None:
    unauthorized = refused(401, headers={"www-authenticate": 'Bearer error="invalid_token"'})
    assert isinstance(unauthorized, ConnectionFailed) and unauthorized.status == 401
    assert str(unauthorized) == ('prompts/get: HTTP 401, the server wants a (valid) bearer token '
                                 '(Bearer error="invalid_token")')
    forbidden = refused(403, b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "no scope"}}')
    assert str(forbidden) == "prompts/get: HTTP 403, the server wants a token with more scopes: no scope"
    limited = refused(429, headers={"retry-after": "3"})
    assert isinstance(limited, ConnectionFailed) and limited.status == 429
    assert str(limited) == "prompts/get: HTTP 429, rate limited; retry after 3 s"


def test_any_other_refusal_names_the_status_and_the_start_of_the_body() -> None:
    error = refused(500, b"  upstream exploded  " + b"x" * 500)
    assert isinstance(error, ConnectionFailed) and error.status == 500
    assert str(error).startswith("prompts/get: HTTP 500 Internal Server Error: upstream exploded")
    assert len(str(error)) < 300
    assert str(refused(500)) == "prompts/get: HTTP 500 Internal Server Error"

