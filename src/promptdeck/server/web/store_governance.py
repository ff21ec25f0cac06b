"""``/api/store``'s governance: protected labels, a label's audit, rollouts, and promotions (docs/store-api.md).

A protected label's move needs its scope besides the write scope; the store reads the protection inside the
write transaction and ``guard`` holds the principal to it (403 naming the scope). The audit (``moves``)
shows each move as the principal may see it: only the changes it may see, and no move at all that changed
only what it may not see, so that neither the move nor its author, reason or message tells of a hidden
prompt; each move's ``from`` is the position of the move before it that is shown. A rollout is shown, and
may be started or ended, only by whoever may see both its versions. A promotion (``promote``: one label
pointed at what another holds) is a move like the others: the write scope, the target's protection and the
rule that nobody moves what their scopes hide; a prompt named that the principal may not see is unknown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Protocol

import msgspec

from ...prompts.access import may_see, parse_scopes
from ...protocol.errors import HttpError
from ...sources.store.model import Guard, Protection, Recorded, Rollout, RolloutEvent, StoreMissing, TestsFailed
from ...sources.store.promotion import held_at, missing
from ...sources.store.promotion import promote as promote_label
from ..security.principals import missing_scopes

if TYPE_CHECKING:
    from ...sources.store.database import Store

#: Moves of a label looked at per audit request (a page), and the changed files read of each: the answer and
#: its work stay bounded, whatever the label's history or the library's size. Older moves: ``before``.
SCANNED_MOVES = 40
CHANGES_READ = 1000
SHOWN_CHANGES = 50
#: The prompts one promotion may name (more: promote the whole label).
MAX_NAMED = 100


class _StoreView(Protocol):
    """What is used here of one store call's view as its principal may see it (``store_api._StoreView``)."""

    store: Store
    held: frozenset[str] | None

    def version(self, path: str, version: int, recorded: Recorded | None = None) -> bool: ...

    def allow_move(self, before: dict[str, int], after: dict[str, int]) -> None: ...


class RolloutCall(msgspec.Struct, forbid_unknown_fields=True):
    label: str
    prompt: str
    #: start (or change the share of) a rollout of ``version``; promote or abort the live one
    action: str = "start"
    version: Annotated[int, msgspec.Meta(ge=0, le=2**53)] | None = None
    percent: Annotated[float, msgspec.Meta(ge=0, le=100)] | None = None
    message: str = ""


class PromoteCall(msgspec.Struct, forbid_unknown_fields=True):
    #: the label whose versions ``label`` takes
    source: str
    label: str
    #: the prompts to promote, by name; none: all of ``source``
    prompts: Annotated[list[str], msgspec.Meta(max_length=MAX_NAMED)] = msgspec.field(default_factory=list)
    message: str = ""


def may_move(held: frozenset[str] | None, protection: Protection | None) -> bool:
    """Whether a principal holding ``held`` may move a label with ``protection`` (None: not protected) as far as
    its protection goes: the one rule ``guard`` holds every move to, and the overview shows the page."""
    return protection is None or not missing_scopes(held, (protection.scope,))


def guard(held: frozenset[str] | None) -> Guard:
    """A write's rule for the label it moves: a protected label needs its scope (403 naming it)."""

    def check(protection: Protection | None) -> None:
        if not may_move(held, protection):
            assert protection is not None
            raise HttpError(403, f"label {protection.label} is protected: moving it needs the scope "
                                 f"{protection.scope}; nothing changed", scope=protection.scope)

    return check


def tests_refusal(exc: TestsFailed, held: frozenset[str] | None) -> HttpError:
    """409 for a move refused because the tests its label requires fail, naming only the failures of prompts the
    principal may see: ``{"error": …, "failures": [{"prompt": NAME, "failures": [line, …]}]}``."""
    shown = [{"prompt": name, "failures": lines[:20]} for name, scopes, lines in exc.failures
             if may_see(held, parse_scopes(scopes))]
    cases = sum(len(f["failures"]) for f in shown)
    why = f"{cases} failing case{'s' * (cases != 1)} of prompts you may see" if shown else \
        "tests of prompts you may not see fail"
    return HttpError(409, f"label {exc.label} requires passing tests: {why}; nothing changed", failures=shown[:50])


def basis_points(call: RolloutCall) -> int:
    """A start's share in hundredths of a percent; 400 for a missing share or one finer than that."""
    if call.percent is None or call.version is None:
        raise HttpError(400, "a rollout's start needs version and percent")
    points = round(call.percent * 100)
    if abs(points - call.percent * 100) > 1e-6:
        raise HttpError(400, f"percent: at most two decimals, not {call.percent}")
    return points


def may_see_rollout(sight: _StoreView, rollout: Rollout) -> bool:
    return sight.version(rollout.path, rollout.base) and sight.version(rollout.path, rollout.version)


def shown_rollout(rollout: Rollout) -> dict[str, Any]:
    return {"id": rollout.id, "label": rollout.label, "prompt": rollout.prompt, "path": rollout.path,
            "base": rollout.base, "version": rollout.version, "percent": rollout.basis_points / 100,
            "author": rollout.author, "message": rollout.message, "created": rollout.created}


def rollouts(sight: _StoreView, label: str) -> list[dict[str, Any]]:
    """The label's live rollouts the principal may see."""
    return [shown_rollout(r) for r in sight.store.governance.live_rollouts(label) if may_see_rollout(sight, r)]


def audit(sight: _StoreView, label: str, before: int | None = None) -> dict[str, Any]:
    """``GET /api/store/moves``: a page of the label's moves (below position ``before``) and its rollout events,
    newest first, as the principal may see them (see the module docstring)."""
    store = sight.store
    store.reads.require_position(label)
    moves = store.governance.moves(label, SCANNED_MOVES + 1, before)
    more, moves = len(moves) > SCANNED_MOVES, moves[:SCANNED_MOVES]
    shown: list[dict[str, Any]] = []
    for move in moves:
        changes = store.governance.changes_between(move.previous, move.position, CHANGES_READ)
        recorded = store.reads.recorded([(path, v) for path, pair in changes.items() for v in pair if v is not None])
        visible = [{"path": path, "from": old, "to": new} for path, (old, new) in changes.items()
                   if all(v is None or sight.version(path, v, recorded.get((path, v))) for v in (old, new))]
        if changes and not visible:
            continue  # it changed only what the principal may not see (of what was read): not shown at all
        shown.append({"position": move.position, "reason": move.reason, "author": move.author,
                      "message": move.message, "created": move.created, "changes": visible[:SHOWN_CHANGES],
                      "more": max(0, len(visible) - SHOWN_CHANGES)})
    for newer, older in zip(shown, [*shown[1:], None], strict=True):
        newer["from"] = older["position"] if older is not None else None
    # The rollouts' events are few beside the moves: the newest 100 the principal may see, on the first page.
    events = [] if before is not None else \
        [_event(e) for e in store.governance.rollout_events(label, 1000) if may_see_rollout(sight, e.rollout)][:100]
    protection = store.governance.protection(label)
    return {"label": label, "moves": shown, "next": moves[-1].position if more else None, "rollouts": events,
            "protected": None if protection is None else {"scope": protection.scope}}


def _event(event: RolloutEvent) -> dict[str, Any]:
    return {"rollout": shown_rollout(event.rollout), "kind": event.kind, "percent": event.basis_points / 100,
            "author": event.author, "message": event.message, "created": event.created, "position": event.position}


def rollout(sight: _StoreView, path: str, call: RolloutCall, label: str, author: str) -> dict[str, Any]:
    """``POST /api/store/rollout`` (the write scope already checked; ``path``: a prompt the principal sees)."""
    held = guard(sight.held)
    if call.action == "start":
        points = basis_points(call)
        assert call.version is not None
        if not sight.version(path, call.version):
            raise HttpError(404, f"prompt {call.prompt!r} has no version {call.version}")
        started = sight.store.governance.start_rollout(label, path, call.version, points, author=author,
                                                       message=call.message, guard=held, allow=sight.allow_move)
        return {"rollout": shown_rollout(started)}
    if call.action not in ("promote", "abort"):
        raise HttpError(400, f"action: start, promote or abort, not {call.action[:40]!r}")
    if call.version is not None or call.percent is not None:
        raise HttpError(400, f"{call.action} takes no version or percent")
    ended = sight.store.governance.end_rollout(label, path, promote=call.action == "promote", author=author,
                                               message=call.message, guard=held, allow=sight.allow_move)
    return {"rollout": shown_rollout(ended), "ended": call.action}


def promote(sight: _StoreView, call: PromoteCall, source: str, label: str, author: str) -> dict[str, Any]:
    """``POST /api/store/promote`` (the write scope already checked): ``label`` pointed at what ``source`` holds
    (``promotion.promote``), through the same guard and rule as every other move. A prompt named that
    ``source`` holds at a version the principal may not see is answered as one it does not hold (404)."""
    store = sight.store
    position = store.reads.position(source)
    for name in call.prompts:
        found = held_at(store.db, position.id, name) if position is not None else None
        if found is not None and not sight.version(*found):
            raise StoreMissing(missing(source, name))
    done = promote_label(store.governance, source, label, list(dict.fromkeys(call.prompts)), author=author,
                         message=call.message, allow=sight.allow_move, guard=guard(sight.held))
    changes = [{"path": path, "from": old, "to": new} for path, (old, new) in done.changes.items()]
    return {"source": source, "label": label, "sourcePosition": done.source_position, "position": done.position,
            "moved": done.position is not None, "changes": changes[:SHOWN_CHANGES],
            "more": max(0, len(changes) - SHOWN_CHANGES)}
