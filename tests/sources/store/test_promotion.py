"""``promotion.promote`` (sources/store/promotion.py), on SQLite and a real PostgreSQL cluster: one label pointed at
what another holds, all of it or the prompts named, in one position through the release gate; each refusal
changes nothing; its audit and its ``promote`` event name both labels and what moved."""

from __future__ import annotations

import base64
import json
import threading
from pathlib import Path

import pytest

from promptdeck.sources.store import webhooks
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.event_kinds import REGISTRY, LabelPromoted
from promptdeck.sources.store.model import Protection, StoreConflict, StoreMissing, TestsFailed
from promptdeck.sources.store.promotion import promote
from tests.support.cli import pd
from tests.support.stores import publish_texts

GREET = "---\narguments:\n  - name: who\n---\n{} {{{{ who }}}}!\n"
SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
TESTED = ("---\narguments:\n  - name: who\ntests:\n  - description: greets by name\n    vars: {{who: Ada}}\n"
          "    assert:\n      - {{type: contains, value: Hello Ada}}\n---\n{} {{{{ who }}}}!\n")


def staged(url: str) -> None:
    """production: greet 1, bye 1, old 1. staging: greet 2, bye 2, new 1 (old deleted)."""
    with Store(url, create=True) as store:
        publish_texts(store, "production", {"greet.md": GREET.format("Hello"), "bye.md": GREET.format("Bye"),
                                            "old.md": GREET.format("Old")})
        publish_texts(store, "staging", {"greet.md": GREET.format("Hi"), "bye.md": GREET.format("Ciao"),
                                         "new.md": GREET.format("New")})


def state(store: Store) -> tuple[object, ...]:
    return (store.reads.position_id("production"), store.db.rows("SELECT count(*) FROM positions"),
            store.db.rows("SELECT count(*) FROM events"))


def test_a_whole_label_is_promoted_in_one_position_with_its_audit_and_event(store_url: str) -> None:
    staged(store_url)
    with Store(store_url) as store:
        webhooks.add(store.db, "https://hooks.example/in", SECRET, ["promote"], scopes=[], allow=[], timeout=5,
                     author="ana")
        before = store.reads.position("production")
        held = store.reads.position("staging")
        assert before is not None and held is not None
        done = promote(store.governance, "staging", "production", author="ana", message="release 7")
        now = store.reads.position("production")
        assert now is not None and done.position == now.id and now.files == held.files  # old.md is gone too
        assert done.changes == {"bye.md": (1, 2), "greet.md": (1, 2), "new.md": (None, 1), "old.md": (1, None)}
        [move, *_] = store.governance.moves("production")
        assert (move.reason, move.author, move.message, move.previous) == (
            f"promote staging (position {held.id})", "ana", "release 7", before.id)
        [(kind, payload)] = store.db.rows("SELECT kind, payload FROM events")
        data = json.loads(payload)
        assert kind == "promote" and REGISTRY["promote"].payload is LabelPromoted
        assert (data["label"], data["source"], data["source_position"], data["partial"], data["files"]) == (
            "production", "staging", held.id, False, 4)
        assert {p["name"]: (p["previous"], p["version"]) for p in data["prompts"]} == {
            "bye": (1, 2), "greet": (1, 2), "new": (None, 1), "old": (1, None)}
        # Again: production holds what staging holds already, so nothing moves and nothing is sent.
        again = promote(store.governance, "staging", "production", author="ana")
        assert again.position is None and again.changes == {}
        assert store.reads.position_id("production") == now.id
        assert store.db.rows("SELECT count(*) FROM events") == [(1,)]


def test_named_prompts_move_alone_and_the_rest_of_the_label_stays(store_url: str) -> None:
    staged(store_url)
    with Store(store_url) as store:
        done = promote(store.governance, "staging", "production", ["greet", "new.md"], author="ana")
        now = store.reads.position("production")
        assert now is not None and now.files == {"greet.md": 2, "bye.md": 1, "old.md": 1, "new.md": 1}
        assert done.changes == {"greet.md": (1, 2), "new.md": (None, 1)}
        assert store.governance.moves("production")[0].reason.startswith("promote greet, new.md from staging")


@pytest.mark.parametrize(("source", "label", "names", "error", "said"), [
    ("staging", "staging", (), StoreConflict, "'staging' is both"),
    ("nightly", "production", (), StoreMissing, "no label 'nightly' in the store (labels: production, staging)"),
    ("staging", "production", ("greet", "old"), StoreMissing, "label 'staging' has no prompt 'old'"),
])
def test_a_refused_promotion_changes_nothing_and_says_why_in_one_line(store_url: str, source: str, label: str,
                                                                      names: tuple[str, ...], error: type[Exception],
                                                                      said: str) -> None:
    staged(store_url)
    with Store(store_url) as store:
        before = state(store)
        with pytest.raises(error) as refused:
            promote(store.governance, source, label, names, author="ana")
        assert said in str(refused.value) and "\n" not in str(refused.value)
        assert state(store) == before


def test_the_gate_holds_a_promotion_to_the_labels_scope_and_its_tests(store_url: str) -> None:
    staged(store_url)
    with Store(store_url) as store:
        publish_texts(store, "staging", {"greet.md": TESTED.format("Hi")})  # greet 3: its test fails
        store.governance.protect("production", "release", require_tests=True, author="root")
        before = state(store)

        def guard(protection: Protection | None) -> None:
            assert protection is not None and protection.scope == "release"
            raise StoreConflict("needs the scope release")

        with pytest.raises(StoreConflict, match="needs the scope release"):
            promote(store.governance, "staging", "production", author="w", guard=guard)
        with pytest.raises(TestsFailed) as failed:
            promote(store.governance, "staging", "production", author="w")
        assert "greets by name" in str(failed.value) and failed.value.label == "production"
        assert state(store) == before


def test_a_live_rollout_on_the_target_goes_on_unless_the_promotion_changes_its_prompt(store_url: str) -> None:
    staged(store_url)
    with Store(store_url) as store:
        publish_texts(store, None, {"greet.md": GREET.format("Hey"), "bye.md": GREET.format("Ciao"),
                                    "new.md": GREET.format("New")})  # greet 3
        store.governance.start_rollout("production", "greet", 3, 1000, author="ana")
        promote(store.governance, "staging", "production", ["bye"], author="ana")
        assert [r.version for r in store.governance.live_rollouts("production")] == [3]  # greet untouched
        promote(store.governance, "staging", "production", author="ana")
        assert store.governance.live_rollouts("production") == []
        assert store.governance.rollout_events("production")[0].kind == "superseded"


def test_a_promotion_racing_a_publish_is_one_or_the_other_never_a_mix(store_url: str, tmp_path: Path) -> None:
    """Like test_database.py's two publishers: one process publishes a folder to production again and again
    while another promotes staging (another folder) to production again and again; every position production
    ever had is exactly staging's position it names, or exactly the folder as that publish left it."""
    one, two = tmp_path / "one", tmp_path / "two"
    for folder, text in ((one, "One"), (two, "Two")):
        folder.mkdir()
        (folder / "greet.md").write_text(GREET.format(text))
    (two / "only-two.md").write_text(GREET.format("Only"))
    pd("publish", str(two), "--store", store_url, "--label", "staging")
    pd("publish", str(one), "--store", store_url, "--label", "production")

    def publishing() -> None:
        for round_number in range(3):
            (one / "round.md").write_text(f"round {round_number}\n")
            # --force: the promotions move the label past this folder's base, which is the race on purpose
            pd("publish", str(one), "--store", store_url, "--label", "production", "--force")

    def promoting() -> None:
        for _ in range(3):
            pd("promote", "staging", "production", "--store", store_url)

    threads = [threading.Thread(target=work) for work in (publishing, promoting)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    with Store(store_url) as store:
        staging = store.reads.position("staging")
        assert staging is not None
        moves = store.governance.moves("production")
        assert len(moves) >= 4 and any(m.reason.startswith("promote") for m in moves)
        for move in moves:
            files = dict(store.db.rows("SELECT path, version FROM position_files WHERE position = ?", move.position))
            if move.reason.startswith("promote"):
                assert move.reason == f"promote staging (position {staging.id})" and files == staging.files
                continue
            publish_id = int(move.reason.split()[1])
            newest = dict(store.db.rows("SELECT path, MAX(version) FROM files WHERE publish <= ? AND path <> ? "
                                        "GROUP BY path", publish_id, "only-two.md"))
            assert files == newest, move  # the folder whole, as that publish left it
