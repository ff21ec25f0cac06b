"""``POST /api/store/promote`` against a real ``promptdeck serve --http``, on SQLite and PostgreSQL: one label
pointed at what another holds, through the same rules as every other move (the write scope, the target's
protection, nothing moved through what the principal's scopes hide, the required tests, Origin); each refusal
changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from promptdeck.sources.store.database import Store
from tests.support.http_server import http_server
from tests.support.store_api import cli, get, make_store, post

TOKENS = ("alice:writer-token-0123456789 store:write", "bob:reader-token-0123456789",
          "erin:all-token-0123456789 store:write hr release")
ALICE = {"authorization": "Bearer writer-token-0123456789"}
BOB = {"authorization": "Bearer reader-token-0123456789"}
ERIN = {"authorization": "Bearer all-token-0123456789"}
TESTED = ("---\ndescription: Say hello\narguments:\n  - name: who\ntests:\n  - description: greets by name\n"
          "    vars: {who: Ada}\n    assert:\n      - {type: contains, value: Hello Ada}\n---\nHELLO {{ who }}!\n")


@contextmanager
def serving(tmp: Path, url: str | None = None) -> Iterator[tuple[str, str]]:
    """production: greet 1, salaries (hr), note, material; staging: greet 2 alone."""
    url = make_store(tmp, url)
    cli("label", "greet@2", "staging", "--store", url)
    tokens = tmp / "tokens"
    tokens.write_text("\n".join(TOKENS) + "\n")
    with http_server("", "--store", url, "--label", "production", "--token-file", str(tokens)) as endpoint:
        yield endpoint.removesuffix("/mcp"), url


def where(url: str) -> tuple[int | None, int | None]:
    with Store(url) as store:
        return store.reads.position_id("production"), store.reads.position_id("staging")


def test_a_writer_promotes_what_it_may_see_and_nothing_else(tmp_path: Path) -> None:
    with serving(tmp_path) as (base, url):
        before = where(url)
        # Without the write scope: 403 naming it. From another origin: 403. Neither moves anything.
        refused = post(base, "/promote", BOB, {"source": "staging", "label": "production"})
        assert refused.status_code == 403 and refused.json()["scope"] == "store:write"
        evil = httpx.post(f"{base}/api/store/promote", json={"source": "staging", "label": "production"},
                          headers={**ALICE, "origin": "https://evil.example"})
        assert evil.status_code == 403
        # All of staging would take salaries (hr) out of production: alice may not see it, so may not move it.
        hidden = post(base, "/promote", ALICE, {"source": "staging", "label": "production"})
        assert hidden.status_code == 403 and "outside your scopes" in hidden.json()["error"]
        # A hidden prompt named is unknown, as one staging does not hold.
        for name in ("salaries", "nothing"):
            unknown = post(base, "/promote", ALICE, {"source": "staging", "label": "production", "prompts": [name]})
            assert unknown.status_code == 404
            assert unknown.json()["error"] == f"label 'staging' has no prompt {name!r}; nothing changed"
        for body, status, said in (({"source": "nightly", "label": "production"}, 404, "no label 'nightly'"),
                                   ({"source": "staging", "label": "staging"}, 409, "'staging' is both"),
                                   ({"source": "staging", "label": "no way"}, 400, "is not valid"),
                                   ({"source": "staging"}, 400, "not what this call takes")):
            answer = post(base, "/promote", ALICE, body)
            assert answer.status_code == status and said in answer.json()["error"], answer.text
        assert where(url) == before
        named = post(base, "/promote", ALICE, {"source": "staging", "label": "production", "prompts": ["greet"],
                                               "message": "ship greet"})
        assert named.status_code == 200, named.text
        assert named.json() == {"source": "staging", "label": "production", "sourcePosition": before[1],
                                "position": named.json()["position"], "moved": True,
                                "changes": [{"path": "greet.md", "from": 1, "to": 2}], "more": 0}
        again = post(base, "/promote", ALICE, {"source": "staging", "label": "production", "prompts": ["greet"]})
        assert again.json()["moved"] is False and again.json()["changes"] == []
        audit = get(base, "/moves", ALICE, label="production").json()["moves"][0]
        assert (audit["reason"], audit["author"], audit["message"]) == (
            f"promote greet from staging (position {before[1]})", "alice", "ship greet")
        # Who sees everything may promote all of it.
        whole = post(base, "/promote", ERIN, {"source": "staging", "label": "production"})
        assert whole.status_code == 200 and {c["path"] for c in whole.json()["changes"]} == {
            "material/tone.txt", "note.md", "salaries.md"}


def test_a_protected_target_needs_its_scope_and_its_tests_to_pass(tmp_path: Path) -> None:
    with serving(tmp_path) as (base, url):
        (tmp_path / "lib" / "greet.md").write_text(TESTED)
        cli("publish", str(tmp_path / "lib"), "--store", url, "--skip-tests")
        cli("label", "greet@3", "staging", "--store", url)
        cli("protect", "production", "--scope", "release", "--require-tests", "--store", url)
        before = where(url)
        call = {"source": "staging", "label": "production", "prompts": ["greet"]}
        refused = post(base, "/promote", ALICE, call)
        assert refused.status_code == 403 and refused.json()["scope"] == "release"
        failing = post(base, "/promote", ERIN, call)
        assert failing.status_code == 409 and "requires passing tests" in failing.json()["error"]
        assert failing.json()["failures"][0]["prompt"] == "greet"
        assert "greets by name" in failing.json()["failures"][0]["failures"][0]
        assert where(url) == before
        # The overview says who may move production: the page offers it a promotion only then.
        assert [x["move"] for x in get(base, "", ALICE).json()["labels"] if x["name"] == "production"] == [False]


def test_a_promotion_on_a_postgresql_store(tmp_path: Path, postgres: str) -> None:
    with serving(tmp_path, postgres) as (base, url):
        before = where(url)
        done = post(base, "/promote", ALICE, {"source": "staging", "label": "production", "prompts": ["greet"]})
        assert done.status_code == 200 and done.json()["changes"] == [{"path": "greet.md", "from": 1, "to": 2}]
        assert where(url) == (done.json()["position"], before[1])
        hidden = post(base, "/promote", ALICE, {"source": "staging", "label": "production"})
        assert hidden.status_code == 403 and where(url) == (done.json()["position"], before[1])
