"""``/api/store``'s reviews: proposals listed and shown, commented on, approved, rejected, withdrawn and merged
(docs/store-api.md#reviews, docs/store.md#reviews).

A proposal is read through the rule every store read follows (``_StoreView.version``, ``sources.store.seen``):
it is shown, and may be reviewed or merged, only by a principal who may see every version it holds and every
version of those files its label serves now; to anyone else it is answered as one that does not exist (404),
and it is left out of lists. A review is recorded under the authenticated principal's name, never a name the
body gives (the bodies take no such field). An approval or a rejection needs the label's protection scope, the
review scope (``store_governance.guard``, the rule every move of a protected label is held to); a merge is a
move like any other (the guard, and ``allow_move``: no change outside the principal's scopes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Protocol

import msgspec

from ...protocol.errors import HttpError
from ...sources.store.model import Recorded, StoreMissing
from ...sources.store.proposals import STATES, Proposal
from ...sources.store.reviews import digest_of
from ...sources.store.versions import TooLargeToDiff, is_text, side_by_side, text_of
from . import store_governance as governance

if TYPE_CHECKING:
    from ...sources.store.database import Store

#: Proposals looked at per list request (the newest), whatever the principal may see of them.
SCANNED = 200


class _StoreView(Protocol):
    """What is used here of one store call's view as its principal may see it (``store_api._StoreView``)."""

    store: Store
    held: frozenset[str] | None

    def version(self, path: str, version: int, recorded: Recorded | None = None) -> bool: ...

    def file_content(self, path: str, version: int, shown: str) -> tuple[int, bytes | None]: ...

    def allow_move(self, before: dict[str, int], after: dict[str, int]) -> None: ...


class ProposalCall(msgspec.Struct, forbid_unknown_fields=True):
    """The body of every POST here: which proposal, and the comment or reason. No principal: it is the
    authenticated one."""

    id: Annotated[int, msgspec.Meta(ge=1, le=2**53)]
    message: str = ""


def may_see(sight: _StoreView, proposal: Proposal) -> bool:
    """Whether the principal may see every version ``proposal`` holds and every one its label serves of them."""
    serving = sight.store.proposals.serving(proposal)
    pairs = [*proposal.files.items(), *serving.items()]
    recorded = sight.store.reads.recorded(pairs)
    return all(sight.version(path, version, recorded.get((path, version))) for path, version in pairs)


def _seen(sight: _StoreView, number: int) -> Proposal:
    """Proposal ``number``, if the principal may see it; else 404 in the words of one that does not exist."""
    try:
        found = sight.store.proposals.get(number)
    except StoreMissing:
        found = None
    if found is None or not may_see(sight, found):
        raise HttpError(404, f"no proposal {number}")
    return found


def _summary(sight: _StoreView, proposal: Proposal) -> dict[str, Any]:
    have, needed, scope = sight.store.proposals.approvals(proposal.id)
    return {"id": proposal.id, "label": proposal.label, "author": proposal.author, "message": proposal.message,
            "state": proposal.state, "created": proposal.created, "closed": proposal.closed,
            "position": proposal.position, "files": len(proposal.files),
            "approvals": {"by": have, "needed": needed, "scope": scope}}


def listing(sight: _StoreView, query: dict[str, str]) -> dict[str, Any]:
    """``GET /api/store/proposals[?label=L][&state=S]``: the newest proposals the principal may see."""
    state = query.get("state", "open")
    if state not in (*STATES, "all"):
        raise HttpError(400, f"state: one of {', '.join(STATES)} or all, not {state[:40]!r}")
    found = sight.store.proposals.find(query.get("label") or None, None if state == "all" else state, SCANNED)
    return {"proposals": [_summary(sight, p) for p in found if may_see(sight, p)]}


def shown(sight: _StoreView, query: dict[str, str], tests_refused: str | None = None) -> dict[str, Any]:
    """``GET /api/store/proposal?id=N``: the proposal, each file's side-by-side diff against what its label
    serves, and its audit (each approval marked ``current`` when it approved the versions held now). With
    ``tests=1``, the prompt tests of what a merge would serve, run as this principal would render them, unless
    ``tests_refused`` says why not (running them takes a writer, as the page's other test runs do)."""
    number = query.get("id", "")
    if not number.isdigit() or len(number) > 15:
        raise HttpError(400, "the query needs id=N, a proposal's number")
    proposal = _seen(sight, int(number))
    serving = sight.store.proposals.serving(proposal)
    files = []
    for path, version in sorted(proposal.files.items()):
        was = serving.get(path)
        old = sight.file_content(path, was, path)[1] if was is not None else None
        new = sight.file_content(path, version, path)[1]
        binary = not (is_text(old) and is_text(new))
        change: dict[str, Any] = {"path": path, "from": was, "to": version, "deleted": new is None,
                                  "binary": binary, "source": []}
        try:
            change["source"] = [] if binary else side_by_side(text_of(old), text_of(new))
        except TooLargeToDiff as exc:  # the rest of the proposal is still shown
            change["tooLarge"] = str(exc)
        files.append(change)
    current = digest_of(proposal.files)
    reviews = [{"kind": r.kind, "principal": r.principal, "message": r.message, "created": r.created,
                "current": r.digest == current} for r in sight.store.proposals.reviews(proposal.id)]
    answer = {**_summary(sight, proposal), "changes": files, "reviews": reviews}
    if query.get("tests") == "1":
        answer["tests"] = {"notRun": tests_refused} if tests_refused is not None else _merge_tests(sight, proposal)
    return answer


def _merge_tests(sight: _StoreView, proposal: Proposal) -> dict[str, Any]:
    """The tests of what merging ``proposal`` would serve: a summary (None when nothing there has tests) and the
    first failures."""
    from ...sources.store.testing import failures, run_merge_tests
    from .store_tests import PAGE_RUN_SECONDS

    report, problems = run_merge_tests(sight.store.reads, proposal.label, proposal.files, held=sight.held,
                                       seconds=PAGE_RUN_SECONDS)
    if not report.prompts and not problems:
        return {"summary": None, "failures": []}
    return {"summary": report.summary(), "passed": report.passed and not problems,
            "failures": failures(report, problems)}


def _comment(sight: _StoreView, proposal: Proposal, call: ProposalCall, who: str) -> dict[str, Any]:
    sight.store.proposals.comment(proposal.id, who, call.message)
    return {"id": proposal.id, "commented": True}


def _approve(sight: _StoreView, proposal: Proposal, call: ProposalCall, who: str) -> dict[str, Any]:
    have = sight.store.proposals.approve(proposal.id, who, guard=governance.guard(sight.held), message=call.message)
    return {"id": proposal.id, "approvals": have}


def _reject(sight: _StoreView, proposal: Proposal, call: ProposalCall, who: str) -> dict[str, Any]:
    sight.store.proposals.reject(proposal.id, who, guard=governance.guard(sight.held), message=call.message)
    return {"id": proposal.id, "state": "rejected"}


def _withdraw(sight: _StoreView, proposal: Proposal, call: ProposalCall, who: str) -> dict[str, Any]:
    sight.store.proposals.withdraw(proposal.id, who, call.message)
    return {"id": proposal.id, "state": "withdrawn"}


def _merge(sight: _StoreView, proposal: Proposal, call: ProposalCall, who: str) -> dict[str, Any]:
    position = sight.store.proposals.merge(proposal.id, author=who, message=call.message,
                                           guard=governance.guard(sight.held), allow=sight.allow_move)
    return {"id": proposal.id, "state": "merged", "label": proposal.label, "position": position}


_ACTIONS: dict[str, Callable[[_StoreView, Proposal, ProposalCall, str], dict[str, Any]]] = {
    "/proposal/comment": _comment, "/proposal/approve": _approve, "/proposal/reject": _reject,
    "/proposal/withdraw": _withdraw, "/proposal/merge": _merge}
#: The routes, as ``store_api`` dispatches them.
GETS: dict[str, Callable[[_StoreView, dict[str, str]], dict[str, Any]]] = {"/proposals": listing,
                                                                           "/proposal": shown}
#: The GET that may run tests: ``store_api`` tells it whether this principal may (``shown``'s ``tests_refused``).
RUNS_TESTS = "/proposal"
POSTS = frozenset(_ACTIONS)


def act(sight: _StoreView, route: str, call: ProposalCall, who: str) -> dict[str, Any]:
    """A POST here (the write scope already checked): the action on a proposal the principal may see."""
    if len(call.message) > 4000:
        raise HttpError(400, "message: at most 4000 characters")
    return _ACTIONS[route](sight, _seen(sight, call.id), call, who)


def pushable(sight: _StoreView, number: int, label: str | None) -> Proposal:
    """(A save with ``proposal``, before anything is saved.) The open proposal ``number``, if the principal may see
    it (else 404, as one that does not exist) and it is aimed at ``label`` when one is given (else 409)."""
    found = _seen(sight, number)
    if found.state != "open":
        raise HttpError(409, f"proposal {number} is {found.state}; nothing saved")
    if label is not None and label != found.label:
        raise HttpError(409, f"proposal {number} is aimed at {found.label!r}, not {label!r}; nothing saved")
    return found


def propose_saved(sight: _StoreView, label: str, path: str, version: int, who: str, message: str,
                  into: Proposal | None = None) -> int:
    """(A save with ``propose`` or ``proposal``.) Open a proposal of the saved version for ``label``, or push it
    to the open proposal ``into`` (whose approvals then no longer count, and whose authors ``who`` joins): its
    number."""
    if into is not None:
        return sight.store.proposals.push(into.id, {path: version}, author=who, message=message).id
    return sight.store.proposals.open(label, {path: version}, author=who, message=message).id

