"""A served label's live rollouts (sources/store/splits.py): read again when they change, each version parsed
once, and a request's key sending it to the rollout's version only when the prompt asked for is the one the
rollout splits. Keys across replicas and the command are tests/sources/store/test_rollout.py's."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from promptdeck.prompts.spec import Prompt
from promptdeck.sources.files.library import TemplateFolder
from promptdeck.sources.store.catalog import META_LABEL, META_VERSION
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.governance import Governance, bucket
from promptdeck.sources.store.model import Rollout, StoreError
from promptdeck.sources.store.reads import Reads
from promptdeck.sources.store.splits import META_ROLLOUT, LiveRollouts
from tests.support.native import text
from tests.support.stores import publish_texts

GREET = "---\narguments:\n  - name: who\n---\n{} {{{{ who }}}}!\n"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """greet at versions 1 (label production) and 2; bye at version 1."""
    with Store(f"sqlite:///{tmp_path}/prompts.db", create=True) as opened:
        publish_texts(opened, "production", {"greet.md": GREET.format("Hello"), "bye.md": "Bye\n"})
        publish_texts(opened, None, {"greet.md": GREET.format("Hi"), "bye.md": "Bye\n"})
        yield opened


@pytest.fixture
def library(tmp_path: Path) -> TemplateFolder:
    (tmp_path / "lib").mkdir()
    return TemplateFolder(tmp_path / "lib")


def served(name: str = "greet", version: int = 1, label: str = "production", source: str = "greet.md",
           scopes: frozenset[str] = frozenset()) -> Prompt:
    """The label's own prompt, as ``StoreSource`` serves it."""
    return Prompt(name, lambda *_: [], source=source, scopes=scopes, meta={META_VERSION: version, META_LABEL: label})


def roll(store: Store, basis_points: int, version: int = 2) -> Rollout:
    return store.governance.start_rollout("production", "greet", version, basis_points, author="ana")


def key_in(rollout: Rollout, inside: bool) -> str:
    """A request key whose bucket falls inside (or outside) the rollout's share."""
    return next(key for key in (f"key:{n}" for n in range(10_000))
                if (bucket(rollout.id, key) < rollout.basis_points) == inside)


def test_nothing_rolls_out_until_a_rollout_starts(store: Store, library: TemplateFolder) -> None:
    splits = LiveRollouts("production")
    assert not splits.follow(store, lambda: library) and splits.names() == frozenset()
    assert splits.choose(served(), "key:1") is None


def test_a_started_rollout_serves_its_version_to_the_keys_in_its_share(store: Store, library: TemplateFolder) -> None:
    rollout = roll(store, 5000)
    splits = LiveRollouts("production")
    assert splits.follow(store, lambda: library) and splits.names() == frozenset({"greet"})
    chosen = splits.choose(served(), key_in(rollout, True))
    assert chosen is not None and text(chosen, who="Ada") == "Hi Ada!"
    assert chosen.meta == {META_VERSION: 2, META_LABEL: "production", META_ROLLOUT: rollout.id}
    assert splits.choose(served(), key_in(rollout, False)) is None  # the label's version


def test_a_render_without_a_key_is_never_split(store: Store, library: TemplateFolder) -> None:
    roll(store, 10_000)
    splits = LiveRollouts("production")
    splits.follow(store, lambda: library)
    assert splits.choose(served(), "key:1") is not None and splits.choose(served(), None) is None


@pytest.mark.parametrize("prompt", [
    served(name="bye", source="bye.md"),  # not under rollout
    served(source="team/greet.md"),  # a folder's prompt of that name, served beside the label
    served(label="staging"),  # another label's
    served(version=2),  # the label moved on from the rollout's base
    served(scopes=frozenset({"hr"})),  # the label's version is seen by others than the rollout's
], ids=["other prompt", "other source", "other label", "label moved", "other scopes"])
def test_only_the_prompt_the_rollout_splits_is_split(store: Store, library: TemplateFolder, prompt: Prompt) -> None:
    roll(store, 10_000)  # every key falls in the share
    splits = LiveRollouts("production")
    splits.follow(store, lambda: library)
    assert splits.choose(served(), "key:1") is not None
    assert splits.choose(prompt, "key:1") is None


def test_following_again_changes_nothing_until_the_rollouts_do(store: Store, library: TemplateFolder,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    rollout = roll(store, 1000)
    splits = LiveRollouts("production")
    assert splits.follow(store, lambda: library)
    inside = key_in(rollout, True)
    first = splits.choose(served(), inside)
    assert not splits.follow(store, lambda: library)
    roll(store, 9000)  # a new share: read again, but the version is not parsed again
    read: list[tuple[str, int]] = []
    content = Reads.content

    def counted(self: Reads, path: str, version: int) -> bytes:
        read.append((path, version))
        return content(self, path, version)

    monkeypatch.setattr(Reads, "content", counted)
    assert splits.follow(store, lambda: library)
    assert splits.choose(served(), inside) is first and read == []
    store.governance.end_rollout("production", "greet", promote=False, author="ana")
    assert splits.follow(store, lambda: library) and splits.names() == frozenset()
    assert splits.choose(served(), inside) is None


def test_a_version_that_does_not_parse_as_the_prompt_is_not_served(store: Store, library: TemplateFolder,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    rollout = roll(store, 10_000)
    # Another tool wrote the store: the version's bytes are no prompt now.
    monkeypatch.setattr(Reads, "content", lambda self, path, version: b"---\narguments: [\n---\nx\n")
    splits = LiveRollouts("production")
    with caplog.at_level(logging.ERROR, "promptdeck.store"):
        splits.follow(store, lambda: library)
    assert splits.names() == frozenset() and splits.choose(served(), "key:1") is None
    assert [r.getMessage() for r in caplog.records] == [
        f"rollout {rollout.id} of greet (label production): version 2 does not parse as that prompt; not served"]


def test_a_store_without_rollouts_yet_is_not_a_change(store: Store, library: TemplateFolder,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def schema_4(self: Governance, label: str) -> list[Rollout]:
        raise StoreError("no such table: rollouts")

    monkeypatch.setattr(Governance, "live_rollouts", schema_4)
    splits = LiveRollouts("production")
    assert not splits.follow(store, lambda: library) and splits.names() == frozenset()


def test_a_version_the_store_could_not_read_is_read_again_on_the_next_follow(
        store: Store, library: TemplateFolder, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    rollout = roll(store, 10_000)
    content = Reads.content
    failures = [StoreError("connection lost")]

    def flaky(self: Reads, path: str, version: int) -> bytes:
        if failures:
            raise failures.pop()
        return content(self, path, version)

    monkeypatch.setattr(Reads, "content", flaky)
    splits = LiveRollouts("production")
    with caplog.at_level(logging.ERROR, "promptdeck.store"):
        splits.follow(store, lambda: library)
    assert splits.names() == frozenset()
    assert [r.getMessage() for r in caplog.records] == [
        f"rollout {rollout.id} (label production) cannot be read: connection lost"]
    # The rollouts are as they were, but the version was never held: every other replica serves it.
    assert splits.follow(store, lambda: library) and splits.names() == frozenset({"greet"})
    assert splits.choose(served(), "key:1") is not None


def test_a_rollout_followed_before_the_library_is_there_is_parsed_once_it_is(store: Store,
                                                                             library: TemplateFolder) -> None:
    roll(store, 10_000)
    splits = LiveRollouts("production")
    splits.follow(store, lambda: None)  # before the source's load
    assert splits.names() == frozenset()
    assert splits.follow(store, lambda: library) and splits.names() == frozenset({"greet"})
