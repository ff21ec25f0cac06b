"""The table of webhook event kinds (``sources.store.event_kinds``): registering, checking a payload, what a
webhook stores for the kinds it asks for, and the payloads' JSON, field by field in the order receivers get.

What the store sends with them (bodies byte for byte, a kind registered after a webhook was made):
test_webhooks.py; the schema 7 migration that dropped the table of kinds: test_schema.py."""

from __future__ import annotations

import json

import msgspec
import pytest

from promptdeck.sources.store import event_kinds
from promptdeck.sources.store.event_kinds import (
    EVERY,
    ChangedPrompt,
    GitProvenance,
    LabelMoved,
    LabelPromoted,
    ProposalChanged,
    Published,
    RolloutChanged,
    checked,
    encoded,
    names,
    register,
    stored,
    wants,
)
from promptdeck.sources.store.model import StoreError
from tests.support.event_kinds import Deployed, registered

GREET = ChangedPrompt(name="greet", path="greet.md", version=2, previous=1, deleted=False, scopes=("hr",))


def test_the_kinds_this_promptdeck_declares() -> None:
    assert names() == ["label", "promote", "proposal", "publish", "rollback", "rollout"]
    assert {name: kind.payload for name, kind in event_kinds.REGISTRY.items()} == {
        "publish": Published, "label": LabelMoved, "rollback": LabelMoved, "rollout": RolloutChanged,
        "promote": LabelPromoted, "proposal": ProposalChanged}


def test_a_registered_kind_is_listed_checked_and_storable_until_it_goes() -> None:
    with registered() as kind:
        assert kind.name == "deploy" and kind.payload is Deployed
        assert names() == ["deploy", "label", "promote", "proposal", "publish", "rollback", "rollout"]
        assert checked("deploy", Deployed(label="production")) is kind
        assert stored(["deploy"]) == "deploy"
    assert "deploy" not in names()
    with pytest.raises(StoreError, match="no event kind 'deploy'"):
        stored(["deploy"])


def test_a_name_is_registered_once_and_never_the_wildcard() -> None:
    with pytest.raises(ValueError, match="'publish' is registered already"):
        register("publish", Published)
    for bad in (EVERY, "", "Deploy", "de ploy", "-x", "x" * 65):
        with pytest.raises(ValueError, match="an event kind is 1-64"):
            register(bad, Published)
    assert names() == ["label", "promote", "proposal", "publish", "rollback", "rollout"]


def test_a_payload_of_another_kind_or_an_unknown_kind_is_refused() -> None:
    moved = LabelMoved(label="production", author="ana", message="m", reason="r", position=2, previous_position=None,
                       files=1, prompts=(), truncated=False)
    assert checked("label", moved).name == "label" and checked("rollback", moved).name == "rollback"
    with pytest.raises(StoreError, match="a 'publish' event carries a Published, not a LabelMoved"):
        checked("publish", moved)
    with pytest.raises(StoreError, match=r"no event kind 'deploy' \(the kinds: label, promote, proposal, publish, "
                                         r"rollback, rollout\)"):
        checked("deploy", moved)


def test_every_kind_is_stored_as_the_wildcard_and_wants_kinds_added_later() -> None:
    assert stored([]) == EVERY == "*"
    assert stored(["rollback", "label", "label"]) == "label rollback"
    # a webhook that lists every kind there is today still asks for those alone
    assert stored(names()) == "label promote proposal publish rollback rollout"
    with pytest.raises(StoreError, match="no event kind 'deploy'; the kinds are label, promote, proposal, publish, "
                                         "rollback, rollout"):
        stored(["label", "deploy"])
    with pytest.raises(StoreError, match="no event kind '\\*'"):
        stored([EVERY])  # every kind is asking for none
    with registered():
        assert wants(stored([]), "deploy") and wants("*", "publish")
        assert not wants(stored(["label", "publish", "rollback", "rollout"]), "deploy")
    assert wants("label rollback", "rollback") and not wants("label rollback", "publish") and not wants("", "label")


def test_payloads_encode_as_receivers_parse_them_fields_in_their_order() -> None:
    published = Published(publish=2, author="bé", message="✓", label=None, files=1, prompts=(GREET,), truncated=False)
    data = encoded(published)
    assert list(data) == ["publish", "author", "message", "label", "files", "prompts", "truncated"]
    # lists, as JSON reads back: what events._visible filters per webhook
    assert data["prompts"] == [{"name": "greet", "path": "greet.md", "version": 2, "previous": 1, "deleted": False,
                                "scopes": ["hr"]}]
    assert json.dumps(data, separators=(",", ":")) == (
        '{"publish":2,"author":"b\\u00e9","message":"\\u2713","label":null,"files":1,"prompts":[{"name":"greet",'
        '"path":"greet.md","version":2,"previous":1,"deleted":false,"scopes":["hr"]}],"truncated":false}')
    # from a git work tree, and only then, the body names its commit, branch and dirtiness last
    from_git = msgspec.structs.replace(published, git=GitProvenance(commit="ab" * 20, branch="main", dirty=True))
    assert json.dumps(encoded(from_git), separators=(",", ":")).endswith(
        f'"truncated":false,"git":{{"commit":"{"ab" * 20}","branch":"main","dirty":true}}}}')
    moved = LabelMoved(label="production", author="ana", message="m", reason="label greet@2", position=5,
                       previous_position=4, files=1, prompts=(GREET,), truncated=False)
    assert list(encoded(moved)) == ["label", "author", "message", "reason", "position", "previous_position", "files",
                                    "prompts", "truncated"]
    rollout = RolloutChanged(label="production", rollout=1, change="start", percent=1234 / 100, author="ana",
                             message="", position=None, prompts=(GREET,))
    assert json.dumps(encoded(rollout), separators=(",", ":")).startswith(
        '{"label":"production","rollout":1,"change":"start","percent":12.34,"author":"ana","message":"",'
        '"position":null,"prompts":[')
    assert encoded(RolloutChanged(label="l", rollout=1, change="percent", percent=5000 / 100, author="a", message="",
                                  position=None, prompts=()))["percent"] == 50.0


def test_payloads_are_frozen() -> None:
    with pytest.raises(AttributeError):
        GREET.name = "other"  # type: ignore[misc]
