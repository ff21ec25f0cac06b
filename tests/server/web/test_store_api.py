"""``/api/store``, the web page's window on the versioned store, against real ``promptdeck serve --http``
processes serving a store made with the real ``promptdeck publish``.

Reading is for whoever may see the prompt; writing (saves, label moves, rollbacks) needs the write scope.
Hostile and careless requests get the status that fits and change nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from promptdeck.sources.store.versions import MAX_DIFF_LINES, TooLargeToDiff, side_by_side
from tests.support import modern
from tests.support.http_server import http_server
from tests.support.store_api import (
    ALICE,
    BOB,
    CAROL,
    GREET_1,
    GREET_2,
    WRITER,
    get,
    history,
    make_store,
    post,
    serving,
)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(the server's base URL, the store URL): a store label served with three principals."""
    with serving(tmp_path, make_store(tmp_path)) as both:
        yield both


def test_the_overview_names_the_label_and_who_may_write(served: tuple[str, str]) -> None:
    base, _ = served
    alice, bob = get(base, "", ALICE), get(base, "", BOB)
    assert alice.status_code == bob.status_code == 200
    assert alice.headers["cache-control"] == "no-store"
    assert alice.json()["write"] is True and bob.json()["write"] is False
    assert bob.json()["writeScope"] == "store:write" and bob.json()["label"] == "production"
    (label,) = bob.json()["labels"]
    assert label["name"] == "production" and label["reason"] == "publish 1" and label["previous"] is None
    assert httpx.get(f"{base}/api/store").status_code == 401
    assert get(base, "", {"authorization": "Bearer not-a-token-0123456789"}).status_code == 401


def test_history_versions_and_diff_of_a_prompt(served: tuple[str, str]) -> None:
    base, _ = served
    found = get(base, "/history", BOB, prompt="greet").json()
    assert found["path"] == "greet.md"
    assert [(v["version"], v["author"], v["labels"]) for v in found["versions"]] == \
        [(2, "bob", []), (1, "root", ["production"])]
    assert found["versions"][0]["message"] == "<b>mood</b> added"  # data, for the page to show as text
    first = get(base, "/version", BOB, prompt="greet", version=1).json()
    assert first["text"] == GREET_1 and list(first["arguments"]["properties"]) == ["who"]
    diff = get(base, "/diff", BOB, prompt="greet", **{"from": 1, "to": 2}).json()
    assert diff["same"] is False
    changed = [row for row in diff["source"] if row["op"] != "equal"]
    assert {"op": "replace", "left": [6, "Hello {{ who }}!"], "right": [8, GREET_2.splitlines()[-1]]} in changed
    assert {"op": "insert", "left": None, "right": [5, "  - name: mood"]} in changed
    assert any(row["op"] == "insert" and row["right"][1].strip() == '"mood": {' for row in diff["arguments"])
    same = get(base, "/diff", BOB, prompt="greet", **{"from": 2, "to": 2}).json()
    assert same["same"] is True and all(row["op"] in ("equal", "skip") for row in same["source"])
    # A version's arguments are read beside the label's material: a template reading a file parses.
    assert get(base, "/version", BOB, prompt="note", version=1).json()["arguments"] is not None


def test_a_prompt_hidden_by_scopes_is_answered_as_an_unknown_one(served: tuple[str, str]) -> None:
    base, _ = served
    hidden = get(base, "/history", BOB, prompt="salaries")
    unknown = get(base, "/history", BOB, prompt="no-such-prompt")
    assert hidden.status_code == unknown.status_code == 404
    assert hidden.json()["error"].replace("salaries", "X") == unknown.json()["error"].replace("no-such-prompt", "X")
    assert get(base, "/history", CAROL, prompt="salaries").status_code == 200
    for route, body in (("/check", {"prompt": "salaries", "text": "x"}),
                        ("/publish", {"prompt": "salaries", "text": "x"}),
                        ("/label", {"prompt": "salaries", "version": 1, "label": "production"})):
        assert post(base, route, ALICE if route != "/check" else BOB, body).status_code == 404, route


def test_check_reports_problems_at_their_line(served: tuple[str, str]) -> None:
    base, _ = served
    broken = "---\narguments:\n  - name: who\n---\nfine line\nHi {{ who | nope }}\n"
    found = post(base, "/check", BOB, {"prompt": "greet", "text": broken})
    assert found.status_code == 200
    assert found.json()["problems"] == [{"line": 6, "message": "template error: No filter named 'nope'."}]
    front = post(base, "/check", BOB, {"prompt": "greet", "text": "---\ncolour: red\n---\nHi\n"}).json()
    assert front["problems"][0]["line"] == 2 and "colour" in front["problems"][0]["message"]
    clash = post(base, "/check", BOB, {"prompt": "greet", "text": "---\nname: note\n---\nHi\n"}).json()
    assert clash["problems"] == [{"line": None, "message": "prompt name 'note' is already used by note.md"}]
    # The label's material is there for the check: reading it is fine, reading outside the library is not.
    assert post(base, "/check", BOB, {"prompt": "note", "text": "{{ read('material/tone.txt') }}"}).json() == \
        {"problems": []}
    assert post(base, "/check", BOB, {"prompt": "greet", "text": GREET_2}).json() == {"problems": []}


def test_a_save_records_a_version_and_refuses_what_check_refuses(served: tuple[str, str]) -> None:
    base, url = served
    before = history(url)
    bad = post(base, "/publish", ALICE, {"prompt": "greet", "text": "Hi {{ who | nope }}", "base": 2})
    assert bad.status_code == 422
    assert bad.json()["problems"] == [{"line": 1, "message": "template error: No filter named 'nope'."}]
    assert history(url) == before  # nothing recorded
    saved = post(base, "/publish", ALICE, {"prompt": "greet", "text": GREET_1.replace("Hello", "Hey"),
                                           "message": "shorter", "base": 2})
    assert saved.status_code == 200, saved.text
    assert saved.json() == {"prompt": "greet", "path": "greet.md", "version": 3, "publish": 3, "changed": True}
    assert "greet.md v3  greet  publish 3" in history(url) and "alice  shorter" in history(url)
    again = post(base, "/publish", ALICE, {"prompt": "greet", "text": GREET_1.replace("Hello", "Hey"), "base": 3})
    assert again.json()["changed"] is False and again.json()["version"] == 3
    # Someone who opened version 2 and saves now would undo alice's save: refused, nothing recorded.
    stale = post(base, "/publish", ALICE, {"prompt": "greet", "text": GREET_1.replace("Hello", "Yo"), "base": 2})
    assert stale.status_code == 409 and "newer version 3 by alice" in stale.json()["error"]
    assert "v4" not in history(url)


def test_label_moves_and_rollbacks_follow_in_what_is_served(served: tuple[str, str]) -> None:
    base, url = served
    assert render(base) == "Hello Ann!"
    moved = post(base, "/label", ALICE, {"prompt": "greet", "version": 2, "label": "production"})
    assert moved.status_code == 200 and moved.json() == {"label": "production", "prompt": "greet", "version": 2}
    wait_for_render(base, "Hi Ann!")
    overview = get(base, "", BOB).json()["labels"][0]
    assert overview["reason"] == "label greet.md@2" and overview["author"] == "alice"
    assert overview["previous"]["reason"] == "publish 1"
    back = post(base, "/rollback", ALICE, {"label": "production"})
    assert back.status_code == 200 and back.json()["reason"] == "publish 1"
    wait_for_render(base, "Hello Ann!")
    # A save straight to a label moves it too; the label's other prompts stay.
    saved = post(base, "/publish", ALICE, {"prompt": "greet", "text": GREET_1.replace("Hello", "Howdy"), "base": 2,
                                           "label": "staging"})
    assert saved.status_code == 200
    labels = {item["name"]: item for item in get(base, "", BOB).json()["labels"]}
    assert labels["staging"]["reason"] == "publish 3"
    assert get(base, "/history", BOB, prompt="greet").json()["versions"][0]["labels"] == ["staging"]
    assert render(base) == "Hello Ann!"  # production did not move


def test_write_calls_need_the_write_scope_and_change_nothing_without_it(served: tuple[str, str]) -> None:
    base, url = served
    before = history(url)
    for route, body in (("/publish", {"prompt": "greet", "text": "x"}),
                        ("/label", {"prompt": "greet", "version": 2, "label": "production"}),
                        ("/rollback", {"label": "production"})):
        refused = post(base, route, BOB, body)
        assert refused.status_code == 403, route
        assert refused.json() == {"error": "writing to the store needs the scope store:write", "scope": "store:write"}
    assert history(url) == before


def test_the_store_refusing_a_write_is_a_conflict(served: tuple[str, str]) -> None:
    base, url = served
    assert post(base, "/rollback", ALICE, {"label": "production"}).status_code == 409  # no earlier position
    missing = post(base, "/label", ALICE, {"prompt": "greet", "version": 9, "label": "production"})
    assert missing.status_code == 404 and "no version 9" in missing.json()["error"]


@pytest.mark.parametrize(("route", "headers", "body", "status", "says"), [
    ("/label", {"content-type": "text/plain"}, b'{"prompt": "greet"}', 415, "application/json"),
    ("/label", {"content-type": "application/x-www-form-urlencoded"}, b"prompt=greet", 415, "application/json"),
    ("/label", {}, b"{not json", 400, "not JSON"),
    ("/label", {}, b'{"prompt": "greet", "version": "2", "label": "production"}', 400, "$.version"),
    ("/label", {}, b'{"prompt": "greet", "version": 2, "label": "production", "force": true}', 400, "force"),
    ("/label", {}, b'{"prompt": "greet", "version": 2, "label": "../etc"}', 400, "label '../etc' is not valid"),
    ("/label", {}, b'{"prompt": "greet", "version": 2, "label": "-x"}', 400, "not valid"),
    ("/rollback", {}, b'{"label": "production\\nforged log line"}', 400, "not valid"),
    ("/publish", {}, b'{"prompt": "greet", "text": "\\ud800"}', 400, "not JSON"),  # a lone surrogate
    ("/publish", {}, json.dumps({"prompt": "greet", "text": "x" * (1024 * 1024 + 1)}).encode(), 413, "at most"),
    ("/publish", {}, b" " * (3 * 1024 * 1024), 413, "larger than"),
    ("/publish", {}, json.dumps({"prompt": "greet", "text": "x", "message": "m" * 2001}).encode(), 400, "message"),
    ("/nowhere", {}, b"{}", 404, "no such store call"),
])
def test_hostile_and_careless_bodies_are_refused_clearly(served: tuple[str, str], route: str,
                                                         headers: dict[str, str], body: bytes, status: int,
                                                         says: str) -> None:
    base, url = served
    before = history(url)
    answer = httpx.post(f"{base}/api/store{route}", content=body,
                        headers={"content-type": "application/json", **ALICE, **headers}, timeout=30)
    assert answer.status_code == status, answer.text
    assert says in answer.json()["error"]
    assert history(url) == before
    assert get(base, "", BOB).status_code == 200  # still serving


def test_methods_queries_and_origins(served: tuple[str, str]) -> None:
    base, _ = served
    assert httpx.post(f"{base}/api/store/history", headers=ALICE, json={}).status_code == 405
    wrong = httpx.get(f"{base}/api/store/label", headers=ALICE)
    assert wrong.status_code == 405 and wrong.headers["allow"] == "POST"
    assert get(base, "/history", BOB).json() == {"error": "the query needs prompt=…"}
    assert get(base, "/version", BOB, prompt="greet", version="1; DROP TABLE files").status_code == 400
    assert get(base, "/diff", BOB, prompt="greet", **{"from": 1}).status_code == 400
    evil = httpx.post(f"{base}/api/store/rollback", json={"label": "production"},
                      headers={**ALICE, "origin": "https://evil.example"})
    assert evil.status_code == 403
    assert httpx.get(f"{base}/api/store", headers={**BOB, "host": "evil.example"}).status_code == 403


def test_without_authentication_the_store_is_read_only(tmp_path: Path) -> None:
    url = make_store(tmp_path)
    with http_server("", "--store", url) as endpoint:
        base = endpoint.removesuffix("/mcp")
        assert get(base, "", {}).json()["write"] is False
        assert get(base, "/history", {}, prompt="greet").status_code == 200
        assert get(base, "/history", {}, prompt="salaries").status_code == 404  # anonymous holds no scope
        assert post(base, "/rollback", {}, {"label": "production"}).status_code == 403


def test_no_store_or_no_page_means_no_store_api(tmp_path: Path) -> None:
    url = make_store(tmp_path)
    tokens = tmp_path / "tokens"
    tokens.write_text(WRITER + "\n")
    with http_server("", "--store", url, "--no-ui", "--token-file", str(tokens)) as endpoint:
        assert get(endpoint.removesuffix("/mcp"), "", ALICE).status_code == 404
    with http_server(str(tmp_path / "lib")) as endpoint:
        assert get(endpoint.removesuffix("/mcp"), "", {}).status_code == 404


def test_another_write_scope_can_be_named(tmp_path: Path) -> None:
    url = make_store(tmp_path)
    tokens = tmp_path / "tokens"
    tokens.write_text(WRITER + "\n" + "dave:editor-token-0123456789 prompts:editor\n")
    dave = {"authorization": "Bearer editor-token-0123456789"}
    with http_server("", "--store", url, "--token-file", str(tokens), "--write-scope", "prompts:editor") as endpoint:
        base = endpoint.removesuffix("/mcp")
        assert get(base, "", dave).json()["write"] is True
        assert get(base, "", ALICE).json() == {**get(base, "", ALICE).json(), "write": False,
                                               "writeScope": "prompts:editor"}
        assert post(base, "/label", dave, {"prompt": "greet", "version": 2, "label": "production"}).status_code == 200


def render(base: str) -> str:
    """greet rendered through /mcp for bob, as the page asks (2026-07-28, one POST)."""
    with httpx.Client(timeout=30, headers=BOB) as client:
        status, answer = modern.post(client, f"{base}/mcp", modern.get_prompt(1, "greet", {"who": "Ann"}))
    if "error" in answer:
        return f"error {answer['error']['code']}: {answer['error']['message']}"
    return str(answer["result"]["messages"][0]["content"]["text"]).strip()


def wait_for_render(base: str, expected: str, seconds: float = 30) -> None:
    """Until greet renders as ``expected``: the served label follows a move on its own thread."""
    deadline = time.monotonic() + seconds
    while (now := render(base)) != expected:
        if time.monotonic() > deadline:
            pytest.fail(f"waited {seconds} s for greet to render as {expected!r}; it renders as {now!r}")
        time.sleep(0.1)


def test_the_same_calls_on_a_postgresql_store(tmp_path: Path) -> None:
    from tests.support.postgres import cluster, new_database

    with cluster() as postgres, serving(tmp_path, make_store(tmp_path, new_database(postgres))) as (base, url):
        assert [v["version"] for v in get(base, "/history", BOB, prompt="greet").json()["versions"]] == [2, 1]
        saved = post(base, "/publish", ALICE, {"prompt": "greet", "text": GREET_1.replace("Hello", "Hey"), "base": 2,
                                               "label": "production"})
        assert saved.status_code == 200 and saved.json()["version"] == 3
        wait_for_render(base, "Hey Ann!")  # a PostgreSQL replica hears of the move by LISTEN/NOTIFY
        labels = get(base, "", BOB).json()["labels"]
        assert [(item["name"], item["reason"], item["previous"]["reason"]) for item in labels] == \
            [("production", "publish 3", "publish 1")]
        assert post(base, "/rollback", ALICE, {"label": "production"}).status_code == 200
        wait_for_render(base, "Hello Ann!")
        assert "greet.md v3" in history(url)


def test_side_by_side_rows_pair_changes_and_cut_long_equal_runs() -> None:
    old = "\n".join(f"line {n}" for n in range(1, 21))
    new = old.replace("line 10", "line ten").replace("line 20", "line 20\nline 21")
    rows = side_by_side(old, new)
    assert rows[0] == {"op": "skip", "count": 6}  # lines 1-6: no context needed before the first change
    assert {"op": "replace", "left": [10, "line 10"], "right": [10, "line ten"]} in rows
    assert rows[-1] == {"op": "insert", "left": None, "right": [21, "line 21"]}
    assert {"op": "skip", "count": 4} in rows  # lines 14-17, between the two changes' context
    assert side_by_side("a\nb", "a\nc\nd") == [
        {"op": "equal", "left": [1, "a"], "right": [1, "a"]},
        {"op": "replace", "left": [2, "b"], "right": [2, "c"]},
        {"op": "insert", "left": None, "right": [3, "d"]}]
    assert side_by_side("", "") == []
    with pytest.raises(TooLargeToDiff):
        side_by_side("x\n" * (MAX_DIFF_LINES + 1), "")


def test_oauth_tokens_write_with_the_write_scope_and_the_author_is_their_subject(tmp_path: Path) -> None:
    from tests.support.issuer import Issuer

    url = make_store(tmp_path)
    issuer = Issuer()
    try:
        with http_server("", "--store", url, "--oauth-issuer", issuer.url) as endpoint:
            base = endpoint.removesuffix("/mcp")
            reader = {"authorization": f"Bearer {issuer.token(aud=endpoint, sub='rita', scope='prompts')}"}
            writer = {"authorization": f"Bearer {issuer.token(aud=endpoint, sub='wes', scope='prompts store:write')}"}
            assert get(base, "", reader).json()["write"] is False
            assert post(base, "/rollback", reader, {"label": "production"}).status_code == 403
            assert get(base, "", writer).json()["write"] is True
            moved = post(base, "/label", writer, {"prompt": "greet", "version": 2, "label": "production"})
            assert moved.status_code == 200, moved.text
            assert get(base, "", reader).json()["labels"][0]["author"] == "wes"
            assert get(base, "", {}).status_code == 401
    finally:
        issuer.close()
