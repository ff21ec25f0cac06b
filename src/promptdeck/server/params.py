"""Each method's params as a typed struct, decoded before its handler runs (``methods.Method.prepare``).

A request's ``params`` object is converted to its method's struct by msgspec. When a field is missing or of the
wrong type, the request is answered with one ``InvalidParams`` (-32602) naming that field, the same in every
era: the first such field in the order the struct declares them, with the message its ``REFUSALS`` entry
gives (the wording the handlers gave before params were typed: a cursor is "invalid cursor ...", a resource
URI "Resource not found: ..."). Checks of meaning (an unknown prompt, a cursor we did not issue) stay in the
handlers; here is only the shape. A request that names something unknown is refused for that first, whatever
else is wrong, as the handlers always answered: ``methods.Method.prepare`` looks it up (``Method.find``) before
it answers a wrong field.

Fields that the protocol leaves open, and that a handler has always read leniently, stay ``Any``: ``_meta``
(a legacy request's may be anything, and only its keys that are read are checked where they are read), and
what ``initialize`` and the 2026-07-28 retry fields carry (``negotiate``, ``Revision.elicits_forms`` and
``RequestStates.redeem`` check those). Unknown fields are ignored, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal, TypeVar, get_args

import msgspec

from ..prompts.catalog import decode_cursor
from ..protocol.content import MAX_URI_CHARS
from ..protocol.errors import InvalidParams, McpError

#: What a field's refusal is made of: the value it carried (None when it was missing).
Refusal = Callable[[object], McpError]
Level = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
#: The levels of logging/setLevel and of the 2026-07-28 ``_meta`` log level, least severe first.
LOG_LEVELS: tuple[str, ...] = get_args(Level)


def _cursor(value: object) -> McpError:
    try:
        decode_cursor(value)  # its one message for any cursor we did not issue, the wrong type included
    except McpError as exc:
        return exc
    raise AssertionError(value)  # pragma: no cover - only a value that failed to decode gets here


# The refusals of a resource's or a skill's URI are their catalogs' own words, imported with the first one:
# the resource and skill modules stay off the stdio server's start-up path (tests/test_api.py pins it).
def _not_found(value: object) -> McpError:
    from ..prompts.resources import not_found

    return not_found(value)


def _not_a_skill(value: object) -> McpError:
    from ..prompts.skill_catalog import not_a_skill

    return not_a_skill(value)


def _not_a_directory(value: object) -> McpError:
    from ..prompts.skill_catalog import not_a_directory

    return not_a_directory(value)


def _too_long_uri(value: object) -> McpError:
    return InvalidParams(f'"uri" must be a URI of at most {MAX_URI_CHARS} characters')


def _says(message: str, **options: Any) -> Refusal:
    return lambda _value: InvalidParams(message, **options)


class Params(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What every request may carry: ``_meta`` (the progress token, the rollout key, the 2026 fields)."""

    meta: Any = msgspec.field(default=None, name="_meta")

    #: the refusal of each field by name; a field not listed gets ``wrong_field``'s
    REFUSALS: ClassVar[dict[str, Refusal]] = {}


class Empty(Params, frozen=True, kw_only=True, gc=False):
    """A method that reads nothing of its params (``ping``, ``server/discover``, the templates list)."""


class Page(Params, frozen=True, kw_only=True, gc=False):
    cursor: str | None = None

    REFUSALS: ClassVar[dict[str, Refusal]] = {"cursor": _cursor}


class Initialize(Params, frozen=True, kw_only=True, gc=False):
    protocol_version: Any = msgspec.field(default=None, name="protocolVersion")
    capabilities: Any = None
    client_info: Any = msgspec.field(default=None, name="clientInfo")


class Asking(Params, frozen=True, kw_only=True, gc=False):
    """What a 2026-07-28 retry carries after input_required (a legacy session's are ignored)."""

    request_state: Any = msgspec.field(default=None, name="requestState")
    input_responses: Any = msgspec.field(default=None, name="inputResponses")


class GetPrompt(Asking, frozen=True, kw_only=True, gc=False):
    name: str
    arguments: dict[str, Any] | None = None

    REFUSALS: ClassVar[dict[str, Refusal]] = {
        "name": _says('"name" must be a string naming a prompt'),
        "arguments": _says('"arguments" must be an object mapping names to strings'),
    }


class CallTool(Asking, frozen=True, kw_only=True, gc=False):
    name: str
    arguments: dict[str, Any] | None = None

    REFUSALS: ClassVar[dict[str, Refusal]] = {
        "name": _says('"name" must be a string naming a tool'),
        "arguments": _says('"arguments" must be an object'),
    }


_COMPLETE = _says('completion/complete needs "ref" and "argument" objects')


class Complete(Params, frozen=True, kw_only=True, gc=False):
    ref: dict[str, Any]
    argument: dict[str, Any]
    #: the arguments already filled in (``arguments``); anything but an object is read as none
    context: Any = None

    REFUSALS: ClassVar[dict[str, Refusal]] = {"ref": _COMPLETE, "argument": _COMPLETE}


class ReadResource(Params, frozen=True, kw_only=True, gc=False):
    uri: str

    REFUSALS: ClassVar[dict[str, Refusal]] = {"uri": _not_found}


class Subscribe(Params, frozen=True, kw_only=True, gc=False):
    #: a URI that could be served: not empty, and no longer than any looked up
    uri: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_URI_CHARS)]

    REFUSALS: ClassVar[dict[str, Refusal]] = {
        "uri": _too_long_uri,
    }


class GetSkill(Params, frozen=True, kw_only=True, gc=False):
    uri: str

    REFUSALS: ClassVar[dict[str, Refusal]] = {"uri": _not_a_skill}


class ReadDirectory(Params, frozen=True, kw_only=True, gc=False):
    uri: str
    cursor: str | None = None

    REFUSALS: ClassVar[dict[str, Refusal]] = {"uri": _not_a_directory, "cursor": _cursor}


class SetLevel(Params, frozen=True, kw_only=True, gc=False):
    level: Level

    REFUSALS: ClassVar[dict[str, Refusal]] = {
        "level": lambda level: InvalidParams(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}"),
    }


class Listen(Params, frozen=True, kw_only=True, gc=False):
    notifications: dict[str, Any]

    REFUSALS: ClassVar[dict[str, Refusal]] = {
        # A required field missing: 400 over HTTP, as for a missing _meta field.
        "notifications": _says('subscriptions/listen needs a "notifications" object', http_status=400),
    }


P = TypeVar("P", bound=Params)
_MISSING = object()


def decode(kind: type[P], raw: dict[str, Any] | None) -> P:
    """``raw`` (a request's params) as ``kind``; ``InvalidParams`` naming the first field that is wrong."""
    try:
        return msgspec.convert(raw or {}, kind)
    except msgspec.ValidationError:
        raise refusal(kind, raw or {}) from None


def refusal(kind: type[Params], raw: dict[str, Any]) -> McpError:
    """The error for params that do not decode as ``kind``: its first wrong field's, in declared order."""
    for field in msgspec.structs.fields(kind):
        value = raw.get(field.encode_name, _MISSING)
        if value is _MISSING:
            if field.required:
                return _refuse(kind, field.name, field.encode_name, None)
            continue
        try:
            msgspec.convert(value, field.type)
        except msgspec.ValidationError:
            return _refuse(kind, field.name, field.encode_name, value)
    raise AssertionError(raw)  # pragma: no cover - msgspec refused params whose every field converts


def _refuse(kind: type[Params], name: str, wire: str, value: object) -> McpError:
    refuse = kind.REFUSALS.get(name)
    return refuse(value) if refuse is not None else wrong_field(wire)


def wrong_field(wire: str) -> InvalidParams:
    """The refusal of a field that names no refusal of its own."""
    return InvalidParams(f'"{wire}" is missing or of the wrong type')
