"""The prompt methods written once for both eras (server/handlers.py): prompts/list, prompts/get and
completion/complete over a catalog, what each takes from its Revision, and progress notifications."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest

from promptdeck.prompts.arguments import make_argument
from promptdeck.prompts.catalog import Catalog
from promptdeck.prompts.spec import Completer, Prompt, RenderContext
from promptdeck.protocol.content import Audio, Message, Text
from promptdeck.protocol.errors import InternalError, InvalidParams
from promptdeck.protocol.revisions import LATEST, REVISIONS, Revision
from promptdeck.server import handlers
from promptdeck.server.params import Complete, GetPrompt, decode

R1, R2 = REVISIONS["2024-11-05"], REVISIONS["2025-03-26"]


class Server:
    """What the handlers read of a server."""

    def __init__(self, completers: dict[tuple[str, str], Completer] | None = None) -> None:
        self.prompt_seconds = 5.0
        self.text_resources = False
        self._completers = completers or {}

    @property
    def completers(self) -> dict[tuple[str, str], Completer]:
        return self._completers


def greet(values: dict[str, Any], ctx: RenderContext) -> list[Message]:
    ctx.progress(1, 3, "started")
    ctx.progress(1, 3, "again")  # not an increase: dropped
    ctx.progress(0.5, None, "backwards")  # dropped
    ctx.progress(3, 3, None)
    return [Message("user", Text(f"Hello {values['name']} ({values['tone']})"))]


async def slowly(values: dict[str, Any], ctx: RenderContext) -> list[Message]:
    await asyncio.sleep(0)
    return [Message("assistant", Text("later"))]


def sound(values: dict[str, Any], ctx: RenderContext) -> list[Message]:
    return [Message("user", Audio(b"\x00\x01", "audio/wav"))]


CATALOG = Catalog([
    Prompt("greet", greet, description="Greets", arguments=(
        make_argument("name", required=True), make_argument("tone", enum=["warm", "dry"], default="warm"))),
    Prompt("later", slowly),
    Prompt("sound", sound),
], page_size=2)


def settle(result: Any) -> dict[str, Any]:
    if isinstance(result, dict):
        return result

    async def wait() -> dict[str, Any]:
        done: dict[str, Any] = await result
        return done

    return asyncio.run(wait())


def get(params: dict[str, Any], rev: Revision = LATEST, sent: list[bytes] | None = None) -> dict[str, Any]:
    p = decode(GetPrompt, params)
    return settle(handlers.render(Server(), CATALOG.require(p.name), p.arguments, p.meta, rev,
                                  (sent if sent is not None else []).append))


# -- prompts/list -------------------------------------------------------------------------------------


def test_list_is_the_catalogs_encoded_page_for_the_cursor() -> None:
    first = json.loads(CATALOG.page(LATEST, None))
    assert [p["name"] for p in first["prompts"]] == ["greet", "later"]
    second = json.loads(CATALOG.page(LATEST, first["nextCursor"]))
    assert [p["name"] for p in second["prompts"]] == ["sound"] and "nextCursor" not in second
    with pytest.raises(InvalidParams):
        CATALOG.page(LATEST, "???")


# -- prompts/get --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("params", "words"), [
    ({"name": "nope"}, "unknown prompt 'nope'"),
    ({}, "unknown prompt|must be a string"),
    ({"name": "greet", "arguments": ["x"]}, '"arguments" must be an object'),
    ({"name": "greet", "arguments": "name=x"}, '"arguments" must be an object'),
])
def test_get_refuses_what_names_no_prompt_or_gives_no_object(params: dict[str, Any], words: str) -> None:
    with pytest.raises(InvalidParams, match=words):
        get(params)


def test_get_params_give_the_prompt_and_its_arguments() -> None:
    p = decode(GetPrompt, {"name": "greet", "arguments": {"name": "a"}})
    assert CATALOG.require(p.name).name == "greet" and p.arguments == {"name": "a"}
    assert decode(GetPrompt, {"name": "greet"}).arguments is None


def test_get_binds_arguments_with_defaults_and_gives_the_description() -> None:
    result = get({"name": "greet", "arguments": {"name": "Ada"}})
    assert result == {"description": "Greets",
                      "messages": [{"role": "user", "content": {"type": "text", "text": "Hello Ada (warm)"}}]}


def test_get_without_a_description_has_none() -> None:
    assert get({"name": "later"}) == {"messages": [{"role": "assistant",
                                                    "content": {"type": "text", "text": "later"}}]}


@pytest.mark.parametrize("arguments", [{}, {"name": "a", "tone": "loud"}, {"name": 3}, {"name": "a", "x": "1"}])
def test_get_refuses_arguments_that_do_not_bind(arguments: dict[str, Any]) -> None:
    with pytest.raises(InvalidParams):
        get({"name": "greet", "arguments": arguments})


def test_get_writes_messages_for_the_revision() -> None:
    assert get({"name": "sound"}, R2)["messages"][0]["content"]["type"] == "audio"
    # 2024-11-05 has no audio block and nothing to put in its place: the client is told of a fault
    with pytest.raises(InternalError):
        get({"name": "sound"}, R1)


# -- progress -----------------------------------------------------------------------------------------


def progress(sent: list[bytes]) -> list[dict[str, Any]]:
    notes = [json.loads(b) for b in sent]
    assert all(n["method"] == "notifications/progress" and "id" not in n for n in notes)
    return [n["params"] for n in notes]


def test_progress_goes_out_for_a_token_increasing_only() -> None:
    sent: list[bytes] = []
    get({"name": "greet", "arguments": {"name": "a"}, "_meta": {"progressToken": "t1"}}, LATEST, sent)
    assert progress(sent) == [{"progressToken": "t1", "progress": 1, "total": 3, "message": "started"},
                              {"progressToken": "t1", "progress": 3, "total": 3}]


def test_progress_has_no_message_where_the_revision_has_none() -> None:
    sent: list[bytes] = []
    get({"name": "greet", "arguments": {"name": "a"}, "_meta": {"progressToken": 7}}, R1, sent)
    assert progress(sent) == [{"progressToken": 7, "progress": 1, "total": 3},
                              {"progressToken": 7, "progress": 3, "total": 3}]


@pytest.mark.parametrize("meta", [None, {}, {"progressToken": None}, {"progressToken": True},
                                  {"progressToken": 1.5}, {"progressToken": ["t"]}, "t"])
def test_no_progress_without_a_valid_token(meta: Any) -> None:
    sent: list[bytes] = []
    params: dict[str, Any] = {"name": "greet", "arguments": {"name": "a"}}
    if meta is not None:
        params["_meta"] = meta
    get(params, LATEST, sent)
    assert sent == []
    assert handlers.progress_reporter(meta, sent.append, True) is None


def test_an_async_render_is_awaited_for_its_result() -> None:
    sent: list[bytes] = []
    result = handlers.render(Server(), CATALOG.require("later"), None, None, LATEST, sent.append)
    assert not isinstance(result, dict)
    assert settle(result)["messages"][0]["content"]["text"] == "later"


# -- completion/complete ------------------------------------------------------------------------------


def complete(params: dict[str, Any], server: Server | None = None) -> dict[str, Any]:
    return settle(handlers.complete(server or Server(), CATALOG, decode(Complete, params)))


def test_complete_suggests_for_a_prompts_argument() -> None:
    result = complete({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "tone", "value": "d"}})
    assert result == {"completion": {"values": ["dry"], "total": 1, "hasMore": False}}


@pytest.mark.parametrize(("params", "words"), [
    ({"argument": {"name": "tone", "value": ""}}, 'needs "ref" and "argument" objects'),
    ({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": "tone"}, 'needs "ref" and "argument"'),
    ({"ref": {"type": "ref/resource", "uri": "file:///x"}, "argument": {"name": "a", "value": ""}},
     "completes prompt arguments only"),
    ({"ref": {"type": "ref/tool", "name": "x"}, "argument": {"name": "a", "value": ""}},
     "unknown reference type 'ref/tool'"),
    ({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}}, "unknown prompt"),
    ({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "zz", "value": ""}}, "no argument 'zz'"),
])
def test_complete_refuses_what_it_cannot_answer(params: dict[str, Any], words: str) -> None:
    with pytest.raises(InvalidParams, match=words):
        complete(params)


def test_a_servers_completer_gets_the_context_arguments() -> None:
    seen: list[dict[str, str]] = []

    def names(value: str, filled: Mapping[str, str]) -> list[str]:
        seen.append(dict(filled))
        return ["Ada", "Alan", "Bob"]

    server = Server({("greet", "name"): names})
    params = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "A"},
              "context": {"arguments": {"tone": "dry"}}}
    assert complete(params, server)["completion"]["values"] == ["Ada", "Alan"]
    assert complete({**params, "context": {"arguments": "no"}}, server)["completion"]["total"] == 2
    assert complete({**params, "context": "no"}, server)["completion"]["total"] == 2
    assert seen == [{"tone": "dry"}, {}, {}]


def test_an_async_completer_gives_an_awaitable_completion() -> None:
    async def names(value: str, filled: Mapping[str, str]) -> list[str]:
        return ["Ada"]

    params = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": ""}}
    result = handlers.complete(Server({("greet", "name"): names}), CATALOG, decode(Complete, params))
    assert not isinstance(result, dict)
    assert settle(result) == {"completion": {"values": ["Ada"], "total": 1, "hasMore": False}}


def test_the_constants() -> None:
    assert json.loads(handlers.PROMPTS_LIST_CHANGED) == {"jsonrpc": "2.0",
                                                         "method": "notifications/prompts/list_changed"}
    assert handlers.LOG_LEVELS == ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def test_chosen_counts_the_version_label_and_rollout_arm_rendered() -> None:
    from typing import cast

    from promptdeck.prompts.spec import Offered
    from promptdeck.prompts.usage import Key, Usage

    class Served:  # hashed by identity, as a catalog's prompts are
        def __init__(self, name: str, meta: dict[str, Any]) -> None:
            self.name, self.meta = name, meta

    class Server:
        usage = Usage()

        def rolling_out(self) -> frozenset[str]:
            return frozenset({"greet"})

        def split(self, prompt: Offered, key: str | None) -> Offered:
            return rolled if key == "key:in" else prompt

    server = Server()
    stored = {"promptdeck.dev/version": 3, "promptdeck.dev/label": "production"}
    chosen = {**stored, "promptdeck.dev/version": 4, "promptdeck.dev/rollout": 7}
    greet = cast(Offered, Served("greet", stored))
    rolled = cast(Offered, Served("greet", chosen))
    assert handlers.chosen(server, greet, {"promptdeck.dev/rollout-key": "in"}, None, "app") is rolled
    assert handlers.chosen(server, greet, None, "out", "app") is greet
    for name, meta in (("other", stored), ("folder", {})):
        assert handlers.chosen(server, cast(Offered, Served(name, meta)), None, None, "app").name == name
    hour = 1_800_000_000 // 3600 * 3600
    assert server.usage.drain(now=hour) == {Key("greet", hour, 3, "production", "label", "app"): 1,
                                            Key("greet", hour, 4, "production", "rollout", "app"): 1,
                                            Key("other", hour, 3, "production", "", "app"): 1,
                                            Key("folder", hour, 0, "", "", "app"): 1}


def test_meta_client_is_the_name_as_given() -> None:
    info = {handlers.META_CLIENT_INFO: {"name": "claude-code\n", "version": "1"}}
    assert handlers.meta_client(info) == "claude-code\n"  # cleaned by the counter, off the request's path
    assert handlers.meta_client({handlers.META_CLIENT_INFO: "x"}) is None
    assert handlers.meta_client(None) is None and handlers.meta_client({}) is None
