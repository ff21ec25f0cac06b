"""The review commands of the ``promptdeck`` command: proposals, review, comment, approve, reject, withdraw and
merge (docs/store.md#reviews), and what ``publish --propose`` does after its publish.

Like the governance commands they reach the database directly, with its credentials: the administrator's path.
The principal a review is recorded as is ``--author`` (else the user's name), held to the same rule as the
store API's authenticated principal: an author of a proposal never approves it. Every text from the store is
printed through the terminal gate (``shown``). A failure is one line, exit 1, nothing changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import click

from ..protocol.errors import PromptdeckError
from .common import AUTHOR_OPTION, STORE_OPTION, author_of, fail, open_store, utc_time, valid_label
from .terminal import echo, shown

if TYPE_CHECKING:
    from ..sources.store.database import Store
    from ..sources.store.proposals import Proposal

T = TypeVar("T")
_STATES = ("open", "merged", "rejected", "withdrawn", "all")
#: The lines of diff ``review`` shows of one file before it says how many more there are.
DIFF_LINES = 400


def propose_published(opened: Store, propose: str, label: str, content: dict[str, bytes], author: str,
                      message: str) -> Proposal:
    """(``publish --propose``.) Open a proposal of the versions a publish of ``content`` just recorded, aimed at
    ``label`` (``propose`` "new"), or push them to the open proposal ``propose`` names."""
    if propose == "new":
        return opened.proposals.open_folder(label, content, author=author, message=message)
    if not propose.isdigit():
        fail(f"--propose={propose[:20]!r}: a proposal's number, or no value for a new one", 2)
    found = opened.proposals.get(int(propose))
    if found.label != label:
        fail(f"proposal {found.id} is aimed at label {shown(found.label)}, not {label}", 2)
    return opened.proposals.push(found.id, opened.proposals.folder_versions(label, content), author=author,
                                 message=message)


def _in_store(url: str, call: Callable[[Store], T]) -> T:
    """``call`` on the store at ``url``; a refusal fails the command in one line, nothing changed."""
    with open_store(url) as opened:
        try:
            return call(opened)
        except PromptdeckError as exc:
            fail(str(exc))


def _summary(opened: Store, proposal: Proposal) -> str:
    have, needed, _ = opened.proposals.approvals(proposal.id)
    approvals = f"  approvals {len(have)}/{needed}" if needed else (f"  approved by {len(have)}" if have else "")
    files = len(proposal.files)
    why = f"  {shown(proposal.message)}" if proposal.message else ""
    return (f"proposal {proposal.id}  {shown(proposal.label)}  {proposal.state}  {shown(proposal.author)}  "
            f"{utc_time(proposal.created)}  {files} file{'s' * (files != 1)}{approvals}{why}")


@click.command()
@STORE_OPTION
@click.option("--label", default=None, metavar="LABEL", help="Only the proposals aimed at LABEL.")
@click.option("--state", type=click.Choice(_STATES), default="open", show_default=True,
              help="Only the proposals in this state.")
def proposals(url: str, label: str | None, state: str) -> None:
    """List proposals, newest first: a set of versions aimed at a label, not served until merged."""
    chosen = valid_label(label) if label else None
    lines = _in_store(url, lambda opened: [_summary(opened, proposal) for proposal in
                                           opened.proposals.find(chosen, None if state == "all" else state)])
    for line in lines:
        echo(line)
    if not lines:
        echo(f"no {'' if state == 'all' else state + ' '}proposals" + (f" for label {label}" if label else ""))


@click.command()
@click.argument("proposal", type=int, metavar="ID")
@STORE_OPTION
@click.option("--no-tests", is_flag=True, help="Do not run the prompt tests of what the merge would serve.")
def review(proposal: int, url: str, no_tests: bool) -> None:
    """Show proposal ID: each file's diff against what its label serves, the tests of what a merge would serve,
    its comments, approvals and rejections."""
    for line in _in_store(url, lambda opened: _review_lines(opened, proposal, not no_tests)):
        echo(line)


def _review_lines(opened: Store, number: int, tests: bool) -> list[str]:
    from ..sources.store.reviews import digest_of
    from ..sources.store.versions import is_text, text_of, unified

    proposal = opened.proposals.get(number)
    lines = [_summary(opened, proposal)]
    have, needed, scope = opened.proposals.approvals(number)
    if needed:
        counted = shown(", ".join(have)) or "none"
        lines.append(f"label {shown(proposal.label)} requires {needed} approval{'s' * (needed != 1)} by holders of "
                     f"{shown(scope or '')} other than the proposal's authors; counted: {counted}")
    serving = opened.proposals.serving(proposal)
    for path, version in sorted(proposal.files.items()):
        was = serving.get(path)
        old = opened.reads.file_version(path, was)[1] if was is not None else None
        new = opened.reads.file_version(path, version)[1]
        lines.append(f"--- {shown(path)}: v{was if was is not None else '-'} -> "
                     f"{'deleted (v' + str(version) + ')' if new is None else 'v' + str(version)}")
        if not (is_text(old) and is_text(new)):
            lines.append("  (binary files differ)")
            continue
        diff = "".join(unified(text_of(old), text_of(new), f"{path}@{was or 0}", f"{path}@{version}")).splitlines()
        lines += [shown(line) for line in diff[:DIFF_LINES]]
        if len(diff) > DIFF_LINES:
            lines.append(f"  … and {len(diff) - DIFF_LINES} more lines")
    if tests and proposal.state == "open":
        lines.append(_tests_line(opened, proposal))
    current = digest_of(proposal.files)
    for row in opened.proposals.reviews(number):
        stale = " (on earlier versions)" if row.kind == "approve" and row.digest != current else ""
        said = f": {shown(row.message)}" if row.message else ""
        lines.append(f"{utc_time(row.created)}  {shown(row.principal)}  {row.kind}{stale}{said}")
    return lines


def _tests_line(opened: Store, proposal: Proposal) -> str:
    """The prompt tests of what merging the proposal would serve, in one line (and a failure or five)."""
    from ..sources.store.testing import failures, run_merge_tests

    report, problems = run_merge_tests(opened.reads, proposal.label, proposal.files)
    if not report.prompts and not problems:
        return "tests: none of what the merge would serve has tests"
    failing = failures(report, problems)
    return f"tests of what the merge would serve: {report.summary()}" + "".join(
        f"\n  {shown(line)}" for line in failing)


def _on_proposal(message_help: str, *, required: bool = False) -> Callable[[Callable[..., None]], click.Command]:
    """A command on one proposal: ``ID``, ``--store``, ``-m`` (``required`` or not) and ``--author``."""

    def command(function: Callable[..., None]) -> click.Command:
        # (click takes an explicit default, even None, as a value given: a required option has none.)
        message = click.option("-m", "--message", required=True, help=message_help) if required else \
            click.option("-m", "--message", default="", help=message_help)
        for option in (AUTHOR_OPTION, message, STORE_OPTION, click.argument("proposal", type=int, metavar="ID")):
            function = option(function)
        return click.command()(function)

    return command


@_on_proposal("The comment.", required=True)
def comment(proposal: int, url: str, message: str, author: str | None) -> None:
    """Comment on proposal ID."""
    _in_store(url, lambda opened: opened.proposals.comment(proposal, author_of(author), message))
    echo(f"commented on proposal {proposal}")


@_on_proposal("Why.")
def approve(proposal: int, url: str, message: str, author: str | None) -> None:
    """Approve proposal ID's versions as they are now (a version pushed later needs approving again)."""
    have, (_, needed, _) = _in_store(url, lambda opened: (
        opened.proposals.approve(proposal, author_of(author), message=message), opened.proposals.approvals(proposal)))
    count = f": {len(have)} of the {needed} its label requires" if needed else ""
    echo(f"approved proposal {proposal}{count}")


@_on_proposal("Why (kept in the proposal's audit).", required=True)
def reject(proposal: int, url: str, message: str, author: str | None) -> None:
    """Reject proposal ID: it is closed and never merged."""
    _in_store(url, lambda opened: opened.proposals.reject(proposal, author_of(author), message=message))
    echo(f"rejected proposal {proposal}")


@_on_proposal("Why.")
def withdraw(proposal: int, url: str, message: str, author: str | None) -> None:
    """Withdraw proposal ID, as one of its authors."""
    _in_store(url, lambda opened: opened.proposals.withdraw(proposal, author_of(author), message))
    echo(f"withdrew proposal {proposal}")


@_on_proposal("Why (kept in the label's history; default: the proposal's).")
def merge(proposal: int, url: str, message: str, author: str | None) -> None:
    """Serve proposal ID: its label moves to its versions, through the same gate as every move (protection,
    required tests, required approvals)."""
    position, label = _in_store(url, lambda opened: (
        opened.proposals.merge(proposal, author=author_of(author), message=message),
        opened.proposals.get(proposal).label))
    where = f"position {position}" if position is not None else "the versions it served already"
    echo(f"merged proposal {proposal}: label {shown(label)} is at {where}")


#: The review commands, as ``main`` registers them.
COMMANDS = (proposals, review, comment, approve, reject, withdraw, merge)
