"""The review rule of the release gate under attack (``reviews.require_approvals``, called by
``Governance.release``): a label protected with ``approvals`` is tried through every path that moves a label, on
SQLite and on a real PostgreSQL cluster, and each is refused with nothing changed, save the merge of a proposal
approved on exactly the versions it serves. A static check holds the list of paths to the store's methods that
reach the gate, so a new path cannot go round the rule. A merge raced against a new version of its proposal
serves exactly the approved versions, or nothing."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from promptdeck.sources.store.database import Store
from promptdeck.sources.store.model import ApprovalsRequired, StoreConflict
from promptdeck.sources.store.promotion import promote
from tests.support.release_paths import public_paths_to_the_gate
from tests.support.stores import publish_texts


def prepared(url: str) -> int:
    """production serves greet 1 and bye 1, from an earlier position with greet 2; bye 2 rolls out at 10 % since
    before the label required one approval. staging serves greet 2 and bye 2. Returns an open
    proposal of greet 2 by ana, not approved."""
    with Store(url, create=True) as store:
        publish_texts(store, None, {"greet.md": "Hello\n", "bye.md": "Bye\n"})              # greet 1, bye 1
        publish_texts(store, "production", {"greet.md": "Hi\n", "bye.md": "Bye\n"})         # greet 2: position 1
        store.label("greet", 1, "production", author="ana")                                 # position 2
        publish_texts(store, None, {"greet.md": "Hi\n", "bye.md": "Ciao\n"})                # bye 2
        store.governance.start_rollout("production", "bye", 2, 1000, author="ana")
        publish_texts(store, "staging", {"greet.md": "Hi\n", "bye.md": "Ciao\n"})          # greet 2, bye 2
        store.governance.protect("production", "release", require_tests=False, author="root", approvals=1)
        return store.proposals.open("production", {"greet.md": 2}, author="ana").id


#: Every public store method that can change what a label serves, each trying to serve greet 2 or bye 2
#: without an approval (the administrator's path: no guard, and the rule all the same).
PATHS: dict[str, Callable[[Store, int], object]] = {
    "publish": lambda store, _: publish_texts(store, "production", {"greet.md": "Hi\n", "bye.md": "Bye\n"}),
    "publish_file": lambda store, _: store.publish_file("greet.md", b"Hey\n", None, author="w", message="",
                                                        label="production"),
    "label": lambda store, _: store.label("greet", 2, "production", author="w"),
    "rollback": lambda store, _: store.rollback("production", author="w"),
    "start_rollout": lambda store, _: store.governance.start_rollout("production", "greet", 2, 5000, author="w"),
    "start_rollout (share)": lambda store, _: store.governance.start_rollout("production", "bye", 2, 10_000,
                                                                             author="w"),
    "end_rollout (promote)": lambda store, _: store.governance.end_rollout("production", "bye", promote=True,
                                                                           author="w"),
    "promote": lambda store, _: promote(store.governance, "staging", "production", author="w"),
    "promote (named)": lambda store, _: promote(store.governance, "staging", "production", ["greet"], author="w"),
    "merge": lambda store, proposal: store.proposals.merge(proposal, author="w"),
}


def state(store: Store) -> tuple[Any, ...]:
    return (store.reads.position_id("production"), store.governance.live_rollouts("production"),
            store.db.rows("SELECT count(*) FROM rollout_events"))


def test_every_path_that_moves_a_label_needs_the_approvals(store_url: str) -> None:
    proposal = prepared(store_url)
    with Store(store_url) as store:
        before = state(store)
        for name, path in PATHS.items():
            with pytest.raises(ApprovalsRequired, match="requires 1 approval|has 0 of the 1") as refused:
                path(store, proposal)
            assert "nothing changed" in str(refused.value), name
            assert state(store) == before, name
        # An abort serves the label's own versions again: no approval needed.
        store.governance.end_rollout("production", "bye", promote=False, author="w")
        store.proposals.approve(proposal, "bob")
        store.proposals.merge(proposal, author="ana")
        assert store.reads.position("production").files["greet.md"] == 2  # type: ignore[union-attr]


def test_the_gate_is_not_fooled_by_naming_an_approved_proposal(store_url: str) -> None:
    """A caller of the gate that names an approved proposal but serves other versions is refused; so is a
    proposal of another label, and one approved under another scope than the label's."""
    proposal = prepared(store_url)
    with Store(store_url) as store:
        store.proposals.approve(proposal, "bob")
        now = store.reads.position("production")
        assert now is not None
        release = store.governance.release
        with store.db.transaction(), pytest.raises(ApprovalsRequired, match="other versions than proposal"):
            release("production", {**now.files, "bye.md": 2}, "w", "forged", proposal=proposal)
        publish_texts(store, "staging", {"greet.md": "Hi\n", "bye.md": "Ciao\n"})
        other = store.proposals.open("staging", {"greet.md": 1}, author="ana").id
        store.proposals.approve(other, "bob")
        with store.db.transaction(), pytest.raises(ApprovalsRequired, match="not an open proposal for label"):
            release("production", {**now.files, "greet.md": 2}, "w", "forged", proposal=other)
        store.governance.protect("production", "admin", require_tests=False, author="root", approvals=1)
        with pytest.raises(ApprovalsRequired, match="has 0 of the 1"):  # bob approved holding release, not admin
            store.proposals.merge(proposal, author="ana")
        assert store.reads.position("production") == now


def test_a_merge_raced_against_a_new_version_serves_exactly_the_approved_versions(store_url: str) -> None:
    proposal = prepared(store_url)
    with Store(store_url) as store:
        store.governance.end_rollout("production", "bye", promote=False, author="w")
        publish_texts(store, None, {"greet.md": "Hey\n", "bye.md": "Ciao\n"})  # greet 3, not approved by anyone
        store.proposals.approve(proposal, "bob")                              # bob approved greet 2
    outcomes: dict[str, object] = {}
    start = threading.Barrier(2)

    def run(name: str, act: Callable[[Store], object]) -> None:
        with Store(store_url) as store:
            start.wait(timeout=30)
            try:
                outcomes[name] = act(store)
            except StoreConflict as exc:
                outcomes[name] = exc

    threads = [threading.Thread(target=run, args=("push", lambda s: s.proposals.push(proposal, {"greet.md": 3},
                                                                                       author="cy"))),
               threading.Thread(target=run, args=("merge", lambda s: s.proposals.merge(proposal, author="ana")))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    with Store(store_url) as store:
        served = store.reads.position("production").files["greet.md"]  # type: ignore[union-attr]
        if isinstance(outcomes["merge"], StoreConflict):  # the push came first: approvals reset, nothing served
            assert isinstance(outcomes["merge"], ApprovalsRequired) and served == 1
            assert store.proposals.get(proposal).files == {"greet.md": 3}
        else:  # the merge came first: greet 2 served, and the push refused as the proposal is merged
            assert served == 2 and isinstance(outcomes["push"], StoreConflict)
            assert "is merged" in str(outcomes["push"])


def test_the_paths_listed_here_are_every_store_method_that_reaches_the_gate() -> None:
    assert public_paths_to_the_gate() == {name.split(" ")[0] for name in PATHS}, "a new path to the gate: add it"
