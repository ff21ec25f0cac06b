"""Odd requests are answered byte for byte as before the one method table (issue 39), in both eras over stdio.

The method table decodes a request's params into a struct before its handler runs, and orders the refusals in
one place (``methods.Method.prepare``). What each era had always answered first stays first: an unknown prompt,
tool or skill directory before a wrong type in another field, a subscription's URI before the server says it
serves no resources. ``CASES`` are requests of every method in each era (params missing, null, an array, a
field of the wrong type, missing, unknown fields, the envelope itself wrong); each answer is the line the server
gave before the table, pinned here.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from promptdeck.protocol.revisions import META_VERSION
from promptdeck.server.modern import META_CAPABILITIES
from tests.support.libraries import EXAMPLES
from tests.support.modern import DEADLINE, LEGACY_REVISION, REVISION

#: A server of one Python prompt: no folder, so no resources, skills or tools.
BARE = """\
from promptdeck import PromptServer

server = PromptServer("bare")


@server.prompt()
def greet(who: str) -> str:
    '''Greet someone.'''
    return f"Hello {who}"


server.serve()
"""
#: What each server runs: every feature (the examples, with tools), or none.
SERVERS = {
    "full": ["-m", "promptdeck", "serve", "--tools", "--no-watch", str(EXAMPLES)],
    "bare": ["-c", BARE],
}
#: Stands for a URI one character longer than any looked up (``protocol.content.MAX_URI_CHARS``).
LONG = "@LONG@"
LONG_URI = "x" * 4097
#: Stands for no answer at all (a notification's).
NONE = "(none)"


def line(era: str, text: str) -> bytes:
    """The request as sent: a 2026-07-28 one carries the version and capabilities in its params' ``_meta``."""
    text = text.replace(LONG, LONG_URI)
    if era != "modern":
        return text.encode()
    message = json.loads(text)
    params = message.get("params", {})
    if isinstance(params, dict):
        meta = params.get("_meta", {})
        if isinstance(meta, dict):
            meta = {**meta, META_VERSION: REVISION, META_CAPABILITIES: {}}
        message["params"] = {**params, "_meta": meta}
    return json.dumps(message, separators=(",", ":")).encode()


class Wire:
    """A server's stdio as bytes: each request is followed by a ping, whose answer closes what it was sent."""

    def __init__(self, config: str, era: str) -> None:
        self.proc = subprocess.Popen([sys.executable, *SERVERS[config]], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.sent = 0
        threading.Thread(target=self._read, daemon=True).start()
        if era == "legacy":
            self.exchange(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": LEGACY_REVISION, "capabilities": {},
                "clientInfo": {"name": "wire", "version": "1"}}}).encode(), answered=True)
            self.exchange(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', answered=False)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for got in self.proc.stdout:
            self.lines.put(got.rstrip(b"\n"))
        self.lines.put(None)

    def exchange(self, data: bytes, answered: bool) -> bytes:
        """The lines ``data`` is answered with (an answer that comes after the ping's, off the loop, counted)."""
        assert self.proc.stdin is not None
        self.sent += 1
        marker = f'"id":"ping{self.sent}"'.encode()
        self.proc.stdin.write(data + b"\n" + b'{"jsonrpc":"2.0","id":"ping%d","method":"ping"}\n' % self.sent)
        self.proc.stdin.flush()
        got: list[bytes] = []
        pinged = False
        while not pinged or (answered and not got):
            message = self.lines.get(timeout=DEADLINE)
            assert message is not None, "the server ended"
            if marker in message:
                pinged = True
            else:
                got.append(message)
        return b"\n".join(got)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(DEADLINE)
        except subprocess.TimeoutExpired:  # pragma: no cover - a server that hangs on end of input
            self.proc.kill()
            self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()


@pytest.fixture(scope="module")
def wires() -> Iterator[dict[tuple[str, str], Wire]]:
    started: dict[tuple[str, str], Wire] = {}
    yield started
    for wire in started.values():
        wire.close()


def wire_for(wires: dict[tuple[str, str], Wire], config: str, era: str) -> Wire:
    if (config, era) not in wires:
        wires[config, era] = Wire(config, era)
    return wires[config, era]


def test_a_prompt_unknown_is_refused_as_such_whatever_its_arguments(wires: dict[tuple[str, str], Wire]) -> None:
    """The finding itself, in words: the answer names the prompt, not the ``arguments`` field."""
    for era in ("legacy", "modern"):
        got = wire_for(wires, "full", era).exchange(
            line(era, '{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"nope","arguments":5}}'),
            answered=True)
        answer: dict[str, Any] = json.loads(got)
        assert answer["error"] == {"code": -32602, "message": "unknown prompt 'nope'",
                                   "data": {"prompt": "nope", "suggestions": []}}, era


def cases(table: str) -> Iterator[Any]:
    """``TABLE`` read: under a ``## CONFIG ERA...`` header, each request's line followed by its answer's, the same
    in each era the header names."""
    config, eras = "", [""]
    rows = iter(table.strip().splitlines())
    for number, row in enumerate(rows):
        if row.startswith("## "):
            config, *eras = row[3:].split()
            continue
        answer = next(rows)
        for era in eras:
            yield pytest.param(config, era, row, "" if answer == NONE else answer, id=f"{config}-{era}-{number}")


#: Each request (before the ``_meta`` of a 2026-07-28 one is added) and the line the server answered it with
#: before the method table, in each era the header names.
TABLE = r"""
## full legacy modern
{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{"cursor":"zzz","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid cursor 'zzz'"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{"cursor":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid cursor 5"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a prompt"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"arguments":{"bullets":"3"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a prompt"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":5,"arguments":{"bullets":"3"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a prompt"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":null,"arguments":{"bullets":"3"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a prompt"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"nope","arguments":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'nope'","data":{"prompt":"nope","suggestions":[]}}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"nope","arguments":[]}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'nope'","data":{"prompt":"nope","suggestions":[]}}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"nope","arguments":1e+308}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'nope'","data":{"prompt":"nope","suggestions":[]}}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"nope","arguments":1000000000000000000000000000000}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'nope'","data":{"prompt":"nope","suggestions":[]}}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"summarize","arguments":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"arguments\" must be an object mapping names to strings"}}
{"jsonrpc":"2.0","id":1,"method":"completion/complete"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"completion/complete needs \"ref\" and \"argument\" objects"}}
{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"argument":{"name":"bullets","value":"1"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"completion/complete needs \"ref\" and \"argument\" objects"}}
{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":5,"argument":{"name":"bullets","value":"1"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"completion/complete needs \"ref\" and \"argument\" objects"}}
{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":null,"argument":{"name":"bullets","value":"1"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"completion/complete needs \"ref\" and \"argument\" objects"}}
{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"summarize"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"completion/complete needs \"ref\" and \"argument\" objects"}}
{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"summarize"},"argument":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"completion/complete needs \"ref\" and \"argument\" objects"}}
{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"summarize"},"argument":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"completion/complete needs \"ref\" and \"argument\" objects"}}
{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"zzz","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid cursor 'zzz'"}}
{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid cursor 5"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a tool"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"bullets":"3"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a tool"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"arguments":{"bullets":"3"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a tool"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":null,"arguments":{"bullets":"3"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a tool"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool 'nope'","data":{"tool":"nope"}}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":[]}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool 'nope'","data":{"tool":"nope"}}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":1e+308}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool 'nope'","data":{"tool":"nope"}}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":1000000000000000000000000000000}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool 'nope'","data":{"tool":"nope"}}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"summarize","arguments":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"arguments\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":"zzz","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid cursor 'zzz'"}}
{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid cursor 5"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"promptdeck:///_material/nope.txt","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found: 'promptdeck:///_material/nope.txt'","data":{"uri":"promptdeck:///_material/nope.txt"}}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"@LONG@"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":""}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found: ''","data":{"uri":""}}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Directory not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://changelog","cursor":"zzz","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid cursor 'zzz'"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"cursor":"zzz"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Directory not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":5,"cursor":"zzz"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Directory not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":null,"cursor":"zzz"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Directory not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"@LONG@","cursor":"zzz"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Directory not found: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"","cursor":"zzz"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Directory not found: ''","data":{"uri":""}}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://nope","cursor":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Directory not found: 'skill://nope'","data":{"uri":"skill://nope"}}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://nope","cursor":[]}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Directory not found: 'skill://nope'","data":{"uri":"skill://nope"}}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://nope","cursor":1e+308}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Directory not found: 'skill://nope'","data":{"uri":"skill://nope"}}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://nope","cursor":1000000000000000000000000000000}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Directory not found: 'skill://nope'","data":{"uri":"skill://nope"}}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://changelog","cursor":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid cursor 5"}}
{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"cursor":"zzz","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid cursor 'zzz'"}}
{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"cursor":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid cursor 5"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Skill not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://nope/SKILL.md","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Skill not found: 'skill://nope/SKILL.md'","data":{"uri":"skill://nope/SKILL.md"}}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Skill not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Skill not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Skill not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"@LONG@"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Skill not found: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":""}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Skill not found: ''","data":{"uri":""}}}
{"jsonrpc":"2.0","id":1,"method":"prompts/render"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'prompts/render' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/render","params":{"extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'prompts/render' is not offered by this server"}}
## full legacy
{"jsonrpc":"2.0","id":1,"method":"ping"}
{"jsonrpc":"2.0","id":1,"result":{}}
{"jsonrpc":"2.0","id":1,"method":"ping","params":{"extra":1}}
{"jsonrpc":"2.0","id":1,"result":{}}
{"jsonrpc":"2.0","id":1,"method":"server/discover"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'server/discover' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'server/discover' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a prompt"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a prompt"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"summarize","arguments":{"bullets":"3"},"extra":1}}
{"jsonrpc":"2.0","id":1,"result":{"description":"Summarize a text, or the conversation so far, in a few bullet points.","messages":[{"role":"user","content":{"type":"text","text":"Summarize our conversation so far\nin at most 3 bullet points, most important first. Keep names,\nnumbers and decisions exact, and end with any open questions."}}]}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"summarize"}}
{"jsonrpc":"2.0","id":1,"result":{"description":"Summarize a text, or the conversation so far, in a few bullet points.","messages":[{"role":"user","content":{"type":"text","text":"Summarize our conversation so far\nin at most 5 bullet points, most important first. Keep names,\nnumbers and decisions exact, and end with any open questions."}}]}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"summarize","arguments":null}}
{"jsonrpc":"2.0","id":1,"result":{"description":"Summarize a text, or the conversation so far, in a few bullet points.","messages":[{"role":"user","content":{"type":"text","text":"Summarize our conversation so far\nin at most 5 bullet points, most important first. Keep names,\nnumbers and decisions exact, and end with any open questions."}}]}}
{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"completion/complete needs \"ref\" and \"argument\" objects"}}
{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"completion/complete needs \"ref\" and \"argument\" objects"}}
{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"summarize"},"argument":{"name":"bullets","value":"1"},"extra":1}}
{"jsonrpc":"2.0","id":1,"result":{"completion":{"values":[],"total":0,"hasMore":false}}}
{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a tool"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a tool"}}
{"jsonrpc":"2.0","id":1,"method":"resources/list","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"resources/templates/list"}
{"jsonrpc":"2.0","id":1,"result":{"resourceTemplates":[{"uriTemplate":"promptdeck:///{+path}","name":"library-file","title":"A file of the prompt library","description":"A file that a prompt you may see sends whole (an image, audio, an embedded resource, a link), or that one of its path arguments may name."}]}}
{"jsonrpc":"2.0","id":1,"method":"resources/templates/list","params":{"extra":1}}
{"jsonrpc":"2.0","id":1,"result":{"resourceTemplates":[{"uriTemplate":"promptdeck:///{+path}","name":"library-file","title":"A file of the prompt library","description":"A file that a prompt you may see sends whole (an image, audio, an embedded resource, a link), or that one of its path arguments may name."}]}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"promptdeck:///_material/app.log","extra":1}}
{"jsonrpc":"2.0","id":1,"result":{}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"@LONG@"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":""}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":"promptdeck:///_material/app.log","extra":1}}
{"jsonrpc":"2.0","id":1,"result":{}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":"@LONG@"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":""}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Directory not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Directory not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"skills/list","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Skill not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Skill not found: ''"}}
{"jsonrpc":"2.0","id":1,"method":"logging/setLevel"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown log level None; use one of debug, info, notice, warning, error, critical, alert, emergency"}}
{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown log level None; use one of debug, info, notice, warning, error, critical, alert, emergency"}}
{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown log level None; use one of debug, info, notice, warning, error, critical, alert, emergency"}}
{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown log level 'loud'; use one of debug, info, notice, warning, error, critical, alert, emergency"}}
{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown log level None; use one of debug, info, notice, warning, error, critical, alert, emergency"}}
{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown log level 5; use one of debug, info, notice, warning, error, critical, alert, emergency"}}
{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown log level None; use one of debug, info, notice, warning, error, critical, alert, emergency"}}
{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'subscriptions/listen' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'subscriptions/listen' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'subscriptions/listen' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":5,"extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'subscriptions/listen' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'subscriptions/listen' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'subscriptions/listen' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'subscriptions/listen' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"notifications/initialized"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'notifications/initialized' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"notifications/cancelled","params":{"requestId":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'notifications/cancelled' is not offered by this server"}}
{"jsonrpc":"2.0","method":"prompts/get","params":{"name":"nope"}}
(none)
{"jsonrpc":"2.0","id":1.5,"method":"ping"}
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"\"id\" must be a string or an integer"}}
{"jsonrpc":"2.0","id":true,"method":"ping"}
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"\"id\" must be a string or an integer"}}
{"jsonrpc":"2.0","id":null,"method":"ping"}
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"\"id\" must be a string or an integer"}}
{"jsonrpc":"2.0","id":{},"method":"ping"}
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"\"id\" must be a string or an integer"}}
{"jsonrpc":"2.0","id":1000000000000000000000000000000,"method":"ping"}
{"jsonrpc":"2.0","id":1000000000000000000000000000000,"result":{}}
{"jsonrpc":"2.0","id":1}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"a message needs a method, a result or an error"}}
{"jsonrpc":"2.0","id":1,"method":5}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"method\" must be a string"}}
{"jsonrpc":"1.0","id":1,"method":"ping"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"jsonrpc\" must be \"2.0\""}}
{"id":1,"method":"ping"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"jsonrpc\" must be \"2.0\""}}
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"the session is already initialized"}}
[]
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"an empty batch is not a request"}}
[1]
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are only accepted in 2025-03-26 sessions, not 2025-11-25"}}
not json
{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"not valid JSON: JSON is malformed: invalid character (byte 4)"}}
5
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a JSON-RPC message must be an object"}}
null
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a JSON-RPC message must be an object"}}
## full modern
{"jsonrpc":"2.0","id":1,"method":"ping"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'ping' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"ping","params":{"extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'ping' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"summarize"},"argument":{"name":"bullets","value":"1"},"extra":1}}
{"jsonrpc":"2.0","id":1,"result":{"completion":{"values":[],"total":0,"hasMore":false},"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"promptdeck","version":"0.1.0"}}}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"promptdeck:///_material/app.log","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"@LONG@"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":""}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":"promptdeck:///_material/app.log","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":"@LONG@"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":""}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"logging/setLevel"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'logging/setLevel' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'logging/setLevel' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'logging/setLevel' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'logging/setLevel' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'logging/setLevel' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"subscriptions/listen needs a \"notifications\" object"}}
{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":5,"extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"subscriptions/listen needs a \"notifications\" object"}}
{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"subscriptions/listen needs a \"notifications\" object"}}
{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"subscriptions/listen needs a \"notifications\" object"}}
{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"subscriptions/listen needs a \"notifications\" object"}}
## bare legacy modern
{"jsonrpc":"2.0","id":1,"method":"prompts/get"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a prompt"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"summarize","arguments":{"bullets":"3"},"extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'summarize'","data":{"prompt":"summarize","suggestions":[]}}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"arguments":{"bullets":"3"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a prompt"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":5,"arguments":{"bullets":"3"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a prompt"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":null,"arguments":{"bullets":"3"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a prompt"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"nope","arguments":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'nope'","data":{"prompt":"nope","suggestions":[]}}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"nope","arguments":[]}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'nope'","data":{"prompt":"nope","suggestions":[]}}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"nope","arguments":1e+308}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'nope'","data":{"prompt":"nope","suggestions":[]}}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"nope","arguments":1000000000000000000000000000000}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'nope'","data":{"prompt":"nope","suggestions":[]}}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"summarize"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'summarize'","data":{"prompt":"summarize","suggestions":[]}}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"summarize","arguments":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'summarize'","data":{"prompt":"summarize","suggestions":[]}}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"summarize","arguments":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'summarize'","data":{"prompt":"summarize","suggestions":[]}}}
{"jsonrpc":"2.0","id":1,"method":"tools/list"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/list' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"zzz","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/list' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/list' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/list' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/list' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/call' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"summarize","arguments":{"bullets":"3"},"extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/call' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"bullets":"3"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/call' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"arguments":{"bullets":"3"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/call' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":null,"arguments":{"bullets":"3"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/call' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/call' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":[]}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/call' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":1e+308}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/call' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":1000000000000000000000000000000}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/call' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"summarize"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/call' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"summarize","arguments":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/call' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"summarize","arguments":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/call' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/list"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/list' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":"zzz","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/list' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/list' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/list' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/list' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/read' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"promptdeck:///_material/nope.txt","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/read' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/read' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/read' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/read' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"@LONG@"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/read' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":""}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/read' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/templates/list"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/templates/list' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/templates/list","params":{"extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/templates/list' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://changelog","cursor":"zzz","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"cursor":"zzz"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":5,"cursor":"zzz"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":null,"cursor":"zzz"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"@LONG@","cursor":"zzz"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"","cursor":"zzz"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://nope","cursor":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://nope","cursor":[]}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://nope","cursor":1e+308}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://nope","cursor":1000000000000000000000000000000}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://changelog"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://changelog","cursor":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"uri":"skill://changelog","cursor":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/list"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/list' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"cursor":"zzz","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/list' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/list' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"cursor":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/list' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"cursor":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/list' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/get' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://nope/SKILL.md","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/get' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/get' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/get' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/get' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"@LONG@"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/get' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":""}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/get' is not offered by this server (it serves no skills)"}}
## bare legacy
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a prompt"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"name\" must be a string naming a prompt"}}
{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/list' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/list' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/call' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'tools/call' is not offered by this server (serve --tools offers it)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/list","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/list' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/list","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/list' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/read' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/read' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"promptdeck:///_material/app.log","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"@LONG@"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":""}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":"promptdeck:///_material/app.log","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server (it serves no resources)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":"@LONG@"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":""}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\"uri\" must be a URI of at most 4096 characters"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"resources/directory/read","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/directory/read' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/list","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/list' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/list","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/list' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":null}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/get' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":[]}
{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"\"params\" must be an object"}}
{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"_meta":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'skills/get' is not offered by this server (it serves no skills)"}}
{"jsonrpc":"2.0","method":"prompts/get","params":{"name":"nope"}}
(none)
## bare modern
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"promptdeck:///_material/app.log","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"@LONG@"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":""}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/subscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe"}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":"promptdeck:///_material/app.log","extra":1}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":5}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":null}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":"@LONG@"}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server"}}
{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":""}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method 'resources/unsubscribe' is not offered by this server"}}
"""  # noqa: E501  (a line of bytes on the wire is as long as it is)


@pytest.mark.parametrize(("config", "era", "request_line", "expected"), list(cases(TABLE)))
def test_an_odd_request_is_answered_as_before_the_method_table(
        wires: dict[tuple[str, str], Wire], config: str, era: str, request_line: str, expected: str) -> None:
    got = wire_for(wires, config, era).exchange(line(era, request_line), answered=bool(expected))
    assert got == expected.replace(LONG, LONG_URI).encode()
