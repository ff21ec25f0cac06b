"""Proposals: a set of versions aimed at a label and not yet served, which reviewers comment on, approve or
reject, and which a merge serves (docs/store.md#reviews).

A proposal is opened by ``publish --propose`` (``open_folder``: the versions a publish just recorded), by the
web editor's save (``open``, with the saved version) or by an agent (``open`` too, through the MCP write
tools); a new set of versions may be pushed to an open one (``push``), which resets its approvals
(``reviews``). Nothing served changes until ``merge``, which moves the label through the release gate
(``Governance.release``, given the proposal), like every other move. Each change is one transaction and one
row of ``proposal_reviews`` (the audit) and a ``proposal`` webhook event. Who a principal is, and what it may
see, is the caller's: the store API passes the authenticated principal's name and its ``Guard``.
"""

from __future__ import annotations

import hashlib
import time
from typing import NamedTuple

from .connection import Connection
from .event_kinds import ProposalChanged
from .events import changed_prompts, emit, listening, seen_changes, short
from .governance import Governance
from .model import Guard, MoveRule, StoreConflict, StoreMissing, is_label
from .reads import Reads
from .reviews import approvers, authors, deletions, digest_of, proposed

#: The states of a proposal: only an open one is reviewed, given versions or merged.
STATES = ("open", "merged", "rejected", "withdrawn")
#: The kinds of review row (the audit).
KINDS = ("open", "push", "comment", "approve", "reject", "withdraw", "merge")
MAX_COMMENT_CHARS = 4000
_SELECT = "SELECT id, label, author, message, state, created, closed, position FROM proposals"


class Proposal(NamedTuple):
    id: int
    label: str
    author: str
    message: str
    #: one of ``STATES``
    state: str
    created: float
    closed: float | None
    #: the label's position a merge moved it to
    position: int | None
    #: path -> version (a deletion's version: the merge removes the file)
    files: dict[str, int]


class Review(NamedTuple):
    """One row of a proposal's audit: who did what, when, on which set of versions (``digest``)."""

    kind: str
    principal: str
    message: str
    digest: str
    #: the review scope an approval was made holding (None: none was needed)
    scope: str | None
    created: float


class Proposals:
    """A store's proposals (``Store.proposals``)."""

    __slots__ = ("db", "reads", "governance")

    def __init__(self, db: Connection, reads: Reads, governance: Governance) -> None:
        self.db = db
        self.reads = reads
        self.governance = governance

    # -- reading -------------------------------------------------------------------------------------

    def get(self, proposal: int) -> Proposal:
        rows = self.db.rows(_SELECT + " WHERE id = ?", proposal)
        if not rows:
            raise StoreMissing(f"no proposal {proposal}")
        return _proposal(rows[0], proposed(self.db, proposal))

    def find(self, label: str | None = None, state: str | None = None, limit: int = 200) -> list[Proposal]:
        """Proposals, newest first, of ``label`` and in ``state`` where given."""
        where, args = [], []
        for column, value in (("label", label), ("state", state)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        rows = self.db.rows(_SELECT + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id DESC LIMIT ?",
                            *args, limit)
        return [_proposal(row, proposed(self.db, int(row[0]))) for row in rows]

    def reviews(self, proposal: int) -> list[Review]:
        """The proposal's audit, oldest first."""
        return [Review(str(k), str(p), str(m), str(d), None if s is None else str(s), float(c)) for k, p, m, d, s, c in
                self.db.rows("SELECT kind, principal, message, digest, scope, created FROM proposal_reviews "
                             "WHERE proposal = ? ORDER BY id", proposal)]

    def approvals(self, proposal: int) -> tuple[list[str], int, str | None]:
        """(who approved its current versions, counted as the label's protection counts them; how many the
        label requires; the review scope, None when the label requires none)."""
        found = self.get(proposal)
        protection = self.governance.protection(found.label)
        needed = protection.approvals if protection is not None else 0
        scope = protection.scope if protection is not None and needed else None
        return approvers(self.db, proposal, scope), needed, scope

    def serving(self, proposal: Proposal) -> dict[str, int]:
        """What the proposal's label serves now at the proposal's paths (path -> version; absent: not served)."""
        now = self.reads.position(proposal.label)
        return {path: now.files[path] for path in proposal.files if now is not None and path in now.files}

    # -- changes ------------------------------------------------------------------------------------

    def open(self, label: str, files: dict[str, int], *, author: str, message: str = "") -> Proposal:
        """Propose serving ``files`` (path -> version, each one the store has) on ``label``; its versions that
        the label serves already are left out, and a proposal that would change nothing is refused."""
        if not is_label(label):
            raise StoreConflict(f"label {label!r} is not valid")
        with self.db.transaction():
            files = self._changes(label, files)
            proposal = int(self.db.run("INSERT INTO proposals (label, author, message, state, created) "
                                       "VALUES (?, ?, ?, 'open', ?) RETURNING id", label, author, message,
                                       time.time()).fetchone()[0])
            self._set_files(proposal, files)
            self._record(proposal, "open", author, message)
        return self.get(proposal)

    def open_folder(self, label: str, content: dict[str, bytes], *, author: str, message: str = "") -> Proposal:
        """``open`` the versions a publish of ``content`` (a whole library: path -> bytes) recorded
        (``folder_versions``)."""
        return self.open(label, self.folder_versions(label, content), author=author, message=message)

    def folder_versions(self, label: str, content: dict[str, bytes]) -> dict[str, int]:
        """The versions a publish of ``content`` (a whole library: path -> bytes) recorded: each file's newest
        version with these bytes, and the deletion of each file ``label`` serves that it lacks."""
        latest = self.reads.latest()
        files: dict[str, int] = {}
        for path, data in content.items():
            digest = hashlib.sha256(data).hexdigest()
            newest = latest.get(path)
            if newest is not None and newest.digest == digest:
                files[path] = newest.version
                continue
            rows = self.db.rows("SELECT MAX(version) FROM files WHERE path = ? AND digest = ?", path, digest)
            if not rows or rows[0][0] is None:
                raise StoreMissing(f"the store has no version of {path} with these bytes: publish it first")
            files[path] = int(rows[0][0])
        now = self.reads.position(label)
        for path in (now.files if now is not None else {}):
            newest = latest.get(path)
            if path not in content and newest is not None and newest.digest is None:
                files[path] = newest.version
        return files

    def push(self, proposal: int, files: dict[str, int], *, author: str, message: str = "") -> Proposal:
        """Give the open proposal new versions (added to, or replacing, those it holds); its approvals no longer
        count, and ``author`` becomes one of its authors (who may not approve it)."""
        with self.db.transaction():
            found = self._open(proposal)
            after = self._changes(found.label, {**found.files, **files})
            self.db.run("DELETE FROM proposal_files WHERE proposal = ?", proposal)
            self._set_files(proposal, after)
            self._record(proposal, "push", author, message)
        return self.get(proposal)

    def comment(self, proposal: int, principal: str, message: str) -> None:
        if not message.strip():
            raise StoreConflict("a comment needs text")
        with self.db.transaction():
            self.get(proposal)
            self._record(proposal, "comment", principal, message[:MAX_COMMENT_CHARS])

    def approve(self, proposal: int, principal: str, *, guard: Guard | None = None, message: str = "") -> list[str]:
        """``principal`` approves the proposal's current versions; ``guard`` is shown the label's protection
        (the store API's holds the principal to its scope: the review scope). Its authors cannot approve it.
        Who approved, counted (``approvals``)."""
        self._review(proposal, "approve", principal, guard, message)
        return self.approvals(proposal)[0]

    def reject(self, proposal: int, principal: str, *, guard: Guard | None = None, message: str = "") -> None:
        """``principal``, a reviewer (as ``approve``), rejects the proposal: it is closed, never merged."""
        self._review(proposal, "reject", principal, guard, message)

    def withdraw(self, proposal: int, principal: str, message: str = "") -> None:
        """One of its authors withdraws the open proposal."""
        with self.db.transaction():
            self._open(proposal)
            if principal not in authors(self.db, proposal):
                raise StoreConflict(f"only an author of proposal {proposal} withdraws it; reject it instead")
            self._close(proposal, "withdrawn", None)
            self._record(proposal, "withdraw", principal, message)

    def merge(self, proposal: int, *, author: str, message: str = "", guard: Guard | None = None,
              allow: MoveRule | None = None) -> int | None:
        """Serve the open proposal: its label moves to what it serves with the proposal's versions, through the
        release gate (its protection, its tests, its approvals). The new position (None: the label served them
        already). The versions are read inside the merge's transaction: a version pushed meanwhile is either in
        what the gate checks and serves, or comes after the merge."""
        with self.db.transaction():
            found = self._open(proposal)
            now = self.reads.position(found.label)
            before = now.files if now is not None else {}
            gone = deletions(self.db, found.files)
            files = {path: v for path, v in {**before, **found.files}.items() if path not in gone}
            position = self.governance.release(found.label, files, author, f"merge proposal {proposal}",
                                               message or found.message, allow, now, guard, proposal=proposal)
            self._close(proposal, "merged", position)
            self._record(proposal, "merge", author, message, position)
        return position

    # -- inside a transaction ------------------------------------------------------------------------

    def _open(self, proposal: int) -> Proposal:
        found = self.get(proposal)
        if found.state != "open":
            raise StoreConflict(f"proposal {proposal} is {found.state}; nothing changed")
        return found

    def _review(self, proposal: int, kind: str, principal: str, guard: Guard | None, message: str) -> None:
        with self.db.transaction():
            found = self._open(proposal)
            protection = self.governance.protection(found.label)
            if guard is not None:
                guard(protection)
            if principal in authors(self.db, proposal):
                raise StoreConflict(f"{principal} wrote proposal {proposal}: its authors cannot {kind} it; "
                                    "another reviewer must")
            if kind == "reject":
                self._close(proposal, "rejected", None)
            self._record(proposal, kind, principal, message, scope=protection.scope if protection else None)

    def _changes(self, label: str, files: dict[str, int]) -> dict[str, int]:
        """``files`` less the versions ``label`` serves already (or, for a deletion, does not serve); each
        version checked to exist. Refused when nothing is left."""
        if not files:
            raise StoreConflict("a proposal needs at least one version")
        known = self.reads.recorded(files.items())
        missing = sorted(path for path, version in files.items() if (path, version) not in known)
        if missing:
            raise StoreMissing(f"the store has no version {files[missing[0]]} of {missing[0]}")
        now = self.reads.position(label)
        serving = now.files if now is not None else {}
        gone = {path for (path, _), r in known.items() if r.digest is None}
        changed = {path: version for path, version in files.items()
                   if (path in serving if path in gone else serving.get(path) != version)}
        if not changed:
            raise StoreConflict(f"label {label!r} serves these versions already; nothing to propose")
        return changed

    def _set_files(self, proposal: int, files: dict[str, int]) -> None:
        self.db.many("INSERT INTO proposal_files (proposal, path, version) VALUES (?, ?, ?)",
                     [(proposal, path, version) for path, version in sorted(files.items())])

    def _close(self, proposal: int, state: str, position: int | None) -> None:
        self.db.run("UPDATE proposals SET state = ?, closed = ?, position = ? WHERE id = ?", state, time.time(),
                    position, proposal)

    def _record(self, proposal: int, kind: str, principal: str, message: str, position: int | None = None,
                scope: str | None = None) -> None:
        """The audit row of a change of the proposal (append-only: nothing updates or deletes one) and its
        webhook event, naming the proposal's prompts only to webhooks that may see them."""
        files = proposed(self.db, proposal)
        self.db.run("INSERT INTO proposal_reviews (proposal, kind, principal, message, digest, scope, created) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)", proposal, kind, principal, message, digest_of(files), scope,
                    time.time())
        if not listening(self.db, "proposal"):
            return
        label = str(self.db.rows("SELECT label FROM proposals WHERE id = ?", proposal)[0][0])
        now = self.reads.position(label) if position is None else None
        before = {p: now.files[p] for p in files if now is not None and p in now.files}
        if position is not None:  # merged: what it served before is the position the merge left
            left = self.db.rows("SELECT previous FROM positions WHERE id = ?", position)[0][0]
            served = self.reads.versions_at(int(left)) if left is not None else {}
            before = {p: served[p] for p in files if p in served}
        prompts, truncated = changed_prompts(self.db, before, files)
        change = {"open": "opened", "push": "pushed", "comment": "commented", "approve": "approved",
                  "reject": "rejected", "withdraw": "withdrawn", "merge": "merged"}[kind]
        emit(self.db, "proposal", ProposalChanged(proposal=proposal, label=label, change=change, author=principal,
                                                  message=short(message), position=position, prompts=prompts,
                                                  truncated=truncated),
             seen_changes(self.reads, before, files))


def _proposal(row: tuple[object, ...], files: dict[str, int]) -> Proposal:
    pid, label, author, message, state, created, closed, position = row
    return Proposal(int(pid), str(label), str(author), str(message or ""), str(state),  # type: ignore[call-overload]
                    float(created), None if closed is None else float(closed),  # type: ignore[arg-type]
                    None if position is None else int(position), files)  # type: ignore[call-overload]
