"""A stdio MCP server that misbehaves on purpose, speaking raw JSON-RPC (one object a line).

    python bad_stdio.py MODE LOG

It is a legacy server (``server/discover`` is -32601, ``initialize`` agrees to the client's revision)
with one prompt, ``alpha``, until MODE makes it go wrong:

``cursor-loop``      prompts/list cursors go a -> b -> a ...
``endless``          every prompts/list page names a new cursor
``garbage-start``    prints a line of prose before anything else
``garbage``          answers prompts/list with a line that is not JSON
``not-a-list``       prompts/list: ``"prompts"`` is a string
``bad-content``      prompts/get: a message whose content type is ``hologram``
``silent``           never answers prompts/get
``exit``             on prompts/get: a line on stderr, then exit code 3
``ignore-discover``  never answers server/discover
``unsupported``      server/discover: -32022, supporting only 2099-01-01
``unsupported-legacy`` server/discover: -32022, supporting 2025-06-18 (a legacy revision)
``quiet``            well-behaved, but without prompts.listChanged
``asks``             on prompts/get, first asks the client: ping, then a method it does not offer, and
                     says a few things it did not ask for (a log message, a response to nothing)
``dribble``          well-behaved, but writes each message in pieces (a flush and a pause between), ends
                     lines with CRLF, puts a notification in the same write, and blank lines between
``big``              well-behaved, but its prompt has a 3 MB description
``input-loop``       a 2026-07-28 server whose prompts/get wants input on every round
``sampling``         a 2026-07-28 server whose prompts/get asks for sampling/createMessage
``listen-unknown``   a 2026-07-28 server (prompts.listChanged) answering subscriptions/listen with -32601
``listen-silent``    ... that never acknowledges a subscription
``listen-declines``  ... that acknowledges one without promptsListChanged
``listen-ends``      ... that answers subscriptions/listen at once, before any acknowledgement
``noisy``            well-behaved, after writing 2 MB of log lines to stderr

The environment variable BAD_NAME, if set, is the name it gives. Every line it reads is appended to
LOG, so tests can check what the client sent (a cancellation).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

MODE, LOG = sys.argv[1], sys.argv[2]
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = MODE in ("input-loop", "sampling") or MODE.startswith("listen-")
META = {"io.modelcontextprotocol/serverInfo": {"name": f"bad-{MODE}", "version": "0"}}
#: prompts/get requests waiting for the client to answer our own requests (``asks``)
waiting: dict[str, Any] = {}


def send(message: dict[str, Any]) -> None:
    line = json.dumps(message) + "\n"
    if MODE != "dribble":
        sys.stdout.write(line)
        sys.stdout.flush()
        return
    notice = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                         "params": {"level": "debug", "data": "dribbling"}})
    text = notice + "\r\n\n" + line.replace("\n", "\r\n") + "\n"
    third = len(text) // 3
    for piece in (text[:third], text[third:2 * third], text[2 * third:]):
        sys.stdout.write(piece)
        sys.stdout.flush()
        time.sleep(0.005)


def answer(request_id: Any, result: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def fail(request_id: Any, code: int, message: str, data: Any = None) -> None:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    send({"jsonrpc": "2.0", "id": request_id, "error": error})


def page(cursor: str | None) -> dict[str, Any]:
    prompts = [{"name": f"at-{cursor or 'start'}"}]
    if MODE == "cursor-loop":
        return {"prompts": prompts, "nextCursor": "b" if cursor == "a" else "a"}
    if MODE == "endless":
        return {"prompts": prompts, "nextCursor": f"c{int((cursor or 'c0')[1:]) + 1}"}
    if MODE == "not-a-list":
        return {"prompts": "all of them"}
    description = "x" * 3_000_000 if MODE == "big" else "The first letter"
    return {"prompts": [{"name": "alpha", "description": description}]}


def ask(request_id: Any) -> None:
    """``asks``: hold the answer to prompts/get until the client has answered two requests of ours."""
    waiting["get"] = request_id
    send({"jsonrpc": "2.0", "id": "s-ping", "method": "ping"})
    send({"jsonrpc": "2.0", "id": "s-sample", "method": "sampling/createMessage",
          "params": {"messages": [], "maxTokens": 1}})
    send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}})
    send({"jsonrpc": "2.0", "id": "nobody-asked", "result": {}})


def answered(message: dict[str, Any]) -> None:
    """A response from the client to one of our requests."""
    waiting[message["id"]] = message
    if "s-ping" in waiting and "s-sample" in waiting and "get" in waiting:
        answer(waiting.pop("get"), {"messages": [{"role": "user", "content": {"type": "text", "text": "asked"}}]})


def input_required(request_id: Any, params: dict[str, Any]) -> None:
    if MODE == "sampling":
        wanted = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}
    else:
        wanted = {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Once more?",
            "requestedSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}}
    rounds = int(params.get("requestState", "0")) + 1
    answer(request_id, {"resultType": "input_required", "inputRequests": {"again": wanted},
                        "requestState": str(rounds), "_meta": META})


def listen(request_id: Any) -> None:
    if MODE == "listen-unknown":
        fail(request_id, -32601, "Method not found: subscriptions/listen")
    elif MODE == "listen-declines":
        send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
              "params": {"notifications": {}, "_meta": {"io.modelcontextprotocol/subscriptionId": request_id}}})
    elif MODE == "listen-ends":
        answer(request_id, {"resultType": "complete", "_meta": META})


def handle(message: dict[str, Any]) -> None:
    method, request_id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if method is None and request_id is not None:
        answered(message)
        return
    if request_id is None or method is None:
        return  # a notification (initialized, cancelled): logged, nothing to do
    if method == "server/discover" and MODERN:
        prompts = {"listChanged": True} if MODE.startswith("listen-") else {}
        answer(request_id, {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                            "capabilities": {"prompts": prompts}, "_meta": META})
    elif method == "subscriptions/listen":
        listen(request_id)
    elif method == "server/discover":
        if MODE == "ignore-discover":
            return
        if MODE.startswith("unsupported"):
            supported = ["2025-06-18"] if MODE == "unsupported-legacy" else ["2099-01-01"]
            fail(request_id, -32022, "Unsupported protocol version", {"supported": supported, "requested": "x"})
            return
        fail(request_id, -32601, "Method not found")
    elif method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in LEGACY and MODE != "unsupported-legacy" else "2025-06-18"
        prompts = {} if MODE == "quiet" else {"listChanged": True}
        answer(request_id, {"protocolVersion": version, "capabilities": {"prompts": prompts},
                            "serverInfo": {"name": os.environ.get("BAD_NAME", f"bad-{MODE}"), "version": "0"}})
    elif method == "ping":
        answer(request_id, {})
    elif method == "prompts/list":
        if MODE == "garbage":
            sys.stdout.write("<html>this is not JSON-RPC</html>\n")
            sys.stdout.flush()
            return
        answer(request_id, page(params.get("cursor")))
    elif method == "prompts/get":
        if MODE == "silent":
            return
        if MODERN:
            input_required(request_id, params)
            return
        if MODE == "asks":
            ask(request_id)
            return
        if MODE == "exit":
            sys.stderr.write("boom: the database is on fire\n")
            sys.stderr.flush()
            sys.exit(3)
        content = {"type": "hologram", "data": "??"} if MODE == "bad-content" else {"type": "text", "text": "A"}
        answer(request_id, {"messages": [{"role": "user", "content": content}]})
    else:
        fail(request_id, -32601, f"Method not found: {method}")


def main() -> None:
    if MODE == "noisy":
        for number in range(20_000):
            sys.stderr.write(f"log line {number:05d}: {'.' * 90}\n")
        sys.stderr.flush()
    if MODE == "garbage-start":
        sys.stdout.write("Starting the chattiest server in the world...\n")
        sys.stdout.flush()
    with open(LOG, "a") as log:
        for line in sys.stdin:
            log.write(line if line.endswith("\n") else line + "\n")
            log.flush()
            if line.strip():
                handle(json.loads(line))


if __name__ == "__main__":
    main()
