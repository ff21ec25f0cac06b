"""Reviews through ``/api/store`` under attack, against a real ``promptdeck serve --http`` on a store whose
production label requires one approval by a holder of ``release``: a forged approval (a principal named in
the body, a writer without the review scope), an author approving their own proposal, a direct move of the
label, and a proposal that widens a restricted prompt's scopes, which a reviewer who could not see the
prompt never sees, lists or approves."""

from __future__ import annotations

from pathlib import Path

from promptdeck.sources.store.database import Store
from tests.support.http_server import http_server
from tests.support.store_api import cli, get, post

TOKENS = ("ana:ana-token-0123456789 store:write release\nbob:bob-token-0123456789 store:write release\n"
          "eve:eve-token-0123456789 store:write\nhal:hal-token-0123456789 store:write release hr\n")
ANA, BOB, EVE, HAL = ({"authorization": f"Bearer {name}-token-0123456789"} for name in ("ana", "bob", "eve", "hal"))
GREET = "---\ndescription: Say hello\n---\nHello!\n"
SECRET = "---\nscopes: [hr]\n---\nSalaries are private.\n"


def test_reviews_through_the_store_api(tmp_path: Path) -> None:
    url, library = f"sqlite:///{tmp_path}/store.db", tmp_path / "lib"
    library.mkdir()
    (library / "greet.md").write_text(GREET)
    (library / "salaries.md").write_text(SECRET)
    cli("publish", str(library), "--store", url, "--label", "production", "--author", "root")
    (library / "salaries.md").write_text("---\ndescription: now for everyone\n---\nSalaries are private.\n")
    cli("publish", str(library), "--store", url, "--label", "production", "--propose", "--author", "hal")  # 1
    cli("protect", "production", "--scope", "release", "--require-approvals", "1", "--store", url)
    (tmp_path / "tokens").write_text(TOKENS)
    with http_server("", "--store", url, "--token-file", str(tmp_path / "tokens")) as endpoint:
        base = endpoint.removesuffix("/mcp")
        saved = post(base, "/publish", ANA, {"prompt": "greet", "text": GREET.replace("Hello", "Hi"),
                                             "label": "production", "propose": True, "message": "shorter"})
        assert saved.status_code == 200 and saved.json()["proposal"] == 2, saved.text
        # Nothing is served until a merge; a direct move of the label is refused.
        moved = post(base, "/label", ANA, {"prompt": "greet", "version": 2, "label": "production"})
        assert moved.status_code == 409 and "requires 1 approval" in moved.json()["error"]
        # Forged approvals: a principal in the body, and a writer without the review scope.
        forged = post(base, "/proposal/approve", EVE, {"id": 2, "principal": "bob"})
        assert forged.status_code == 400 and "principal" in forged.json()["error"]
        unscoped = post(base, "/proposal/approve", EVE, {"id": 2})
        assert unscoped.status_code == 403 and "needs the scope release" in unscoped.json()["error"]
        own = post(base, "/proposal/approve", ANA, {"id": 2})
        assert own.status_code == 409 and "ana wrote proposal 2" in own.json()["error"]
        early = post(base, "/proposal/merge", ANA, {"id": 2})
        assert early.status_code == 409 and "has 0 of the 1 approval" in early.json()["error"]
        # The widening of the hr-only prompt: bob, who cannot see it, neither lists, reads nor approves it.
        assert [p["id"] for p in get(base, "/proposals", BOB).json()["proposals"]] == [2]
        assert [p["id"] for p in get(base, "/proposals", HAL).json()["proposals"]] == [2, 1]
        for answer in (get(base, "/proposal", BOB, id=1), post(base, "/proposal/approve", BOB, {"id": 1}),
                       post(base, "/proposal/comment", BOB, {"id": 1, "message": "?"})):
            assert answer.status_code == 404 and answer.json()["error"] == "no proposal 1", answer.text
        assert get(base, "/proposal", BOB, id=99).json()["error"] == "no proposal 1".replace("1", "99")
        # A reviewer approves; the author merges exactly what was approved.
        assert post(base, "/proposal/comment", BOB, {"id": 2, "message": "fine"}).status_code == 200
        assert post(base, "/proposal/approve", BOB, {"id": 2}).json()["approvals"] == ["bob"]
        shown = get(base, "/proposal", ANA, id=2).json()
        assert shown["approvals"] == {"by": ["bob"], "needed": 1, "scope": "release"}
        assert [(c["path"], c["from"], c["to"]) for c in shown["changes"]] == [("greet.md", 1, 2)]
        assert [(r["kind"], r["principal"], r["current"]) for r in shown["reviews"]] == [
            ("open", "ana", True), ("comment", "bob", True), ("approve", "bob", True)]
        merged = post(base, "/proposal/merge", ANA, {"id": 2, "message": "ship it"})
        assert merged.status_code == 200 and merged.json()["state"] == "merged", merged.text
        widening = get(base, "/proposal", HAL, id=1).json()
        assert widening["changes"][0]["path"] == "salaries.md" and widening["author"] == "hal"
    with Store(url) as store:
        assert store.reads.position("production").files["greet.md"] == 2  # type: ignore[union-attr]
        assert store.reads.position("production").files["salaries.md"] == 1  # type: ignore[union-attr]
        assert [(r.kind, r.principal) for r in store.proposals.reviews(2)] == [
            ("open", "ana"), ("comment", "bob"), ("approve", "bob"), ("merge", "ana")]


def test_a_save_pushed_to_a_proposal_resets_its_approvals_and_a_hidden_or_closed_one_saves_nothing(
        tmp_path: Path) -> None:
    """A save with ``proposal: N`` pushes its version to open proposal N (its label does not move, its approvals
    no longer count, and the pusher becomes one of its authors); one the principal may not see is a 404, one
    closed or aimed at another label a 409, and none of those saves a version."""
    url, library = f"sqlite:///{tmp_path}/store.db", tmp_path / "lib"
    library.mkdir()
    (library / "greet.md").write_text(GREET)
    (library / "salaries.md").write_text(SECRET)
    cli("publish", str(library), "--store", url, "--label", "production", "--author", "root")
    (library / "greet.md").write_text(GREET.replace("Hello", "Hi"))
    cli("publish", str(library), "--store", url, "--label", "production", "--propose", "--author", "ana")  # 1
    (library / "salaries.md").write_text(SECRET.replace("private", "secret"))
    cli("publish", str(library), "--store", url, "--label", "staging", "--propose", "--author", "hal")  # 2: hr only
    (tmp_path / "tokens").write_text(TOKENS)
    with http_server("", "--store", url, "--token-file", str(tmp_path / "tokens")) as endpoint:
        base = endpoint.removesuffix("/mcp")
        assert post(base, "/proposal/approve", BOB, {"id": 1}).status_code == 200

        def save(who: dict[str, str], text: str, **more: object) -> tuple[int, dict[str, object]]:
            answer = post(base, "/publish", who, {"prompt": "greet", "text": text, **more})
            return answer.status_code, answer.json()

        with Store(url) as store:
            versions = store.reads.latest()["greet.md"].version
        assert save(BOB, "Hidden\n", proposal=2) == (404, {"error": "no proposal 2"})  # bob may not see pay
        refused = save(EVE, "Elsewhere\n", proposal=1, label="staging")
        assert refused[0] == 409 and "aimed at 'production', not 'staging'" in str(refused[1]["error"])
        with Store(url) as store:
            assert store.reads.latest()["greet.md"].version == versions  # nothing saved
        status, pushed = save(EVE, GREET.replace("Hello", "Hey"), proposal=1, message="friendlier")
        assert status == 200 and pushed["proposal"] == 1, pushed
        shown = get(base, "/proposal", ANA, id=1).json()
        assert shown["approvals"]["by"] == [] and shown["changes"][0]["to"] == pushed["version"]
        own = post(base, "/proposal/approve", EVE, {"id": 1})  # pushing made eve one of its authors
        assert own.status_code == 409 and "eve" in own.json()["error"], own.text
        assert post(base, "/proposal/reject", BOB, {"id": 1, "message": "no"}).status_code == 200
        closed = save(EVE, "Late\n", proposal=1)
        assert closed[0] == 409 and "proposal 1 is rejected; nothing saved" in str(closed[1]["error"])
    with Store(url) as store:
        assert store.reads.position("production").files["greet.md"] == 1  # type: ignore[union-attr]
        assert store.reads.latest()["greet.md"].version == pushed["version"]
        assert ("push", "eve") in [(r.kind, r.principal) for r in store.proposals.reviews(1)]
