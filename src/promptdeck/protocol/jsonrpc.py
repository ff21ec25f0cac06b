"""JSON-RPC 2.0 framing: bytes in, typed messages out, and back.

Sans-IO: no sockets, no clocks. ``decode`` never raises for bad input except
``ParseError`` for bytes that are not JSON at all; every other defect comes back
as an ``Invalid`` message that carries the error to answer with.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .errors import InvalidRequest, McpError, ParseError

RequestId = int | str

_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()
encode_json = _encoder.encode


class Request:
    __slots__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: str, params: dict[str, Any] | None) -> None:
        self.id = id
        self.method = method
        self.params = params

    def __repr__(self) -> str:
        return f"Request(id={self.id!r}, method={self.method!r})"


class Notification:
    __slots__ = ("method", "params")

    def __init__(self, method: str, params: dict[str, Any] | None) -> None:
        self.method = method
        self.params = params

    def __repr__(self) -> str:
        return f"Notification(method={self.method!r})"


class Response:
    """A response from the peer to a request we sent (promptdeck's client side reads these)."""

    __slots__ = ("id", "result", "error")

    def __init__(self, id: RequestId | None, result: Any, error: dict[str, Any] | None) -> None:
        self.id = id
        self.result = result
        self.error = error


class Invalid:
    """A message that could not be understood; answer ``error`` to ``id`` (None when unreadable)."""

    __slots__ = ("id", "error")

    def __init__(self, id: RequestId | None, error: McpError) -> None:
        self.id = id
        self.error = error


Message = Request | Notification | Response | Invalid


def _valid_id(value: object) -> bool:
    # bool is an int subclass in Python but not an integer in JSON.
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def classify(obj: object) -> Message:
    """Turn one decoded JSON value into a message."""
    if not isinstance(obj, dict):
        return Invalid(None, InvalidRequest("a JSON-RPC message must be an object"))
    raw_id = obj.get("id")
    id_ = raw_id if _valid_id(raw_id) else None
    if obj.get("jsonrpc") != "2.0":
        return Invalid(id_, InvalidRequest('"jsonrpc" must be "2.0"'))
    method = obj.get("method")
    if method is None:
        if "result" in obj or "error" in obj:
            error = obj.get("error")
            return Response(id_, obj.get("result"), error if isinstance(error, dict) else None)
        return Invalid(id_, InvalidRequest("a message needs a method, a result or an error"))
    if not isinstance(method, str):
        return Invalid(id_, InvalidRequest('"method" must be a string'))
    params = obj.get("params")
    if params is not None and not isinstance(params, dict):
        return Invalid(id_, InvalidRequest('"params" must be an object'))
    if "id" not in obj:
        return Notification(method, params)
    if id_ is None:
        return Invalid(None, InvalidRequest('"id" must be a string or an integer'))
    return Request(id_, method, params)


def decode(data: bytes | str) -> Message | list[Message]:
    """Decode one frame; a JSON array gives a list (a batch), which may be empty."""
    try:
        obj = _decoder.decode(data)
    except (msgspec.DecodeError, RecursionError, UnicodeError) as exc:  # too deep, lone surrogates, bad UTF-8
        raise ParseError(f"not valid JSON: {exc}") from None
    if isinstance(obj, list):
        return [classify(item) for item in obj]
    return classify(obj)


def _id_bytes(id: RequestId | None) -> bytes:
    return b"null" if id is None else encode_json(id)


def encode_result(id: RequestId, result: Any) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + _id_bytes(id) + b',"result":' + encode_json(result) + b"}"


def encode_raw_result(id: RequestId, result: bytes) -> bytes:
    """Like ``encode_result`` for a result that is already JSON (pre-encoded list pages)."""
    return b'{"jsonrpc":"2.0","id":' + _id_bytes(id) + b',"result":' + result + b"}"


def encode_error(id: RequestId | None, error: McpError) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + _id_bytes(id) + b',"error":' + encode_json(error.to_wire()) + b"}"


def encode_notification(method: str, params: Any = None) -> bytes:
    if params is None:
        return b'{"jsonrpc":"2.0","method":' + encode_json(method) + b"}"
    return b'{"jsonrpc":"2.0","method":' + encode_json(method) + b',"params":' + encode_json(params) + b"}"


def encode_request(id: RequestId, method: str, params: Any = None) -> bytes:
    head = b'{"jsonrpc":"2.0","id":' + _id_bytes(id) + b',"method":' + encode_json(method)
    if params is None:
        return head + b"}"
    return head + b',"params":' + encode_json(params) + b"}"
