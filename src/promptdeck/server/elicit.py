"""Asking a legacy session's client for a prompt's missing arguments: ``elicitation/create`` (2025-06-18 on).

A session whose client declared form elicitation (``Revision.elicits_forms``) and sends a ``prompts/get``, or
a ``tools/call`` of a prompt's tool, that leaves out required arguments is not answered -32602 at once: the
server sends the client the form the 2026-07-28 era answers ``input_required`` with (``prompts.forms``), on
the request's own stream, and waits for its answer. Accepted, the form's values join the arguments given and
are bound and checked as any others are, and the prompt renders. Declined, cancelled, refused with an error,
malformed, or not answered in time, the request gets the -32602 a client that is not asked gets. A request
whose given arguments are wrong in another way is answered as it would be unasked, without a form.

``Questions`` holds what one session has asked and not yet heard back, by the id of its request: at most
``MAX_QUESTIONS`` at once, each for at most the server's ``elicit_seconds``. An answer with an id that is not
waiting (never sent, answered already, given up) is ignored. Whatever ends the wait (an answer, the time
limit, the client's ``notifications/cancelled`` for its own request, the session closing) removes its entry;
the server tells the client with ``notifications/cancelled`` when it stops waiting without an answer.

Loaded when a session first asks: a session that never does never imports it, nor asyncio on stdio.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..prompts.arguments import bind
from ..prompts.execution import when_ready
from ..prompts.forms import answered, form, missing, unanswered
from ..protocol import jsonrpc
from ..protocol.errors import InvalidParams
from . import handlers

if TYPE_CHECKING:
    from ..prompts.arguments import Argument
    from ..prompts.catalog import Catalog
    from ..prompts.spec import Offered, Prompt
    from ..protocol.jsonrpc import RequestId, Response
    from ..protocol.revisions import Revision
    from .handlers import Renders, Send
    from .tools import Call

log = logging.getLogger("promptdeck.server")

#: How many questions one session may have waiting for the client's answers at once.
MAX_QUESTIONS = 8


class Unanswered(Exception):
    """A question that got no answer: the client refused it with an error, let the time run out, or left."""


class Questions:
    """The requests one session sent its client and awaits (see the module docstring).

    ``ask`` runs on an event loop (on stdio, the async runner's); ``answer`` and ``close`` may come from
    another thread (stdio reads its input on the main thread), so they hand each result to the loop.
    """

    def __init__(self, seconds: float, limit: int = MAX_QUESTIONS) -> None:
        self.seconds = seconds
        self.limit = limit
        self._waiting: dict[RequestId, asyncio.Future[Response]] = {}
        self._sent = 0
        self._closed: str | None = None

    def __len__(self) -> int:
        return len(self._waiting)

    async def ask(self, method: str, params: dict[str, Any], send: Send) -> Any:
        """Send the client a ``method`` request on ``send`` and return its result; ``Unanswered`` when none
        comes. Cancelled while it waits, the client is told (``notifications/cancelled``) and it is re-raised."""
        if self._closed is not None:
            raise Unanswered(self._closed)
        if len(self._waiting) >= self.limit:
            raise Unanswered(f"{self.limit} questions already wait for this client's answers")
        self._sent += 1
        # Ids of their own: the client's request ids run in the other direction, and a log reads more easily
        # when "cancelled 4" cannot be taken for the client's request 4.
        request_id = f"ask-{self._sent}"
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        try:
            send(jsonrpc.encode_request(request_id, method, params))
            async with asyncio.timeout(self.seconds):
                response = await future
        except TimeoutError:
            _cancel(request_id, send, "no answer in time")
            raise Unanswered(f"no answer came within {self.seconds:g} s") from None
        except asyncio.CancelledError:
            if self._closed is None:  # the client gave its own request up: its form is not wanted either
                _cancel(request_id, send, "the request it was asked for was cancelled")
            raise
        finally:
            self._waiting.pop(request_id, None)
        if response.error is not None:
            raise Unanswered(f"the client answered with an error: {str(response.error.get('message'))[:200]}")
        return response.result

    def answer(self, response: Response) -> bool:
        """Hand a response from the client to the question it answers; False (and ignored) when no question
        with its id waits: never sent, answered already, or given up."""
        future = self._waiting.pop(response.id, None) if response.id is not None else None
        if future is None:
            log.debug("a response to %r, which no question waits for, is ignored", response.id)
            return False
        future.get_loop().call_soon_threadsafe(_settle, future, response)
        return True

    def close(self, reason: str) -> None:
        """Nothing more will be answered (the client left): every question waiting ends now with ``reason``."""
        self._closed = reason
        for request_id, future in list(self._waiting.items()):
            self._waiting.pop(request_id, None)
            future.get_loop().call_soon_threadsafe(_settle, future, Unanswered(reason))


def _settle(future: asyncio.Future[Response], outcome: Response | Exception) -> None:
    if future.done():
        return  # its wait ended already (the time limit, a cancellation)
    if isinstance(outcome, Exception):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


def _cancel(request_id: RequestId, send: Send, reason: str) -> None:
    send(jsonrpc.encode_notification("notifications/cancelled", {"requestId": request_id, "reason": reason}))


# -- asking for a prompt's arguments -------------------------------------------------------------


def to_ask(prompt: Prompt, given: dict[str, Any]) -> list[Argument]:
    """The arguments to ask for: those missing, when nothing else is wrong with what was given (else none:
    the request fails as it would unasked, without troubling anyone with a form)."""
    asked = missing(prompt.arguments, given)
    if asked:
        try:
            bind(prompt.arguments, given, prompt.name)
        except InvalidParams as exc:
            if isinstance(exc.data, dict) and "missing" in exc.data:
                return asked
    return []


async def fill(questions: Questions, prompt: str, asked: list[Argument], rev: Revision,
               ask: Send) -> dict[str, str]:
    """The values of ``asked``, from a form the client fills in, as the strings ``arguments`` would carry;
    ``InvalidParams`` naming them when the client gives none, and naming the field its answer gets wrong."""
    try:
        answer = await questions.ask("elicitation/create", form(prompt, asked, modes=rev.elicitation_modes), ask)
    except Unanswered as exc:
        raise unanswered(prompt, asked, f"asked for with a form: {exc}") from None
    return answered(answer, prompt, asked)


def get(server: Renders, questions: Questions, offered: Offered, given: dict[str, Any] | None,
        meta: object, rev: Revision, related: Send, ask: Send) -> Any:
    """``prompts/get`` in a session that may ask: ``handlers.render``, once the missing arguments are in."""

    def ready() -> Any:
        prompt = offered.parsed()
        arguments = given or {}
        asked = to_ask(prompt, arguments)
        if not asked:
            return handlers.render_ready(server, prompt, given, meta, rev, related)
        return _asked_get(server, questions, prompt, arguments, asked, meta, rev, related, ask)

    return when_ready(offered, ready)


async def _asked_get(server: Renders, questions: Questions, prompt: Prompt, given: dict[str, Any],
                     asked: list[Argument], meta: object, rev: Revision, related: Send,
                     ask: Send) -> dict[str, Any]:
    arguments = {**given, **await fill(questions, prompt.name, asked, rev, ask)}
    return await _settled(handlers.render_ready(server, prompt, arguments, meta, rev, related))


def call(server: Renders, questions: Questions, catalog: Catalog, call: Call, meta: object,
         rev: Revision, related: Send, ask: Send) -> Any:
    """``tools/call`` of a prompt's tool in a session that may ask: ``tools.run``, once the missing arguments are
    in. A form declined or not answered is a -32602 error, as in the 2026-07-28 era; what the values then get
    wrong is the call's ``isError`` result, as for values the model sent."""
    from . import tools

    prompt = call.prompt
    if prompt is None:  # the list tool takes no prompt's arguments
        return tools.run(server, catalog, call, meta, rev, related)

    def ready() -> Any:
        asked = to_ask(prompt.parsed(), call.given)
        if not asked:
            return tools.run(server, catalog, call, meta, rev, related)
        return _asked_call(server, questions, catalog, call, prompt.parsed(), asked, meta, rev, related, ask)

    return when_ready(prompt, ready)


async def _asked_call(server: Renders, questions: Questions, catalog: Catalog, call: Call, prompt: Prompt,
                      asked: list[Argument], meta: object, rev: Revision, related: Send,
                      ask: Send) -> dict[str, Any]:
    from . import tools

    filled = replace(call, given={**call.given, **await fill(questions, prompt.name, asked, rev, ask)})
    return await _settled(tools.run(server, catalog, filled, meta, rev, related))


async def _settled(result: Any) -> dict[str, Any]:
    settled: dict[str, Any] = await result if inspect.isawaitable(result) else result
    return settled
