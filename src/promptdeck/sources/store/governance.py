"""Governed releases: where a label move is recorded (its audit row), protected labels, and rollouts.

Every change of what a label serves goes through ``release``, the release gate, inside the write transaction
of the change that makes it (a publish with the label, a pointing, a rollback, a save, a label's promotion
to another's versions, a rollout's start, change of share, promotion and abort, a proposal's merge): it
applies the label's protection (the writer's ``Guard``), the writer's own rule (``MoveRule``), the approvals
(``reviews``) and the tests the label requires, and only then writes the change with its audit row (a
position, or a rollout event) and its webhook event. tests/attack/test_release_gate.py lists the paths, and
checks that nothing else writes a position or a rollout.

A protected label names the scope a move of it needs. The store does not know principals: it reads the
protection inside the write transaction and shows it to the writer's ``Guard``, which refuses by raising
(``/api/store`` holds it to the principal's scopes; the command line, with the database's credentials, is
the administrator's path and passes none: docs/store.md#governance).

A rollout sends ``basis_points`` / 100 percent of a label's renders of one prompt to another version of its
file; which renders is decided by ``bucket`` of the rollout and a key the request carries, so every
replica sends one key to the same version. A rollout is only started for a version that shows clients
the same name, scopes and arguments as the label's version: what ``prompts/list`` says of the prompt
holds for both.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import NamedTuple

import msgspec

from .connection import Connection
from .event_kinds import LabelMoved, LabelPromoted, Payload, RolloutChanged
from .events import changed_prompts, emit, listening, seen_changes, short
from .model import (
    Guard,
    Move,
    MoveRule,
    Position,
    Protection,
    Rollout,
    RolloutEvent,
    StoreConflict,
    StoreMissing,
    TestsFailed,
    is_safe_path,
)
from .model import skill_marker as _skill_marker
from .reads import Reads
from .reviews import require_approvals
from .schema import CHANNEL, LISTING_FORMAT, LISTING_HEAD, MAX_FILE_BYTES

#: A rollout's share is given in percent with at most two decimals: 10,000 buckets.
BUCKETS = 10_000
#: How long the tests a label requires may run for one move (the store's write lock is held meanwhile).
REQUIRED_TESTS_SECONDS = 30.0
_ROLLOUT = ("SELECT id, label, path, prompt, base, version, basis_points, author, message, created FROM rollouts")


def bucket(rollout: int, key: str) -> int:
    """Where ``key`` falls in rollout ``rollout``: 0-9,999, the same on every replica and every run (SHA-256
    of the rollout's number and the key). A key below the share's basis points gets the rollout's version;
    raising the share keeps every key that had it."""
    digest = hashlib.sha256(f"{rollout}\0{key}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % BUCKETS


class RolloutStep(NamedTuple):
    """A change of a rollout, as the release gate is shown it: ``kind`` start (``rollout.id`` not yet
    given), percent (``rollout`` with its new share), promote or abort."""

    rollout: Rollout
    kind: str


class Promotion(NamedTuple):
    """A move that points a label at what another label holds (``promotion.promote``), as the release gate is
    shown it: the source label, its position, and the prompts named (empty: all of it)."""

    source: str
    position: int
    names: tuple[str, ...] = ()


class Governance:
    """Label moves with their audit, protections and rollouts, through a store's connection (``Store.governance``;
    ``Store`` adds publishing)."""

    __slots__ = ("db", "reads")

    def __init__(self, db: Connection, reads: Reads) -> None:
        self.db = db
        self.reads = reads

    # -- label moves ---------------------------------------------------------------------------------

    def release(self, label: str, files: dict[str, int], author: str, reason: str, message: str = "",
                allow: MoveRule | None = None, now: Position | None = None, guard: Guard | None = None,
                event: str = "label", step: RolloutStep | None = None,
                promotion: Promotion | None = None, proposal: int | None = None) -> int | None:
        """(Inside a write transaction.) The release gate: the one function every change of what a label serves
        passes (a publish with the label, a pointing, a rollback, a save with it, a rollout's start, change of
        share, promotion and abort). In this order: ``guard`` is shown the label's protection, ``allow`` the
        change (either may refuse it); a label that requires tests has the tests of what it would serve run
        (``TestsFailed``); then the change is written with its audit and its event, and servers are told.

        ``files``: what the label serves after the change (for a rollout's start or share, its files with the
        rollout's version in place of its path's). ``step``: the rollout change this is, if any; else a move
        of the label, a new position (none when the label points at ``files`` already). Returns the new
        position's number, or the rollout's; None when nothing moved. ``now``: the label's position, if read.
        ``event``: the kind of event a move is for webhooks (``events.emit``); ``promotion``: the label and
        position a promotion takes ``files`` from (its event, ``promote``, names them). ``proposal``: the
        proposal this move merges (``proposals``): a label that requires approvals moves only so, to exactly
        the versions its reviewers approved (``reviews.require_approvals``); an abort of a rollout (the label's
        own versions served again) needs none."""
        protection = self.protection(label)
        if guard is not None:
            guard(protection)
        now = now or self.reads.position(label)
        before = now.files if now is not None else {}
        if allow is not None:
            # A rollout's change is its prompt's two versions, whichever way its share moves.
            allow(*((before, files) if step is None else
                    ({step.rollout.path: step.rollout.base}, {step.rollout.path: step.rollout.version})))
        if step is None and now is not None and before == files:
            return None
        if protection is not None and protection.approvals and not (step is not None and step.kind == "abort"):
            require_approvals(self.db, protection, before, files, proposal)
        if protection is not None and protection.require_tests and files != before:
            self._require_tests(label, files)
        if step is not None and step.kind != "promote":
            return self._write_rollout(step, author, message)
        if step is not None:  # a promotion: the rollout ends, and the label moves to its version
            self._end(step.rollout, "promote", author, message, None)
        position_id = self._write_position(label, files, author, reason, message, now, event, promotion)
        if step is not None:
            self.db.run("UPDATE rollout_events SET position = ? WHERE id = (SELECT MAX(id) FROM rollout_events "
                        "WHERE rollout = ?)", position_id, step.rollout.id)
        return position_id

    def _write_position(self, label: str, files: dict[str, int], author: str, reason: str, message: str,
                        now: Position | None, event: str, promotion: Promotion | None = None) -> int:
        """(Only from ``release``.) Record the label's new position, with who, when, why and the position it
        left, and its event; a live rollout of a prompt file whose version it changes ends (``superseded``)."""
        position_id = int(self.db.run("INSERT INTO positions (label, author, reason, created, message, previous) "
                                      "VALUES (?, ?, ?, ?, ?, ?) RETURNING id", label, author, reason, time.time(),
                                      message, now.id if now is not None else None).fetchone()[0])
        self.db.many("INSERT INTO position_files (position, path, version, skill) VALUES (?, ?, ?, ?)",
                     [(position_id, path, version, _skill_marker(path)) for path, version in sorted(files.items())])
        self.db.run("UPDATE position_files SET name = f.prompt, scopes = f.scopes FROM files f WHERE "
                    "position_files.position = ? AND f.path = position_files.path "
                    "AND f.version = position_files.version AND f.prompt IS NOT NULL", position_id)
        clash = self.db.rows("SELECT name FROM position_files WHERE position = ? AND name IS NOT NULL GROUP BY name "
                             "HAVING count(*) > 1 LIMIT 1", position_id)
        if clash:  # only a move of some files (`label NAME@VERSION`, `promote SRC DST NAME`) can: a renamed prompt
            raise StoreConflict(f"label {label!r} would serve two prompts named {clash[0][0]!r}; nothing changed")
        self.summarize(position_id)
        if listening(self.db, event):
            before = now.files if now is not None else {}
            prompts, truncated = changed_prompts(self.db, before, files)
            moved = sum(1 for path in before.keys() | files.keys() if before.get(path) != files.get(path))
            payload: Payload = LabelMoved(label=label, author=author, message=short(message or reason), reason=reason,
                                          position=position_id,
                                          previous_position=now.id if now is not None else None,
                                          files=moved, prompts=prompts, truncated=truncated)
            if promotion is not None:  # the same, and the label and position it came from
                payload = LabelPromoted(**msgspec.structs.asdict(payload), source=promotion.source,
                                        source_position=promotion.position, partial=bool(promotion.names))
            emit(self.db, event, payload, seen_changes(self.reads, before, files))
        for rollout in self.live_rollouts(label):
            if files.get(rollout.path) != rollout.base:
                self._end(rollout, "superseded", author, reason, position_id)
        self._announce(label)
        return position_id

    def summarize(self, position_id: int) -> None:
        """Record what a server needs of a position before its first page (see schema 3)."""
        unlisted = self.db.rows("SELECT 1 FROM position_files pf JOIN files f ON f.path = pf.path AND "
                                "f.version = pf.version WHERE pf.position = ? AND pf.name IS NOT NULL AND "
                                "(f.listing IS NULL OR substr(f.listing, 1, ?) <> ?) LIMIT 1",
                                position_id, len(LISTING_HEAD), LISTING_HEAD)
        sets = sorted(row[0] for row in self.db.rows("SELECT DISTINCT scopes FROM position_files WHERE position = ? "
                                                     "AND name IS NOT NULL AND scopes <> ''", position_id))
        self.db.run("UPDATE positions SET listing_format = ?, scope_sets = ? WHERE id = ?",
                    None if unlisted else LISTING_FORMAT, json.dumps(sets), position_id)

    def _announce(self, label: str) -> None:
        """(Inside a write transaction.) Tell every server following ``label`` that what it serves changed:
        PostgreSQL delivers the notification at commit; SQLite's followers see the commit itself."""
        if self.db.postgres:
            self.db.run("SELECT pg_notify(?, ?)", CHANNEL, label)

    def moves(self, label: str, limit: int = 1000, before: int | None = None) -> list[Move]:
        """The label's moves, newest first (at most ``limit``; with ``before``, only those of positions below
        it), each with the position it left."""
        rows = self.db.rows("SELECT id, reason, author, created, message, previous FROM positions WHERE label = ? "
                            "AND id < ? ORDER BY id DESC LIMIT ?", label, 2**62 if before is None else before,
                            limit + 1)
        out = []
        for at, (position_id, reason, author, created, message, previous) in enumerate(rows[:limit]):
            if previous is None and at + 1 < len(rows):  # recorded before schema 5: the label's move before
                previous = rows[at + 1][0]
            out.append(Move(int(position_id), label, reason, author, float(created), message or "",
                            None if previous is None else int(previous)))
        return out

    def _require_tests(self, label: str, files: dict[str, int]) -> None:
        """(Inside the move's write transaction, so the files tested are the files moved to.) Run the prompt
        tests of the library ``files`` make (``testing.run_file_tests``, bounded by ``REQUIRED_TESTS_SECONDS``:
        writers queue meanwhile); ``TestsFailed`` when any fails or a prompt file does not parse."""
        from .testing import run_file_tests

        pairs = sorted(files.items())
        data: dict[str, bytes] = {}
        for start in range(0, len(pairs), 500):
            chunk = pairs[start:start + 500]
            rows = self.db.rows("SELECT f.path, f.version, CASE WHEN length(b.data) <= ? THEN b.data END FROM files f "
                                "JOIN blobs b ON b.digest = f.digest WHERE (f.path, f.version) IN "
                                f"(VALUES {', '.join(['(?, ?)'] * len(chunk))})", MAX_FILE_BYTES,
                                *[value for pair in chunk for value in pair])
            data.update((path, bytes(blob)) for path, version, blob in rows
                        if blob is not None and files.get(path) == int(version) and is_safe_path(path))
        report, problems = run_file_tests(data, seconds=REQUIRED_TESTS_SECONDS)
        if report.passed and not problems:
            return
        recorded = self.reads.recorded(pairs)
        scopes = {r.prompt: r.scopes or "" for r in recorded.values() if r.prompt is not None}
        failing = [(p.prompt, scopes.get(p.prompt, ""), p.failures()) for p in report.prompts if not p.passed]
        # A file that does not parse is named by its path, seen by its own recorded scopes.
        by_path = {path: r for (path, _), r in recorded.items()}
        for problem in problems:
            path = problem.split(":", 1)[0]
            seen = by_path.get(path)
            failing.append((seen.prompt or path if seen else path, (seen.scopes or "") if seen else "", [problem]))
        summary = report.summary() + (f"; {len(problems)} file{'s' * (len(problems) != 1)} do not parse"
                                      if problems else "")
        raise TestsFailed(label, failing, summary)

    def changes_between(self, before: int | None, after: int,
                        limit: int | None = None) -> dict[str, tuple[int | None, int | None]]:
        """What a move from position ``before`` (None: nothing) to ``after`` changed: path -> (its version
        before, after; None where the position has no such file). Worked out in the database; with ``limit``,
        at most that many rows of each side are read (a move of a large library changes many files)."""
        if before is None:
            rows = self.db.rows("SELECT path, version FROM position_files WHERE position = ? ORDER BY path"
                                + (" LIMIT ?" if limit is not None else ""), after, *([limit] if limit else []))
            return {path: (None, int(version)) for path, version in rows}
        one = "SELECT path, version FROM position_files WHERE position = ? EXCEPT " \
              "SELECT path, version FROM position_files WHERE position = ?" + (" LIMIT ?" if limit is not None else "")
        bound = [limit] if limit is not None else []
        gone = dict(self.db.rows(one, before, after, *bound))
        came = dict(self.db.rows(one, after, before, *bound))
        return {path: (gone.get(path), came.get(path)) for path in sorted({*gone, *came})}

    # -- protected labels ----------------------------------------------------------------------------

    def protection(self, label: str) -> Protection | None:
        rows = self.db.rows("SELECT label, scope, require_tests, author, created, approvals FROM protected_labels "
                            "WHERE label = ?", label)
        return _protection(rows[0]) if rows else None

    def protections(self) -> list[Protection]:
        return [_protection(row) for row in self.db.rows("SELECT label, scope, require_tests, author, created, "
                                                         "approvals FROM protected_labels ORDER BY label")]

    def protect(self, label: str, scope: str, *, require_tests: bool, author: str,
                approvals: int = 0) -> Protection | None:
        """Protect ``label`` with ``scope`` (replacing any protection it had); the protection it had. With
        ``approvals``, a move of it needs that many approvals of a proposal (``reviews.require_approvals``)."""
        with self.db.transaction():
            before = self.protection(label)
            self.db.run("DELETE FROM protected_labels WHERE label = ?", label)
            self.db.run("INSERT INTO protected_labels (label, scope, require_tests, author, created, approvals) "
                        "VALUES (?, ?, ?, ?, ?, ?)", label, scope, int(require_tests), author, time.time(), approvals)
        return before

    def unprotect(self, label: str) -> Protection:
        with self.db.transaction():
            before = self.protection(label)
            if before is None:
                raise StoreMissing(f"label {label!r} is not protected")
            self.db.run("DELETE FROM protected_labels WHERE label = ?", label)
        return before

    # -- rollouts ------------------------------------------------------------------------------------

    def live_rollouts(self, label: str) -> list[Rollout]:
        return [_rollout(row) for row in self.db.rows(_ROLLOUT + " WHERE label = ? AND ended IS NULL ORDER BY id",
                                                      label)]

    def rollout_events(self, label: str, limit: int = 1000) -> list[RolloutEvent]:
        """The label's rollout events, newest first."""
        rows = self.db.rows("SELECT e.kind, e.basis_points, e.author, e.message, e.created, e.position, r.id, r.label, "
                            "r.path, r.prompt, r.base, r.version, r.basis_points, r.author, r.message, r.created "
                            "FROM rollout_events e JOIN rollouts r ON r.id = e.rollout WHERE r.label = ? "
                            "ORDER BY e.id DESC LIMIT ?", label, limit)
        return [RolloutEvent(_rollout(row[6:]), row[0], int(row[1]), row[2], row[3], float(row[4]),
                             None if row[5] is None else int(row[5])) for row in rows]

    def start_rollout(self, label: str, prompt: str, version: int, basis_points: int, *, author: str,
                      message: str = "", guard: Guard | None = None, allow: MoveRule | None = None) -> Rollout:
        """Send ``basis_points`` of ``label``'s renders of ``prompt`` to ``version``; the same version again
        changes the share of the live rollout (its keys stay where they are as the share grows). Either passes
        the release gate (``release``) as what the label serves with that version."""
        if not 0 <= basis_points <= BUCKETS:
            raise StoreConflict(f"a rollout's share is 0 to 100 percent, not {basis_points / 100}")
        with self.db.transaction():
            if guard is not None:  # a label the writer may not move is refused as such, before what it names
                guard(self.protection(label))
            path, found, data = self.reads.version_of(prompt, version)
            if data is None:
                raise StoreConflict(f"version {found} of {prompt!r} is its deletion; roll out a version that has it")
            self.reads.require_position(label)
            now = self.reads.position(label)
            base = now.files.get(path) if now is not None else None
            if now is None or base is None:
                raise StoreConflict(f"label {label!r} does not serve {prompt!r}; point it at a version first")
            live = next((r for r in self.live_rollouts(label) if r.path == path), None)
            if live is not None and live.version != found:
                raise StoreConflict(f"{prompt!r} is already rolling out version {live.version} on label {label!r}; "
                                    "promote or abort it first")
            if live is not None:
                step = RolloutStep(live._replace(basis_points=basis_points), "percent")
            else:
                if base == found:
                    raise StoreConflict(f"label {label!r} points at version {found} of {prompt!r} already")
                self._compatible(prompt, path, base, found)
                name = self.db.rows("SELECT prompt FROM files WHERE path = ? AND version = ?", path, found)[0][0]
                step = RolloutStep(Rollout(0, label, path, name or prompt, base, found, basis_points, author, message,
                                           time.time()), "start")
            rollout_id = self.release(label, {**now.files, path: found}, author, f"rollout {prompt}@{found}",
                                      message, allow, now, guard, step=step)
        assert rollout_id is not None  # a rollout's step always writes
        return step.rollout._replace(id=rollout_id)

    def end_rollout(self, label: str, prompt: str, *, promote: bool, author: str, message: str = "",
                    guard: Guard | None = None, allow: MoveRule | None = None) -> Rollout:
        """End the live rollout of ``prompt`` on ``label``: promoted (the label moves to its version, a
        recorded move) or aborted (every render goes to the label's version again); through the release
        gate either way (``release``)."""
        with self.db.transaction():
            if guard is not None:
                guard(self.protection(label))
            path = self.reads.path_of(prompt)
            live = next((r for r in self.live_rollouts(label) if r.path == path), None)
            if live is None:
                raise StoreMissing(f"no rollout of {prompt!r} on label {label!r}")
            now = self.reads.position(label)
            files = dict(now.files) if now is not None else {}
            if promote:
                files[path] = live.version
            self.release(label, files, author, f"promote rollout {live.id}", message, allow, now, guard,
                         step=RolloutStep(live, "promote" if promote else "abort"))
        return live

    def _write_rollout(self, step: RolloutStep, author: str, message: str) -> int:
        """(Only from ``release``.) Record a rollout's start, change of share or abort; the rollout's number."""
        rollout = step.rollout
        if step.kind == "start":
            rollout = rollout._replace(id=int(self.db.run(
                "INSERT INTO rollouts (label, path, prompt, base, version, basis_points, author, message, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id", rollout.label, rollout.path, rollout.prompt,
                rollout.base, rollout.version, rollout.basis_points, author, message, rollout.created).fetchone()[0]))
            self._rollout_event(rollout, "start", author, message)
        elif step.kind == "percent":
            self.db.run("UPDATE rollouts SET basis_points = ? WHERE id = ?", rollout.basis_points, rollout.id)
            self._rollout_event(rollout, "percent", author, message)
        else:
            self._end(rollout, step.kind, author, message, None)
        self._announce(rollout.label)
        return rollout.id

    def _end(self, rollout: Rollout, outcome: str, author: str, message: str, position: int | None) -> None:
        self.db.run("UPDATE rollouts SET ended = ?, outcome = ? WHERE id = ?", time.time(), outcome, rollout.id)
        self._rollout_event(rollout, outcome, author, message, position)

    def _rollout_event(self, rollout: Rollout, kind: str, author: str, message: str,
                       position: int | None = None) -> None:
        """(Inside a write transaction, under ``release``.) Record a rollout's event, its audit and its webhook
        event: the one place either is written."""
        self.db.run("INSERT INTO rollout_events (rollout, kind, basis_points, author, message, created, position) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)", rollout.id, kind, rollout.basis_points, author, message,
                    time.time(), position)
        if listening(self.db, "rollout"):
            # The prompt as a label event names it, with the scopes that hide the event from a webhook
            # that may not see it; ``version`` is the one the share goes to, ``previous`` the label's.
            before, after = {rollout.path: rollout.base}, {rollout.path: rollout.version}
            prompts, _ = changed_prompts(self.db, before, after)
            emit(self.db, "rollout", RolloutChanged(label=rollout.label, rollout=rollout.id, change=kind,
                                                 percent=rollout.basis_points / 100, author=author,
                                                 message=short(message), position=position, prompts=prompts),
                 seen_changes(self.reads, before, after))

    def _compatible(self, prompt: str, path: str, base: int, version: int) -> None:
        """Refuse a rollout whose version shows clients another name, other scopes or other arguments than the
        label's version: ``prompts/list`` lists the label's version for both."""
        from .versions import argument_schema

        rows = dict(((int(v), (name, scopes)) for v, name, scopes in self.db.rows(
            "SELECT version, prompt, scopes FROM files WHERE path = ? AND version IN (?, ?)", path, base, version)))
        if rows.get(base, (None,))[0] != rows.get(version, (None,))[0]:
            raise StoreConflict(f"version {version} of {prompt!r} has another name than version {base}; "
                                "a rollout serves one prompt")
        if (rows.get(base, (None, None))[1] or "") != (rows.get(version, (None, None))[1] or ""):
            raise StoreConflict(f"version {version} of {prompt!r} has other scopes than version {base}; "
                                "a rollout cannot change who sees a prompt")
        schemas = [argument_schema(path, self.reads.file_version(path, v)[1]) for v in (base, version)]
        if schemas[1] is None:
            raise StoreConflict(f"version {version} of {prompt!r} does not parse; roll out one that does")
        if schemas[0] != schemas[1]:
            raise StoreConflict(f"version {version} of {prompt!r} takes other arguments than version {base}, which "
                                "prompts/list shows clients; publish it under another name, or label it instead")


def _protection(row: tuple[object, ...]) -> Protection:
    label, scope, require_tests, author, created, approvals = row
    return Protection(str(label), str(scope), bool(require_tests), str(author), float(created),  # type: ignore[arg-type]
                      int(approvals or 0))  # type: ignore[call-overload]


def _rollout(row: tuple[object, ...]) -> Rollout:
    rollout_id, label, path, prompt, base, version, basis_points, author, message, created = row
    return Rollout(int(rollout_id), str(label), str(path), str(prompt), int(base), int(version),  # type: ignore[call-overload]
                   int(basis_points), str(author), str(message), float(created))  # type: ignore[call-overload,arg-type]
