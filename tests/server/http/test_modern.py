"""The common 2026-07-28 ``prompts/get`` answered in one pass (``ModernEndpoint.plain_get``, ``http.modern.plain_get``).

The pass is an optimisation and nothing else: every request is answered by the app as it is and by the same app
with the pass turned off (``plain_get`` answering None, so the general path serves everything), and the two
responses, status, headers and body, must be the same bytes, with the same metrics. Requests range from the
common case to every way out of it: headers that disagree or are wrapped, bad ``_meta``, missing, unknown and
invalid arguments, forms, request states, progress, scopes, and prompts that are not plain.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from promptdeck import PromptServer
from promptdeck.protocol import jsonrpc
from promptdeck.protocol.errors import ParseError
from promptdeck.protocol.jsonrpc import Request
from promptdeck.server.asgi import Message
from promptdeck.server.http import app as app_module
from promptdeck.server.http.app import StreamableHttpApp, create_app
from promptdeck.server.methods import METHODS
from promptdeck.server.modern import ModernEndpoint
from promptdeck.server.outcome import Answer
from promptdeck.server.security.principals import Principal
from tests.support.modern import legacy

VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}}
FORMS = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}

FILES = {
    "note.md": "---\ndescription: A note\narguments:\n  - {name: topic, required: true}\n"
               "  - {name: tone, enum: [neutral, dry], default: neutral}\n---\n"
               "Write about {{ topic }} in a {{ tone }} tone.\n",
    "bare.md": "---\narguments:\n  - {name: who, required: true}\n---\nHi {{ who }}\n",
    "fixed.md": "---\ndescription: No arguments\n---\nAlways the same words: \"quoted\", \\ and ünïcode.\n",
    "talk.md": "---\narguments:\n  - {name: q, required: true}\n  - {name: extra, default: ''}\n---\n"
               "user:\nAsk {{ q }}\n\nassistant:\n{{ extra }}\n\nuser:\nThen {{ q }} again.\n",
    "counted.md": "---\narguments:\n  - {name: n, type: integer, min: 1, max: 9, required: true}\n---\n{{ n }} times\n",
    "maybe.md": "---\narguments:\n  - {name: mood}\n---\nFeeling {{ mood }}\n",
    "marked.md": "---\narguments:\n  - {name: x, required: true}\n---\n"
                 "user: {annotations: {audience: [assistant], priority: 0.5}}\nMarked {{ x }}\n",
    "branchy.md": "---\narguments:\n  - {name: x, required: true}\n---\n{% if x %}Yes {{ x }}{% endif %}\n",
    "secret.md": "---\nscopes: [hr]\narguments:\n  - {name: x, required: true}\n---\nSecret {{ x }}\n",
}


def get(name: object, arguments: object = None, *, meta: Any = META, request_id: int | str = 7,
        **params: Any) -> dict[str, Any]:
    """A prompts/get whose params are exactly these, in this order (``_meta`` whatever ``meta`` is, even no
    object): the shared ``modern.request`` would mend them, and the cases are the ways they can be wrong."""
    body: dict[str, Any] = {"name": name, **params, "_meta": meta}
    if arguments is not None:
        body["arguments"] = arguments
    return legacy(request_id, "prompts/get", body)


def heads(message: dict[str, Any], **override: bytes | None) -> list[tuple[bytes, bytes]]:
    params = message.get("params") or {}
    name = params.get("name")
    values: dict[str, bytes | None] = {
        "host": b"127.0.0.1:8000", "content-type": b"application/json",
        "accept": b"application/json, text/event-stream", "mcp-protocol-version": VERSION.encode(),
        "mcp-method": str(message.get("method")).encode(),
        "mcp-name": name.encode() if isinstance(name, str) else None,
    }
    values.update({key.replace("_", "-"): value for key, value in override.items()})
    return [(key.encode(), value) for key, value in values.items() if value is not None]


def wrapped(text: str) -> bytes:
    return b"=?base64?" + base64.b64encode(text.encode()) + b"?="


#: (request, header overrides): the common case first, then every way out of it.
CASES: list[tuple[dict[str, Any], dict[str, bytes | None]]] = [
    (get("note", {"topic": "caching"}), {}),
    (get("note", {"topic": "caching", "tone": "dry"}), {}),
    (get("note", {"topic": "x" * 5000 + "\u2028\"\\\x00é"}), {}),
    (get("bare", {"who": "you"}), {}),
    (get("fixed"), {}),
    (get("fixed", {}), {}),
    (get("talk", {"q": "why"}), {}),
    (get("talk", {"q": "why", "extra": "and how"}), {}),
    (get("counted", {"n": "3"}), {}),
    (get("note", {"topic": "caching"}, request_id="an-id"), {}),
    (get("note", {"topic": "caching"}, meta={**META, "io.modelcontextprotocol/logLevel": "debug"}), {}),
    (get("note", {"topic": "caching"}, meta=FORMS), {}),
    # headers: wrapped (the same request, by the general path), disagreeing, missing, spaced
    (get("note", {"topic": "caching"}), {"mcp_name": wrapped("note")}),
    (get("note", {"topic": "caching"}), {"mcp_method": wrapped("prompts/get")}),
    (get("note", {"topic": "caching"}), {"mcp_name": b"bare"}),
    (get("note", {"topic": "caching"}), {"mcp_name": None}),
    (get("note", {"topic": "caching"}), {"mcp_method": b"prompts/list"}),
    (get("note", {"topic": "caching"}), {"mcp_protocol_version": b"2025-11-25"}),
    (get("note", {"topic": "caching"}), {"mcp_protocol_version": None}),
    (get("note", {"topic": "caching"}), {"mcp_name": wrapped("bare")}),
    (get("note", {"topic": "caching"}), {"mcp_name": b"=?base64?!!?="}),
    (get("note", {"topic": "caching"}), {"content_type": b"text/plain"}),
    (get("note", {"topic": "caching"}), {"accept": b"application/json"}),
    (get("note", {"topic": "caching"}), {"host": b"evil.example"}),
    (get("note", {"topic": "caching"}), {"origin": b"http://localhost:3000"}),
    (get("note", {"topic": "caching"}), {"origin": b"https://evil.example"}),
    # _meta
    (get("note", {"topic": "caching"}, meta={**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}),
     {"mcp_protocol_version": b"2099-01-01"}),
    (get("note", {"topic": "caching"}, meta={**META, "io.modelcontextprotocol/protocolVersion": ["x"]}), {}),
    (get("note", {"topic": "caching"}, meta={k: v for k, v in META.items() if "Capabilities" not in k}), {}),
    (get("note", {"topic": "caching"}, meta={**META, "io.modelcontextprotocol/clientCapabilities": []}), {}),
    (get("note", {"topic": "caching"}, meta={**META, "io.modelcontextprotocol/logLevel": "loud"}), {}),
    (get("note", {"topic": "caching"}, meta={**META, "io.modelcontextprotocol/logLevel": {}}), {}),
    (get("note", {"topic": "caching"}, meta={**META, "progressToken": "p1"}), {}),
    # arguments and names
    (get("note"), {}),
    (get("note", meta=FORMS), {}),
    (get("note", {}, meta=FORMS), {}),
    (get("note", {"topic": "caching", "colour": "red"}), {}),
    (get("note", {"topic": 5}), {}),
    (get("note", {"topic": "caching", "tone": "loud"}), {}),
    (get("note", ["caching"]), {}),
    (get("counted", {"n": "12"}), {}),
    (get("counted", {"n": "many"}), {}),
    (get("maybe"), {}),
    (get("maybe", {"mood": "fine"}), {}),
    (get("nope", {"topic": "caching"}), {}),
    (get("notes", {"topic": "caching"}), {}),
    (get(5, {"topic": "caching"}), {"mcp_name": b"5"}),
    (get("secret", {"x": "1"}), {}),
    # not plain prompts, request states, form answers
    (get("marked", {"x": "1"}), {}),
    (get("branchy", {"x": "1"}), {}),
    (get("note", {"topic": "caching"}, requestState="forged"), {}),
    (get("note", {"topic": "caching"}, inputResponses={"arguments": {}}), {}),
]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("plain-get")
    for name, text in FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def make_app(library: Path) -> StreamableHttpApp:
    server = PromptServer("plain-get-test")
    server.add_folder(library)
    return create_app(server, stateless=True, json_response=True, ui=True, watch=False)


async def call(app: StreamableHttpApp, message: dict[str, Any], headers: list[tuple[bytes, bytes]],
               path: str = "/mcp") -> list[Any]:
    body = msgspec.json.encode(message)
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
             "headers": [*headers, (b"content-length", b"%d" % len(body))]}
    sent: list[Any] = []
    unread = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if unread:
            return unread.pop()
        await asyncio.Event().wait()  # the client stays until answered (a render in the threads is awaited)
        raise AssertionError("unreachable")

    async def send(event: Message) -> None:
        sent.append(event)

    await app(scope, receive, send)
    return sent


def unsigned(sent: list[Any]) -> list[Any]:
    """The messages sent, with a form's ``requestState`` (signed, with a nonce and an expiry) left out, and
    so the length its answer's head gives: a state's length varies with what it holds (in one CI run the
    two paths' states differed by two bytes). The bodies compared still say whether the lengths agree."""
    out: list[Any] = []
    for event in sent:
        body = event.get("body", b"")
        if b'"requestState"' in body:
            decoded = msgspec.json.decode(body)
            decoded["result"]["requestState"] = "..."
            event = {**event, "body": msgspec.json.encode(decoded)}
            for i, earlier in enumerate(out):
                if earlier.get("type") == "http.response.start":
                    out[i] = {**earlier, "headers": [(k, b"..." if k == b"content-length" else v)
                                                     for k, v in earlier["headers"]]}
        out.append(event)
    return out


def answers(app: StreamableHttpApp) -> Iterator[list[Any]]:
    for message, override in CASES:
        yield asyncio.run(call(app, message, heads(message, **override)))


def test_every_request_is_answered_as_the_general_path_answers_it(library: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "promptdeck.audit")
    fused = make_app(library)
    got = list(answers(fused))
    audited = [(r.principal, r.prompt, r.outcome) for r in caplog.records]  # type: ignore[attr-defined]
    caplog.clear()
    general = make_app(library)
    monkeypatch.setattr(app_module, "plain_get", lambda *_: None)
    expected = list(answers(general))
    assert audited == [(r.principal, r.prompt, r.outcome) for r in caplog.records]  # type: ignore[attr-defined]
    assert len(audited) > 12
    for (message, override), one, other in zip(CASES, got, expected, strict=True):
        assert unsigned(one) == unsigned(other), (message, override)
    # Counted alike (requests refused before a method runs are not counted by either), the histogram too.
    assert fused.metrics.requests == general.metrics.requests and fused.metrics.requests[("prompts/get", "ok")] > 12
    assert fused.metrics.duration_count == general.metrics.duration_count


def test_the_common_get_takes_the_one_pass(library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(library)
    handled: list[str] = []
    general = ModernEndpoint.handle

    def counted(self: ModernEndpoint, req: Any, *args: Any) -> Any:
        handled.append(req.params.get("name"))
        return general(self, req, *args)

    monkeypatch.setattr(ModernEndpoint, "handle", counted)
    common = [(message, override) for message, override in CASES[:12]]
    for message, override in common:
        sent = asyncio.run(call(app, message, heads(message, **override)))
        assert sent[0]["status"] == 200 and b'"resultType":"complete"' in sent[1]["body"]
    assert handled == []
    asyncio.run(call(app, CASES[12][0], heads(CASES[12][0], **CASES[12][1])))  # a wrapped header: the general path
    assert handled == ["note"]


def test_plain_get_makes_the_bytes_handle_makes(library: Path) -> None:
    app = make_app(library)
    endpoint = app.server.modern
    for scopes in (None, frozenset({"hr"}), frozenset()):
        for message, _ in CASES:
            body = msgspec.json.encode(message)
            req = jsonrpc.decode(body)
            assert isinstance(req, Request)
            meta = req.params["_meta"] if isinstance(req.params, dict) else None
            if not isinstance(meta, dict) or "io.modelcontextprotocol/protocolVersion" not in meta:
                continue
            call = endpoint.plain_call(req.method, body)
            fast = None if call is None else endpoint.plain_get(call, meta, scopes)
            if fast is None:
                continue
            principal = Principal("p", scopes)
            ctx = endpoint.open(req, meta, principal.name, principal.scopes)
            outcome = endpoint.handle(req, ctx, lambda _: None)
            assert isinstance(outcome, Answer) and outcome.error is None
            assert fast == outcome.data, message


@pytest.mark.parametrize(("path", "ui", "routed"), [
    ("/mcp", True, "mcp"), ("/", True, "ui"), ("/", False, "mcp"), ("/ui/mcp", True, "ui"),
    ("/healthz", False, "health"),
])
def test_an_mcp_path_another_route_takes_stays_that_routes(library: Path, path: str, ui: bool, routed: str) -> None:
    # Requests for the MCP path skip the routes tried before it, unless one of them takes that path.
    server = PromptServer("plain-get-test")
    server.add_folder(library)
    app = create_app(server, path=path, stateless=True, ui=ui, watch=False)
    message = get("note", {"topic": "caching"})
    sent = asyncio.run(call(app, message, heads(message), path=path))
    body = sent[-1]["body"]
    assert {"mcp": b'"resultType":"complete"' in body, "ui": sent[0]["status"] == 405,
            "health": body == b"ok"}[routed], sent


@pytest.mark.parametrize("body", [
    b'{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"note","arguments":{"topic":"x"},"z":1}}',
    b'{"jsonrpc":"2.0","id":"s","method":"prompts/get","params":{"name":"note"},"extra":true}',
    b'{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"note","arguments":null}}',
    b'{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":5}}',
    b'{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"note","arguments":[]}}',
    b'{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{}}',
    b'{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":null}',
    b'{"jsonrpc":"2.0","id":7,"method":"prompts/get"}',
    b'{"jsonrpc":"2.0","id":null,"method":"prompts/get","params":{"name":"note"}}',
    b'{"jsonrpc":"2.0","method":"prompts/get","params":{"name":"note"}}',
    b'{"jsonrpc":"2.0","id":1.5,"method":"prompts/get","params":{"name":"note"}}',
    b'{"jsonrpc":"2.0","id":100000000000000000000000000000,"method":"prompts/get","params":{"name":"note"}}',
    b'{"jsonrpc":"1.0","id":7,"method":"prompts/get","params":{"name":"note"}}',
    b'{"jsonrpc":"2.0","id":7,"method":"prompts/list","params":{"name":"note"}}',
    b'{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"note"},"method":"ping"}',
    b'[{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"note"}}]',
    b'{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"n\\u00f6te"}}',
    b'{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"note"}',
    b'\xff',
])
def test_plain_call_reads_a_body_as_the_general_path_and_the_params_struct_do(library: Path, body: bytes) -> None:
    """The one pass decodes the body once, straight into the method's envelope: it takes exactly the bodies that
    ``jsonrpc.decode`` reads as a prompts/get request whose params ``Method.prepare`` would decode, with the same
    id and params; anything else is left to the general path."""
    endpoint = make_app(library).server.modern
    call = endpoint.plain_call("prompts/get", body)
    try:
        req = jsonrpc.decode(body)
    except ParseError:
        req = None
    expected = None
    if isinstance(req, Request) and req.method == "prompts/get":
        try:
            expected = (req.id, msgspec.convert(req.params or {}, METHODS["prompts/get"].params))
        except msgspec.ValidationError:
            pass
    assert (None if call is None else (call.id, call.params)) == expected
    assert endpoint.plain_call("prompts/list", body) is None  # a method with no one-pass answer
