"""The tests of a prompt as the web page shows them (``/api/store/tests``, and with each ``/check`` and save of
the editor's text): its cases and the report of running them, for one principal.

A principal sees the tests of the prompts it may see, and nothing of the others: the prompt is found through
its view of the catalog before this module is reached, and renders run as its reads (``prompts.access.viewing``:
a file hidden from it is absent). Why a render failed inside is the server log's, as for a ``prompts/get``:
the report says only that it failed, with the JSON-RPC error a client would get.

Only a writer has them run (``store_api``); a reader is shown the cases, ``not_run``. A run stops at
``PAGE_RUN_SECONDS``, and sooner when its client goes away or the server stops (``testing.stopping``, set by
the caller's thread).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...prompts.access import viewing
from ...prompts.testing import Report, run_tests

if TYPE_CHECKING:
    from ...prompts.spec import Prompt

#: The longest one prompt's tests may run for the page: its cases are few, and a thread waits on them.
PAGE_RUN_SECONDS = 20.0


def run_for(prompt: Prompt, held: frozenset[str] | None) -> Report | None:
    """The report of ``prompt``'s tests run as the principal holding ``held`` would render it; None when it has
    none. Blocking: run it in a thread."""
    if prompt.tests is None:
        return None
    with viewing(held):
        return run_tests([prompt], seconds=PAGE_RUN_SECONDS, details=False)


def not_run(prompt: Prompt, why: str) -> dict[str, Any] | None:
    """``shown`` of ``prompt``'s tests left unrun: the cases as written, no report, and ``why`` (None when it
    has none)."""
    if prompt.tests is None:
        return None
    return {"origin": prompt.tests.origin, "cases": prompt.tests.to_json(), "report": None, "notRun": why}


def shown(prompt: Prompt, report: Report | None) -> dict[str, Any] | None:
    """``{origin, cases, report}`` of ``prompt``'s tests for the page (None when it has none)."""
    if prompt.tests is None or report is None:
        return None
    return {"origin": prompt.tests.origin, "cases": prompt.tests.to_json(), "report": report.to_json()}
