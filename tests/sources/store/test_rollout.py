"""Weighted rollouts, on SQLite and on the throwaway PostgreSQL cluster: the command, which version each key
gets over a real stdio server in both eras (and that it follows a rollout started while it serves), and
three replicas of one PostgreSQL store giving every key and every principal the same version."""

# ruff: noqa: F811 - the store fixtures, imported from test_database, are parameters here

from __future__ import annotations

import hashlib
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from promptdeck.sources.store.database import Store
from promptdeck.sources.store.governance import BUCKETS, bucket
from tests.support import modern
from tests.support.cli import pd
from tests.support.http_server import http_server
from tests.support.postgres import new_database
from tests.support.publishing import GREET, greet_store
from tests.support.store_schema import promptdeck_in_process

KEY = "promptdeck.dev/rollout-key"


def keys(rollout: int, basis_points: int) -> tuple[str, str]:
    """A key that gets the rollout's version, and one that gets the label's."""
    inside = next(f"k{n}" for n in range(10_000) if bucket(rollout, f"key:k{n}") < basis_points)
    outside = next(f"k{n}" for n in range(10_000) if bucket(rollout, f"key:k{n}") >= basis_points)
    return inside, outside


def test_the_bucket_is_sha256_of_the_rollout_and_the_key_and_splits_as_asked() -> None:
    digest = hashlib.sha256(b"7\0principal:ana").digest()
    assert bucket(7, "principal:ana") == int.from_bytes(digest[:8], "big") % BUCKETS
    shares = [sum(bucket(3, f"key:user-{n}") < points for n in range(20_000)) / 20_000 for points in (1000, 5000)]
    assert abs(shares[0] - 0.10) < 0.01 and abs(shares[1] - 0.50) < 0.015
    # Raising the share keeps every key that had the rollout's version.
    assert all(bucket(3, f"key:{n}") < 5000 for n in range(2000) if bucket(3, f"key:{n}") < 1000)


def test_the_rollout_command_and_its_bad_input(store_url: str, tmp_path: Path) -> None:
    folder = greet_store(tmp_path, store_url)
    started = pd("rollout", "production", "greet@2", "--percent", "10", "--store", store_url, "-m", "canary").stdout
    assert started == "label production: 10% of the renders of greet get version 2, the rest version 1 (rollout 1)\n"
    assert "12.5% of the renders" in pd("rollout", "production", "greet@2", "--percent", "12.5", "--store",
                                        store_url).stdout
    refusals = (
        (("production", "greet@3", "--percent", "5"), 1, "already rolling out version 2"),
        (("production", "greet@2"), 2, "NAME@VERSION --percent P"),
        (("production", "greet", "--percent", "5"), 2, "NAME@VERSION --percent P"),
        (("production", "greet@two", "--percent", "5"), 2, "the version after @ is a number"),
        (("production", "greet@2", "--percent", "100.5"), 2, "a number from 0 to 100"),
        (("production", "greet@2", "--percent", "1e2"), 2, "a number from 0 to 100"),
        (("production", "greet@2", "--percent", "-3"), 2, "a number from 0 to 100"),
        (("production", "greet@2", "--percent", "3.333"), 2, "at most two decimals"),
        (("production", "greet", "--promote", "--abort"), 2, "not both"),
        (("production", "greet@2", "--promote"), 2, "takes NAME alone"),
        (("production", "nope@1", "--percent", "5"), 1, "no prompt 'nope'"),
        (("production", "greet@9", "--percent", "5"), 1, "has no version 9"),
        (("staging", "greet@2", "--percent", "5"), 1, "no label 'staging'"),
        (("bad label", "greet@2", "--percent", "5"), 2, "is not valid"),
    )
    for args, code, says in refusals:
        exit_code, _, stderr = promptdeck_in_process("rollout", *args, "--store", store_url)
        assert exit_code == code and says in stderr, (args, stderr)
    assert "aborted" in pd("rollout", "production", "greet", "--abort", "--store", store_url).stdout
    assert pd("rollout", "production", "greet", "--abort", "--store", store_url, check=False).stderr == \
        "promptdeck: no rollout of 'greet' on label 'production'\n"
    for version, says in (("1", "points at version 1 of 'greet' already"), ("3", "takes other arguments")):
        exit_code, _, stderr = promptdeck_in_process("rollout", "production", f"greet@{version}", "--percent", "5",
                                                     "--store", store_url)
        assert exit_code == 1 and says in stderr
    (folder / "greet.md").unlink()
    pd("publish", str(folder), "--store", store_url, "--delete")  # version 4: the deletion (of the only prompt)
    refused = pd("rollout", "production", "greet@4", "--percent", "5", "--store", store_url, check=False)
    assert refused.returncode == 1 and "is its deletion" in refused.stderr
    with Store(store_url) as store:
        assert [e.kind for e in store.governance.rollout_events("production")] == ["abort", "percent", "start"]
        assert store.governance.live_rollouts("production") == []
        assert len(store.governance.moves("production")) == 1  # only a promotion moves the label


def _get(peer: modern.StdioPeer, request_id: int, key: str | None, *, legacy: bool) -> dict[str, Any]:
    meta = {KEY: key} if key is not None else {}
    if legacy:
        params: dict[str, Any] = {"name": "greet", "arguments": {"who": "Al"}}
        if meta:
            params["_meta"] = meta
        answer = peer.call(modern.legacy(request_id, "prompts/get", params))
    else:
        answer = peer.call(modern.request(request_id, "prompts/get", {"name": "greet", "arguments": {"who": "Al"}},
                                          meta=meta))
    result: dict[str, Any] = answer["result"]
    return result


def test_each_key_gets_one_version_over_stdio_in_both_eras_and_a_server_follows_the_rollout(
        store_url: str, tmp_path: Path) -> None:
    greet_store(tmp_path, store_url)
    with modern.StdioPeer(None, "--store", store_url) as peer:
        peer.call(modern.initialize(0, "2025-06-18"))
        peer.send(modern.notification("notifications/initialized"))
        before = _get(peer, 1, None, legacy=True)
        assert before["_meta"] == {"promptdeck.dev/version": 1, "promptdeck.dev/label": "production"}
        assert before["messages"][0]["content"]["text"] == "Hello Al!"
        with Store(store_url) as store:  # what `promptdeck rollout` does, without starting an interpreter
            store.governance.start_rollout("production", "greet", 2, 5000, author="t")
        inside, outside = keys(1, 5000)
        deadline = time.monotonic() + 20
        while _get(peer, 2, inside, legacy=True)["_meta"]["promptdeck.dev/version"] != 2:
            assert time.monotonic() < deadline, "the server did not follow the rollout"
            time.sleep(0.1)
        for request_id, legacy in ((3, True), (4, False)):
            got = _get(peer, request_id, inside, legacy=legacy)
            assert got["_meta"]["promptdeck.dev/version"] == 2 and got["_meta"]["promptdeck.dev/rollout"] == 1
            assert got["messages"][0]["content"]["text"] == "Hi Al!"
            other = _get(peer, request_id + 10, outside, legacy=legacy)
            assert other["_meta"]["promptdeck.dev/version"] == 1 and "promptdeck.dev/rollout" not in other["_meta"]
            assert other["messages"][0]["content"]["text"] == "Hello Al!"
        # Without a key, the stdio session is the key: every render of the session gets one version.
        versions = {_get(peer, 100 + n, None, legacy=n % 2 == 0)["_meta"]["promptdeck.dev/version"] for n in range(12)}
        assert len(versions) == 1
        # The listing is the label's version's, whichever version a key renders.
        listed = peer.call(modern.legacy(30, "prompts/list"))["result"]["prompts"]
        assert [p["_meta"]["promptdeck.dev/version"] for p in listed if p["name"] == "greet"] == [1]
        with Store(store_url) as store:
            store.governance.end_rollout("production", "greet", promote=True, author="t")
        deadline = time.monotonic() + 20
        while _get(peer, 40, outside, legacy=False)["_meta"]["promptdeck.dev/version"] != 2:
            assert time.monotonic() < deadline, "the server did not follow the promotion"
            time.sleep(0.1)
        assert "promptdeck.dev/rollout" not in _get(peer, 41, inside, legacy=True)["_meta"]


def test_three_replicas_give_each_key_and_each_principal_the_same_version(postgres: str, tmp_path: Path) -> None:
    url = new_database(postgres)
    greet_store(tmp_path, url)
    names = [f"user{n}" for n in range(10)]
    tokens = tmp_path / "tokens"
    tokens.write_text("".join(f"{name}:token-of-{name}-0123456789\n" for name in names))
    with ExitStack() as stack, httpx.Client(timeout=30) as client:
        replicas = [stack.enter_context(http_server("", "--store", url, "--stateless", "--token-file", str(tokens)))
                    for _ in range(3)]
        with Store(url) as store:  # after they start: followed
            store.governance.start_rollout("production", "greet", 2, 5000, author="t")
        inside, outside = keys(1, 5000)

        def version(replica: str, name: str, key: str | None, legacy: bool = False) -> int:
            auth = {"authorization": f"Bearer token-of-{name}-0123456789"}
            meta = {KEY: key} if key is not None else {}
            if legacy:
                params: dict[str, Any] = {"name": "greet", "arguments": {"who": "x"}}
                if meta:
                    params["_meta"] = meta
                response = client.post(replica, json=modern.legacy(1, "prompts/get", params),
                                       headers={**auth, "accept": modern.BOTH, "content-type": "application/json",
                                                "mcp-protocol-version": "2025-11-25"})
                answer = modern.answers(response)[-1]
            else:
                request = modern.request(1, "prompts/get", {"name": "greet", "arguments": {"who": "x"}}, meta=meta)
                _, answer = modern.post(client, replica, request, **auth)
            return int(answer["result"]["_meta"]["promptdeck.dev/version"])

        deadline = time.monotonic() + 20
        while any(version(replica, "user0", inside) != 2 for replica in replicas):
            assert time.monotonic() < deadline, "a replica did not follow the rollout"
            time.sleep(0.1)
        for key in (inside, outside, *(f"session-{n}" for n in range(8))):
            expected = 2 if bucket(1, f"key:{key}") < 5000 else 1
            assert {version(r, names[n % 10], key, legacy=n % 2 == 1) for n, r in enumerate(replicas * 2)} == \
                {expected}, key
        got = {}
        for name in names:  # no key: the principal is the key
            expected = 2 if bucket(1, f"principal:{name}") < 5000 else 1
            got[name] = {version(r, name, None, legacy=legacy) for r in replicas for legacy in (False, True)}
            assert got[name] == {expected}, name
        assert {1, 2} <= set().union(*got.values())  # ten principals: both versions are served
        with Store(url) as store:
            store.governance.end_rollout("production", "greet", promote=False, author="t")
        deadline = time.monotonic() + 20
        while any(version(replica, "user0", inside) != 1 for replica in replicas):
            assert time.monotonic() < deadline, "a replica did not follow the abort"
            time.sleep(0.1)


def test_writers_racing_to_start_rollouts_leave_one_live_rollout(store_url: str, tmp_path: Path) -> None:
    """Eight writers at once, each on its own connection, start a rollout of greet to version 2 or version 4
    (both with version 1's arguments): the store's lock queues them, the first wins, the writers of the same
    version change its share, the others are refused; one rollout is live, each success an event."""
    import threading

    from promptdeck.sources.store.model import StoreConflict

    folder = greet_store(tmp_path, store_url)
    (folder / "greet.md").write_text(GREET.format("Hey"))
    pd("publish", str(folder), "--store", store_url)  # version 4
    outcomes: list[str] = []
    lock = threading.Lock()

    def start(n: int) -> None:
        with Store(store_url) as store:
            try:
                store.governance.start_rollout("production", "greet", 2 if n % 2 else 4, 100 * (n + 1), author=f"w{n}")
                result = f"ok {2 if n % 2 else 4}"
            except StoreConflict as exc:
                result = "refused" if "already rolling out" in str(exc) else str(exc)
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=start, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    with Store(store_url) as store:
        (live,) = store.governance.live_rollouts("production")
        events = store.governance.rollout_events("production")
    assert outcomes.count(f"ok {live.version}") == 4 and outcomes.count("refused") == 4, outcomes
    assert len(events) == 4 and [e.kind for e in events][-1] == "start"
    assert live.basis_points == events[0].basis_points  # the last writer's share is the live one


def test_a_tool_call_of_a_prompt_under_rollout_is_split_as_its_get_is(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/p.db"
    greet_store(tmp_path, url)
    pd("rollout", "production", "greet@2", "--percent", "50", "--store", url)
    inside, outside = keys(1, 5000)
    with modern.StdioPeer(None, "--store", url, "--tools") as peer:
        peer.call(modern.initialize(0, "2025-06-18"))
        peer.send(modern.notification("notifications/initialized"))
        for request_id, (key, text, version) in enumerate(((inside, "Hi Al!", 2), (outside, "Hello Al!", 1)), 1):
            params = {"name": "greet", "arguments": {"who": "Al"}, "_meta": {KEY: key}}
            result = peer.call(modern.legacy(request_id, "tools/call", params))["result"]
            assert result["content"][0]["text"] == text
            assert result["structuredContent"]["_meta"]["promptdeck.dev/version"] == version
