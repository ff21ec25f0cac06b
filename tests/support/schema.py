"""Check promptdeck's wire output against the official MCP JSON schemas.

The schemas live outside the repository, at ``<repo>/../shared/spec/schema/<revision>/schema.json``
(override the folder with ``PROMPTDECK_SCHEMA_DIR``).  Tests that need them should skip when they are
missing::

    if not schema_available(revision):
        pytest.skip(schema_missing_reason(revision))

Two kinds of check:

* ``validate_result`` / ``validate_message``: JSON Schema validation with the schema's own draft
  (draft-07 up to 2025-06-18, 2020-12 since 2025-11-25), plus the ``byte`` (base64) and ``uri`` formats.
* ``check_no_unknown_fields``: the MCP schemas never set ``additionalProperties: false``, so JSON Schema
  accepts e.g. ``title`` on a 2024-11-05 ``Prompt``.  This walks the value alongside the schema and
  reports every field the revision does not define -- the typical down-conversion bug.  The validate
  functions run it too unless called with ``strict=False``.

Every failure is an ``AssertionError`` whose message names the revision, the definition and the JSON path.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import os
import reprlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import jsonschema.exceptions

__all__ = [
    "NOTIFICATION_DEFS",
    "RESULT_DEFS",
    "check_no_unknown_fields",
    "revisions",
    "schema_available",
    "schema_dir",
    "schema_missing_reason",
    "validate_definition",
    "validate_message",
    "validate_result",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR_ENV = "PROMPTDECK_SCHEMA_DIR"

# Result definitions per request method.  Candidates a revision does not define are dropped, so
# ``prompts/get`` is ``GetPromptResult | InputRequiredResult`` in 2026-07-28 and ``GetPromptResult`` before.
RESULT_DEFS: dict[str, tuple[str, ...]] = {
    "initialize": ("InitializeResult",),
    "server/discover": ("DiscoverResult",),
    "ping": ("EmptyResult",),
    "logging/setLevel": ("EmptyResult",),
    "prompts/list": ("ListPromptsResult",),
    "prompts/get": ("GetPromptResult", "InputRequiredResult"),
    "completion/complete": ("CompleteResult",),
    "subscriptions/listen": ("SubscriptionsListenResult",),
    "tools/list": ("ListToolsResult",),
    "tools/call": ("CallToolResult", "InputRequiredResult"),
    "resources/subscribe": ("EmptyResult",),
    "resources/unsubscribe": ("EmptyResult",),
}

NOTIFICATION_DEFS: dict[str, str] = {
    "notifications/message": "LoggingMessageNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/progress": "ProgressNotification",
    "notifications/cancelled": "CancelledNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
}

#: Definitions that carry SEP-2133's ``extensions`` (a map of extension identifiers to settings objects) in
#: every revision, defined in their schema or not: the MCP skills extension (SEP-2640) is declared there in
#: ``initialize`` as in ``server/discover``. Older revisions' capability objects accept extra members.
EXTENSIBLE = frozenset({"ServerCapabilities", "ClientCapabilities"})

_MAX_PROBLEMS = 20
_repr = reprlib.Repr()
_repr.maxstring = 60
_repr.maxother = 60
_repr.maxdict = 6
_repr.maxlist = 6
_repr.maxlevel = 3


# ---------------------------------------------------------------------------------------------------------
# Locating the schemas


def schema_dir() -> Path:
    """The folder holding one ``<revision>/schema.json`` per protocol revision."""
    override = os.environ.get(SCHEMA_DIR_ENV)
    if override:
        return Path(override)
    return REPO_ROOT.parent / "shared" / "spec" / "schema"


def revisions() -> tuple[str, ...]:
    """The revisions whose schema is present, oldest first (empty if the folder is missing)."""
    root = schema_dir()
    if not root.is_dir():
        return ()
    return tuple(sorted(p.name for p in root.iterdir() if (p / "schema.json").is_file()))


def schema_available(revision: str | None = None) -> bool:
    """Whether the schema for ``revision`` (or, without one, for any revision) can be loaded."""
    if revision is None:
        return bool(revisions())
    return (schema_dir() / revision / "schema.json").is_file()


def schema_missing_reason(revision: str | None = None) -> str:
    """A message for ``pytest.skip`` when ``schema_available`` is false."""
    what = f"the {revision} MCP JSON schema" if revision else "the MCP JSON schemas"
    where = schema_dir() / (revision or "<revision>") / "schema.json"
    return f"{what} not found at {where} (set {SCHEMA_DIR_ENV} to the folder holding <revision>/schema.json)"


# ---------------------------------------------------------------------------------------------------------
# Loading and compiling


def _check_byte(value: object) -> bool:
    if isinstance(value, str):
        base64.b64decode(value, validate=True)
    return True


def _check_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not urlsplit(value).scheme or any(ch.isspace() for ch in value):
        raise ValueError(f"{value!r} is not an absolute URI")
    return True


def _format_checker() -> Any:
    checker = jsonschema.FormatChecker(formats=())
    checker.checks("byte", raises=(binascii.Error, ValueError))(_check_byte)
    checker.checks("uri", raises=ValueError)(_check_uri)
    return checker


@dataclass(frozen=True, eq=False)
class _Schema:
    revision: str
    path: Path
    doc: dict[str, Any]
    defs_key: str
    root: Any  # a jsonschema validator for the whole document; subschemas are checked with ``evolve``

    @property
    def defs(self) -> dict[str, Any]:
        defs: dict[str, Any] = self.doc[self.defs_key]
        return defs

    def ref(self, name: str) -> dict[str, str]:
        return {"$ref": f"#/{self.defs_key}/{name}"}

    def has(self, name: str) -> bool:
        return name in self.defs

    def require(self, name: str) -> None:
        if not self.has(name):
            raise AssertionError(f"MCP {self.revision} defines no {name!r} (schema {self.path})")

    def validator(self, schema: Mapping[str, Any]) -> Any:
        return self.root.evolve(schema=schema)

    @functools.cached_property
    def request_methods(self) -> dict[str, str]:
        """Request method -> the definition of that request."""
        return {method: name for name, method in self._method_defs() if name.endswith("Request")}

    @functools.cached_property
    def notification_methods(self) -> dict[str, str]:
        """Notification method -> a definition carrying that method constant."""
        return {method: name for name, method in self._method_defs() if name.endswith("Notification")}

    def _method_defs(self) -> Iterable[tuple[str, str]]:
        for name, node in self.defs.items():
            method = node.get("properties", {}).get("method", {}).get("const")
            if isinstance(method, str):
                yield name, method


def _load(revision: str) -> _Schema:
    path = schema_dir() / revision / "schema.json"
    if not path.is_file():
        raise AssertionError(schema_missing_reason(revision))
    return _load_file(path.resolve(), revision)


@functools.cache
def _load_file(path: Path, revision: str) -> _Schema:
    doc = json.loads(path.read_text(encoding="utf-8"))
    defs_key = "$defs" if "$defs" in doc else "definitions"
    # Give the document a base URI so that "#/definitions/..." refs resolve against it from any subschema.
    doc = {**doc, "$id": path.resolve().as_uri()}
    cls = jsonschema.validators.validator_for(doc)
    cls.check_schema(doc)
    root = cls(doc, format_checker=_format_checker())
    return _Schema(revision, path, doc, defs_key, root)


def _def_validator(revision: str, names: tuple[str, ...]) -> Any:
    return _compiled(_load(revision), names)


@functools.cache
def _compiled(schema: _Schema, names: tuple[str, ...]) -> Any:
    for name in names:
        schema.require(name)
    node = schema.ref(names[0]) if len(names) == 1 else {"anyOf": [schema.ref(n) for n in names]}
    return schema.validator(node)


# ---------------------------------------------------------------------------------------------------------
# Error messages


def _branch_name(node: Any) -> str:
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str):
            return ref.rsplit("/", 1)[-1]
        kind = node.get("properties", {}).get("type", {}).get("const")
        if isinstance(kind, str):
            return f"type {kind!r}"
        if "type" in node:
            return str(node["type"])
    return "alternative"


def _describe(error: Any, indent: str = "  ") -> list[str]:
    lines = [f"{indent}at {error.json_path}: {_short(error.message)}"]
    if error.validator in ("anyOf", "oneOf") and error.context:
        branches: dict[int, list[Any]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        # A tagged union (content blocks): only explain the branches whose "type" tag the value carries.
        tagged = [i for i in branches if not any(_is_tag_error(e) for e in branches[i])]
        if tagged and len(tagged) < len(branches):
            branches = {i: branches[i] for i in tagged}
        for index, subs in sorted(branches.items()):
            best = jsonschema.exceptions.best_match(subs)
            name = _branch_name(error.validator_value[index])
            deeper = _describe(best, indent + "    ")
            lines.append(f"{indent}  - as {name}: {deeper[0].strip()}")
            lines.extend(deeper[1:])
    return lines


def _is_tag_error(error: Any) -> bool:
    return error.validator == "const" and list(error.relative_path) == ["type"]


def _short(message: str, limit: int = 240) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."


def _raise_if_invalid(validator: Any, instance: object, what: str) -> None:
    errors = sorted(validator.iter_errors(instance), key=lambda e: (list(e.absolute_path), e.message))
    if not errors:
        return
    lines = [f"{what} does not match the schema ({len(errors)} error{'s' * (len(errors) != 1)}):"]
    for error in errors[:_MAX_PROBLEMS]:
        lines.extend(_describe(error))
    if len(errors) > _MAX_PROBLEMS:
        lines.append(f"  ... and {len(errors) - _MAX_PROBLEMS} more")
    lines.append(f"  value: {_repr.repr(instance)}")
    raise AssertionError("\n".join(lines))


# ---------------------------------------------------------------------------------------------------------
# Unknown fields


class _FieldWalker:
    """Walk a value alongside a schema node, listing the object members the schema does not define.

    An object schema with ``properties`` is a record: other members are unknown, unless the node itself
    (not a definition it refers to) declares ``additionalProperties``.  One without
    ``properties`` (``_meta`` in older revisions, ``experimental``, ``JSONObject``) is a map: any key goes
    and its values are walked against ``additionalProperties``.  The contents of a ``_meta`` member may
    always carry extra keys; the keys a revision names there (e.g. 2026-07-28's serverInfo) are still
    walked.  For ``anyOf``/``oneOf`` the branch that validates with the fewest unknown fields wins.
    """

    def __init__(self, schema: _Schema) -> None:
        self.schema = schema

    def resolve(self, node: Mapping[str, Any], owner: str) -> tuple[dict[str, Any], str]:
        """Follow ``$ref`` and flatten ``allOf``; returns the merged node and the definition's name."""
        merged: dict[str, Any] = {}
        properties: dict[str, Any] = {}
        alternatives: list[list[Any]] = []
        seen: set[str] = set()
        todo: list[Mapping[str, Any]] = [node]
        while todo:
            current = todo.pop()
            ref = current.get("$ref")
            if isinstance(ref, str) and ref not in seen:
                seen.add(ref)
                prefix = f"#/{self.schema.defs_key}/"
                if not ref.startswith(prefix):
                    raise AssertionError(f"unsupported $ref {ref!r} in the {self.schema.revision} schema")
                owner = ref[len(prefix) :]
                todo.append(self.schema.defs[owner])
            todo.extend(current.get("allOf", []))
            properties.update(current.get("properties", {}))
            for key in ("anyOf", "oneOf"):
                if key in current:
                    alternatives.append(current[key])
            for key in ("additionalProperties", "items", "type"):
                if key in current and key not in merged:
                    merged[key] = current[key]
        if properties:
            merged["properties"] = properties
        merged["alternatives"] = alternatives
        return merged, owner

    def walk(
        self,
        node: Mapping[str, Any],
        value: object,
        path: str,
        owner: str,
        *,
        open_keys: bool = False,
        allow: Collection[str] = (),
    ) -> list[str]:
        # A node that opens itself where it stands (2026-07-28's Tool.inputSchema, a JSON Schema that takes
        # any keyword) is open; one that inherits ``additionalProperties`` (every Result) stays a record.
        opened = "additionalProperties" in node and "$ref" not in node and "allOf" not in node
        node, owner = self.resolve(node, owner)
        problems: list[str] = []
        for branches in node["alternatives"]:
            problems.extend(self.pick(branches, value, path, owner))
        if isinstance(value, Mapping):
            properties: dict[str, Any] = node.get("properties", {})
            extra = node.get("additionalProperties")
            for key, member in value.items():
                where = f"{path}.{key}" if str(key).isidentifier() else f"{path}[{json.dumps(key)}]"
                if key in properties:
                    problems.extend(self.walk(properties[key], member, where, owner, open_keys=key == "_meta"))
                elif owner in EXTENSIBLE and key == "extensions" and _is_extension_map(member):
                    pass  # SEP-2133: extensions ride in an older revision's capabilities, whose schema lacks them
                elif properties and not open_keys and not opened and key not in allow:
                    problems.append(f"{where}: field {key!r} is not defined by {self.schema.revision} {owner}")
                elif isinstance(extra, Mapping):
                    problems.extend(self.walk(extra, member, where, owner))
        elif isinstance(value, list) and isinstance(node.get("items"), Mapping):
            for index, item in enumerate(value):
                problems.extend(self.walk(node["items"], item, f"{path}[{index}]", owner))
        return problems

    def pick(self, branches: list[Any], value: object, path: str, owner: str) -> list[str]:
        candidates: list[list[str]] = []
        for branch in branches:
            if self.schema.validator(branch).is_valid(value):
                problems = self.walk(branch, value, path, owner)
                if not problems:
                    return []
                candidates.append(problems)
        if candidates:
            return min(candidates, key=len)
        names = ", ".join(_branch_name(b) for b in branches)
        return [
            f"{path}: matches none of the alternatives {self.schema.revision} {owner} allows here ({names}): "
            f"{_repr.repr(value)}"
        ]


def _is_extension_map(value: object) -> bool:
    return isinstance(value, Mapping) and all(isinstance(k, str) and "/" in k and isinstance(v, Mapping)
                                              for k, v in value.items())


def _unknown_fields(revision: str, names: tuple[str, ...], obj: object, allow: Collection[str] = ()) -> list[str]:
    schema = _load(revision)
    for name in names:
        schema.require(name)
    node = schema.ref(names[0]) if len(names) == 1 else {"anyOf": [schema.ref(n) for n in names]}
    return _FieldWalker(schema).walk(node, obj, "$", names[0], allow=allow)


def _raise_unknown(revision: str, label: str, problems: list[str], obj: object) -> None:
    if not problems:
        return
    lines = [f"{label} has fields MCP {revision} does not define:"]
    lines.extend(f"  {p}" for p in problems[:_MAX_PROBLEMS])
    if len(problems) > _MAX_PROBLEMS:
        lines.append(f"  ... and {len(problems) - _MAX_PROBLEMS} more")
    lines.append(f"  value: {_repr.repr(obj)}")
    raise AssertionError("\n".join(lines))


def check_no_unknown_fields(revision: str, def_name: str, obj: object, *, allow: Collection[str] = ()) -> None:
    """Fail if ``obj`` (an instance of definition ``def_name``) has fields ``revision`` does not define.

    Recurses through properties, array items, ``$ref``, ``allOf`` and ``anyOf``/``oneOf``.  ``allow``
    names extra top-level members to accept (e.g. ``jsonrpc`` on a pre-2025-11-25 notification).
    """
    problems = _unknown_fields(revision, (def_name,), obj, allow)
    _raise_unknown(revision, f"{def_name} {_repr.repr(obj)}", problems, obj)


# ---------------------------------------------------------------------------------------------------------
# Results and messages


def _result_defs(revision: str, method: str) -> tuple[str, ...]:
    schema = _load(revision)
    if method not in schema.request_methods:
        raise AssertionError(f"MCP {revision} has no request method {method!r}")
    # Unlisted methods: FooRequest is answered with FooResult (ListToolsRequest -> ListToolsResult ...).
    candidates = RESULT_DEFS.get(method) or (schema.request_methods[method].removesuffix("Request") + "Result",)
    names = tuple(name for name in candidates if schema.has(name))
    if not names:
        raise AssertionError(f"MCP {revision} defines none of {', '.join(candidates)} (for {method!r})")
    return names


def _notification_def(revision: str, method: str) -> str:
    schema = _load(revision)
    name = NOTIFICATION_DEFS.get(method) or schema.notification_methods.get(method)
    if name is None or not schema.has(name) or method not in schema.notification_methods:
        raise AssertionError(f"MCP {revision} has no notification {method!r}")
    return name


def _check_notification(revision: str, method: str, message: Mapping[str, Any], strict: bool) -> None:
    name = _notification_def(revision, method)
    _raise_if_invalid(_def_validator(revision, (name,)), message, f"MCP {revision} {name}")
    if strict:
        problems = _unknown_fields(revision, (name,), message, allow=("jsonrpc",))
        _raise_unknown(revision, f"{method} notification", problems, message)


def validate_definition(revision: str, name: str, value: object, *, strict: bool = True) -> None:
    """Check ``value`` against the definition ``name`` of ``revision``'s schema (and, with ``strict``, that it has
    no field the revision does not define)."""
    _raise_if_invalid(_def_validator(revision, (name,)), value, f"MCP {revision} {name}")
    if strict:
        _raise_unknown(revision, name, _unknown_fields(revision, (name,), value), value)


def validate_result(revision: str, method: str, result: Mapping[str, Any], *, strict: bool = True) -> None:
    """Check the ``result`` of a response to ``method`` against ``revision``'s schema.

    ``method`` may also be a notification method (``notifications/message`` ...); ``result`` is then the
    notification itself (``method`` and ``params``; a missing ``jsonrpc`` member is not an error here).
    With ``strict`` (the default) fields the revision does not define are failures too.
    """
    if method.startswith("notifications/"):
        message = result if "jsonrpc" in result else {"jsonrpc": "2.0", **result}
        _check_notification(revision, method, message, strict)
        return
    names = _result_defs(revision, method)
    if "InputRequiredResult" in names:
        # 2026-07-28: resultType says which one it is (InputRequiredResult alone would accept nearly anything).
        wanted = result.get("resultType") == "input_required"
        names = tuple(name for name in names if (name == "InputRequiredResult") == wanted)
    label = f"MCP {revision} {' | '.join(names)} (result of {method})"
    _raise_if_invalid(_def_validator(revision, names), result, label)
    if strict:
        _raise_unknown(revision, f"{method} result", _unknown_fields(revision, names, result), result)


def _envelope(schema: _Schema, *names: str) -> str:
    for name in names:
        if schema.has(name):
            return name
    raise AssertionError(f"MCP {schema.revision} defines none of {', '.join(names)}")


def validate_message(
    revision: str, message: Mapping[str, Any], method: str | None = None, *, strict: bool = True
) -> None:
    """Check one complete JSON-RPC message a server sent.

    * a response: the envelope (``JSONRPCResponse``, ``JSONRPCResultResponse`` since 2025-11-25), and the
      ``result`` as ``validate_result`` does when ``method`` (the request's method) is given;
    * an error response (``JSONRPCError``, ``JSONRPCErrorResponse`` since 2025-11-25);
    * a notification: ``JSONRPCNotification`` and the definition for its method (``method``, if given,
      must match);
    * a server-to-client request: ``JSONRPCRequest`` and the definition for its method.
    """
    schema = _load(revision)
    if not isinstance(message, Mapping):
        raise AssertionError(f"a JSON-RPC message must be an object, got {_repr.repr(message)}")
    if "method" in message:
        sent = message["method"]
        if method is not None and sent != method:
            raise AssertionError(f"expected a {method!r} message, got {sent!r}: {_repr.repr(message)}")
        kind = "JSONRPCRequest" if "id" in message else "JSONRPCNotification"
        _raise_if_invalid(_def_validator(revision, (kind,)), message, f"MCP {revision} {kind}")
        if kind == "JSONRPCNotification":
            _check_notification(revision, str(sent), message, strict)
        else:
            requests = schema.request_methods
            if sent not in requests:
                raise AssertionError(f"MCP {revision} has no request method {sent!r}")
            _raise_if_invalid(_def_validator(revision, (requests[sent],)), message, f"MCP {revision} {sent}")
            if strict:
                problems = _unknown_fields(revision, (requests[sent],), message, allow=("jsonrpc", "id"))
                _raise_unknown(revision, f"{sent} request", problems, message)
        return
    if "error" in message:
        kind = _envelope(schema, "JSONRPCErrorResponse", "JSONRPCError")
    elif "result" in message:
        kind = _envelope(schema, "JSONRPCResultResponse", "JSONRPCResponse")
    else:
        raise AssertionError(f"not a JSON-RPC response, error or notification: {_repr.repr(message)}")
    _raise_if_invalid(_def_validator(revision, (kind,)), message, f"MCP {revision} {kind}")
    if strict:
        # Only the envelope's own members here: the generic ``Result`` inside would accept anything.
        known = set(schema.defs[kind].get("properties", {}))
        extra = sorted(set(message) - known)
        if extra:
            raise AssertionError(f"{kind} has members MCP {revision} does not define: {extra}: {_repr.repr(message)}")
        if "error" in message:
            problems = _unknown_fields(revision, (kind,), message)
            _raise_unknown(revision, "error response", problems, message)
    if "result" in message and method is not None:
        validate_result(revision, method, message["result"], strict=strict)
