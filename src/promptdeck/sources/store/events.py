"""The store's outbox: an event for each change webhooks are told of, written in the change's own transaction.

``emit(store, kind, payload)`` is called inside a write transaction (``Connection.transaction``) by the code that
makes the change: ``publish``, a label's move, a rollback. It records the event and, for every webhook
that asked for its kind, a delivery whose body holds what that webhook may see. Nothing is sent here:
the event commits with the change or not at all (a publish that fails midway leaves no event), and the
serving processes deliver it afterwards (``delivery``). The kinds and their payloads' types are declared
in ``event_kinds``; a new kind of change registers there and calls ``emit``.

A change a webhook may not see is not told to it, by the rule a principal is held to (``seen.Seen``, with
the webhook's scopes, ``webhook add --scope``): a prompt restricted by scopes is named, and any changed file
counted (``files``), only for a webhook that may see both its versions; a file of a restricted skill likewise.
An event about such changes alone is not delivered to that webhook at all.
"""

from __future__ import annotations

import datetime
import json
import secrets
import time
from typing import TYPE_CHECKING, Any

from ...prompts.access import may_see
from ..files.paths import is_prompt_path
from .event_kinds import ChangedPrompt, Payload, checked, encoded, wants

if TYPE_CHECKING:
    from .connection import Connection
    from .reads import Reads

#: Prompts named in one event; an event about more says ``"truncated": true`` (a publish of 100,000
#: prompts is one event, not a 50 MB request).
MAX_EVENT_PROMPTS = 100
#: The characters of a change's message an event carries (``-m`` may be a whole file); more end in "…".
MAX_EVENT_MESSAGE = 4096


def short(message: str) -> str:
    """``message`` as an event carries it."""
    return message if len(message) <= MAX_EVENT_MESSAGE else message[:MAX_EVENT_MESSAGE - 1] + "…"


def listening(store: Connection, kind: str) -> bool:
    """Whether any webhook asks for ``kind``: a caller may skip working out a payload nobody is sent."""
    return any(wants(str(row[0]), kind) for row in store.rows("SELECT kinds FROM webhooks WHERE removed IS NULL"))


def emit(store: Connection, kind: str, payload: Payload, seen: dict[str, list[list[str]]] | None = None) -> int | None:
    """Record an event of ``kind`` (inside the caller's write transaction); its id, or None when no webhook
    asked for it or may see it (nothing is kept that nobody will be sent).

    ``payload``, of the type ``event_kinds`` declares for ``kind``, becomes the body's ``data``. Its
    ``prompts`` (optional) are the prompts the event is about, whose ``scopes`` (empty: anyone may see it)
    decide which webhooks are told of them; the scopes themselves are never sent. ``seen`` (optional;
    ``seen_changes``) holds what seeing each changed file needs: a prompt or a count (``files``) of what a
    webhook may not see is left out of its body. Neither is kept in the event's own record beyond the names.
    """
    checked(kind, payload)  # before any webhook asks: an undeclared kind is a bug to see at once
    hooks = [(int(hook), str(scopes)) for hook, scopes, wanted in store.rows(
        "SELECT id, scopes, kinds FROM webhooks WHERE removed IS NULL ORDER BY id") if wants(str(wanted), kind)]
    if not hooks:
        return None
    fields = encoded(payload)
    now = time.time()
    stamp = datetime.datetime.fromtimestamp(now, datetime.UTC).isoformat().replace("+00:00", "Z")
    bodies = []
    for hook, scopes in hooks:
        data = _visible(fields, frozenset(scopes.split()), seen)
        if data is not None:
            bodies.append((hook, json.dumps({"type": kind, "timestamp": stamp, "data": data}, separators=(",", ":"))))
    if not bodies:  # about hidden prompts only, for every webhook that asked
        return None
    # The webhook-id: random, not the event's number, so that two stores sending to one receiver never share
    # an id (a receiver drops a repeated id as a resend). ``webhook log`` shows both.
    uid = "evt_" + secrets.token_hex(12)
    event_id = int(store.run("INSERT INTO events (kind, payload, created, uid) VALUES (?, ?, ?, ?) RETURNING id",
                             kind, json.dumps(fields, sort_keys=True), now, uid).fetchone()[0])
    store.many("INSERT INTO deliveries (event, webhook, body, status, attempts, next_try) "
               "VALUES (?, ?, ?, 'pending', 0, ?)", [(event_id, hook, body, now) for hook, body in bodies])
    return event_id


def _visible(payload: dict[str, Any], held: frozenset[str],
             seen: dict[str, list[list[str]]] | None = None) -> dict[str, Any] | None:
    """``payload`` as a webhook holding ``held`` may see it; None when every change it tells of is hidden."""
    hidden = {path for path, needs in (seen or {}).items() if not all(may_see(held, scopes) for scopes in needs)}
    data = dict(payload)
    if seen is not None and "files" in data:
        data["files"] = len(seen) - len(hidden)
        if seen and not data["files"]:
            return None
    named = data.get("prompts")
    if named is None:
        return data
    shown = [{k: v for k, v in prompt.items() if k != "scopes"} for prompt in named
             if may_see(held, prompt.get("scopes") or ()) and prompt.get("path") not in hidden]
    if named and not shown:
        return None
    return {**data, "prompts": shown}


def seen_changes(store: Reads, before: dict[str, int], after: dict[str, int]) -> dict[str, list[list[str]]]:
    """(``emit``'s ``seen``.) For each file whose version differs between two states (path -> version), the
    scope sets seeing the change needs: those of both its versions (``seen.Seen``), every one to be met."""
    from .seen import NOBODY, Seen

    changed = {path: (before.get(path), after.get(path)) for path in before.keys() | after.keys()
               if before.get(path) != after.get(path)}
    pairs = [(path, version) for path, both in changed.items() for version in both if version is not None]
    recorded = store.recorded(pairs)
    rule = Seen(store)
    out: dict[str, list[list[str]]] = {}
    for path, both in sorted(changed.items()):
        needs: set[frozenset[str]] = set()
        for version in both:
            if version is not None:
                found = rule.needs(path, version, recorded.get((path, version)))
                needs.update(found if found is not None else [NOBODY])
        out[path] = sorted(sorted(scopes) for scopes in needs if scopes)
    return out


def changed_prompts(store: Connection, before: dict[str, int], after: dict[str, int]) -> tuple[
        tuple[ChangedPrompt, ...], bool]:
    """The prompt files whose version differs between two states (path -> version), as an event names
    them, at most ``MAX_EVENT_PROMPTS``; and whether there were more."""
    paths = sorted(path for path in before.keys() | after.keys()
                   if is_prompt_path(path) and before.get(path) != after.get(path))
    prompts: list[ChangedPrompt] = []
    for path in paths[:MAX_EVENT_PROMPTS]:
        version = after.get(path)
        name, scopes, deleted = _prompt_at(store, path, version if version is not None else before[path])
        if name is None:
            continue
        prompts.append(ChangedPrompt(name=name, path=path, version=version, previous=before.get(path),
                                     deleted=deleted, scopes=tuple(scopes)))
    return tuple(prompts), len(paths) > MAX_EVENT_PROMPTS


def _prompt_at(store: Connection, path: str, version: int) -> tuple[str | None, list[str], bool]:
    """The prompt name and scopes of ``path`` at ``version``, and whether that version is its deletion
    (whose scopes are those of the version before)."""
    rows = store.rows("SELECT prompt, scopes, digest FROM files WHERE path = ? AND version <= ? "
                      "ORDER BY version DESC LIMIT 2", path, version)
    if not rows:
        return None, [], False
    name, scopes, digest = rows[0]
    if digest is None and len(rows) > 1:
        scopes = rows[1][1]
    return name, str(scopes or "").split(), digest is None
