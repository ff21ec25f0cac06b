"""``Governance`` (sources/store/governance.py), on SQLite and a real PostgreSQL cluster: the release gate's
order (guard, rule, tests, write), the label audit, protections and rollouts, through the connection and reads
it was given."""

from __future__ import annotations

import pytest

from promptdeck.sources.store.connection import Connection
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.governance import BUCKETS, Governance, bucket
from promptdeck.sources.store.model import Protection, StoreConflict, StoreMissing, TestsFailed
from promptdeck.sources.store.reads import Reads
from tests.support.stores import publish_texts

GREET = "---\ndescription: Say hello\narguments:\n  - name: who\n---\n{} {{{{ who }}}}!\n"
TESTED = ("---\narguments:\n  - name: who\ntests:\n  - vars: {{who: Ada}}\n    assert:\n"
          "      - {{type: contains, value: Hello Ada}}\n---\n{} {{{{ who }}}}!\n")


def two_versions(url: str) -> None:
    """greet 1 (Hello; production) and 2 (Hi; no label)."""
    with Store(url, create=True) as store:
        publish_texts(store, "production", {"greet.md": GREET.format("Hello")})
        publish_texts(store, None, {"greet.md": GREET.format("Hi")})


def test_release_moves_a_label_once_and_records_its_audit(store_url: str) -> None:
    two_versions(store_url)
    with Connection(store_url) as db:
        governance = Governance(db, Reads(db))
        before = governance.reads.require_position("production")
        with db.transaction():
            moved = governance.release("production", {"greet.md": 2}, "ana", "label greet@2", "why")
        with db.transaction():
            assert governance.release("production", {"greet.md": 2}, "ana", "again") is None  # there already
        assert moved is not None and moved > before
        [now, first] = governance.moves("production")
        assert (now.position, now.reason, now.author, now.message) == (moved, "label greet@2", "ana", "why")
        assert now.previous == before
        assert first.position == before and first.previous is None
        assert governance.moves("production", before=moved) == [first]
        assert governance.changes_between(before, moved) == {"greet.md": (1, 2)}
        assert governance.changes_between(None, before) == {"greet.md": (None, 1)}


def test_the_guard_and_the_rule_refuse_before_anything_is_written(store_url: str) -> None:
    two_versions(store_url)
    seen: list[object] = []

    def guard(protection: Protection | None) -> None:
        seen.append(protection)
        raise StoreConflict("not yours")

    def rule(before: dict[str, int], after: dict[str, int]) -> None:
        seen.append((before, after))
        raise StoreConflict("not this move")

    with Store(store_url) as store:
        position = store.reads.require_position("production")
        for kwargs, says in (({"guard": guard}, "not yours"), ({"allow": rule}, "not this move")):
            with pytest.raises(StoreConflict, match=says), store.db.transaction():
                store.governance.release("production", {"greet.md": 2}, "ana", "label", **kwargs)
        assert seen == [None, ({"greet.md": 1}, {"greet.md": 2})]
        assert store.reads.require_position("production") == position


def test_protections_are_kept_replaced_and_removed(store_url: str) -> None:
    two_versions(store_url)
    with Store(store_url) as store:
        governance = store.governance
        assert governance.protect("production", "release", require_tests=False, author="root") is None
        before = governance.protect("production", "release:prod", require_tests=True, author="root")
        assert before is not None and before.scope == "release"
        now = governance.protection("production")
        assert now is not None and (now.scope, now.require_tests, now.author) == ("release:prod", True, "root")
        assert [p.label for p in governance.protections()] == ["production"]
        assert governance.unprotect("production").scope == "release:prod"
        with pytest.raises(StoreMissing, match="label 'production' is not protected"):
            governance.unprotect("production")


def test_a_label_that_requires_tests_is_moved_only_to_what_passes(store_url: str) -> None:
    with Store(store_url, create=True) as store:
        publish_texts(store, "production", {"greet.md": TESTED.format("Hello")})
        publish_texts(store, None, {"greet.md": TESTED.format("Hi")})
        store.governance.protect("production", "release", require_tests=True, author="root")
        with pytest.raises(TestsFailed) as failed:
            store.label("greet", 2, "production", author="ana")
        assert failed.value.label == "production" and store.reads.version_at(
            store.reads.require_position("production"), "greet.md") == 1


def test_a_rollout_starts_changes_its_share_and_ends(store_url: str) -> None:
    two_versions(store_url)
    with Store(store_url) as store:
        governance = store.governance
        started = governance.start_rollout("production", "greet", 2, 1000, author="ana", message="try")
        assert (started.path, started.base, started.version, started.basis_points) == ("greet.md", 1, 2, 1000)
        with pytest.raises(StoreConflict, match="already rolling out version 2"):
            governance.start_rollout("production", "greet", 1, 1000, author="ana")
        governance.start_rollout("production", "greet", 2, 5000, author="ana")
        [live] = governance.live_rollouts("production")
        assert live.id == started.id and live.basis_points == 5000
        governance.end_rollout("production", "greet", promote=True, author="bo")
        assert governance.live_rollouts("production") == []
        assert [e.kind for e in governance.rollout_events("production")] == ["promote", "percent", "start"]
        assert store.reads.snapshot("production")["greet.md"][0] == 2
        with pytest.raises(StoreMissing, match="no rollout of 'greet'"):
            governance.end_rollout("production", "greet", promote=False, author="bo")
        with pytest.raises(StoreConflict, match="share is 0 to 100 percent"):
            governance.start_rollout("production", "greet", 1, BUCKETS + 1, author="ana")


def test_a_rollout_of_a_version_with_other_arguments_is_refused(store_url: str) -> None:
    with Store(store_url, create=True) as store:
        publish_texts(store, "production", {"greet.md": GREET.format("Hello")})
        publish_texts(store, None, {"greet.md": "---\narguments:\n  - name: name\n---\nHi {{ name }}\n"})
        with pytest.raises(StoreConflict, match="takes other arguments than version 1"):
            store.governance.start_rollout("production", "greet", 2, 1000, author="ana")
        assert store.governance.live_rollouts("production") == []


def test_a_keys_bucket_is_the_same_everywhere_and_spread() -> None:
    assert bucket(1, "user-7") == bucket(1, "user-7")
    buckets = {bucket(1, f"user-{n}") for n in range(200)}
    assert all(0 <= b < BUCKETS for b in buckets) and len(buckets) > 150
    assert [bucket(2, f"user-{n}") for n in range(20)] != [bucket(1, f"user-{n}") for n in range(20)]
