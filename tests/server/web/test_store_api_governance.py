"""``/api/store``'s governance against a real ``promptdeck serve --http``: protected labels (403 naming the
scope, nothing changed), the label audit as each principal may see it, and rollouts started and ended
through the API."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.http_server import http_server
from tests.support.store_api import GREET_1, SECRET, cli, get, make_store, post

TOKENS = ("alice:writer-token-0123456789 store:write", "bob:reader-token-0123456789",
          "carol:hr-token-0123456789 hr store:write", "dave:release-token-0123456789 store:write release")
ALICE = {"authorization": "Bearer writer-token-0123456789"}
BOB = {"authorization": "Bearer reader-token-0123456789"}
CAROL = {"authorization": "Bearer hr-token-0123456789"}
DAVE = {"authorization": "Bearer release-token-0123456789"}


@contextmanager
def serving(tmp: Path, url: str) -> Iterator[str]:
    tokens = tmp / "tokens"
    tokens.write_text("\n".join(TOKENS) + "\n")
    with http_server("", "--store", url, "--label", "production", "--token-file", str(tokens)) as endpoint:
        yield endpoint.removesuffix("/mcp")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """One server for the module (each test leaves the label where it found it, or uses its own label)."""
    tmp = tmp_path_factory.mktemp("governance")
    url = make_store(tmp)
    (tmp / "lib" / "greet.md").write_text(GREET_1.replace("Hello", "Hello there"))  # version 3: v1's arguments
    cli("publish", str(tmp / "lib"), "--store", url, "-m", "warmer")
    cli("label", "greet@1", "staging", "--store", url)
    with serving(tmp, url) as base:
        yield base, url


def positions(url: str) -> int:
    with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
        return int(conn.execute("SELECT count(*) FROM positions").fetchone()[0])


def test_a_protected_label_needs_its_scope_for_every_kind_of_move(served: tuple[str, str]) -> None:
    base, url = served
    cli("protect", "production", "--scope", "release", "--store", url)
    try:
        before = positions(url)
        versions = cli("history", "greet", "--store", url)
        for route, body in (("/label", {"prompt": "greet", "version": 2, "label": "production"}),
                            ("/rollback", {"label": "production"}),
                            ("/publish", {"prompt": "greet", "text": GREET_1 + "x\n", "label": "production"}),
                            ("/rollout", {"label": "production", "prompt": "greet", "version": 3, "percent": 10}),
                            ("/promote", {"source": "staging", "label": "production"})):
            refused = post(base, route, ALICE, body)
            assert refused.status_code == 403, (route, refused.text)
            assert refused.json()["scope"] == "release" and "needs the scope release" in refused.json()["error"]
        assert positions(url) == before  # nothing moved
        assert cli("history", "greet", "--store", url) == versions  # and the refused save saved nothing
        overview = get(base, "", ALICE).json()
        assert next(x for x in overview["labels"] if x["name"] == "production")["protected"] == {"scope": "release"}
        # The same moves on a label that is not protected need only the write scope.
        assert post(base, "/label", ALICE, {"prompt": "greet", "version": 2, "label": "staging"}).status_code == 200
        assert post(base, "/rollback", ALICE, {"label": "staging"}).status_code == 200
        # Holding the scope: the move is made, with its reason.
        moved = post(base, "/label", DAVE, {"prompt": "greet", "version": 2, "label": "production",
                                            "message": "ship the mood"})
        assert moved.status_code == 200, moved.text
        assert post(base, "/rollback", DAVE, {"label": "production", "message": "undo"}).status_code == 200
    finally:
        cli("unprotect", "production", "--store", url)
    assert post(base, "/label", ALICE, {"prompt": "greet", "version": 1, "label": "production"}).status_code == 200


def test_a_rollout_without_the_write_scope_is_403_naming_it(served: tuple[str, str]) -> None:
    base, _ = served
    for body in ({"label": "staging", "prompt": "greet", "version": 2, "percent": 10},
                 {"label": "staging", "prompt": "greet", "action": "abort"}):
        refused = post(base, "/rollout", BOB, body)
        assert refused.status_code == 403 and refused.json()["scope"] == "store:write"


def test_the_audit_shows_who_moved_a_label_when_from_where_and_why(served: tuple[str, str]) -> None:
    base, url = served
    cli("label", "greet@2", "staging", "--store", url, "-m", "try the mood", "--author", "erin")
    cli("label", "greet@1", "staging", "--store", url, "-m", "back to plain", "--author", "erin")
    audit = get(base, "/moves", BOB, label="staging").json()
    newest, older = audit["moves"][0], audit["moves"][1]
    assert (newest["author"], newest["message"], newest["reason"]) == ("erin", "back to plain", "label greet@1")
    assert newest["changes"] == [{"path": "greet.md", "from": 2, "to": 1}]
    assert newest["from"] == older["position"] and older["message"] == "try the mood"
    assert audit["moves"][-1]["from"] is None and audit["protected"] is None
    # The command line shows the same moves, with the same reasons.
    lines = cli("history", "--store", url, "--label", "staging").splitlines()
    assert "erin" in lines[0] and "back to plain" in lines[0] and "[greet.md v2->v1]" in lines[0]
    assert get(base, "/moves", BOB, label="no-such-label").status_code == 404
    assert get(base, "/moves", BOB, label="../x").status_code == 400
    assert get(base, "/moves", BOB).status_code == 400


def test_a_move_of_only_hidden_prompts_is_not_in_the_audit_of_who_cannot_see_them(served: tuple[str, str],
                                                                                   tmp_path: Path) -> None:
    base, url = served
    saved = post(base, "/publish", CAROL, {"prompt": "salaries", "text": SECRET + "More.\n", "label": "staging",
                                           "message": "a raise for everyone"})
    assert saved.status_code == 200, saved.text
    cli("label", "greet@2", "staging", "--store", url, "-m", "visible one")
    for_carol = get(base, "/moves", CAROL, label="staging").json()["moves"]
    for_bob = get(base, "/moves", BOB, label="staging").json()["moves"]
    assert for_carol[1]["message"] == "a raise for everyone" and for_carol[1]["author"] == "carol"
    hidden = for_carol[1]["position"]
    assert all(move["position"] != hidden for move in for_bob)
    assert "a raise" not in str(for_bob) and "salaries" not in str(for_bob)
    # The move after it is shown, coming from the move before the hidden one (as Bob may know it).
    assert for_bob[0]["message"] == "visible one" and for_bob[0]["from"] == for_carol[2]["position"]
    assert for_bob[0]["changes"] == [{"path": "greet.md", "from": 1, "to": 2}]
    cli("label", "greet@1", "staging", "--store", url)


def test_a_rollout_through_the_api_is_shown_changed_promoted_and_aborted(served: tuple[str, str]) -> None:
    base, url = served
    # Version 2 takes another argument, which prompts/list (the label's version's listing) does not show.
    other_arguments = post(base, "/rollout", ALICE, {"label": "staging", "prompt": "greet", "version": 2,
                                                     "percent": 5})
    assert other_arguments.status_code == 409 and "takes other arguments" in other_arguments.json()["error"]
    own = post(base, "/rollout", ALICE, {"label": "staging", "prompt": "greet", "version": 1, "percent": 5})
    assert own.status_code == 409 and "points at version 1" in own.json()["error"]
    started = post(base, "/rollout", ALICE, {"label": "staging", "prompt": "greet", "version": 3, "percent": 12.5,
                                             "message": "canary"})
    assert started.status_code == 200, started.text
    rollout = started.json()["rollout"]
    assert (rollout["base"], rollout["version"], rollout["percent"], rollout["author"]) == (1, 3, 12.5, "alice")
    staging = next(x for x in get(base, "", BOB).json()["labels"] if x["name"] == "staging")
    assert [r["id"] for r in staging["rollouts"]] == [rollout["id"]]
    grown = post(base, "/rollout", ALICE, {"label": "staging", "prompt": "greet", "version": 3, "percent": 50})
    assert grown.json()["rollout"]["id"] == rollout["id"] and grown.json()["rollout"]["percent"] == 50
    other = post(base, "/rollout", ALICE, {"label": "staging", "prompt": "greet", "version": 1, "percent": 5})
    assert other.status_code == 409 and "already rolling out version 3" in other.json()["error"]
    promoted = post(base, "/rollout", ALICE, {"label": "staging", "prompt": "greet", "action": "promote"})
    assert promoted.status_code == 200 and promoted.json()["ended"] == "promote"
    assert "greet.md v3  greet" in cli("history", "greet", "--store", url).splitlines()[0] and \
        "staging" in cli("history", "greet", "--store", url).splitlines()[0]
    events = get(base, "/moves", BOB, label="staging").json()["rollouts"]
    assert [e["kind"] for e in events[:3]] == ["promote", "percent", "start"]
    assert events[2]["message"] == "canary" and events[0]["position"] is not None
    assert post(base, "/rollout", ALICE, {"label": "staging", "prompt": "greet", "action": "abort"}).status_code == 404
    cli("label", "greet@1", "staging", "--store", url)
    assert post(base, "/rollout", ALICE, {"label": "staging", "prompt": "greet", "version": 3,
                                          "percent": 1}).status_code == 200
    aborted = post(base, "/rollout", ALICE, {"label": "staging", "prompt": "greet", "action": "abort"})
    assert aborted.status_code == 200 and aborted.json()["ended"] == "abort"
    assert next(x for x in get(base, "", BOB).json()["labels"] if x["name"] == "staging")["rollouts"] == []


@pytest.mark.parametrize(("body", "status", "says"), [
    ({"label": "staging", "prompt": "greet", "version": 2, "percent": 101}, 400, "percent"),
    ({"label": "staging", "prompt": "greet", "version": 2, "percent": 12.345}, 400, "two decimals"),
    ({"label": "staging", "prompt": "greet", "version": 2, "percent": -1}, 400, "percent"),
    ({"label": "staging", "prompt": "greet", "percent": 10}, 400, "version and percent"),
    ({"label": "staging", "prompt": "greet", "action": "launch"}, 400, "start, promote or abort"),
    ({"label": "staging", "prompt": "greet", "action": "abort", "percent": 3}, 400, "takes no version"),
    ({"label": "staging", "prompt": "greet", "version": 3, "percent": 1, "message": "x" * 2001}, 400, "message"),
    ({"label": "st aging", "prompt": "greet", "version": 2, "percent": 1}, 400, "not valid"),
    ({"label": "staging", "prompt": "greet", "version": 99, "percent": 1}, 404, "no version 99"),
    ({"label": "staging", "prompt": "salaries", "version": 1, "percent": 1}, 404, "no prompt"),
    ({"label": "staging", "prompt": "greet", "version": 3, "percent": 1, "extra": 1}, 400, "extra"),
])
def test_bad_rollout_calls_change_nothing(served: tuple[str, str], body: dict[str, object], status: int,
                                          says: str) -> None:
    base, url = served
    before = positions(url)
    refused = post(base, "/rollout", ALICE, body)
    assert refused.status_code == status, refused.text
    assert says in refused.json()["error"]
    assert positions(url) == before
    assert next(x for x in get(base, "", BOB).json()["labels"] if x["name"] == "staging")["rollouts"] == []


TESTED = ("---\n{}arguments:\n  - name: who\ntests:\n  - description: greets by name\n    vars: {{who: Ada}}\n"
          "    assert:\n      - {{type: contains, value: Hello Ada}}\n---\n{} {{{{ who }}}}!\n")


def test_a_move_to_failing_tests_is_409_with_the_failures_the_principal_may_see(tmp_path: Path) -> None:
    library, url = tmp_path / "lib", f"sqlite:///{tmp_path / 'store.db'}"
    library.mkdir()
    (library / "greet.md").write_text(TESTED.format("", "Hello"))
    (library / "pay.md").write_text(TESTED.format("scopes: [hr]\n", "Hello"))
    cli("publish", str(library), "--store", url, "--label", "production")
    (library / "greet.md").write_text(TESTED.format("", "Hi"))
    (library / "pay.md").write_text(TESTED.format("scopes: [hr]\n", "Hi"))
    cli("publish", str(library), "--store", url, "--skip-tests")
    cli("protect", "production", "--scope", "store:write", "--require-tests", "--store", url)
    with serving(tmp_path, url) as base:
        before = positions(url)
        refused = post(base, "/label", ALICE, {"prompt": "greet", "version": 2, "label": "production"})
        assert refused.status_code == 409, refused.text
        (failing,) = refused.json()["failures"]
        assert failing["prompt"] == "greet" and len(failing["failures"]) == 1
        assert failing["failures"][0].startswith("prompt 'greet'") and "greets by name" in failing["failures"][0]
        assert "requires passing tests: 1 failing case of prompts you may see" in refused.json()["error"]
        assert "pay" not in refused.text
        # Carol sees pay: its failure is named to her, when she moves it.
        for_carol = post(base, "/label", CAROL, {"prompt": "pay", "version": 2, "label": "production"})
        assert for_carol.status_code == 409 and [f["prompt"] for f in for_carol.json()["failures"]] == ["pay"]
        # A move whose failing tests are all hidden from the mover says so, naming none. (Carol moves pay to its
        # failing version on a label Alice then moves whole: only pay's test fails there.)
        cli("label", "pay@2", "staging", "--store", url)
        cli("label", "greet@1", "staging", "--store", url)
        cli("protect", "staging", "--scope", "store:write", "--require-tests", "--store", url)
        (library / "greet.md").write_text(TESTED.format("", "Hello, Hello"))
        cli("publish", str(library), "--store", url, "--skip-tests")
        hidden = post(base, "/label", ALICE, {"prompt": "greet", "version": 3, "label": "staging"})
        assert hidden.status_code == 409 and hidden.json()["failures"] == []
        assert "tests of prompts you may not see fail" in hidden.json()["error"] and "pay" not in hidden.text
        assert positions(url) == before + 2  # the two command-line moves, none of the refused ones


def test_the_audit_comes_in_bounded_pages(served: tuple[str, str]) -> None:
    from promptdeck.sources.store.database import Store

    base, url = served
    with Store(url) as store:
        for n in range(45):
            store.label("greet", 3 if n % 2 == 0 else 1, "busy", author="bot", message=f"move {n}")
    first = get(base, "/moves", BOB, label="busy").json()
    assert len(first["moves"]) == 40 and first["moves"][0]["message"] == "move 44"
    assert first["next"] == first["moves"][-1]["position"]
    rest = get(base, "/moves", BOB, label="busy", before=first["next"]).json()
    assert [m["message"] for m in rest["moves"]] == [f"move {n}" for n in range(4, -1, -1)]
    assert rest["next"] is None and rest["rollouts"] == []
    assert rest["moves"][-1]["from"] is None and rest["moves"][0]["from"] == rest["moves"][1]["position"]
    for bad in ("x", "-1", "1" * 13):
        assert get(base, "/moves", BOB, label="busy", before=bad).status_code == 400
