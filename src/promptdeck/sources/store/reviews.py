"""The review rule: what a proposal's approvals are worth, and the check the release gate makes of a label
that requires them (docs/store.md#reviews).

A proposal (``proposals``) is a set of versions (path -> version) aimed at a label. Its reviews are rows of
``proposal_reviews``, never changed or removed: the audit. An approval counts towards a label's
``Protection.approvals`` only when all of these hold:

- it approved exactly the versions the proposal holds now: it carries the digest of its set of versions
  (``digest_of``), so a version pushed to the proposal later leaves it behind (the approvals are reset);
- its principal is not an author of the proposal: the one who opened it and everyone who pushed a version to
  it (``authors``). A principal is a name the server authenticated (a token's, a user's); the store API
  records the authenticated name, never one a request gives;
- it was made holding the label's protection scope, the review scope (``scope``, checked by the caller's
  ``Guard`` when the approval was recorded): an approval made before the label was protected, or under
  another scope, does not count.

Governance.release calls ``require_approvals`` for every move of a label that requires approvals, inside the
move's write transaction, so that what it reads is what the move serves.
"""

from __future__ import annotations

import hashlib
import json

from .connection import Connection
from .model import ApprovalsRequired, Protection


def digest_of(files: dict[str, int]) -> str:
    """The digest that names one set of versions (path -> version): what an approval approved."""
    return hashlib.sha256(json.dumps(sorted(files.items()), separators=(",", ":")).encode()).hexdigest()


def proposed(db: Connection, proposal: int) -> dict[str, int]:
    """The versions proposal ``proposal`` holds now: path -> version (a deletion's version removes the file)."""
    return {str(path): int(version) for path, version in
            db.rows("SELECT path, version FROM proposal_files WHERE proposal = ?", proposal)}


def deletions(db: Connection, files: dict[str, int]) -> set[str]:
    """The paths of ``files`` whose version is the file's deletion."""
    gone: set[str] = set()
    pairs = sorted(files.items())
    for start in range(0, len(pairs), 500):
        chunk = pairs[start:start + 500]
        gone.update(str(row[0]) for row in db.rows(
            "SELECT path FROM files WHERE digest IS NULL AND (path, version) IN "
            f"(VALUES {', '.join(['(?, ?)'] * len(chunk))})", *[v for pair in chunk for v in pair]))
    return gone


def merged(db: Connection, before: dict[str, int], files: dict[str, int]) -> dict[str, int]:
    """What a label serving ``before`` serves once proposal versions ``files`` are merged into it."""
    gone = deletions(db, files)
    after = {**before, **files}
    for path in gone:
        after.pop(path, None)
    return after


def authors(db: Connection, proposal: int) -> set[str]:
    """Who wrote the proposal: who opened it and who pushed a version to it. None of them approves it."""
    found = {str(row[0]) for row in db.rows("SELECT author FROM proposals WHERE id = ?", proposal)}
    return found | {str(row[0]) for row in db.rows("SELECT principal FROM proposal_reviews WHERE proposal = ? "
                                                   "AND kind = 'push'", proposal)}


def approvers(db: Connection, proposal: int, scope: str | None) -> list[str]:
    """The principals whose approvals of proposal ``proposal`` count now (see the module docstring), sorted;
    with ``scope`` None, whatever scope they were made under."""
    digest = digest_of(proposed(db, proposal))
    rows = db.rows("SELECT DISTINCT principal, scope FROM proposal_reviews WHERE proposal = ? AND kind = 'approve' "
                   "AND digest = ?", proposal, digest)
    wrote = authors(db, proposal)
    return sorted({str(who) for who, held in rows if who not in wrote and (scope is None or held == scope)})


def require_approvals(db: Connection, protection: Protection, before: dict[str, int], files: dict[str, int],
                      proposal: int | None) -> None:
    """(Inside the move's write transaction; only from ``Governance.release``.) Refuse a move of a label that
    requires approvals (``ApprovalsRequired``) unless it merges the open proposal ``proposal``, aimed at this
    label, serving exactly ``before`` with the proposal's versions, approved by enough reviewers."""
    label, needed = protection.label, protection.approvals
    if proposal is None:
        raise ApprovalsRequired(f"label {label!r} requires {needed} approval{'s' * (needed != 1)}: it moves only "
                                "by the merge of an approved proposal (promptdeck merge ID); nothing changed")
    rows = db.rows("SELECT label, state FROM proposals WHERE id = ?", proposal)
    if not rows or rows[0][0] != label or rows[0][1] != "open":
        raise ApprovalsRequired(f"proposal {proposal} is not an open proposal for label {label!r}; nothing changed")
    if files != merged(db, before, proposed(db, proposal)):
        raise ApprovalsRequired(f"the move would serve other versions than proposal {proposal} holds; "
                                "nothing changed")
    have = approvers(db, proposal, protection.scope)
    if len(have) < needed:
        raise ApprovalsRequired(f"proposal {proposal} has {len(have)} of the {needed} approval"
                                f"{'s' * (needed != 1)} label {label!r} requires (by holders of the scope "
                                f"{protection.scope} other than its authors, on its current versions); "
                                "nothing changed")
