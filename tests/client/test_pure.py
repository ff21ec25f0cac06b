"""The client's pure pieces: SSE parsing, header encoding, JSON-RPC frames and errors from the wire."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator

import pytest

from promptdeck.client.channel import decode
from promptdeck.client.fetch import text_lines
from promptdeck.client.http import Event, header_safe, sse_events
from promptdeck.protocol.errors import (
    HeaderMismatch,
    InternalError,
    InvalidParams,
    InvalidRequest,
    McpError,
    MethodNotFound,
    MissingCapability,
    ParseError,
    ProtocolViolation,
    UnsupportedVersion,
    from_wire,
)
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


# -- JSON-RPC frames --------------------------------------------------------------------------------


def test_decode_reads_one_message_or_a_batch() -> None:
    [one] = decode(b'{"jsonrpc": "2.0", "id": 1, "result": {"x": 1}}')
    assert one.id == 1 and bytes(one.result) == b'{"x": 1}'
    batch = decode('[{"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}, '
                   '{"jsonrpc": "2.0", "id": "a", "error": {"code": -32601, "message": "no"}}]')
    assert [message.method for message in batch] == ["notifications/prompts/list_changed", None]
    assert batch[1].error == {"code": -32601, "message": "no"}


@pytest.mark.parametrize("frame", [b"not json", b'{"id": 1, "result": {}}', b'{"jsonrpc": "1.0", "id": 1}',
                                   b"[1, 2]", b'{"jsonrpc": "2.0", "id": [1]}', b"[" * 100_000])
def test_decode_refuses_what_is_not_json_rpc(frame: bytes) -> None:
    with pytest.raises(ProtocolViolation, match="JSON-RPC|jsonrpc"):
        decode(frame)


# -- from_wire -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("code", "kind"), [
    (-32700, ParseError), (-32600, InvalidRequest), (-32601, MethodNotFound), (-32602, InvalidParams),
    (-32603, InternalError), (-32020, HeaderMismatch), (-32021, MissingCapability), (-32022, UnsupportedVersion),
])
def test_from_wire_picks_the_class_by_code(code: int, kind: type[McpError]) -> None:
    error = from_wire({"code": code, "message": "the server's words", "data": {"k": [1]}})
    assert type(error) is kind
    assert (error.code, error.message, error.data, str(error)) == (code, "the server's words", {"k": [1]},
                                                                   "the server's words")


@pytest.mark.parametrize("code", [0, -32000, -1, 42])
def test_from_wire_keeps_other_codes_on_the_base_class(code: int) -> None:
    """The official SDK answers some errors with code 0; they stay McpError with that code."""
    error = from_wire({"code": code, "message": "Unknown prompt: x"})
    assert type(error) is McpError and error.code == code and error.message == "Unknown prompt: x"
    assert error.data is None


def test_from_wire_tolerates_a_missing_or_odd_message() -> None:
    assert from_wire({"code": -32602}).message == ""
    assert from_wire({"code": -32602, "message": ["not", "text"]}).message == ""


@pytest.mark.parametrize("error", [None, "boom", [1], {"message": "no code"}, {"code": "-32602"},
                                   {"code": True}, {"code": 1.5}])
def test_from_wire_reports_malformed_error_objects(error: object) -> None:
    exc = from_wire(error)
    assert type(exc) is McpError and exc.code == -32603
    assert exc.message.startswith("malformed error object")
