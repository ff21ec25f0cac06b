"""Proposals (``sources.store.proposals``) on SQLite and PostgreSQL: opened from versions or a published folder,
nothing served until the merge, reviews recorded in an append-only audit, and approvals that count only on the
versions approved, by reviewers who did not write the proposal."""

from __future__ import annotations

import base64
import json

import pytest

from promptdeck.sources.store import webhooks
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.model import ApprovalsRequired, StoreConflict, StoreMissing
from tests.support.stores import publish_texts


def prepared(url: str, approvals: int = 2) -> None:
    """production serves greet 1 and bye 1; greet 2 is published, not served; production requires approvals."""
    with Store(url, create=True) as store:
        publish_texts(store, "production", {"greet.md": "Hello\n", "bye.md": "Bye\n"})
        publish_texts(store, None, {"greet.md": "Hello there\n", "bye.md": "Bye\n"})
        store.governance.protect("production", "release", require_tests=False, author="root", approvals=approvals)


def greet_2(store: Store) -> int:
    """ana proposes greet 2 on production: the proposal's number."""
    return store.proposals.open("production", {"greet.md": 2}, author="ana").id


def test_a_merged_proposal_serves_its_versions_and_nothing_before(store_url: str) -> None:
    prepared(store_url)
    with Store(store_url) as store:
        proposal = store.proposals.open("production", {"greet.md": 2, "bye.md": 1}, author="ana", message="warmer")
        assert proposal.files == {"greet.md": 2} and proposal.state == "open"  # bye 1 is served already
        assert store.reads.position("production").files == {"greet.md": 1, "bye.md": 1}  # type: ignore[union-attr]
        with pytest.raises(ApprovalsRequired, match="has 0 of the 2 approvals"):
            store.proposals.merge(proposal.id, author="ana")
        assert store.proposals.approve(proposal.id, "bob") == ["bob"]
        store.proposals.comment(proposal.id, "cy", "looks right")
        assert store.proposals.approve(proposal.id, "cy") == ["bob", "cy"]
        position = store.proposals.merge(proposal.id, author="ana")
        assert store.reads.position("production").files == {"greet.md": 2, "bye.md": 1}  # type: ignore[union-attr]
        merged = store.proposals.get(proposal.id)
        assert (merged.state, merged.position) == ("merged", position)
        assert [(r.kind, r.principal) for r in store.proposals.reviews(proposal.id)] == [
            ("open", "ana"), ("approve", "bob"), ("comment", "cy"), ("approve", "cy"), ("merge", "ana")]
        assert [r.scope for r in store.proposals.reviews(proposal.id) if r.kind == "approve"] == ["release"] * 2
        with pytest.raises(StoreConflict, match="is merged"):
            store.proposals.approve(proposal.id, "dee")
        assert [p.id for p in store.proposals.find(label="production", state="merged")] == [proposal.id]
        assert store.proposals.find(state="open") == []


def test_authors_never_approve_and_a_push_resets_the_approvals(store_url: str) -> None:
    prepared(store_url, approvals=1)
    with Store(store_url) as store:
        proposal = store.proposals.get(greet_2(store))
        with pytest.raises(StoreConflict, match="ana wrote proposal"):
            store.proposals.approve(proposal.id, "ana")
        store.proposals.approve(proposal.id, "bob")
        publish_texts(store, None, {"greet.md": "Hello there!\n", "bye.md": "Bye\n"})  # greet 3
        store.proposals.push(proposal.id, {"greet.md": 3}, author="cy")
        assert store.proposals.approvals(proposal.id) == ([], 1, "release")  # bob approved version 2, not 3
        with pytest.raises(StoreConflict, match="cy wrote proposal"):  # who pushed a version is an author too
            store.proposals.approve(proposal.id, "cy")
        with pytest.raises(ApprovalsRequired):
            store.proposals.merge(proposal.id, author="ana")
        store.proposals.approve(proposal.id, "bob")
        store.proposals.merge(proposal.id, author="ana")
        assert store.reads.position("production").files["greet.md"] == 3  # type: ignore[union-attr]
        # The audit is append-only: the approval a push reset is still there, beside the one that counted.
        assert [(r.kind, r.principal) for r in store.proposals.reviews(proposal.id)] == [
            ("open", "ana"), ("approve", "bob"), ("push", "cy"), ("approve", "bob"), ("merge", "ana")]


def test_a_rejected_or_withdrawn_proposal_is_closed(store_url: str) -> None:
    prepared(store_url, approvals=0)
    with Store(store_url) as store:
        first = greet_2(store)
        with pytest.raises(StoreConflict, match="authors cannot reject"):
            store.proposals.reject(first, "ana")
        store.proposals.reject(first, "bob", message="too warm")
        second = greet_2(store)
        with pytest.raises(StoreConflict, match="only an author"):
            store.proposals.withdraw(second, "bob")
        store.proposals.withdraw(second, "ana")
        for closed in (first, second):
            with pytest.raises(StoreConflict, match="rejected|withdrawn"):
                store.proposals.merge(closed, author="ana")
        assert [p.state for p in store.proposals.find()] == ["withdrawn", "rejected"]
        assert store.reads.position("production").files["greet.md"] == 1  # type: ignore[union-attr]


def test_a_proposal_is_refused_when_it_changes_nothing_or_names_no_version(store_url: str) -> None:
    prepared(store_url)
    with Store(store_url) as store:
        with pytest.raises(StoreConflict, match="serves these versions already"):
            store.proposals.open("production", {"greet.md": 1}, author="ana")
        with pytest.raises(StoreMissing, match="no version 9 of greet.md"):
            store.proposals.open("production", {"greet.md": 9}, author="ana")
        with pytest.raises(StoreMissing, match="no proposal 42"):
            store.proposals.get(42)


def test_a_folder_proposal_deletes_what_the_folder_lacks(store_url: str) -> None:
    prepared(store_url, approvals=0)
    with Store(store_url) as store:
        publish_texts(store, None, {"greet.md": "Hello there\n"})  # bye 2: its deletion
        proposal = store.proposals.open_folder("production", {"greet.md": b"Hello there\n"}, author="ana")
        assert proposal.files == {"greet.md": 2, "bye.md": 2}
        store.proposals.merge(proposal.id, author="ana")
        assert store.reads.position("production").files == {"greet.md": 2}  # type: ignore[union-attr]


def test_each_step_is_a_proposal_event_naming_only_what_a_webhook_may_see(store_url: str) -> None:
    secret = "whsec_" + base64.b64encode(b"k" * 32).decode()
    with Store(store_url, create=True) as store:
        publish_texts(store, "production", {"greet.md": "Hello\n", "pay.md": "---\nscopes: [hr]\n---\nPay\n"})
        everyone, hr = (webhooks.add(store.db, "https://hooks.example/in", secret, ["proposal"], scopes=scopes,
                                     allow=[], timeout=5, author="ops") for scopes in ([], ["hr"]))
        publish_texts(store, None, {"greet.md": "Hello\n", "pay.md": "---\nscopes: [hr]\n---\nPay more\n"})
        hidden = store.proposals.open("production", {"pay.md": 2}, author="ana", message="raise").id
        store.proposals.approve(hidden, "bob", message="ok")
        store.proposals.merge(hidden, author="ana")
        sent = [(int(hook), json.loads(body)["data"]) for hook, body in
                store.db.rows("SELECT webhook, body FROM deliveries ORDER BY id")]
        assert [hook for hook, _ in sent] == [hr, hr, hr]  # every step was about pay, which only hr may see
        assert [(d["change"], d["author"], d["message"]) for _, d in sent] == [
            ("opened", "ana", "raise"), ("approved", "bob", "ok"), ("merged", "ana", "")]
        assert sent[-1][1]["position"] == store.reads.position_id("production")
        assert sent[-1][1]["prompts"] == [{"name": "pay", "path": "pay.md", "version": 2, "previous": 1,
                                           "deleted": False}]
        assert everyone != hr
