"""Reading a recorder log back and checking every server message against the official schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .schema import validate_message
from .skills_schema import METHODS as SKILLS_METHODS
from .skills_schema import validate_skills_message


def read_log(path: Path) -> tuple[list[dict[str, Any]], list[Any]]:
    """(client messages, server messages) in the order they were sent."""
    sent: list[dict[str, Any]] = []
    received: list[Any] = []
    if not path.exists():
        return sent, received
    for raw in path.read_bytes().splitlines():
        mark, body = raw[:2], raw[2:]
        if not body.strip():
            continue
        (sent if mark == b"> " else received).append(json.loads(body))
    return sent, received


def validate_traffic(path: Path, revision: str) -> int:
    """Validate every server message in a log; returns how many were checked."""
    sent, received = read_log(path)
    methods = {m["id"]: m["method"] for m in sent if isinstance(m, dict) and "method" in m and "id" in m}
    checked = 0
    for message in received:
        assert isinstance(message, dict), f"server sent a non-object (batch?) in a {revision} session: {message}"
        method = methods.get(message.get("id")) if "method" not in message else None
        version = revision
        if method == "initialize" and "result" in message:
            version = message["result"]["protocolVersion"]
        if method in SKILLS_METHODS:  # the skills extension's (SEP-2640): in no revision's schema
            validate_skills_message(version, message, method)
        else:
            validate_message(version, message, method)
        checked += 1
    return checked
