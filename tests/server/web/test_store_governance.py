"""``/api/store``'s governance (server/web/store_governance.py): a protected label's move needs its scope
(403 naming it), a test refusal names only the failures the principal may see, a rollout's share is checked,
and the audit shows a label's moves and rollouts as the principal may see them. On an embedded store."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from promptdeck.cli.store import publish
from promptdeck.protocol.errors import HttpError
from promptdeck.server.web.store_governance import (
    SHOWN_CHANGES,
    PromoteCall,
    RolloutCall,
    audit,
    basis_points,
    guard,
    may_move,
    promote,
    rollout,
    rollouts,
)
from promptdeck.server.web.store_governance import (
    tests_refusal as refusal_for_tests,  # pytest collects names starting "test"
)
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.model import Protection, Recorded, StoreMissing, TestsFailed

pytestmark = pytest.mark.usefixtures("kept_logging")
PROTECTED = Protection("production", "admin", False, "ann", 0.0)


@dataclass
class Sight:
    """A principal's view of the store: it holds ``held`` and may not see the files in ``hidden``."""

    store: Store
    held: frozenset[str] | None = None
    hidden: set[str] = field(default_factory=set)

    def version(self, path: str, version: int, recorded: Recorded | None = None) -> bool:
        return path not in self.hidden

    def allow_move(self, before: dict[str, int], after: dict[str, int]) -> None:
        pass


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """production -> publish 1 (a.md v1, b.md v1); then publish 2 changes a.md alone, unlabelled."""
    folder, url = tmp_path / "lib", str(tmp_path / "s.db")
    folder.mkdir()
    (folder / "a.md").write_text("a one\n")
    (folder / "b.md").write_text("b one\n")
    assert CliRunner().invoke(publish, [str(folder), "--store", url, "--label", "production"]).exit_code == 0
    (folder / "a.md").write_text("a two\n")
    assert CliRunner().invoke(publish, [str(folder), "--store", url]).exit_code == 0
    with Store(url) as opened:
        yield opened


def test_a_protected_label_needs_its_scope() -> None:
    assert may_move(None, PROTECTED) and may_move(frozenset(), None)
    assert may_move(frozenset({"admin"}), PROTECTED) and not may_move(frozenset({"store:write"}), PROTECTED)
    guard(frozenset({"admin:x", "admin"}))(PROTECTED)
    with pytest.raises(HttpError) as refused:
        guard(frozenset({"store:write"}))(PROTECTED)
    assert refused.value.status == 403 and refused.value.extra == {"scope": "admin"}
    assert refused.value.message == "label production is protected: moving it needs the scope admin; nothing changed"


def test_a_test_refusal_names_only_what_the_principal_may_see() -> None:
    failed = TestsFailed("production", [("open", "", ["open: case 1 failed", "open: case 2 failed"]),
                                        ("secret", "hr", ["secret: case 1 failed"])], "3 cases fail")
    seen = refusal_for_tests(failed, frozenset())
    assert seen.status == 409 and seen.extra["failures"] == [
        {"prompt": "open", "failures": ["open: case 1 failed", "open: case 2 failed"]}]
    assert seen.message == ("label production requires passing tests: 2 failing cases of prompts you may see; "
                            "nothing changed")
    hidden = refusal_for_tests(TestsFailed("production", [("secret", "hr", ["x"])], "1 case fails"), frozenset())
    assert hidden.extra["failures"] == [] and "tests of prompts you may not see fail" in hidden.message
    assert "secret" not in hidden.message


def test_a_rollouts_share_is_whole_hundredths_of_a_percent() -> None:
    assert basis_points(RolloutCall("production", "a", version=2, percent=12.5)) == 1250
    with pytest.raises(HttpError, match="percent: at most two decimals, not 12.345"):
        basis_points(RolloutCall("production", "a", version=2, percent=12.345))
    with pytest.raises(HttpError, match="a rollout's start needs version and percent"):
        basis_points(RolloutCall("production", "a", version=2))


def test_a_rollout_started_audited_and_promoted(store: Store) -> None:
    sight = Sight(store)
    started = rollout(sight, "a.md", RolloutCall("production", "a", version=2, percent=25), "production", "ann")
    assert {k: started["rollout"][k] for k in ("label", "path", "base", "version", "percent")} == {
        "label": "production", "path": "a.md", "base": 1, "version": 2, "percent": 25.0}
    assert [r["version"] for r in rollouts(sight, "production")] == [2]
    assert rollouts(Sight(store, hidden={"a.md"}), "production") == []  # not both versions seen: not shown
    page = audit(sight, "production")
    assert page["label"] == "production" and page["protected"] is None and page["next"] is None
    assert [m["reason"] for m in page["moves"]][-1].startswith("publish 1")
    assert [e["kind"] for e in page["rollouts"]] == ["start"]
    ended = rollout(sight, "a.md", RolloutCall("production", "a", action="promote"), "production", "ann")
    assert ended["ended"] == "promote"


def test_a_move_of_what_the_principal_may_not_see_is_not_in_its_audit(store: Store) -> None:
    rollout(Sight(store), "a.md", RolloutCall("production", "a", action="start", version=2, percent=50),
            "production", "ann")
    rollout(Sight(store), "a.md", RolloutCall("production", "a", action="promote"), "production", "ann")
    everyone = audit(Sight(store), "production")["moves"]
    blind = audit(Sight(store, hidden={"a.md"}), "production")["moves"]
    assert len(blind) == len(everyone) - 1  # the promotion changed a.md alone
    assert all(change["path"] == "b.md" for move in blind for change in move["changes"])


@pytest.mark.parametrize(("call", "says"), [
    (RolloutCall("production", "a", action="pause"), "action: start, promote or abort, not 'pause'"),
    (RolloutCall("production", "a", action="abort", percent=5), "abort takes no version or percent"),
    (RolloutCall("production", "a", version=9, percent=5), "prompt 'a' has no version 9"),
])
def test_bad_rollout_calls_are_refused_naming_the_fault(store: Store, call: RolloutCall, says: str) -> None:
    sight = Sight(store, hidden=set())
    sight.version = lambda path, version, recorded=None: version in (1, 2)  # type: ignore[method-assign]
    with pytest.raises(HttpError, match=says):
        rollout(sight, "a.md", call, "production", "ann")


def test_a_protected_rollout_needs_the_scope(store: Store) -> None:
    store.governance.protect("production", "admin", require_tests=False, author="ann")
    with pytest.raises(HttpError, match="needs the scope admin"):
        rollout(Sight(store, held=frozenset({"store:write"})), "a.md",
                RolloutCall("production", "a", version=2, percent=5), "production", "bob")
    assert audit(Sight(store), "production")["protected"] == {"scope": "admin"}


def test_a_promotion_lists_its_first_changes_and_a_hidden_name_is_unknown(tmp_path: Path) -> None:
    """staging holds 60 files production lacks: the answer lists 50 and counts the rest; a prompt of staging
    hidden from the principal is answered as one staging does not hold."""
    folder, url = tmp_path / "lib", str(tmp_path / "s.db")
    folder.mkdir()
    (folder / "a.md").write_text("a one\n")
    assert CliRunner().invoke(publish, [str(folder), "--store", url, "--label", "production"]).exit_code == 0
    for n in range(60):
        (folder / f"n{n:02}.md").write_text(f"n {n}\n")
    assert CliRunner().invoke(publish, [str(folder), "--store", url, "--label", "staging"]).exit_code == 0
    with Store(url) as opened:
        sight = Sight(opened, hidden={"n07.md"})
        with pytest.raises(StoreMissing, match="label 'staging' has no prompt 'n07'; nothing changed"):
            promote(sight, PromoteCall("staging", "production", ["n07"]), "staging", "production", "ann")
        done = promote(sight, PromoteCall("staging", "production"), "staging", "production", "ann")
    assert done["moved"] and len(done["changes"]) == SHOWN_CHANGES and done["more"] == 10
    assert done["changes"][0] == {"path": "n00.md", "from": None, "to": 1}
