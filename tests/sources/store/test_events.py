"""The store's outbox (sources/store/events.py), on SQLite and a real PostgreSQL cluster: an event is written in
the change's own transaction, for the webhooks that asked for its kind, each told only what it may see."""

from __future__ import annotations

import base64
import json

import pytest

from promptdeck.sources.store import events, webhooks
from promptdeck.sources.store.connection import Connection
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.event_kinds import ChangedPrompt, Published
from promptdeck.sources.store.model import StoreConflict
from tests.support.stores import publish_texts

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
OPEN = "---\ndescription: for all\n---\nHello\n"
HIDDEN = "---\nscopes: [hr]\n---\nPayroll\n"


def hook(db: Connection, kinds: list[str], scopes: tuple[str, ...] = ()) -> int:
    return webhooks.add(db, "https://hooks.example/in", SECRET, kinds, scopes=list(scopes), allow=[], timeout=5,
                        author="ops")


def bodies(db: Connection) -> dict[int, dict[str, object]]:
    """webhook -> the body of its newest delivery."""
    return {int(webhook): json.loads(body) for webhook, body in
            db.rows("SELECT webhook, body FROM deliveries ORDER BY id")}


def published(number: int) -> Published:
    return Published(publish=number, author="a", message="", label=None, files=0, prompts=(), truncated=False)


def test_a_message_is_cut_to_what_an_event_carries() -> None:
    assert events.short("why") == "why"
    cut = events.short("x" * (events.MAX_EVENT_MESSAGE + 10))
    assert len(cut) == events.MAX_EVENT_MESSAGE and cut.endswith("…")


def test_nothing_is_kept_that_no_webhook_asked_for(store_url: str) -> None:
    with Store(store_url, create=True) as store:
        assert not events.listening(store.db, "publish")
        with store.db.transaction():
            assert events.emit(store.db, "publish", published(1)) is None
        hook(store.db, ["label"])
        assert events.listening(store.db, "label") and not events.listening(store.db, "publish")
        publish_texts(store, None, {"greet.md": OPEN})
        assert store.db.rows("SELECT count(*) FROM events") == [(0,)]


def test_each_webhook_is_told_only_the_prompts_it_may_see(store_url: str) -> None:
    with Store(store_url, create=True) as store:
        everyone, hr = hook(store.db, ["publish"]), hook(store.db, ["publish"], ("hr",))
        publish_texts(store, None, {"open.md": OPEN, "payroll.md": HIDDEN}, message="two")
        sent = bodies(store.db)
        assert sent[everyone]["type"] == sent[hr]["type"] == "publish"
        named = {w: [p["name"] for p in body["data"]["prompts"]] for w, body in sent.items()}  # type: ignore[index]
        assert named == {everyone: ["open"], hr: ["open", "payroll"]}
        assert sent[everyone]["data"]["files"] == 1 and sent[hr]["data"]["files"] == 2  # type: ignore[index]
        assert all("scopes" not in p for body in sent.values() for p in body["data"]["prompts"])  # type: ignore[index]
        # About the hidden prompt alone: the webhook that may not see it is not told at all.
        publish_texts(store, None, {"open.md": OPEN, "payroll.md": HIDDEN.replace("Payroll", "Pay")})
        assert [w for (w,) in store.db.rows("SELECT webhook FROM deliveries ORDER BY id")] == [everyone, hr, hr]


def test_an_event_commits_with_its_change_or_not_at_all(store_url: str) -> None:
    with Store(store_url, create=True) as store:
        hook(store.db, ["publish"])
        with pytest.raises(StoreConflict), store.db.transaction():
            assert events.emit(store.db, "publish", published(0)) is not None
            raise StoreConflict("the change failed after its event")
        assert store.db.rows("SELECT count(*) FROM events") == [(0,)]
        with store.db.transaction():
            event = events.emit(store.db, "publish", published(0))
        assert store.db.rows("SELECT id, kind FROM events") == [(event, "publish")]
        [(uid,)] = store.db.rows("SELECT uid FROM events")
        assert str(uid).startswith("evt_")


def test_the_prompts_an_event_names_are_bounded(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events, "MAX_EVENT_PROMPTS", 2)
    with Store(store_url, create=True) as store:
        publish_texts(store, None, {f"p{n}.md": OPEN for n in range(3)} | {"docs/notes.txt": "material"})
        prompts, truncated = events.changed_prompts(store.db, {}, {"p0.md": 1, "p1.md": 1, "p2.md": 1,
                                                                   "docs/notes.txt": 1})
        assert [p.name for p in prompts] == ["p0", "p1"] and truncated
        assert prompts[0] == ChangedPrompt(name="p0", path="p0.md", version=1, previous=None, deleted=False,
                                           scopes=())
        seen = events.seen_changes(store.reads, {}, {"p0.md": 1, "docs/notes.txt": 1})
        assert seen == {"docs/notes.txt": [], "p0.md": []}
