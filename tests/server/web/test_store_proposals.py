"""``server.web.store_proposals``: a proposal as one principal may see it (the store's read rule), the bodies
the POSTs take (no principal among them), and the bounds on what a call asks."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from promptdeck.protocol.errors import HttpError
from promptdeck.server.web import store_proposals as proposals
from promptdeck.server.web.store_api import _StoreView
from promptdeck.sources.store.database import Store
from tests.support.stores import publish_texts

PAY = "---\nscopes: [hr]\n---\nPay\n"


def prepared(tmp_path: Path) -> Store:
    """production: greet 1 and pay 1 (hr only); proposal 1 of greet 2, proposal 2 of pay 2."""
    store = Store(f"sqlite:///{tmp_path}/s.db", create=True)
    publish_texts(store, "production", {"greet.md": "Hello\n", "pay.md": PAY})
    publish_texts(store, None, {"greet.md": "Hi\n", "pay.md": "Pay\n"})  # pay 2 widens it to everyone
    store.proposals.open("production", {"greet.md": 2}, author="ana")
    store.proposals.open("production", {"pay.md": 2}, author="ana")
    return store


def test_a_proposal_is_seen_only_by_who_sees_every_version_it_holds_and_replaces(tmp_path: Path) -> None:
    with prepared(tmp_path) as store:
        reader, hr = _StoreView(store, frozenset()), _StoreView(store, frozenset({"hr"}))
        assert [p["id"] for p in proposals.listing(reader, {})["proposals"]] == [1]
        assert [p["id"] for p in proposals.listing(hr, {"state": "all"})["proposals"]] == [2, 1]
        with pytest.raises(HttpError, match="no proposal 2") as hidden:
            proposals.shown(reader, {"id": "2"})
        assert hidden.value.status == 404
        shown = proposals.shown(hr, {"id": "2"})
        assert [(c["path"], c["from"], c["to"], c["deleted"]) for c in shown["changes"]] == [("pay.md", 1, 2, False)]
        assert [(r["kind"], r["principal"], r["current"]) for r in shown["reviews"]] == [("open", "ana", True)]


def test_the_bodies_and_queries_are_bounded(tmp_path: Path) -> None:
    with pytest.raises(msgspec.ValidationError, match="principal"):
        msgspec.json.decode(b'{"id": 1, "principal": "bob"}', type=proposals.ProposalCall)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"id": 0}', type=proposals.ProposalCall)
    with prepared(tmp_path) as store:
        sight = _StoreView(store, frozenset({"hr"}))
        for query in ({"id": "x"}, {}):
            with pytest.raises(HttpError, match="needs id=N"):
                proposals.shown(sight, query)
        with pytest.raises(HttpError, match="state: one of open"):
            proposals.listing(sight, {"state": "closed"})
        with pytest.raises(HttpError, match="at most 4000"):
            proposals.act(sight, "/proposal/comment", proposals.ProposalCall(id=1, message="x" * 4001), "bob")
        assert proposals.act(sight, "/proposal/comment", proposals.ProposalCall(id=1, message="ok"), "bob") == {
            "id": 1, "commented": True}


GREET_TESTED = """---
tests:
  - assert:
      - {type: contains, value: Hello}
---
TEXT
"""


def test_the_tests_of_what_a_merge_would_serve_are_run_only_when_asked_and_allowed(tmp_path: Path) -> None:
    """``tests=1`` runs the tests of the label with the proposal merged in, as the principal would render it;
    a caller that may not run tests is told why, and nothing runs; without it nothing runs at all."""
    with Store(f"sqlite:///{tmp_path}/s.db", create=True) as store:
        publish_texts(store, "production", {"greet.md": GREET_TESTED.replace("TEXT", "Hello\n"), "pay.md": PAY,
                                            "bye.md": "Bye\n"})
        publish_texts(store, None, {"greet.md": GREET_TESTED.replace("TEXT", "Goodbye\n"), "pay.md": PAY,
                                    "bye.md": "Ciao\n"})
        number = store.proposals.open("production", {"greet.md": 2}, author="ana").id
        sight = _StoreView(store, frozenset())
        assert "tests" not in proposals.shown(sight, {"id": str(number)})
        refused = proposals.shown(sight, {"id": str(number), "tests": "1"}, "running tests needs the scope w")
        assert refused["tests"] == {"notRun": "running tests needs the scope w"}
        tests = proposals.shown(sight, {"id": str(number), "tests": "1"})["tests"]
        assert tests["passed"] is False and tests["summary"] == "0 of 1 test case passed in 1 prompt; 1 failed"
        assert len(tests["failures"]) == 1 and "greet" in tests["failures"][0] and "Hello" in tests["failures"][0]
        store.proposals.withdraw(number, "ana")
        other = store.proposals.open("production", {"bye.md": 2}, author="ana").id  # greet's test passes as served
        passing = proposals.shown(sight, {"id": str(other), "tests": "1"})["tests"]
        assert passing == {"summary": "1 of 1 test case passed in 1 prompt", "passed": True, "failures": []}
