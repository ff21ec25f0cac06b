"""One legacy MCP session: the lifecycle, and every method promptdeck answers.

A request whose ``_meta`` names a protocol version belongs to the 2026-07-28
era and is handed to ``server.modern`` (see ``modern.py``) whatever state the
session is in, so one stdio process serves clients of both eras.

Transport-neutral: ``handle`` takes a decoded message and returns the
response bytes (or a coroutine that will produce them, for prompts whose
render is async). Notifications that belong to a request (progress) go to the
``related`` callback the transport passes in; the rest (list_changed, log
messages) go to ``notify``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ..prompts.arguments import bind
from ..prompts.completion import complete
from ..prompts.content import messages_to_wire
from ..prompts.execution import run_render
from ..prompts.spec import RenderContext
from ..protocol import jsonrpc
from ..protocol.errors import InternalError, InvalidParams, InvalidRequest, McpError, MethodNotFound
from ..protocol.jsonrpc import Invalid, Notification, Request, RequestId, Response
from ..protocol.lifecycle import Lifecycle, State
from ..protocol.revisions import LATEST, Revision, negotiate

if TYPE_CHECKING:
    from ..prompts.catalog import Catalog
    from .app import PromptServer
    from .modern import Subscription

log = logging.getLogger("promptdeck.server")

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_PY_LEVEL = {"debug": 10, "info": 20, "notice": 25, "warning": 30, "error": 40, "critical": 50,
             "alert": 50, "emergency": 50}

Send = Callable[[bytes], None]
_MODERN_KEY = "io.modelcontextprotocol/protocolVersion"
Outcome = bytes | None | Coroutine[Any, Any, bytes | None]


class LegacySession:
    """State of one client that began with ``initialize`` (2024-11-05 … 2025-11-25)."""

    def __init__(self, server: PromptServer, notify: Send, *, announces: bool = True) -> None:
        self.server = server
        self.notify = notify
        #: whether anything the server says on its own can reach this client (a stateless HTTP session
        #: has no stream for it): only then is prompts.listChanged offered
        self.announces = announces
        self.lifecycle = Lifecycle()
        self.log_level: int | None = None
        self.client_info: dict[str, Any] = {}
        self.in_flight: dict[RequestId, Any] = {}
        #: the scopes of who is asking; None (stdio) sees every prompt
        self.scopes: frozenset[str] | None = None
        self.principal = "local"
        #: open 2026-07-28 subscriptions on this connection, by listen request id
        self.subscriptions: dict[RequestId, Subscription] = {}

    @property
    def catalog(self) -> Catalog:
        """The prompts this session may see: a prompt it may not see answers like an unknown one."""
        return self.server.catalog.view(self.scopes)

    @property
    def revision(self) -> Revision:
        return self.lifecycle.revision or LATEST

    # -- entry points -------------------------------------------------------------------------

    def handle_bytes(self, data: bytes, related: Send) -> Outcome | list[Outcome]:
        """Decode a frame and handle it; a batch gives a list of outcomes."""
        try:
            decoded = jsonrpc.decode(data)
        except McpError as exc:
            return jsonrpc.encode_error(None, exc)
        if isinstance(decoded, list):
            if not decoded:
                return jsonrpc.encode_error(None, InvalidRequest("an empty batch is not a request"))
            if not self.revision.batches or self.lifecycle.revision is None:
                return jsonrpc.encode_error(None, InvalidRequest(
                    f"JSON-RPC batches are only accepted in 2025-03-26 sessions, not {self.revision.version}"))
            if any(isinstance(m, Request) and m.method == "initialize" for m in decoded):
                return jsonrpc.encode_error(None, InvalidRequest("initialize must not be part of a batch"))
            return [self.handle(m, related) for m in decoded]
        return self.handle(decoded, related)

    def handle(self, msg: jsonrpc.Message, related: Send) -> Outcome:
        if isinstance(msg, Request):
            return self._request(msg, related)
        if isinstance(msg, Notification):
            self._notification(msg)
            return None
        if isinstance(msg, Invalid):
            return jsonrpc.encode_error(msg.id, msg.error)
        if isinstance(msg, Response):
            return None  # promptdeck sends no requests of its own, so no response is awaited
        raise AssertionError(msg)  # pragma: no cover

    def assume(self, revision: Revision) -> None:
        """Act as an initialized session of ``revision`` without a handshake (stateless HTTP)."""
        self.lifecycle.initialize(revision)
        self.lifecycle.fire("initialized")

    def close(self) -> None:
        for subscription in self.subscriptions.values():
            self.server.subscriptions.discard(subscription)
            # 2026-07-28 on stdio: a subscription the server tears down is ended with notifications/cancelled.
            subscription.send(subscription.cancelled())
        self.subscriptions.clear()
        self.lifecycle.fire("close")
        for task in list(self.in_flight.values()):
            task.get_loop().call_soon_threadsafe(task.cancel)
        self.server.sessions.discard(self)

    # -- requests ------------------------------------------------------------------------------

    def _request(self, req: Request, related: Send) -> Outcome:
        params = req.params
        if params is not None and "_meta" in params and isinstance(params["_meta"], dict) \
                and _MODERN_KEY in params["_meta"]:
            return self._modern(req, related)
        try:
            self.lifecycle.check_request(req.method)
            handler = _HANDLERS.get(req.method)
            if handler is None:
                raise MethodNotFound(f"method {req.method!r} is not offered by this server")
            result = handler(self, req.params or {}, req, related)
        except McpError as exc:
            return self._error(req, exc)
        except Exception as exc:
            return self._error(req, InternalError(f"{req.method}: {exc!r}"), exc)
        if isinstance(result, bytes):
            return jsonrpc.encode_raw_result(req.id, result)
        if inspect.isawaitable(result):
            return self._finish_async(req, result)
        return jsonrpc.encode_result(req.id, result)

    def _modern(self, req: Request, related: Send) -> Outcome:
        from .modern import Subscription

        endpoint = self.server.modern
        try:
            ctx = endpoint.open(req, self.principal, self.scopes)
        except McpError as exc:
            return jsonrpc.encode_error(req.id, exc)
        outcome = endpoint.handle(req, ctx, related, self.notify)
        if isinstance(outcome, Subscription):
            related(outcome.acknowledgement())  # before anything else on the subscription
            self.subscriptions[req.id] = outcome
            self.server.subscriptions.add(outcome)
            return None  # the listen request is answered only when the subscription ends
        return outcome  # type: ignore[return-value]

    async def _finish_async(self, req: Request, pending: Awaitable[Any]) -> bytes | None:
        import asyncio  # only async prompts get here; the stdio server runs without asyncio otherwise

        self.in_flight[req.id] = asyncio.current_task()
        try:
            result = await pending
        except asyncio.CancelledError:
            # notifications/cancelled: the spec asks for no response at all.
            return None
        except McpError as exc:
            return self._error(req, exc)
        except Exception as exc:
            return self._error(req, InternalError(f"{req.method}: {exc!r}"), exc)
        finally:
            self.in_flight.pop(req.id, None)
        return jsonrpc.encode_result(req.id, result)

    def _error(self, req: Request, exc: McpError, cause: BaseException | None = None) -> bytes:
        if isinstance(exc, InternalError):
            log.error("request %r (%s) failed: %s", req.id, req.method, exc.detail,
                      exc_info=cause if cause is not None and log.isEnabledFor(logging.DEBUG) else None)
        return jsonrpc.encode_error(req.id, exc)

    def _initialize(self, params: dict[str, Any], req: Request, related: Send) -> Any:
        rev = negotiate(params.get("protocolVersion"))
        info = params.get("clientInfo")
        self.client_info = info if isinstance(info, dict) else {}
        self.lifecycle.initialize(rev)
        self.server.sessions.add(self)
        capabilities: dict[str, Any] = {"prompts": {"listChanged": True} if self.announces else {}, "logging": {}}
        if rev.completions_capability:
            capabilities["completions"] = {}
        result: dict[str, Any] = {
            "protocolVersion": rev.version,
            "capabilities": capabilities,
            "serverInfo": self.server.server_info(rev),
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        return result

    def _ping(self, params: dict[str, Any], req: Request, related: Send) -> Any:
        return {}

    def _list(self, params: dict[str, Any], req: Request, related: Send) -> Any:
        return self.catalog.page(self.revision, params.get("cursor"))

    def _get(self, params: dict[str, Any], req: Request, related: Send) -> Any:
        prompt = self.catalog.require(params.get("name"))
        raw_args = params.get("arguments")
        if raw_args is not None and not isinstance(raw_args, dict):
            raise InvalidParams('"arguments" must be an object mapping names to strings')
        values = bind(prompt.arguments, raw_args, prompt.name)
        rev = self.revision
        ctx = RenderContext(prompt.name, progress_reporter(params, related, rev.progress_message))
        rendered = run_render(lambda: prompt.render(values, ctx), prompt.name, prompt.work,
                              self.server.prompt_seconds)
        if inspect.isawaitable(rendered):
            return self._await_render(rendered, prompt.description, rev)
        return get_result(rendered, prompt.description, rev)

    async def _await_render(self, pending: Awaitable[Any], description: str | None, rev: Revision) -> Any:
        return get_result(await pending, description, rev)

    def _complete(self, params: dict[str, Any], req: Request, related: Send) -> Any:
        return complete_prompt(self.server, self.catalog, params)

    def _set_level(self, params: dict[str, Any], req: Request, related: Send) -> Any:
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise InvalidParams(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        self.log_level = _PY_LEVEL[level]
        return {}

    # -- notifications -------------------------------------------------------------------------

    def _notification(self, note: Notification) -> None:
        if note.method == "notifications/initialized":
            self.lifecycle.fire("initialized")
        elif note.method == "notifications/cancelled":
            request_id = (note.params or {}).get("requestId")
            task = self.in_flight.pop(request_id, None) if isinstance(request_id, int | str) else None
            if task is not None:
                # The task may run on another thread's loop (the stdio server's async runner).
                task.get_loop().call_soon_threadsafe(task.cancel)
            subscription = self.subscriptions.pop(request_id, None) if isinstance(request_id, int | str) else None
            if subscription is not None:
                self.server.subscriptions.discard(subscription)  # the client ended its subscription
        # Anything else (progress, roots changes, unknown methods) needs no answer and is ignored.

    def log_to_client(self, level: int, name: str, data: Any) -> None:
        """Forward a log record if the client asked for this level (logging/setLevel)."""
        if self.log_level is None or level < self.log_level or self.lifecycle.state is State.CLOSED:
            return
        wire = "debug" if level < 20 else "info" if level < 30 else "warning" if level < 40 else \
            "error" if level < 50 else "critical"
        self.notify(jsonrpc.encode_notification("notifications/message",
                                                {"level": wire, "logger": name, "data": data}))


def progress_reporter(params: dict[str, Any], related: Send, with_message: bool) -> Callable[..., None] | None:
    """Sends notifications/progress for the request's ``progressToken``; None when it has none."""
    meta = params.get("_meta")
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


def complete_prompt(server: PromptServer, catalog: Catalog, params: dict[str, Any]) -> dict[str, Any]:
    """The ``completion/complete`` result, for either era."""
    ref = params.get("ref")
    argument = params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise InvalidParams('completion/complete needs "ref" and "argument" objects')
    if ref.get("type") == "ref/resource":
        raise InvalidParams("this server offers no resources to complete")
    if ref.get("type") != "ref/prompt":
        raise InvalidParams(f"unknown reference type {ref.get('type')!r}")
    prompt = catalog.require(ref.get("name"))
    context = params.get("context")
    filled = context.get("arguments") if isinstance(context, dict) else None
    hook = server.completers.get((prompt.name, argument.get("name")))  # type: ignore[arg-type]
    return {"completion": complete(prompt, argument.get("name"), argument.get("value"),
                                   filled if isinstance(filled, dict) else None, hook)}


def get_result(messages: Any, description: str | None, rev: Revision) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if description is not None:
        result["description"] = description
    result["messages"] = messages_to_wire(messages, rev)
    return result


_HANDLERS: dict[str, Callable[[LegacySession, dict[str, Any], Request, Send], Any]] = {
    "initialize": LegacySession._initialize,
    "ping": LegacySession._ping,
    "prompts/list": LegacySession._list,
    "prompts/get": LegacySession._get,
    "completion/complete": LegacySession._complete,
    "logging/setLevel": LegacySession._set_level,
}
