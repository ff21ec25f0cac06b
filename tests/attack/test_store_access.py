"""The access rule on the management surface: what scopes hide stays hidden through every store API answer,
every check and every render, whoever wrote the version. Each case was reproduced against the store API
before its fix (issue 28: a writer reading an hr prompt through its own template, versions read past their
own scopes, hidden names and files probed through checks and label moves, an overflowing version number).

Real ``promptdeck serve --http`` processes over a store written by the real ``promptdeck publish``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import modern
from tests.support.http_server import http_server
from tests.support.store_api import GREET_1, cli, get, history, make_store, post

ALICE = {"authorization": "Bearer writer-token-0123456789"}  # store:write, not hr
BOB = {"authorization": "Bearer reader-token-0123456789"}  # no scope at all
CAROL = {"authorization": "Bearer hr-writer-token-0123456789"}  # hr and store:write
TOKENS = ("alice:writer-token-0123456789 store:write\nbob:reader-token-0123456789\n"
          "carol:hr-writer-token-0123456789 hr store:write\n")
LEAK = "---\ndescription: Say hello\narguments:\n  - name: who\n---\nLeak: {{ read('salaries.md') }}\n"
SALARIES = "Salaries are private."


@contextmanager
def serving(tmp: Path, *extra: str) -> Iterator[tuple[str, str]]:
    url = make_store(tmp)
    tokens = tmp / "tokens"
    tokens.write_text(TOKENS)
    with http_server("", "--store", url, "--label", "production", "--token-file", str(tokens), *extra) as endpoint:
        yield endpoint.removesuffix("/mcp"), url


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    with serving(tmp_path) as both:
        yield both


def mcp_get(base: str, headers: dict[str, str], name: str, arguments: dict[str, str]) -> dict[str, Any]:
    with httpx.Client(timeout=30, headers=headers) as client:
        _, answer = modern.post(client, f"{base}/mcp", modern.get_prompt(1, name, arguments))
    return answer


def same_but_names(first: str, second: str, *names: tuple[str, str]) -> bool:
    for one, other in names:
        first, second = first.replace(one, "X"), second.replace(other, "X")
    return first == second


# -- 1. a writer reads what its scopes hide ----------------------------------------------------------------


def test_a_writer_cannot_save_a_template_that_reads_a_file_it_may_not_see(served: tuple[str, str]) -> None:
    base, url = served
    before = history(url)
    refused = post(base, "/publish", ALICE, {"prompt": "greet", "text": LEAK, "base": 2, "label": "production"})
    assert refused.status_code == 422
    (problem,) = refused.json()["problems"]
    # To alice, salaries.md is as absent as a file that does not exist: the refusal is no probe either.
    missing = post(base, "/check", ALICE, {"prompt": "greet", "text": LEAK.replace("salaries.md", "nothing.md")})
    assert same_but_names(problem["message"], missing.json()["problems"][0]["message"],
                          ("salaries.md", "nothing.md"))
    assert "does not exist" in problem["message"] and problem["line"] == 6
    assert history(url) == before
    assert SALARIES not in str(mcp_get(base, ALICE, "greet", {"who": "Ann"}))


def test_the_rule_is_named_to_a_writer_who_may_see_the_file(served: tuple[str, str]) -> None:
    base, url = served
    before = history(url)
    refused = post(base, "/publish", CAROL, {"prompt": "greet", "text": LEAK, "base": 2, "label": "production"})
    assert refused.status_code == 422
    message = refused.json()["problems"][0]["message"]
    assert "salaries.md is a prompt restricted to hr" in message and "seen by everyone may not read it" in message
    assert history(url) == before


def test_a_version_saved_by_someone_else_is_no_way_around_scopes(tmp_path: Path) -> None:
    """A template that reads a file its argument names, published by the administrator's CLI: the render-time
    rule holds for every reader, whatever the check of the day let through, served from a store or a folder
    (where a material link to the hr prompt is one more way to name it)."""
    library = tmp_path / "lib"
    library.mkdir()
    (library / "salaries.md").write_text(f"---\nscopes: [hr]\n---\n{SALARIES}\n")
    (library / "peek.md").write_text("---\narguments:\n  - name: f\n---\n{{ read(f) }}\n")
    (library / "_notes").mkdir()
    (library / "_notes" / "a.txt").write_text("just notes")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    cli("publish", str(library), "--store", url, "--label", "production")
    (library / "_notes" / "link.txt").symlink_to("../salaries.md")
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKENS)
    for served, paths in (("--store", ("salaries.md",)), ("folder", ("salaries.md", "_notes/link.txt"))):
        where = ("", "--store", url, "--label", "production") if served == "--store" else (str(library),)
        with http_server(*where, "--token-file", str(tokens)) as endpoint:
            base = endpoint.removesuffix("/mcp")
            assert "just notes" in str(mcp_get(base, CAROL, "peek", {"f": "_notes/a.txt"}))
            for principal in (BOB, CAROL):  # even an hr reader: peek is seen by everyone, so may not carry it
                for path in paths:
                    answer = mcp_get(base, principal, "peek", {"f": path})
                    assert answer["error"]["code"] == -32602, (served, answer)
                    # The read gate refuses a prompt's source to an expression by its name (issue 38), before
                    # the access rule is asked: said of any such name, there or not, so nothing is disclosed.
                    assert answer["error"]["message"] in (
                        f"file {path!r} is a prompt file; arguments may name material only",
                        f"file {path!r} leads to a file that arguments may not name")
                    assert SALARIES not in str(answer)


def test_publish_refuses_a_link_that_would_copy_a_scoped_source_into_material(tmp_path: Path) -> None:
    library = tmp_path / "lib"
    (library / "_notes").mkdir(parents=True)
    (library / "salaries.md").write_text(f"---\nscopes: [hr]\n---\n{SALARIES}\n")
    (library / "_notes" / "link.txt").symlink_to("../salaries.md")
    done = subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(library), "--store",
                           f"sqlite:///{tmp_path / 'store.db'}"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "_notes/link.txt is a link to the prompt file salaries.md, which scopes restrict" in done.stderr


def test_a_writer_may_save_only_versions_it_can_see(served: tuple[str, str]) -> None:
    base, url = served
    before = history(url)
    hidden = "---\ndescription: Say hello\nscopes: [hr]\narguments:\n  - name: who\n---\nHello {{ who }}\n"
    refused = post(base, "/publish", ALICE, {"prompt": "greet", "text": hidden, "base": 2})
    assert refused.status_code == 422
    assert refused.json()["problems"] == [{"line": 3, "message": "scopes: hr: you could not see this version; "
                                                                  "save only versions your own scopes show you"}]
    assert history(url) == before


# -- 2. visibility is decided per version ------------------------------------------------------------------


def test_a_version_is_seen_by_its_own_scopes_on_every_route(served: tuple[str, str]) -> None:
    base, _ = served
    restricted = GREET_1.replace("description: Say hello\n", "description: Say hello\nscopes: [hr]\n")
    saved = post(base, "/publish", CAROL, {"prompt": "greet", "text": restricted, "base": 2, "label": "staging"})
    assert saved.status_code == 200 and saved.json()["version"] == 3
    assert [v["version"] for v in get(base, "/history", CAROL, prompt="greet").json()["versions"]] == [3, 2, 1]
    for principal in (BOB, ALICE):
        assert [v["version"] for v in get(base, "/history", principal, prompt="greet").json()["versions"]] == [2, 1]
        hidden, unknown = (get(base, "/version", principal, prompt="greet", version=n) for n in (3, 99))
        assert hidden.status_code == unknown.status_code == 404
        assert same_but_names(hidden.json()["error"], unknown.json()["error"], ("version 3", "version 99"))
        for pair in ({"from": 1, "to": 3}, {"from": 3, "to": 1}):
            diff = get(base, "/diff", principal, prompt="greet", **pair)
            assert diff.status_code == 404 and diff.json()["error"] == "prompt 'greet' has no version 3"
            assert "scopes" not in diff.text
    assert get(base, "/version", CAROL, prompt="greet", version=3).json()["text"] == restricted
    # alice edits from version 2, the newest she may see: version 3 is not "newer" to her, and is not named.
    stale = post(base, "/publish", ALICE, {"prompt": "greet", "text": "Hi", "base": 1})
    assert stale.status_code == 409 and "newer version 2 by bob" in stale.json()["error"]
    assert post(base, "/label", ALICE, {"prompt": "greet", "version": 3, "label": "production"}).json() == \
        {"error": "prompt 'greet.md' has no version 3"}
    saved = post(base, "/publish", ALICE, {"prompt": "greet", "text": GREET_1.replace("Hello", "Hey"), "base": 2})
    assert saved.status_code == 200 and saved.json()["version"] == 4


# -- 3. hidden names leak nothing --------------------------------------------------------------------------


def test_a_check_says_nothing_of_hidden_prompts_and_files(served: tuple[str, str]) -> None:
    base, _ = served
    clash = post(base, "/check", BOB, {"prompt": "greet", "text": "---\nname: salaries\n---\nHi\n"}).json()
    assert clash == {"problems": [{"line": None, "message": "prompt name 'salaries' cannot be used here; "
                                                            "choose another"}]}
    assert post(base, "/check", CAROL, {"prompt": "greet", "text": "---\nname: salaries\n---\nHi\n"}).json() == \
        {"problems": [{"line": None, "message": "prompt name 'salaries' is already used by salaries.md"}]}
    hidden, absent = (post(base, "/check", BOB, {"prompt": "note", "text": f"{{{{ read('{name}') }}}}"}).json()
                      for name in ("salaries.md", "absent.md"))
    assert same_but_names(str(hidden), str(absent), ("salaries.md", "absent.md"))
    as_block, absent_block = (post(base, "/check", BOB, {"prompt": "note", "text": f"user: {{resource: {name}}}\n"})
                              .json() for name in ("salaries.md", "absent.md"))
    assert as_block["problems"] and same_but_names(str(as_block), str(absent_block), ("salaries.md", "absent.md"))


def test_label_moves_of_hidden_files_are_not_named_and_not_rolled_back_past(served: tuple[str, str]) -> None:
    base, url = served
    moved = post(base, "/label", CAROL, {"prompt": "salaries", "version": 1, "label": "staging"})
    assert moved.status_code == 200
    for principal in (BOB, ALICE):
        staging = {item["name"]: item for item in get(base, "", principal).json()["labels"]}["staging"]
        assert staging["reason"] == "label moved" and staging["author"] is None
        assert "salaries" not in str(get(base, "", principal).json())
    staging = {item["name"]: item for item in get(base, "", CAROL).json()["labels"]}["staging"]
    assert staging["reason"] == "label salaries.md@1" and staging["author"] == "carol"
    # A move a principal can see in full is shown in full, with a publish that carried hidden files too.
    production = {item["name"]: item for item in get(base, "", BOB).json()["labels"]}["production"]
    assert production["reason"] == "publish 1" and production["author"] == "root"
    # alice may not move a label through what she cannot see: pointing it, or rolling it back.
    assert post(base, "/label", ALICE, {"prompt": "greet", "version": 2, "label": "staging"}).status_code == 200
    assert post(base, "/rollback", ALICE, {"label": "production"}).status_code == 409  # no earlier position
    restricted = GREET_1.replace("description: Say hello\n", "description: Say hello\nscopes: [hr]\n")
    assert post(base, "/publish", CAROL, {"prompt": "greet", "text": restricted, "base": 2,
                                          "label": "production"}).status_code == 200
    before = history(url)
    refused = post(base, "/rollback", ALICE, {"label": "production"})
    assert refused.status_code == 403 and "outside your scopes" in refused.json()["error"]
    assert history(url) == before and "greet" not in refused.text
    pointed = post(base, "/label", ALICE, {"prompt": "note", "version": 1, "label": "staging"})
    assert pointed.status_code == 200  # a move of what she sees, beside a hidden file: fine
    saved = post(base, "/publish", ALICE, {"prompt": "note", "text": "Changed.", "label": "production"})
    assert saved.status_code == 200  # production's greet (hidden) stays as it is: only note moves
    assert post(base, "/rollback", ALICE, {"label": "production"}).status_code == 200  # undoes her own move
    assert "[production]" in history(url).splitlines()[0]  # greet v3 still where carol put it
    assert post(base, "/label", CAROL, {"prompt": "greet", "version": 2, "label": "production"}).status_code == 200


# -- 4. every error is JSON --------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [
    b'{"prompt": "greet", "version": 99999999999999999999999, "label": "production"}',
    b'{"prompt": "greet", "version": -1, "label": "production"}',
])
def test_an_overflowing_version_is_a_json_400(served: tuple[str, str], body: bytes) -> None:
    base, url = served
    before = history(url)
    answer = httpx.post(f"{base}/api/store/label", content=body,
                        headers={"content-type": "application/json", **ALICE}, timeout=30)
    assert answer.status_code == 400 and answer.headers["content-type"].startswith("application/json")
    assert "$.version" in answer.json()["error"]
    big_base = {"prompt": "greet", "text": "Hi", "base": 10**30}
    assert post(base, "/publish", ALICE, big_base).status_code == 400
    assert history(url) == before
