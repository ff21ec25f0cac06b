"""Governance under attack: forged and malformed rollout keys, a rollout row another tool forged, and another
principal's hidden prompt, its rollouts and its label moves, probed through /mcp and /api/store.

Real ``promptdeck serve --http`` processes over a store written by the real ``promptdeck publish``.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from promptdeck.sources.store.governance import bucket
from tests.support import modern
from tests.support.http_server import http_server
from tests.support.store_api import cli, get, post

TOKENS = ("alice:writer-token-0123456789 store:write\nbob:reader-token-0123456789\n"
          "carol:hr-writer-token-0123456789 hr store:write\n")
ALICE = {"authorization": "Bearer writer-token-0123456789"}
BOB = {"authorization": "Bearer reader-token-0123456789"}
CAROL = {"authorization": "Bearer hr-writer-token-0123456789"}
KEY = "promptdeck.dev/rollout-key"
GREET = "---\ndescription: Say hello\narguments:\n  - name: who\n---\n{} {{{{ who }}}}!\n"
PAY = "---\nscopes: [hr]\narguments:\n  - name: who\n---\n{} pay for {{{{ who }}}}.\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """(the server's base URL, an anonymous stateless server's, the store URL). greet: 1 (production), 2 (same
    arguments), 3 (hr only); pay (hr): 1 (production), 2."""
    tmp = tmp_path_factory.mktemp("governance-attack")
    url, library = f"sqlite:///{tmp}/store.db", tmp / "lib"
    library.mkdir()
    (library / "greet.md").write_text(GREET.format("Hello"))
    (library / "pay.md").write_text(PAY.format("Base"))
    cli("publish", str(library), "--store", url, "--label", "production")
    (library / "greet.md").write_text(GREET.format("Hi"))
    (library / "pay.md").write_text(PAY.format("Raised"))
    cli("publish", str(library), "--store", url)
    (library / "greet.md").write_text(GREET.format("Secret").replace("---\ndescription", "---\nscopes: [hr]\n"
                                                                     "description"))
    cli("publish", str(library), "--store", url)
    cli("rollout", "production", "greet@2", "--percent", "50", "--store", url)
    cli("rollout", "production", "pay@2", "--percent", "50", "--store", url, "-m", "raise for some")
    tokens = tmp / "tokens"
    tokens.write_text(TOKENS)
    with http_server("", "--store", url, "--token-file", str(tokens), "--stateless") as endpoint, \
            http_server("", "--store", url, "--stateless") as anonymous:
        yield endpoint.removesuffix("/mcp"), anonymous, url


def mcp(endpoint: str, headers: dict[str, str], name: str, meta: dict[str, Any] | None = None,
        legacy: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {"who": "Al"}}
    with httpx.Client(timeout=30, headers=headers) as client:
        if legacy:
            if meta is not None:
                params["_meta"] = meta
            response = client.post(endpoint, json=modern.legacy(1, "prompts/get", params),
                                   headers={"accept": modern.BOTH, "content-type": "application/json",
                                            "mcp-protocol-version": "2025-11-25"})
            answer: dict[str, Any] = modern.answers(response)[-1]
            return answer
        _, answer = modern.post(client, endpoint, modern.request(1, "prompts/get", params, meta=meta))
    return answer


@pytest.mark.parametrize("key", [17, None, "", "x" * 257, {"nested": {"deep": ["k"] * 1000}}, ["k"], True])
def test_a_malformed_rollout_key_is_invalid_params_and_the_server_keeps_serving(
        served: tuple[str, str, str], key: object) -> None:
    base, _, _ = served
    for legacy in (False, True):
        refused = mcp(f"{base}/mcp", BOB, "greet", {KEY: key}, legacy=legacy)
        assert refused["error"]["code"] == -32602 and KEY in refused["error"]["message"], refused
        served_now = mcp(f"{base}/mcp", BOB, "greet", {KEY: "fine"}, legacy=legacy)
        assert served_now["result"]["_meta"]["promptdeck.dev/version"] in (1, 2)


def test_a_key_chooses_a_bucket_never_a_prompt_the_principal_may_not_see(served: tuple[str, str, str]) -> None:
    base, _, _ = served
    inside = next(f"k{n}" for n in range(1000) if bucket(2, f"key:k{n}") < 5000)  # pay's rollout is number 2
    seen = mcp(f"{base}/mcp", CAROL, "pay", {KEY: inside})
    assert seen["result"]["_meta"]["promptdeck.dev/version"] == 2
    for key in (inside, "principal:carol", "key:" + inside):
        hidden = mcp(f"{base}/mcp", BOB, "pay", {KEY: key})
        unknown = mcp(f"{base}/mcp", BOB, "no-such-prompt", {KEY: key})
        assert hidden["error"]["code"] == unknown["error"]["code"] == -32602
        assert hidden["error"]["message"].replace("pay", "X") == unknown["error"]["message"].replace(
            "no-such-prompt", "X")


def test_a_stateless_anonymous_request_without_a_key_gets_the_labels_version(served: tuple[str, str, str]) -> None:
    _, anonymous, _ = served
    for legacy in (False, True):
        versions = {mcp(anonymous, {}, "greet", legacy=legacy)["result"]["_meta"]["promptdeck.dev/version"]
                    for _ in range(8)}
        assert versions == {1}
    inside = next(f"k{n}" for n in range(1000) if bucket(1, f"key:k{n}") < 5000)
    assert mcp(anonymous, {}, "greet", {KEY: inside})["result"]["_meta"]["promptdeck.dev/version"] == 2


def test_another_principals_rollouts_and_moves_stay_hidden(served: tuple[str, str, str]) -> None:
    base, _, url = served
    for_bob = get(base, "", BOB).json()["labels"][0]["rollouts"]
    for_carol = get(base, "", CAROL).json()["labels"][0]["rollouts"]
    assert [r["prompt"] for r in for_bob] == ["greet"]
    assert sorted(r["prompt"] for r in for_carol) == ["greet", "pay"]
    events = get(base, "/moves", BOB, label="production").json()["rollouts"]
    assert "pay" not in str(events) and "raise for some" not in str(events)
    # Bob may write, as Alice: still, pay's rollout is a prompt he cannot see.
    for action in ("abort", "promote"):
        refused = post(base, "/rollout", ALICE, {"label": "production", "prompt": "pay", "action": action})
        assert refused.status_code == 404 and "no prompt 'pay'" in refused.json()["error"]
    # greet's version 3 is hr's: Alice may not roll it out, nor learn that it exists.
    hidden = post(base, "/rollout", ALICE, {"label": "production", "prompt": "greet", "version": 3, "percent": 1})
    missing = post(base, "/rollout", ALICE, {"label": "production", "prompt": "greet", "version": 9, "percent": 1})
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json()["error"].replace("3", "9") == missing.json()["error"]
    with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
        assert conn.execute("SELECT count(*) FROM rollouts WHERE ended IS NULL").fetchone() == (2,)


def test_a_forged_rollout_to_a_version_of_other_scopes_is_never_served(tmp_path: Path) -> None:
    """Another tool writes a rollout row the store would refuse: greet at 100 percent to its hr-only version.
    A server never serves it in place of the version every principal may see."""
    url, library = f"sqlite:///{tmp_path}/store.db", tmp_path / "lib"
    library.mkdir()
    (library / "greet.md").write_text(GREET.format("Hello"))
    cli("publish", str(library), "--store", url, "--label", "production")
    (library / "greet.md").write_text(GREET.format("Secret").replace("---\ndescription", "---\nscopes: [hr]\n"
                                                                     "description"))
    cli("publish", str(library), "--store", url)
    with sqlite3.connect(tmp_path / "store.db") as conn:
        conn.execute("INSERT INTO rollouts (label, path, prompt, base, version, basis_points, author, message, "
                     "created) VALUES ('production', 'greet.md', 'greet', 1, 2, 10000, 'mallory', '', ?)",
                     (time.time(),))
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKENS)
    with http_server("", "--store", url, "--token-file", str(tokens)) as endpoint:
        for headers in (BOB, CAROL):
            for key in ("a", "b", "c"):
                got = mcp(endpoint, headers, "greet", {KEY: key})
                assert got["result"]["messages"][0]["content"]["text"] == "Hello Al!"
                assert got["result"]["_meta"]["promptdeck.dev/version"] == 1
