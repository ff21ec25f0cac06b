"""The prompt methods, written once for both eras.

``prompts/list``, ``prompts/get`` and ``completion/complete`` mean the same in
every revision; what differs is decided by the ``Revision`` they are given
(fields, content types, progress messages). Each era wraps these with what is
its own: a legacy session adds the lifecycle and negotiation (``legacy.py``),
the 2026-07-28 endpoint adds ``_meta``, ``resultType``, caching hints and
input_required (``modern.py``). A handler returns a result dict, pre-encoded
result bytes, or an awaitable of a dict, and raises ``McpError``; turning that
into a response is ``outcome.answer``'s job.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..prompts.arguments import bind
from ..prompts.completion import complete as complete_argument
from ..prompts.execution import run_render, when_ready
from ..prompts.spec import META_MODEL, Offered, Prompt, RenderContext
from ..prompts.usage import NO_ARM, Usage
from ..protocol import jsonrpc
from ..protocol.content import META_TEXT_RESOURCES, as_text, messages_to_wire
from ..protocol.errors import InvalidParams
from ..protocol.revisions import PREFIX, Revision
from .params import LOG_LEVELS as LOG_LEVELS

if TYPE_CHECKING:
    from ..prompts.catalog import Catalog
    from ..prompts.spec import Completer
    from .params import Complete

PROMPTS_LIST_CHANGED = jsonrpc.encode_notification("notifications/prompts/list_changed")

#: Where a request's related notifications (progress) go: before its response, on its stream.
Send = Callable[[bytes], None]

#: The MCP skills extension (SEP-2640), declared with ``directoryRead`` in both eras' capabilities when skills
#: are served (``methods.SKILLS_CAP``; ``prompts/skill_catalog.py`` answers its methods).
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"



class Renders(Protocol):
    """What the handlers read of the server they render for (``PromptServer`` has it)."""

    #: how long a Python prompt may run before its request is answered with an error
    prompt_seconds: float
    #: send embedded text resources and links as text blocks (``serve --text-resources``)
    text_resources: bool

    @property
    def completers(self) -> dict[tuple[str, str], Completer]: ...


class Splits(Protocol):
    """What ``chosen`` reads of the server: its sources' rollouts and its usage counter (``PromptServer`` has
    them)."""

    usage: Usage

    def rolling_out(self) -> frozenset[str]: ...

    def split(self, prompt: Offered, key: str | None) -> Offered: ...


#: A ``prompts/get`` result's ``_meta`` keys that say which version of a stored prompt was rendered
#: (``sources.store``: the file's version, its label, and the rollout that chose it).
SERVED_META = ("promptdeck.dev/version", "promptdeck.dev/label", "promptdeck.dev/rollout")
#: Where a request (any era) names its rollout key: what keeps its renders on one version of a rollout.
META_ROLLOUT_KEY = "promptdeck.dev/rollout-key"
MAX_ROLLOUT_KEY_CHARS = 256
MISSING = object()


#: Where a 2026-07-28 request's ``_meta`` names its client (a legacy session's ``initialize`` says it once).
META_CLIENT_INFO = PREFIX + "clientInfo"


def meta_client(meta: object) -> object:
    """The client a 2026-07-28 request names in its ``_meta`` (``clientInfo.name``), as given: the counter
    cleans it once, off the request's path (``usage.client_name``)."""
    info = meta.get(META_CLIENT_INFO) if type(meta) is dict else None
    return info.get("name") if type(info) is dict else None


def served_meta(prompt: Offered) -> dict[str, Any]:
    """What a result says of the version rendered: the ``SERVED_META`` its prompt carries (none from a folder).
    A rollout's version also names its model settings: the listing gives the label's, which may differ."""
    meta = prompt.meta
    if not meta:
        return {}
    served = {key: meta[key] for key in SERVED_META if key in meta}
    if SERVED_META[2] in served and META_MODEL in meta:
        served[META_MODEL] = meta[META_MODEL]
    return served


def chosen(server: Splits, prompt: Offered, meta: object, sticky: str | None, client: object) -> Offered:
    """The version of ``prompt`` to render for this request, counted for usage (``prompts.usage``) under
    ``client``: the one hook every render path calls. A rollout's version when the request's key falls in
    its share (the key: the request's ``_meta["promptdeck.dev/rollout-key"]``, else ``sticky``), counted on
    arm "rollout"; else ``prompt``, on arm "label" when the prompt is under a rollout, none otherwise."""
    if prompt.name in server.rolling_out():
        prompt = _split(server, prompt, meta, sticky)
        arm = "rollout" if SERVED_META[2] in prompt.meta else "label"
    else:
        arm = NO_ARM
    # ``Usage.count`` written out: every get comes here, and the call cost more than the count
    clients = server.usage.window.get((prompt, arm) if arm else prompt)
    n = None if clients is None else clients.get(client)
    if n is None:
        server.usage.count(prompt, arm, client)
    else:
        clients[client] = n + 1  # type: ignore[index]
    return prompt


def _split(server: Splits, prompt: Offered, meta: object, sticky: str | None) -> Offered:
    given = meta.get(META_ROLLOUT_KEY, MISSING) if isinstance(meta, dict) else MISSING
    if given is MISSING:
        return server.split(prompt, sticky)
    if not isinstance(given, str) or not 0 < len(given) <= MAX_ROLLOUT_KEY_CHARS:
        raise InvalidParams(f'_meta "{META_ROLLOUT_KEY}" must be a string of 1 to {MAX_ROLLOUT_KEY_CHARS} characters')
    return server.split(prompt, f"key:{given}")


def render(server: Renders, prompt: Offered, arguments: dict[str, Any] | None, meta: object,
           rev: Revision, related: Send) -> dict[str, Any] | Awaitable[dict[str, Any]]:
    """The ``prompts/get`` result: arguments bound and checked, the prompt rendered under its limits (``meta``:
    the request's ``_meta``, which may carry a progress token)."""
    result: dict[str, Any] | Awaitable[dict[str, Any]] = \
        when_ready(prompt, lambda: render_ready(server, prompt, arguments, meta, rev, related))
    return result


def render_ready(server: Renders, offered: Offered, arguments: dict[str, Any] | None, meta: object,
                 rev: Revision, related: Send) -> dict[str, Any] | Awaitable[dict[str, Any]]:
    """``render`` for a prompt already ready to read (``when_ready`` has run for this request)."""
    prompt = offered.parsed()
    values = bind(prompt.arguments, arguments, prompt.name)
    progress = RenderContext(prompt.name, progress_reporter(meta, related, rev.progress_message))
    rendered = run_render(lambda: prompt.render(values, progress), prompt.name, prompt.work,
                          server.prompt_seconds)
    served = served_meta(prompt)
    if not isinstance(rendered, list) and inspect.isawaitable(rendered):  # a list first: the common case
        return _rendered(rendered, prompt.description, rev, server.text_resources, served)
    return get_result(rendered, prompt.description, rev, server.text_resources, served)


def plain_render(server: Renders, offered: Offered, given: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ``prompts/get`` result of a plain prompt (``Prompt.plain``: text messages that only substitute
    names) ready to read, at any revision; None for anything else, a failure included: nothing here has an
    effect, so the general way (``render``) runs again and says what went wrong, in its words.

    No deadline is kept and no clock is read: a plain render is one pass over the template's parts joining
    literal text and ``str`` of already converted argument values (``TemplateText.render``, its size capped),
    with no Jinja, no loop over a value, no read and no composition, so it cannot run long. Scopes were applied
    in choosing ``offered``; a plain prompt reads no file, so the reading scopes have nothing to govern."""
    if offered.unprepared() is not None:
        return None
    return plain_result(offered.parsed(), given)


def plain_result(prompt: Prompt, given: dict[str, Any] | None) -> dict[str, Any] | None:
    """``plain_render`` of a prompt already parsed (the one-pass get has it in hand: no second look-up)."""
    plain = prompt.plain
    if plain is None:
        return None
    try:
        values = bind(prompt.arguments, given, prompt.name)
        messages = []
        for role, template in plain:
            text = template.render(values)
            if text.strip():  # as render_blocks: a message whose text renders blank is left out
                messages.append({"role": role, "content": {"type": "text", "text": text}})
    except Exception:
        return None
    result: dict[str, Any] = {} if prompt.description is None else {"description": prompt.description}
    result["messages"] = messages
    served = served_meta(prompt)
    if served:
        result["_meta"] = served
    return result


async def _rendered(pending: Awaitable[Any], description: str | None, rev: Revision,
                    text_resources: bool, served: dict[str, Any]) -> dict[str, Any]:
    return get_result(await pending, description, rev, text_resources, served)


def get_result(messages: Any, description: str | None, rev: Revision, text_resources: bool = False,
               served: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``prompts/get`` result of rendered ``messages``. With ``text_resources``, text resources and links
    go as text blocks, and the result's ``_meta`` says how many did; ``served``: what it says of the version
    rendered (``served_meta``)."""
    result: dict[str, Any] = {}
    if description is not None:
        result["description"] = description
    result["messages"] = messages_to_wire(messages, rev, text_resources)
    meta = dict(served) if served else {}
    if text_resources:
        sent = sum(1 for message in messages if as_text(message.content) is not message.content)
        if sent:
            meta[META_TEXT_RESOURCES] = sent
    if meta:
        result["_meta"] = meta
    return result


def complete(server: Renders, catalog: Catalog, params: Complete) -> dict[str, Any] | Awaitable[dict[str, Any]]:
    """The ``completion/complete`` result (awaitable when the argument's completer is async)."""
    ref, argument = params.ref, params.argument
    if ref.get("type") == "ref/resource":
        raise InvalidParams("this server completes prompt arguments only, not resource template values")
    if ref.get("type") != "ref/prompt":
        raise InvalidParams(f"unknown reference type {ref.get('type')!r}")
    prompt = catalog.require(ref.get("name"))
    result: dict[str, Any] | Awaitable[dict[str, Any]] = \
        when_ready(prompt, lambda: _complete(server, prompt.parsed(), argument, params.context))
    return result


def _complete(server: Renders, prompt: Prompt, argument: dict[str, Any],
              context: object) -> dict[str, Any] | Awaitable[dict[str, Any]]:
    filled = context.get("arguments") if isinstance(context, dict) else None
    hook = server.completers.get((prompt.name, argument.get("name")))  # type: ignore[arg-type]
    found = complete_argument(prompt, argument.get("name"), argument.get("value"),
                              filled if isinstance(filled, dict) else None, hook)
    if isinstance(found, dict):
        return {"completion": found}
    return _completion(found)


async def _completion(pending: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    return {"completion": await pending}


def progress_reporter(meta: object, related: Send, with_message: bool) -> Callable[..., None] | None:
    """Sends notifications/progress for the ``progressToken`` of a request's ``_meta``; None when it has none."""
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    if token is None or isinstance(token, bool) or not isinstance(token, str | int):
        return None
    last = [float("-inf")]

    def report(done: float, total: float | None, message: str | None) -> None:
        if done <= last[0]:
            return  # progress must increase; a repeat or step back is dropped
        last[0] = done
        note: dict[str, Any] = {"progressToken": token, "progress": done}
        if total is not None:
            note["total"] = total
        if message is not None and with_message:
            note["message"] = message
        related(jsonrpc.encode_notification("notifications/progress", note))

    return report
