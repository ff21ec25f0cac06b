"""Promotion: a label pointed at what another label holds (``promptdeck promote SRC DST``, ``POST
/api/store/promote``), in one new position of DST, through the release gate like every other move.

All of SRC (DST then holds exactly SRC's files: what SRC lacks, DST loses), or only the prompts named (each
at SRC's version; DST's other files stay). What SRC *serves to everyone* is promoted: its position, not the
version a live rollout on SRC sends a share of its renders to. On DST, ``Governance.release`` applies its
protection, the writer's rule and the tests it requires, records the move (its reason names SRC and its
position) and sends the ``promote`` event (``event_kinds.LabelPromoted``); a live rollout on DST of a prompt
the promotion changes ends as ``superseded``, as with any move, and one of a prompt it leaves alone goes on.
The move is one transaction under the store's write lock, so it queues behind a publish, never inside one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .connection import Connection
from .governance import Governance, Promotion
from .model import Guard, MoveRule, StoreConflict, StoreMissing

#: The prompts a promotion's reason names before "and N more" (the reason is kept in the audit).
_REASON_NAMES = 5


class Promoted(NamedTuple):
    """What a promotion did: ``position`` is DST's new position, None when DST held SRC's versions already
    (nothing moved); ``changes``: path -> (DST's version before, after; None: not there)."""

    source: str
    label: str
    source_position: int
    position: int | None
    changes: dict[str, tuple[int | None, int | None]]


def promote(governance: Governance, source: str, label: str, names: Sequence[str] = (), *, author: str,
            message: str = "", allow: MoveRule | None = None, guard: Guard | None = None) -> Promoted:
    """Point ``label`` at what ``source`` holds: every file of it, or (``names``: prompt names or paths) only
    those, the rest of ``label`` unchanged. One transaction; refused (nothing changed) by ``StoreMissing``
    for an unknown source or name, ``StoreConflict`` for a label promoted to itself, and whatever the gate
    refuses with (``guard``, ``allow``, ``TestsFailed``)."""
    if source == label:
        raise StoreConflict(f"promote points one label at another's versions: {label!r} is both; nothing changed")
    db, reads = governance.db, governance.reads
    with db.transaction():
        if guard is not None:  # a label the writer may not move is refused as such, before what it names
            guard(governance.protection(label))
        reads.require_position(source)
        held = reads.position(source)
        assert held is not None
        now = reads.position(label)
        before = dict(now.files) if now is not None else {}
        if names:
            files = {**before, **_named(governance, held.id, source, names)}
            shown = ", ".join(names[:_REASON_NAMES]) + (f" and {len(names) - _REASON_NAMES} more"
                                                        if len(names) > _REASON_NAMES else "")
            reason = f"promote {shown} from {source} (position {held.id})"
        else:
            files = dict(held.files)
            reason = f"promote {source} (position {held.id})"
        position = governance.release(label, files, author, reason, message, allow, now, guard, event="promote",
                                      promotion=Promotion(source, held.id, tuple(names)))
    changes = {path: (before.get(path), files.get(path)) for path in sorted(before.keys() | files.keys())
               if before.get(path) != files.get(path)}
    return Promoted(source, label, held.id, position, changes)


def _named(governance: Governance, position: int, source: str, names: Sequence[str]) -> dict[str, int]:
    """path -> version in ``source``'s position of each of ``names`` (``held_at``); ``StoreMissing`` naming the
    first it does not hold."""
    out: dict[str, int] = {}
    for name in names:
        found = held_at(governance.db, position, name)
        if found is None:
            raise StoreMissing(missing(source, name))
        out[found[0]] = found[1]
    return out


def held_at(db: Connection, position: int, name: str) -> tuple[str, int] | None:
    """(path, version) of the prompt ``name`` (as the position lists it) or the file at path ``name`` in
    ``position``; None when it holds neither."""
    rows = db.rows("SELECT path, version FROM position_files WHERE position = ? AND (name = ? OR path = ?) "
                   "ORDER BY name IS NULL LIMIT 1", position, name, name)
    return (str(rows[0][0]), int(rows[0][1])) if rows else None


def missing(source: str, name: str) -> str:
    """What a promotion naming a prompt ``source`` does not hold says."""
    return f"label {source!r} has no prompt {name[:200]!r}; nothing changed"
