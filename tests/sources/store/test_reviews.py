"""``sources.store.reviews``: what names a set of versions, what a merge serves, and whose approvals count."""

from __future__ import annotations

from pathlib import Path

from promptdeck.sources.store.database import Store
from promptdeck.sources.store.reviews import approvers, authors, digest_of, merged
from tests.support.stores import publish_texts


def test_a_set_of_versions_has_one_digest_whatever_its_order() -> None:
    assert digest_of({"a.md": 1, "b.md": 2}) == digest_of({"b.md": 2, "a.md": 1})
    assert digest_of({"a.md": 1, "b.md": 2}) != digest_of({"a.md": 1, "b.md": 3})
    assert digest_of({"a.md": 1}) != digest_of({"a.md": 1, "b.md": 1})


def test_a_merge_serves_the_label_with_the_proposals_versions_and_without_its_deletions(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path}/s.db", create=True) as store:
        publish_texts(store, "production", {"a.md": "A\n", "b.md": "B\n", "c.md": "C\n"})
        publish_texts(store, None, {"a.md": "A2\n", "c.md": "C\n"})  # a 2; b 2 is its deletion
        assert merged(store.db, {"a.md": 1, "b.md": 1, "c.md": 1}, {"a.md": 2, "b.md": 2}) == {"a.md": 2, "c.md": 1}


def test_approvals_count_on_the_current_versions_by_non_authors_under_the_scope(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path}/s.db", create=True) as store:
        publish_texts(store, "production", {"a.md": "A\n"})
        publish_texts(store, None, {"a.md": "A2\n"})
        publish_texts(store, None, {"a.md": "A3\n"})
        store.governance.protect("production", "release", require_tests=False, author="root", approvals=2)
        proposal = store.proposals.open("production", {"a.md": 2}, author="ana").id
        store.proposals.approve(proposal, "bob")
        store.governance.protect("production", "other", require_tests=False, author="root", approvals=2)
        store.proposals.approve(proposal, "cy")
        assert approvers(store.db, proposal, "release") == ["bob"]
        assert approvers(store.db, proposal, None) == ["bob", "cy"]
        store.proposals.push(proposal, {"a.md": 3}, author="dee")
        assert authors(store.db, proposal) == {"ana", "dee"}
        assert approvers(store.db, proposal, None) == []
