"""The web page's window on the versioned store: history, diffs, checks, and (with the write scope) new
versions, label moves and rollbacks of the label the server serves.

Served on ``/api/store`` by ``serve --http`` when it serves a store label and the page is on. Requests
pass the same Host/Origin checks, authentication and rate limit as ``/mcp`` (``StreamableHttpApp`` does
them before a request reaches this module), so the page has exactly its principal's rights:

- reading needs nothing more than seeing the prompt: a prompt that scopes hide from the principal is
  answered exactly as an unknown one (404);
- writing needs the write scope (``store:write`` unless ``--write-scope`` says otherwise). A server
  without authentication has anonymous principals, which hold no scope: it serves the store read-only.

A POST must be ``application/json``, which a cross-site form cannot send without a preflight this
server never grants. Every store call runs in a thread under a small quota per principal and in total,
on a connection of its own, and every answer is JSON: ``{"error": …}`` beside the HTTP status that fits.
docs/store-api.md has the whole contract.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from ..protocol.errors import PromptFileError
from ..protocol.jsonrpc import encode_json
from ..sources.files import MAX_PROMPT_FILE_BYTES, build_prompt, stage_file
from ..sources.store import Store, StoreConflict, StoreError, StoreMissing, is_label, listing_of
from ..sources.stored import META_LABEL, StoreSource
from ..sources.versions import TooLargeToDiff, argument_schema, schema_text, side_by_side, text_of
from ._asgi import (
    BodyTooLarge,
    BodyTooSlow,
    Disconnected,
    Headers,
    Receive,
    Scope,
    Send,
    headers_of,
    media_type,
    read_body,
)
from ._asgi import respond as _respond
from .guard import DEFAULT_WRITE_SCOPE, Principal, missing_scopes
from .limits import Quota

if TYPE_CHECKING:
    from ..prompts.spec import Prompt
    from .app import PromptServer

log = logging.getLogger("promptdeck.store")
T = TypeVar("T")

PREFIX = "/api/store"
#: A request body: a prompt file's largest text, JSON-escaped (a quote or backslash takes two bytes).
MAX_BODY_BYTES = 2 * MAX_PROMPT_FILE_BYTES + 64 * 1024
MAX_MESSAGE_CHARS = 2000
_GETS = {"": "GET", "/history": "GET", "/version": "GET", "/diff": "GET"}
_POSTS = {"/check": "POST", "/publish": "POST", "/label": "POST", "/rollback": "POST"}


class _Edit(msgspec.Struct, forbid_unknown_fields=True):
    prompt: str
    text: str
    message: str = ""
    label: str | None = None
    #: the version the edit started from: a newer one in the store refuses the save (409)
    base: int | None = None


class _Point(msgspec.Struct, forbid_unknown_fields=True):
    prompt: str
    version: int
    label: str


class _Back(msgspec.Struct, forbid_unknown_fields=True):
    label: str


class ApiError(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.extra = extra


class StoreApi:
    """``/api/store`` for the label ``source`` serves (see the module docstring)."""

    def __init__(self, server: PromptServer, source: StoreSource, write_scope: str = DEFAULT_WRITE_SCOPE,
                 total: int = 4, per_principal: int = 2) -> None:
        self.server = server
        self.source = source
        self.write_scope = write_scope
        #: store calls running: each holds a thread and a store connection
        self.calls = Quota("store requests", total, per_principal)

    @staticmethod
    def serves(path: str) -> bool:
        return path == PREFIX or path.startswith(PREFIX + "/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        route, method = scope["path"][len(PREFIX):], scope["method"]
        allowed = _GETS.get(route) or _POSTS.get(route)
        try:
            if allowed is None:
                raise ApiError(404, f"no such store call: {scope['path']}")
            if method != allowed:
                await _send(send, 405, {"error": f"{scope['path']} takes {allowed}"}, [(b"allow", allowed.encode())])
                return
            if method == "POST":
                body = await self._body(scope, receive)
                answer = await self._post(route, body, principal)
            else:
                answer = await self._get(route, _query(scope), principal)
        except ApiError as exc:
            await _send(send, exc.status, {"error": str(exc), **exc.extra})
            return
        except Disconnected:
            return
        await _send(send, 200, answer)

    # -- reading ---------------------------------------------------------------------------------

    async def _get(self, route: str, query: dict[str, str], principal: Principal) -> dict[str, Any]:
        if route == "":
            return await self._run(principal, self._overview, principal)
        prompt = self._visible(principal, _field(query, "prompt"))
        if route == "/history":
            return await self._run(principal, self._history, prompt)
        if route == "/version":
            return await self._run(principal, self._version, prompt, _number(query, "version"))
        return await self._run(principal, self._diff, prompt, _number(query, "from"), _number(query, "to"))

    def _overview(self, store: Store, principal: Principal) -> dict[str, Any]:
        labels = [{**_move(now), "name": now.label, "previous": _move(before) if before else None}
                  for now, before in store.label_moves()]
        return {"label": self.source.label, "write": self._may_write(principal), "writeScope": self.write_scope,
                "labels": labels}

    def _history(self, store: Store, prompt: Prompt) -> dict[str, Any]:
        path = prompt.source
        labels = store.labels_at(path)
        versions = [{"version": v.version, "publish": v.publish, "author": v.author, "message": v.message,
                     "created": v.created, "deleted": v.digest is None, "labels": labels.get(v.version, [])}
                    for v in store.history(path)]
        return {"prompt": prompt.name, "path": path, "versions": versions}

    def _version(self, store: Store, prompt: Prompt, version: int) -> dict[str, Any]:
        found, data = store.file_version(prompt.source, version, prompt.name)
        return {"prompt": prompt.name, "path": prompt.source, "version": found,
                "text": None if data is None else text_of(data),
                "arguments": argument_schema(prompt.source, data, self.source.library)}

    def _diff(self, store: Store, prompt: Prompt, first: int, second: int) -> dict[str, Any]:
        path = prompt.source
        _, old = store.file_version(path, first, prompt.name)
        _, new = store.file_version(path, second, prompt.name)
        library = self.source.library
        old_args, new_args = (schema_text(argument_schema(path, data, library)) for data in (old, new))
        try:
            rows = side_by_side(text_of(old), text_of(new))
            argument_rows = side_by_side(old_args, new_args)
        except TooLargeToDiff as exc:
            raise ApiError(413, str(exc)) from None
        return {"prompt": prompt.name, "path": path, "from": first, "to": second, "source": rows,
                "arguments": argument_rows, "same": old == new}

    # -- checking and writing --------------------------------------------------------------------

    async def _post(self, route: str, body: bytes, principal: Principal) -> dict[str, Any]:
        if route == "/check":
            edit = _decode(body, _Edit)
            prompt = self._visible(principal, edit.prompt)
            problems = await self._run(principal, self._problems, prompt, _text(edit))
            return {"problems": problems}
        if not self._may_write(principal):
            raise ApiError(403, f"writing to the store needs the scope {self.write_scope}", scope=self.write_scope)
        if route == "/publish":
            edit = _decode(body, _Edit)
            prompt = self._visible(principal, edit.prompt)
            label = _label(edit.label) if edit.label is not None else None
            if len(edit.message) > MAX_MESSAGE_CHARS:
                raise ApiError(400, f"message: at most {MAX_MESSAGE_CHARS} characters")
            return await self._run(principal, self._publish, prompt, _text(edit), edit, label, principal.name)
        if route == "/label":
            point = _decode(body, _Point)
            prompt = self._visible(principal, point.prompt)
            return await self._run(principal, self._point, prompt, point.version, _label(point.label),
                                   principal.name)
        back = _decode(body, _Back)
        return await self._run(principal, self._rollback, _label(back.label), principal.name)

    def _problems(self, store: Store, prompt: Prompt, data: bytes) -> list[dict[str, Any]]:
        return _shown(self._check(store, prompt, data)[1])

    def _check(self, store: Store, prompt: Prompt, data: bytes) -> tuple[Prompt | None, list[PromptFileError]]:
        """What ``check`` finds in ``data`` as ``prompt``'s file in the served label: the file's own problems
        (its material read from the label), and its name already taken by another of the label's prompts."""
        library = self.source.library
        if library is None:
            raise ApiError(503, "the label is not loaded yet; try again")
        path = prompt.source
        parsed = build_prompt(library, path, stage_file(path, data), compile_now=True)
        if parsed.prompt is None or parsed.prompt.name == prompt.name:
            return parsed.prompt, parsed.errors
        position = store.require_position(self.source.label)
        for other in store.listed(position, name=parsed.prompt.name):
            if other.path != path:
                clash = PromptFileError(path, f"prompt name {parsed.prompt.name!r} is already used by {other.path}")
                return None, [clash]
        return parsed.prompt, parsed.errors

    def _publish(self, store: Store, prompt: Prompt, data: bytes, edit: _Edit, label: str | None,
                 author: str) -> dict[str, Any]:
        checked, problems = self._check(store, prompt, data)
        if problems:
            raise ApiError(422, f"nothing saved: {len(problems)} problem{'s' * (len(problems) != 1)} in "
                                f"{prompt.source}", problems=_shown(problems))
        listed = listing_of(checked) if checked is not None else None
        version, publish = store.publish_file(prompt.source, data, listed, author=author, message=edit.message,
                                              base=edit.base, label=label)
        log.info("%s saved %s version %d%s", author, prompt.source, version, f" (label {label})" if label else "")
        return {"prompt": prompt.name, "path": prompt.source, "version": version, "publish": publish,
                "changed": publish is not None}

    def _point(self, store: Store, prompt: Prompt, version: int, label: str, author: str) -> dict[str, Any]:
        found = store.label(prompt.source, version, label, author=author)
        log.info("%s pointed label %s at %s version %d", author, label, prompt.source, found)
        return {"label": label, "prompt": prompt.name, "version": found}

    def _rollback(self, store: Store, label: str, author: str) -> dict[str, Any]:
        before = store.rollback(label, author=author)
        log.info("%s rolled label %s back to position %d", author, label, before.id)
        return {"label": label, "position": before.id, "reason": before.reason}

    # -- shared ----------------------------------------------------------------------------------

    def _may_write(self, principal: Principal) -> bool:
        # Anonymous principals (no authentication) hold no scope, so they never write. ``None`` (trusted with
        # everything) is the stdio client's, which never reaches HTTP.
        return principal.scopes is not None and not missing_scopes(principal.scopes, (self.write_scope,))

    def _visible(self, principal: Principal, name: str) -> Prompt:
        """The served prompt ``name`` from this label, if the principal may see it; else 404, the same answer
        for a prompt hidden by scopes as for one that does not exist."""
        prompt = self.server.catalog.view(principal.scopes).get(name)
        if prompt is None or prompt.meta.get(META_LABEL) != self.source.label:
            raise ApiError(404, f"no prompt {name!r} in label {self.source.label}")
        return prompt

    async def _run(self, principal: Principal, call: Callable[..., T], *args: Any) -> T:
        """``call(store, *args)`` in a thread, on a connection of its own, within the quota."""
        refusal = self.calls.refusal(principal.name)
        if refusal is not None:
            raise ApiError(refusal.status, refusal.message)

        def opened() -> T:
            with Store(self.source.url) as store:
                return call(store, *args)

        with self.calls.hold(principal.name):
            try:
                return await asyncio.to_thread(opened)
            except StoreMissing as exc:
                raise ApiError(404, str(exc)) from None
            except StoreConflict as exc:
                raise ApiError(409, str(exc)) from None
            except StoreError as exc:
                # Readers learn only that it failed: the details (which host, which driver error) are the
                # operator's, in the server log, with the URL's secrets masked by ``Store``.
                log.error("store call failed: %s", exc)
                raise ApiError(503, "store unavailable") from None

    async def _body(self, scope: Scope, receive: Receive) -> bytes:
        if media_type(headers_of(scope).get(b"content-type")) != b"application/json":
            raise ApiError(415, "send the body as application/json")
        try:
            return await read_body(receive, MAX_BODY_BYTES, headers_of(scope).get(b"content-length"))
        except BodyTooLarge:
            raise ApiError(413, f"the body is larger than {MAX_BODY_BYTES} bytes") from None
        except BodyTooSlow:
            raise ApiError(408, "the body did not arrive in time") from None


def _query(scope: Scope) -> dict[str, str]:
    from urllib.parse import parse_qsl

    try:
        pairs = parse_qsl(scope.get("query_string", b"").decode("utf-8"), keep_blank_values=True,
                          strict_parsing=False, max_num_fields=8)
    except (UnicodeDecodeError, ValueError):
        raise ApiError(400, "the query string is not valid") from None
    return dict(pairs)


def _field(query: dict[str, str], name: str) -> str:
    value = query.get(name)
    if not value:
        raise ApiError(400, f"the query needs {name}=…")
    return value


def _number(query: dict[str, str], name: str) -> int:
    value = _field(query, name)
    if not value.isdigit() or len(value) > 12:
        raise ApiError(400, f"{name} must be a version number, not {value[:40]!r}")
    return int(value)


def _decode(body: bytes, kind: type[T]) -> T:
    try:
        return msgspec.json.decode(body, type=kind)
    except msgspec.ValidationError as exc:
        raise ApiError(400, f"the body is not what this call takes: {exc}") from None
    except msgspec.DecodeError as exc:
        raise ApiError(400, f"the body is not JSON: {exc}") from None


def _text(edit: _Edit) -> bytes:
    data = edit.text.encode("utf-8")  # msgspec refuses a lone surrogate (\ud800) as not JSON
    if len(data) > MAX_PROMPT_FILE_BYTES:
        raise ApiError(413, f"text: a prompt file is at most {MAX_PROMPT_FILE_BYTES} bytes")
    return data


def _label(value: str) -> str:
    if not is_label(value):
        raise ApiError(400, f"label {value[:80]!r} is not valid: use 1-64 letters, digits, '_', '-' and '.'")
    return value


def _shown(problems: list[PromptFileError]) -> list[dict[str, Any]]:
    """Problems as the API gives them: the line in the text sent (None: the whole file) and the reason."""
    return [{"line": problem.line, "message": problem.reason} for problem in problems]


def _move(move: Any) -> dict[str, Any]:
    return {"position": move.position, "reason": move.reason, "author": move.author, "created": move.created}


async def _send(send: Send, status: int, body: dict[str, Any], headers: Headers | None = None) -> None:
    # The answers carry prompt text: never cached by a shared cache, never sniffed as something else.
    extra = [(b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"), *(headers or ())]
    await _respond(send, status, encode_json(body), headers=extra)
