"""JSON-RPC 2.0 framing: bytes in, typed messages out, and back.

Sans-IO: no sockets, no clocks. ``decode`` never raises for bad input except
``ParseError`` for bytes that are not JSON at all; every other defect comes back
as an ``Invalid`` message that carries the error to answer with.

Batches are bounded both ways. A batch of more than ``MAX_BATCH`` messages is
refused whole (one ``Invalid``, -32600), because each cheap request can cost a
large answer: 64,000 ``prompts/list`` in a 4 MB body once made a 455 MB
response. And ``BatchAnswers`` joins a batch's answers into an array of about
``MAX_BATCH_RESPONSE_BYTES`` at most: past that, each further request gets a
short -32600 error naming the limit instead of its answer, so the client learns
which ids to send again.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .errors import InvalidRequest, McpError, ParseError

RequestId = int | str

#: The most messages one batch may hold (the JSON-RPC spec sets no limit; 100 is far more than any
#: client batches in practice, and bounds the work one request body can ask for).
MAX_BATCH = 100
#: About the most bytes a batch's joined answers may reach (see ``BatchAnswers``).
MAX_BATCH_RESPONSE_BYTES = 8 * 1024 * 1024

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


class _Call(msgspec.Struct, gc=False):
    """The usual frame, a request or a notification, decoded straight into its parts: half the cost of
    decoding it as a dict and then reading the dict (``classify``)."""

    jsonrpc: str
    method: str
    id: int | str | None | msgspec.UnsetType = msgspec.UNSET
    params: dict[str, Any] | None = None


_call_decoder = msgspec.json.Decoder(_Call)


def decode(data: bytes | str) -> Message | list[Message]:
    """Decode one frame; a JSON array gives a list (a batch), which may be empty."""
    try:
        call = _call_decoder.decode(data)
    except (msgspec.DecodeError, RecursionError, UnicodeError):
        pass  # not the usual shape (a batch, a response, a wrong type, not JSON): read as any value below
    else:
        # What classify makes of the same object; an explicit null id is left to it (an Invalid).
        if call.jsonrpc == "2.0" and call.id is not None:
            if call.id is msgspec.UNSET:
                return Notification(call.method, call.params)
            return Request(call.id, call.method, call.params)
    try:
        obj = _decoder.decode(data)
    except (msgspec.DecodeError, RecursionError, UnicodeError) as exc:  # too deep, lone surrogates, bad UTF-8
        raise ParseError(f"not valid JSON: {exc}") from None
    if isinstance(obj, list):
        if len(obj) > MAX_BATCH:
            return Invalid(None, InvalidRequest(
                f"a batch may hold at most {MAX_BATCH} messages; this one holds {len(obj)}"))
        return [classify(item) for item in obj]
    return classify(obj)


class BatchAnswers:
    """A batch's answers joined into one JSON array of at most about ``limit`` bytes.

    ``add`` takes each answer in order; an answer that would take the array past ``limit`` is
    replaced by an error for its request id, and so is every one after it (``full`` tells the
    transport to stop rendering them at all).
    """

    __slots__ = ("limit", "full", "_parts", "_size")

    def __init__(self, limit: int = MAX_BATCH_RESPONSE_BYTES) -> None:
        self.limit = limit
        self.full = False
        self._parts: list[bytes] = []
        self._size = 2

    def add(self, answer: bytes, id: RequestId | None) -> None:
        if not self.full and self._size + len(answer) + 1 > self.limit:
            self.full = True
        if self.full:
            self.refuse(id)
            return
        self._parts.append(answer)
        self._size += len(answer) + 1

    def refuse(self, id: RequestId | None) -> None:
        """Answer ``id`` with the "too large" error instead of its result."""
        self.full = True
        self._parts.append(encode_error(id, InvalidRequest(
            f"not answered: this batch's answers passed {self.limit} bytes; "
            "send this request again alone or in a smaller batch")))

    def encode(self) -> bytes | None:
        """The array, or None when no message in the batch called for an answer."""
        return b"[" + b",".join(self._parts) + b"]" if self._parts else None


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
