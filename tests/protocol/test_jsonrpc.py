"""JSON-RPC framing (protocol/jsonrpc.py): every frame becomes a typed message or a ParseError, never a crash."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptdeck.protocol import jsonrpc
from promptdeck.protocol.errors import InternalError, InvalidParams, MethodNotFound, ParseError
from promptdeck.protocol.jsonrpc import Invalid, Notification, Request, Response

MESSAGE_TYPES = (Request, Notification, Response, Invalid)

json_scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                | st.text(max_size=12))
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=16,
)
ids = st.integers() | st.text(max_size=10)

# Objects that look like JSON-RPC messages, good and bad, so that every branch of classify gets traffic.
message_like = st.fixed_dictionaries({}, optional={
    "jsonrpc": st.sampled_from(["2.0", "1.0", "2", 2.0, None]),
    "id": st.integers() | st.text(max_size=5) | st.booleans() | st.floats(allow_nan=False) | st.none()
    | st.lists(st.integers(), max_size=2),
    "method": st.text(max_size=10) | st.integers() | st.none() | st.lists(st.text(max_size=3), max_size=2),
    "params": json_values,
    "result": json_values,
    "error": json_values,
}) | json_values


def one(frame: bytes | str) -> jsonrpc.Message:
    decoded = jsonrpc.decode(frame)
    assert not isinstance(decoded, list)
    return decoded


def is_json_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def expected_kind(obj: object) -> type:
    """The message kind JSON-RPC 2.0 (as MCP uses it) gives a decoded value, written from the spec."""
    if not isinstance(obj, dict) or obj.get("jsonrpc") != "2.0":
        return Invalid
    if obj.get("method") is None:
        return Response if ("result" in obj or "error" in obj) else Invalid
    if not isinstance(obj["method"], str):
        return Invalid
    if obj.get("params") is not None and not isinstance(obj["params"], dict):
        return Invalid
    if "id" not in obj:
        return Notification
    return Request if is_json_int(obj["id"]) or isinstance(obj["id"], str) else Invalid


# -- requests, notifications, responses ---------------------------------------------------------------


def test_request_with_params() -> None:
    req = one(b'{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"a","arguments":{"x":"1"}}}')
    assert isinstance(req, Request)
    assert (req.id, req.method, req.params) == (7, "prompts/get", {"name": "a", "arguments": {"x": "1"}})
    assert repr(req) == "Request(id=7, method='prompts/get')"


def test_request_with_string_id_and_no_params() -> None:
    req = one('{"method":"ping","id":"abc","jsonrpc":"2.0"}')
    assert isinstance(req, Request)
    assert (req.id, req.method, req.params) == ("abc", "ping", None)


def test_request_with_explicit_null_params_has_none() -> None:
    req = one(b'{"jsonrpc":"2.0","id":0,"method":"ping","params":null}')
    assert isinstance(req, Request) and req.id == 0 and req.params is None


def test_negative_and_huge_integer_ids_are_kept_exactly() -> None:
    for raw in (-1, 2**63, 10**30):
        req = one(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % raw)
        assert isinstance(req, Request) and req.id == raw
        assert json.loads(jsonrpc.encode_result(req.id, {}))["id"] == raw


def test_notification() -> None:
    note = one(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert isinstance(note, Notification)
    assert (note.method, note.params) == ("notifications/initialized", None)
    assert repr(note) == "Notification(method='notifications/initialized')"
    cancelled = one(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}')
    assert isinstance(cancelled, Notification) and cancelled.params == {"requestId": 3}


def test_result_response() -> None:
    resp = one(b'{"jsonrpc":"2.0","id":"x","result":{"prompts":[]}}')
    assert isinstance(resp, Response)
    assert (resp.id, resp.result, resp.error) == ("x", {"prompts": []}, None)


def test_null_result_is_still_a_response() -> None:
    resp = one(b'{"jsonrpc":"2.0","id":4,"result":null}')
    assert isinstance(resp, Response) and resp.id == 4 and resp.result is None and resp.error is None


def test_error_response() -> None:
    resp = one(b'{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"nope"}}')
    assert isinstance(resp, Response)
    assert resp.id == 5 and resp.result is None and resp.error == {"code": -32601, "message": "nope"}


def test_error_response_with_unreadable_id_or_error() -> None:
    resp = one(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}')
    assert isinstance(resp, Response) and resp.id is None and resp.error == {"code": -32700, "message": "parse"}
    odd = one(b'{"jsonrpc":"2.0","id":1,"error":"text instead of an object"}')
    assert isinstance(odd, Response) and odd.error is None


# -- invalid messages ---------------------------------------------------------------------------------


@pytest.mark.parametrize("frame, id_, words", [
    ('{"jsonrpc":"1.0","id":3,"method":"ping"}', 3, '"jsonrpc" must be "2.0"'),
    ('{"jsonrpc":2.0,"id":"s","method":"ping"}', "s", '"jsonrpc" must be "2.0"'),
    ('{"id":1,"method":"ping"}', 1, '"jsonrpc" must be "2.0"'),
    ('{"jsonrpc":"2.0","id":true,"method":"ping"}', None, '"id" must be a string or an integer'),
    ('{"jsonrpc":"2.0","id":false,"method":"ping"}', None, '"id" must be a string or an integer'),
    ('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', None, '"id" must be a string or an integer'),
    ('{"jsonrpc":"2.0","id":1.0,"method":"ping"}', None, '"id" must be a string or an integer'),
    ('{"jsonrpc":"2.0","id":null,"method":"ping"}', None, '"id" must be a string or an integer'),
    ('{"jsonrpc":"2.0","id":[1],"method":"ping"}', None, '"id" must be a string or an integer'),
    ('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None, '"id" must be a string or an integer'),
    ('{"jsonrpc":"2.0","id":4,"method":5}', 4, '"method" must be a string'),
    ('{"jsonrpc":"2.0","id":4,"method":["ping"]}', 4, '"method" must be a string'),
    ('{"jsonrpc":"2.0","id":5,"method":"ping","params":[1]}', 5, '"params" must be an object'),
    ('{"jsonrpc":"2.0","id":5,"method":"ping","params":"x"}', 5, '"params" must be an object'),
    ('{"jsonrpc":"2.0","id":5,"method":"ping","params":0}', 5, '"params" must be an object'),
    ('{"jsonrpc":"2.0","method":"note","params":[1]}', None, '"params" must be an object'),
    ('{"jsonrpc":"2.0","id":6}', 6, "needs a method, a result or an error"),
    ('{"jsonrpc":"2.0"}', None, "needs a method, a result or an error"),
    ('{"jsonrpc":"2.0","id":6,"method":null}', 6, "needs a method, a result or an error"),
    ('"just a string"', None, "must be an object"),
    ("42", None, "must be an object"),
    ("null", None, "must be an object"),
    ("true", None, "must be an object"),
])
def test_invalid_messages_answer_32600_to_the_readable_id(frame: str, id_: object, words: str) -> None:
    message = one(frame)
    assert isinstance(message, Invalid)
    assert message.error.code == -32600
    assert words in message.error.message
    assert message.id == id_
    assert not isinstance(message.id, bool)


def test_invalid_inside_a_batch() -> None:
    batch = jsonrpc.decode(b'[1, {"jsonrpc":"2.0","id":true,"method":"x"}, {"jsonrpc":"2.0","id":2,"method":"y"}]')
    assert isinstance(batch, list)
    assert [type(m) for m in batch] == [Invalid, Invalid, Request]
    first, second, third = batch
    assert isinstance(first, Invalid) and first.id is None and first.error.code == -32600
    assert isinstance(second, Invalid) and second.id is None
    assert isinstance(third, Request) and third.id == 2


# -- not JSON at all ----------------------------------------------------------------------------------


@pytest.mark.parametrize("frame", [b"", b"{nope", b'{"jsonrpc":"2.0",}', b"\xff\xfe", b"[1,", b"nul", b"{} {}",
                                   b'{"a":1e400}', "", "{"])
def test_not_json_is_a_parse_error(frame: bytes | str) -> None:
    with pytest.raises(ParseError) as err:
        jsonrpc.decode(frame)
    assert err.value.code == -32700
    assert err.value.message.startswith("not valid JSON")


@pytest.mark.parametrize("frame", [b"[" * 100_000, b"[" * 5_000 + b"]" * 5_000, b'{"a":' * 5_000 + b"1" + b"}" * 5_000])
def test_deeply_nested_json_is_a_parse_error_not_a_crash(frame: bytes) -> None:
    # One such line used to raise RecursionError out of decode() and kill the stdio server.
    with pytest.raises(ParseError) as err:
        jsonrpc.decode(frame)
    assert err.value.code == -32700


def test_a_str_frame_with_a_lone_surrogate_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        jsonrpc.decode('{"jsonrpc":"2.0","id":1,"method":"\ud800"}')


@pytest.mark.parametrize("frame", [b'{"jsonrpc":"2.0","id":1,"method":"\xff"}', b'{"a":"\xc3"}', b"\xef\xbb"])
def test_invalid_utf8_is_a_parse_error_not_a_crash(frame: bytes) -> None:
    # msgspec raises UnicodeDecodeError for bad UTF-8 inside a string; it used to end the stdio server.
    with pytest.raises(ParseError):
        jsonrpc.decode(frame)


# -- batches ------------------------------------------------------------------------------------------


def test_batches_decode_to_lists_in_order() -> None:
    batch = jsonrpc.decode(b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},'
                           b'{"jsonrpc":"2.0","id":9,"result":{}}]')
    assert isinstance(batch, list)
    assert [type(m) for m in batch] == [Request, Notification, Response]
    req, note, resp = batch
    assert isinstance(req, Request) and req.method == "a"
    assert isinstance(note, Notification) and note.method == "b"
    assert isinstance(resp, Response) and resp.id == 9


def test_empty_batch_is_an_empty_list() -> None:
    assert jsonrpc.decode(b"[]") == []
    assert jsonrpc.decode(" [ ] ") == []


def test_nested_batch_items_are_invalid() -> None:
    batch = jsonrpc.decode(b'[[{"jsonrpc":"2.0","id":1,"method":"a"}]]')
    assert isinstance(batch, list) and len(batch) == 1
    assert isinstance(batch[0], Invalid) and batch[0].error.code == -32600


def test_a_batch_longer_than_the_limit_is_one_invalid_message() -> None:
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    full = jsonrpc.decode(b"[" + b",".join([ping] * jsonrpc.MAX_BATCH) + b"]")
    assert isinstance(full, list) and len(full) == jsonrpc.MAX_BATCH
    over = jsonrpc.decode(b"[" + b",".join([ping] * (jsonrpc.MAX_BATCH + 1)) + b"]")
    assert isinstance(over, Invalid) and over.id is None and over.error.code == -32600
    assert f"at most {jsonrpc.MAX_BATCH}" in over.error.message and str(jsonrpc.MAX_BATCH + 1) in over.error.message


def test_batch_answers_past_the_size_limit_become_errors_for_their_ids() -> None:
    answers = jsonrpc.BatchAnswers(limit=250)  # two answers of 105 bytes fit, not three
    for n in range(4):
        answers.add(jsonrpc.encode_result(n, {"text": "x" * 60}), n)
    assert answers.full
    answers.refuse("later")
    encoded = answers.encode()
    assert encoded is not None
    items = json.loads(encoded)
    assert [item["id"] for item in items] == [0, 1, 2, 3, "later"]
    assert [("result" in item) for item in items] == [True, True, False, False, False]
    assert all(item["error"]["code"] == -32600 and "250 bytes" in item["error"]["message"] for item in items[2:])
    assert jsonrpc.BatchAnswers().encode() is None  # only notifications: nothing to answer


# -- encoders -----------------------------------------------------------------------------------------


def test_encode_result() -> None:
    frame = jsonrpc.encode_result(1, {"a": [1, "b", None]})
    assert json.loads(frame) == {"jsonrpc": "2.0", "id": 1, "result": {"a": [1, "b", None]}}
    resp = one(frame)
    assert isinstance(resp, Response) and resp.id == 1 and resp.result == {"a": [1, "b", None]}


def test_encode_raw_result_embeds_pre_encoded_bytes() -> None:
    frame = jsonrpc.encode_raw_result("i", b'{"prompts":[{"name":"x"}]}')
    assert msgspec.json.decode(frame) == {"jsonrpc": "2.0", "id": "i", "result": {"prompts": [{"name": "x"}]}}


def test_encode_error_with_and_without_data() -> None:
    frame = jsonrpc.encode_error(None, InvalidParams("bad", {"k": 1}))
    assert json.loads(frame) == {"jsonrpc": "2.0", "id": None,
                                 "error": {"code": -32602, "message": "bad", "data": {"k": 1}}}
    assert json.loads(jsonrpc.encode_error(3, MethodNotFound("no"))) == {
        "jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "no"}}
    resp = one(jsonrpc.encode_error("r", ParseError("x")))
    assert isinstance(resp, Response) and resp.id == "r" and resp.error == {"code": -32700, "message": "x"}


def test_encode_error_never_leaks_internal_detail() -> None:
    frame = jsonrpc.encode_error(1, InternalError("secret path /etc/x failed"))
    assert json.loads(frame)["error"] == {"code": -32603, "message": "Internal error"}
    assert b"secret" not in frame


def test_encode_notification() -> None:
    assert json.loads(jsonrpc.encode_notification("n")) == {"jsonrpc": "2.0", "method": "n"}
    frame = jsonrpc.encode_notification("notifications/progress", {"progressToken": "t", "progress": 1})
    note = one(frame)
    assert isinstance(note, Notification)
    assert (note.method, note.params) == ("notifications/progress", {"progressToken": "t", "progress": 1})


def test_encode_request() -> None:
    assert json.loads(jsonrpc.encode_request(2, "m", {"p": 1})) == {
        "jsonrpc": "2.0", "id": 2, "method": "m", "params": {"p": 1}}
    assert json.loads(jsonrpc.encode_request("a", "ping")) == {"jsonrpc": "2.0", "id": "a", "method": "ping"}
    req = one(jsonrpc.encode_request("a", "ping"))
    assert isinstance(req, Request) and (req.id, req.method, req.params) == ("a", "ping", None)


def test_encoders_escape_strings() -> None:
    frame = jsonrpc.encode_request('quo"te\n', 'me"thod', {"k": "\u2028\x00"})
    assert json.loads(frame) == {"jsonrpc": "2.0", "id": 'quo"te\n', "method": 'me"thod', "params": {"k": "\u2028\x00"}}


# -- properties ---------------------------------------------------------------------------------------


@given(st.binary(max_size=300))
def test_any_bytes_decode_or_raise_parse_error(data: bytes) -> None:
    try:
        decoded = jsonrpc.decode(data)
    except ParseError as exc:
        assert exc.code == -32700
        return
    for message in decoded if isinstance(decoded, list) else [decoded]:
        assert isinstance(message, MESSAGE_TYPES)


@given(st.text(max_size=100, alphabet=st.characters(codec="utf-8") | st.sampled_from('{}[]":,0123456789.-e ')))
def test_any_text_decodes_or_raises_parse_error(data: str) -> None:
    try:
        decoded = jsonrpc.decode(data)
    except ParseError:
        return
    for message in decoded if isinstance(decoded, list) else [decoded]:
        assert isinstance(message, MESSAGE_TYPES)


@given(message_like)
def test_any_json_value_classifies_to_the_right_kind(value: Any) -> None:
    message = jsonrpc.classify(value)
    assert type(message) is expected_kind(value)
    if isinstance(message, Request):
        assert isinstance(value, dict)
        assert message.id == value["id"] and message.method == value["method"]
        assert message.params == value.get("params")
    elif isinstance(message, Notification):
        assert isinstance(value, dict)
        assert message.method == value["method"] and message.params == value.get("params")
    elif isinstance(message, Response):
        assert isinstance(value, dict)
        assert message.result == value.get("result")
        assert message.error == (value["error"] if isinstance(value.get("error"), dict) else None)
    else:
        assert isinstance(message, Invalid)
        assert message.error.code == -32600
    # An id we answer to is always a JSON string or integer, never a bool, float or container.
    id_ = getattr(message, "id", None)
    assert id_ is None or is_json_int(id_) or isinstance(id_, str)


@given(message_like)
def test_decode_of_encoded_json_is_classify(value: Any) -> None:
    decoded = jsonrpc.decode(msgspec.json.encode(value))
    if isinstance(value, list):
        assert isinstance(decoded, list)
        assert [type(m) for m in decoded] == [expected_kind(v) for v in value]
    else:
        assert type(decoded) is expected_kind(value)


def shape(message: jsonrpc.Message) -> tuple[Any, ...]:
    """Everything a message holds, to compare two decodings of one frame."""
    error = getattr(message, "error", None)
    if isinstance(error, Exception):
        error = (error.code, error.message)  # type: ignore[attr-defined]
    return (type(message), getattr(message, "id", None), getattr(message, "method", None),
            getattr(message, "params", None), getattr(message, "result", None), error)


def classified(frame: bytes) -> list[tuple[Any, ...]] | tuple[Any, ...]:
    value = msgspec.json.decode(frame)
    if isinstance(value, list):
        return [shape(jsonrpc.classify(item)) for item in value]
    return shape(jsonrpc.classify(value))


def decoded_shape(frame: bytes) -> list[tuple[Any, ...]] | tuple[Any, ...]:
    decoded = jsonrpc.decode(frame)
    return [shape(m) for m in decoded] if isinstance(decoded, list) else shape(decoded)


@given(message_like)
def test_decode_reads_every_frame_as_classify_reads_its_value(value: Any) -> None:
    # decode reads the usual frame straight into its parts; whatever it reads must be what classify reads.
    frame = msgspec.json.encode(value)
    assert decoded_shape(frame) == classified(frame)


@pytest.mark.parametrize("frame", [
    b'{"jsonrpc":"2.0","id":1,"id":"x","method":"m"}',
    b'{"jsonrpc":"2.0","id":"x","id":1,"method":"m"}',
    b'{"jsonrpc":"2.0","id":1,"id":null,"method":"m"}',
    b'{"jsonrpc":"2.0","id":1,"method":"m","method":5}',
    b'{"jsonrpc":"2.0","id":1,"method":5,"method":"m"}',
    b'{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"m"}',
    b'{"jsonrpc":"2.0","method":"m","params":{"a":1,"a":2},"params":null}',
    b'{"jsonrpc":"2.0","id":1e3,"method":"m"}',
    b'{"jsonrpc":"2.0","id":-0,"method":"m"}',
    b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}',
    b'{"jsonrpc":"2.0","id":1,"method":"m","result":1,"error":{}}',
    b'{"jsonrpc":"2.0","method":"m","id":true}',
])
def test_decode_reads_repeated_and_odd_members_as_classify_does(frame: bytes) -> None:
    assert decoded_shape(frame) == classified(frame)


@given(ids, json_values)
def test_encode_result_decodes_back_to_the_same(id_: int | str, result: Any) -> None:
    frame = jsonrpc.encode_result(id_, result)
    assert json.loads(frame) == {"jsonrpc": "2.0", "id": id_, "result": result}
    resp = one(frame)
    assert isinstance(resp, Response)
    assert resp.id == id_ and resp.result == result and resp.error is None


@given(ids, st.text(min_size=1, max_size=20), st.none() | st.dictionaries(st.text(max_size=5), json_values, max_size=3))
def test_encode_request_and_notification_round_trip(id_: int | str, method: str,
                                                    params: dict[str, Any] | None) -> None:
    req = one(jsonrpc.encode_request(id_, method, params))
    assert isinstance(req, Request) and (req.id, req.method, req.params) == (id_, method, params)
    note = one(jsonrpc.encode_notification(method, params))
    assert isinstance(note, Notification) and (note.method, note.params) == (method, params)


@given(st.none() | ids, st.sampled_from([InvalidParams, MethodNotFound, ParseError]), st.text(max_size=20),
       st.none() | json_values)
def test_encode_error_round_trips(id_: int | str | None, kind: type[InvalidParams], message: str, data: Any) -> None:
    error = kind(message, data)
    decoded = json.loads(jsonrpc.encode_error(id_, error))
    assert decoded["jsonrpc"] == "2.0" and decoded["id"] == id_
    assert decoded["error"]["code"] == error.code and decoded["error"]["message"] == message
    assert decoded["error"].get("data") == data
