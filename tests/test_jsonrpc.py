"""JSON-RPC framing: garbage in gives the right error, never a crash."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptdeck.protocol import jsonrpc
from promptdeck.protocol.errors import InvalidParams, ParseError
from promptdeck.protocol.jsonrpc import Invalid, Notification, Request, Response

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


def test_request_notification_response() -> None:
    req = jsonrpc.decode(b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":1}}')
    assert isinstance(req, Request) and (req.id, req.method, req.params) == (7, "ping", {"a": 1})
    note = jsonrpc.decode('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert isinstance(note, Notification) and note.params is None
    resp = jsonrpc.decode(b'{"jsonrpc":"2.0","id":"x","result":{}}')
    assert isinstance(resp, Response) and resp.id == "x" and resp.result == {}


@pytest.mark.parametrize("raw, id_", [
    ('{"jsonrpc":"2.0","id":true,"method":"ping"}', None),
    ('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', None),
    ('{"jsonrpc":"2.0","id":null,"method":"ping"}', None),
    ('{"jsonrpc":"1.0","id":3,"method":"ping"}', 3),
    ('{"jsonrpc":"2.0","id":4,"method":5}', 4),
    ('{"jsonrpc":"2.0","id":5,"method":"ping","params":[1]}', 5),
    ('{"jsonrpc":"2.0","id":6}', 6),
    ("[1]", None),
    ('"just a string"', None),
])
def test_invalid_messages_carry_32600_and_the_id_when_readable(raw: str, id_: Any) -> None:
    decoded = jsonrpc.decode(raw)
    message = decoded[0] if isinstance(decoded, list) else decoded
    assert isinstance(message, Invalid)
    assert message.error.code == -32600 and message.id == id_


def test_not_json_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as err:
        jsonrpc.decode(b"{nope")
    assert err.value.code == -32700


def test_batches_decode_to_lists() -> None:
    batch = jsonrpc.decode(b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]')
    assert isinstance(batch, list)
    assert [type(m) for m in batch] == [Request, Notification]
    assert jsonrpc.decode(b"[]") == []


def test_encoders_produce_valid_json_rpc() -> None:
    assert json.loads(jsonrpc.encode_result(1, {"a": [1]})) == {"jsonrpc": "2.0", "id": 1, "result": {"a": [1]}}
    assert json.loads(jsonrpc.encode_raw_result("i", b'{"x":1}')) == {"jsonrpc": "2.0", "id": "i", "result": {"x": 1}}
    assert json.loads(jsonrpc.encode_error(None, InvalidParams("bad", {"k": 1}))) == {
        "jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "bad", "data": {"k": 1}}}
    assert json.loads(jsonrpc.encode_notification("n")) == {"jsonrpc": "2.0", "method": "n"}
    assert json.loads(jsonrpc.encode_request(2, "m", {"p": 1})) == {
        "jsonrpc": "2.0", "id": 2, "method": "m", "params": {"p": 1}}


@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_parse_error(data: bytes) -> None:
    try:
        decoded = jsonrpc.decode(data)
    except ParseError:
        return
    for message in decoded if isinstance(decoded, list) else [decoded]:
        assert isinstance(message, Request | Notification | Response | Invalid)


@given(json_values)
def test_any_json_value_classifies_without_raising(value: Any) -> None:
    message = jsonrpc.classify(value)
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        assert isinstance(message, Invalid)
    elif isinstance(message, Request):
        assert isinstance(message.method, str) and not isinstance(message.id, bool)
        assert isinstance(message.id, int | str)


@given(st.one_of(st.integers(), st.text()), json_values)
def test_results_round_trip(id_: int | str, result: Any) -> None:
    decoded = json.loads(jsonrpc.encode_result(id_, result))
    assert decoded == {"jsonrpc": "2.0", "id": id_, "result": result}
