"""What a request comes to, and the one place it becomes bytes: the server's error boundary.

Every method handler of either era is run through ``answer``. Whatever the
handler returns or raises leaves as one of three typed outcomes:

- ``Answer``: the encoded response, with the ``McpError`` it carries when it is
  an error (transports read the HTTP status from that error, never from bytes);
- ``Pending``: a render still running, awaited by the transport for its
  ``Answer`` (None once the request was cancelled);
- a ``Subscription`` (2026-07-28 ``subscriptions/listen``), which the transport
  keeps open.

An ``InternalError`` is logged here with its details, whatever the era or
transport; the client gets only the generic message. ``join`` assembles a
batch's outcomes into one answer for every transport.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Generator
from typing import TYPE_CHECKING, Any

from ..protocol import jsonrpc
from ..protocol.errors import InternalError, McpError
from ..protocol.jsonrpc import Request, RequestId

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger("promptdeck.server")


class Answer:
    """A response ready for the wire: the request's id, the bytes, and the error when it is one."""

    __slots__ = ("id", "data", "error")

    def __init__(self, id: RequestId | None, data: bytes, error: McpError | None = None) -> None:
        self.id = id
        self.data = data
        self.error = error

    @property
    def status(self) -> int:
        """The HTTP status of a 2026-07-28 response carrying this answer."""
        return 200 if self.error is None else self.error.http_status


class Pending:
    """A render still running. Await it for its ``Answer``, or None once its request is cancelled."""

    __slots__ = ("id", "_work", "_in_flight")

    def __init__(self, req: Request, pending: Awaitable[Any]) -> None:
        self.id = req.id
        self._in_flight: dict[RequestId, asyncio.Task[Any]] | None = None
        self._work = self._settle(req, pending)

    def __await__(self) -> Generator[Any, None, Answer | None]:
        return self._work.__await__()

    def track(self, in_flight: dict[RequestId, asyncio.Task[Any]]) -> None:
        """While it runs, keep the task running it in ``in_flight`` (where notifications/cancelled finds it)."""
        self._in_flight = in_flight

    async def _settle(self, req: Request, pending: Awaitable[Any]) -> Answer | None:
        import asyncio  # only async renders get here; the stdio server runs without asyncio otherwise

        if self._in_flight is not None:
            task = asyncio.current_task()
            if task is not None:
                self._in_flight[req.id] = task
        try:
            result = await pending
        except asyncio.CancelledError:
            return None  # cancelled: the spec asks for no response at all
        except McpError as exc:
            return failed(req.id, req.method, exc)
        except Exception as exc:
            return failed(req.id, req.method, InternalError(f"{req.method}: {exc!r}"), exc)
        finally:
            if self._in_flight is not None:
                self._in_flight.pop(req.id, None)
        if type(result) is bytes:  # a page encoded once, made off the event loop
            return Answer(req.id, jsonrpc.encode_raw_result(req.id, result))
        return Answer(req.id, jsonrpc.encode_result(req.id, result))

    def discard(self) -> None:
        """Drop a render nobody will await, without running it (a batch past its size limit).

        The outer coroutine was given further unstarted coroutines to await (the render's own);
        closing only the outer one would leave those to warn "never awaited".
        """
        _close(self._work)


def answer(req: Request, handler: Callable[..., Any], *args: Any) -> Any:
    """Run ``handler(*args)`` for ``req``: an ``Answer``, a ``Pending``, or what else the handler returns
    as is (a ``Subscription``). A handler returns a result dict, pre-encoded result bytes (a catalog
    page), or an awaitable of either."""
    try:
        result = handler(*args)
    except McpError as exc:
        return failed(req.id, req.method, exc)
    except Exception as exc:
        return failed(req.id, req.method, InternalError(f"{req.method}: {exc!r}"), exc)
    kind = type(result)
    if kind is dict:
        return Answer(req.id, jsonrpc.encode_result(req.id, result))
    if kind is bytes:
        return Answer(req.id, jsonrpc.encode_raw_result(req.id, result))
    if inspect.isawaitable(result):
        return Pending(req, result)
    return result


def failed(request_id: RequestId | None, method: str, exc: McpError,
           cause: BaseException | None = None) -> Answer:
    """The error answer for a request; an ``InternalError``'s details go to the log, never the client."""
    if isinstance(exc, InternalError):
        log.error("request %r (%s) failed: %s", request_id, method, exc.detail,
                  exc_info=cause if cause is not None and log.isEnabledFor(logging.DEBUG) else None)
    return Answer(request_id, jsonrpc.encode_error(request_id, exc), exc)


def _close(coroutine: Any) -> None:
    if inspect.iscoroutine(coroutine) and inspect.getcoroutinestate(coroutine) == inspect.CORO_CREATED:
        frame = coroutine.cr_frame
        inner = [value for value in frame.f_locals.values() if inspect.iscoroutine(value)] if frame else []
        coroutine.close()
        for nested in inner:
            _close(nested)


Outcome = Answer | Pending | None
#: What a transport waits for or sends at once: one answer, its coming, or nothing to answer.
Response = Answer | Awaitable[Answer | None] | None


def assemble(outcome: Outcome | list[Outcome], limit: int = jsonrpc.MAX_BATCH_RESPONSE_BYTES) -> Response:
    """One response from what a session gave for a frame: a single outcome as it is, a batch ``join``-ed.
    Every transport answers through this."""
    return join(outcome, limit) if isinstance(outcome, list) else outcome


def join(outcomes: list[Outcome], limit: int = jsonrpc.MAX_BATCH_RESPONSE_BYTES) -> Response:
    """A batch's outcomes, one per message, as one answer: a JSON array of about ``limit`` bytes at most.

    Once the array is full, each request left gets an error naming the limit (so the client knows which
    ids to send again), and renders still pending are dropped unrun. Without pending renders the answer
    is made at once; with them, the awaitable gives it. None when nothing in the batch is answered.
    """
    if any(type(item) is Pending for item in outcomes):
        return _join_pending(outcomes, limit)
    answers = jsonrpc.BatchAnswers(limit)
    for item in outcomes:
        if item is not None:
            answers.add(item.data, item.id)  # type: ignore[union-attr]
    return _batch(answers)


async def _join_pending(outcomes: list[Outcome], limit: int) -> Answer | None:
    answers = jsonrpc.BatchAnswers(limit)
    for item in outcomes:
        if item is None:
            continue
        if answers.full:
            if isinstance(item, Pending):
                item.discard()
            answers.refuse(item.id)
            continue
        settled = await item if isinstance(item, Pending) else item
        if settled is not None:
            answers.add(settled.data, settled.id)
    return _batch(answers)


def _batch(answers: jsonrpc.BatchAnswers) -> Answer | None:
    data = answers.encode()
    return None if data is None else Answer(None, data)
