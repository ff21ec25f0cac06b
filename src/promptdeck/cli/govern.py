"""The governance commands of the ``promptdeck`` command: protect, unprotect, rollout, and a label's audit.

They reach the database directly, with its credentials: the administrator's path, which no scope limits
(docs/store.md#governance). Each is one transaction; a failure is one line, exit 1, nothing changed.
"""

from __future__ import annotations

import re

import click

from ..protocol.errors import PromptdeckError
from .common import AUTHOR_OPTION, STORE_OPTION, author_of, fail, open_store, valid_label
from .terminal import echo

#: A scope as tokens carry it: no space (a token file separates scopes with spaces), printable, bounded.
_SCOPE_RE = re.compile(r"^[!-~]{1,128}\Z")
#: A rollout's share: a number from 0 to 100 with at most two decimals.
_PERCENT_RE = re.compile(r"^(100(\.0{1,2})?|\d{1,2}(\.\d{1,2})?)\Z")


@click.command()
@click.argument("label")
@STORE_OPTION
@click.option("--scope", required=True, metavar="SCOPE", help="The scope a move of LABEL through /api/store needs.")
@click.option("--require-tests", is_flag=True, help="Refuse a move to a version whose prompt tests fail.")
@click.option("--require-approvals", "approvals", type=click.IntRange(0, 20), default=0, metavar="N",
              help="Every move of LABEL, from here too, is the merge of a proposal approved by N holders of "
                   "SCOPE other than its authors, on exactly the versions it serves.")
@AUTHOR_OPTION
def protect(label: str, url: str, scope: str, require_tests: bool, approvals: int, author: str | None) -> None:
    """Protect LABEL: moving it through /api/store or the web page (a pointing, a rollback, a rollout, a save
    with the label) needs SCOPE; with --require-approvals N, every move needs N approvals of a proposal."""
    valid_label(label)
    if not _SCOPE_RE.match(scope):
        fail(f"scope {scope[:80]!r} is not valid: 1-128 printable characters without spaces", 2)
    with open_store(url) as opened:
        try:
            opened.reads.require_position(label)
            before = opened.governance.protect(label, scope, require_tests=require_tests, author=author_of(author),
                                               approvals=approvals)
        except PromptdeckError as exc:
            fail(str(exc))
    was = f" (it needed {before.scope})" if before is not None and before.scope != scope else ""
    tests = "; every move of it, from here too, needs the prompt tests to pass" if require_tests else ""
    reviews = (f"; every move of it, from here too, is the merge of a proposal approved by {approvals} holder"
               f"{'s' * (approvals != 1)} of {scope} other than its authors") if approvals else ""
    echo(f"label {label} is protected: moving it through /api/store needs the scope {scope}{was}{tests}{reviews}")


@click.command()
@click.argument("label")
@STORE_OPTION
def unprotect(label: str, url: str) -> None:
    """Let LABEL be moved by any writer again (the write scope alone)."""
    valid_label(label)
    with open_store(url) as opened:
        try:
            before = opened.governance.unprotect(label)
        except PromptdeckError as exc:
            fail(str(exc))
    echo(f"label {label} is no longer protected (it needed {before.scope})")


@click.command()
@click.argument("label")
@click.argument("prompt", metavar="NAME[@VERSION]")
@STORE_OPTION
@click.option("--percent", default=None, metavar="P", help="The share of renders VERSION gets, 0 to 100.")
@click.option("--promote", is_flag=True, help="End the rollout: LABEL moves to its version.")
@click.option("--abort", is_flag=True, help="End the rollout: every render gets LABEL's version again.")
@click.option("-m", "--message", default="", help="Why.")
@AUTHOR_OPTION
def rollout(label: str, prompt: str, url: str, percent: str | None, promote: bool, abort: bool, message: str,
            author: str | None) -> None:
    """Send P percent of LABEL's renders of NAME to VERSION (NAME@VERSION --percent P; again to change P), or end
    the rollout (NAME --promote or --abort). A client keeps its version while the share holds or grows."""
    valid_label(label)
    name, _, version_text = prompt.partition("@")
    ending = promote or abort
    if promote and abort:
        fail("give --promote or --abort, not both", 2)
    if ending and (percent is not None or version_text):
        fail(f"--{'promote' if promote else 'abort'} takes NAME alone (no @VERSION, no --percent)", 2)
    if not ending and (percent is None or not version_text):
        fail("rollout takes NAME@VERSION --percent P, or NAME --promote or --abort", 2)
    if not ending and not version_text.isdigit():
        fail(f"{prompt!r}: the version after @ is a number", 2)
    if percent is not None and not _PERCENT_RE.match(percent):
        fail(f"--percent {percent[:20]!r}: a number from 0 to 100, with at most two decimals", 2)
    with open_store(url) as opened:
        try:
            if ending:
                ended = opened.governance.end_rollout(label, name, promote=promote, author=author_of(author),
                                                      message=message)
            else:
                started = opened.governance.start_rollout(label, name, int(version_text),
                                                          round(float(percent or 0) * 100), author=author_of(author),
                                                          message=message)
        except PromptdeckError as exc:
            fail(str(exc))
    if promote:
        echo(f"label {label}: {name} is at version {ended.version} (rollout {ended.id} promoted)")
    elif abort:
        echo(f"label {label}: {name} is served at version {ended.base} alone (rollout {ended.id} aborted)")
    else:
        echo(f"label {label}: {started.basis_points / 100:g}% of the renders of {name} get version "
             f"{started.version}, the rest version {started.base} (rollout {started.id})")


#: The governance commands, as ``main`` registers them.
COMMANDS = (protect, unprotect, rollout)
