"""The shapes of the MCP skills extension (SEP-2640, ``io.modelcontextprotocol/skills``), as a JSON Schema
written from the SEP's text, and the rules of its text that a schema cannot say.

The SEP publishes no schema file of its own; ``SEP_SCHEMA`` restates its tables and examples:

- a *skill entry* (``skills/list``'s ``skills[]``, ``skills/get``'s ``skill``): ``uri`` (the ``SKILL.md``
  resource URI), ``frontmatter`` (an object; ``name`` and ``description`` always there), ``resources`` (every
  file as ``{uri, digest}``, ``digest`` ``sha256:`` and 64 lowercase hex digits; "MAY be omitted only for
  dynamically generated skills");
- ``skills/list``: ``skills`` and an optional ``nextCursor``; ``skills/get``: ``skill``;
- ``resources/directory/read``: "the same ``Resource`` objects that ``resources/list`` returns, with the
  same ``nextCursor`` pagination contract", subdirectories with ``mimeType`` ``inode/directory``.

``check_entry`` adds what the text says beyond shapes: the URI ends in ``/SKILL.md`` with the skill's
``name`` as its last path segment, ``resources`` lists the ``SKILL.md`` and every file once, each within the
skill's directory. ``validate_skills_result`` checks a whole result: the SEP's part against ``SEP_SCHEMA``, and
what the result shares with the base protocol (``nextCursor``, 2026-07-28's ``resultType``, ``ttlMs``,
``cacheScope``, ``_meta``; none of those before it) against the official schema of its revision, through
``tests.support.schema``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import jsonschema

from tests.support.schema import schema_available, validate_definition, validate_message, validate_result

__all__ = ["METHODS", "SEP_SCHEMA", "check_capabilities", "check_entry", "validate_skills_message",
           "validate_skills_result"]

EXTENSION = "io.modelcontextprotocol/skills"
DIGEST = r"^sha256:[0-9a-f]{64}$"

SEP_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {
        "SkillResource": {
            "type": "object",
            "required": ["uri", "digest"],
            "properties": {"uri": {"type": "string", "minLength": 1},
                           "digest": {"type": "string", "pattern": DIGEST}},
        },
        "Frontmatter": {
            "type": "object",
            "required": ["name", "description"],
            "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 64,
                                    "pattern": r"^[a-z0-9]+(-[a-z0-9]+)*$"},
                           "description": {"type": "string", "minLength": 1, "maxLength": 1024}},
        },
        "SkillEntry": {
            "type": "object",
            "required": ["uri", "frontmatter", "resources"],
            "properties": {
                "uri": {"type": "string", "pattern": r"^[A-Za-z][A-Za-z0-9+.-]*://.+/SKILL\.md$"},
                "frontmatter": {"$ref": "#/$defs/Frontmatter"},
                "resources": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/SkillResource"}},
            },
        },
        "ListSkillsResult": {
            "type": "object",
            "required": ["skills"],
            "properties": {"skills": {"type": "array", "items": {"$ref": "#/$defs/SkillEntry"}},
                           "nextCursor": {"type": "string"}},
        },
        "GetSkillResult": {
            "type": "object",
            "required": ["skill"],
            "properties": {"skill": {"$ref": "#/$defs/SkillEntry"}},
        },
        "DirectoryResource": {
            "type": "object",
            "required": ["uri", "name"],
            "properties": {"uri": {"type": "string", "pattern": r"[^/]$"}, "name": {"type": "string"},
                           "mimeType": {"type": "string"}},
        },
        "ReadDirectoryResult": {
            "type": "object",
            "required": ["resources"],
            "properties": {"resources": {"type": "array", "items": {"$ref": "#/$defs/DirectoryResource"}},
                           "nextCursor": {"type": "string"}},
        },
        "Capability": {
            "type": "object",
            "properties": {"directoryRead": {"type": "boolean"}},
        },
    },
}

#: The extension's methods, and the SEP_SCHEMA definition of each one's result.
METHODS = _RESULTS = {"skills/list": "ListSkillsResult", "skills/get": "GetSkillResult",
            "resources/directory/read": "ReadDirectoryResult"}
_SEP_FIELDS = {"skills/list": ("skills",), "skills/get": ("skill",), "resources/directory/read": ()}
_VALIDATOR = jsonschema.Draft202012Validator(SEP_SCHEMA)


def _check(definition: str, value: object) -> None:
    errors = sorted(_VALIDATOR.evolve(schema={"$ref": f"#/$defs/{definition}", "$defs": SEP_SCHEMA["$defs"]})
                    .iter_errors(value), key=lambda e: list(e.absolute_path))
    if errors:
        raise AssertionError(f"SEP-2640 {definition} does not match: "
                             + "; ".join(f"at {e.json_path}: {e.message[:200]}" for e in errors[:10]))


def check_entry(entry: Mapping[str, Any]) -> None:
    """One skill entry: its shape, and the rules of the SEP's text about its URI and ``resources``."""
    _check("SkillEntry", entry)
    uri: str = entry["uri"]
    root = uri.removesuffix("/SKILL.md")
    name = entry["frontmatter"]["name"]
    assert root.rpartition("/")[2] == name or root.split("://", 1)[1] == name, \
        f"{uri}: the skill-path's last segment must equal frontmatter.name {name!r}"
    uris = [item["uri"] for item in entry["resources"]]
    assert len(uris) == len(set(uris)), f"{uri}: a file is listed twice in resources"
    assert uris.count(uri) == 1, f"{uri}: resources must list the SKILL.md itself exactly once"
    for item in uris:
        assert item.startswith(root + "/"), f"{uri}: {item} is not within the skill's directory"
        rest = item[len(root) + 1:]
        assert rest and not any(part in ("", ".", "..") for part in rest.split("/")), f"{uri}: bad file {item}"


def validate_skills_result(revision: str, method: str, result: Mapping[str, Any]) -> None:
    """A result of ``skills/list``, ``skills/get`` or ``resources/directory/read`` in ``revision``."""
    _check(_RESULTS[method], result)
    if method == "skills/list":
        for entry in result["skills"]:
            check_entry(entry)
    elif method == "skills/get":
        check_entry(result["skill"])
    else:
        for resource in result["resources"]:
            assert re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", resource["uri"]), resource
    if not schema_available(revision):
        return
    # What it shares with the base protocol: a page of a list (nextCursor, and at 2026-07-28 resultType, ttlMs,
    # cacheScope, _meta) is a resources/list result's; skills/get's a cacheable result's (the extension's final
    # text: GetSkillResult extends CacheableResult, as resources/read's result does).
    rest = {key: value for key, value in result.items() if key not in _SEP_FIELDS[method]}
    if method == "skills/get":
        validate_definition(revision, "CacheableResult" if revision >= "2026-07-28" else "Result", rest)
    elif method == "skills/list":
        validate_result(revision, "resources/list", {**rest, "resources": []})
    else:
        validate_result(revision, "resources/list", result)
    if revision >= "2026-07-28":
        assert result["resultType"] == "complete", result
        assert isinstance(result["ttlMs"], int) and result["cacheScope"] in ("public", "private"), result


def validate_skills_message(revision: str, message: Mapping[str, Any], method: str) -> None:
    """A whole JSON-RPC response to one of the extension's methods: the envelope against the revision's schema,
    the result as ``validate_skills_result`` checks it (an error response as the schema's error)."""
    if schema_available(revision):
        validate_message(revision, message)
    if "result" in message:
        validate_skills_result(revision, method, message["result"])


def check_capabilities(capabilities: Mapping[str, Any], *, directory_read: bool = True) -> None:
    """The server's capabilities declare the extension (with ``directoryRead``), and resources with it."""
    extension = capabilities["extensions"][EXTENSION]
    _check("Capability", extension)
    assert extension.get("directoryRead", False) is directory_read, extension
    assert "resources" in capabilities, capabilities
