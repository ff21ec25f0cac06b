"""``/api/store/usage`` (server/web/store_usage.py) over a real ``serve --store --http`` on SQLite and
PostgreSQL: renders by both eras counted by version, label and client, the audit line naming the version and
label rendered, and the read gate on every prompt shown."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from promptdeck.sources.store.database import Store
from promptdeck.sources.store.governance import bucket
from tests.support import modern
from tests.support.cli import pd
from tests.support.http_rpc import CLIENT, POST_HEADERS, rpc, start_session, succeeded
from tests.support.http_server import http_server
from tests.support.store_api import BOB, CAROL, GREET_1, HR, READER, WRITER, make_store, serving
from tests.support.usage import CLIENT_INFO_KEY, render_as, totals, usage, wait_for_usage


def test_renders_are_counted_by_version_label_and_client_and_shown_by_scope(tmp_path: Path,
                                                                              store_url: str) -> None:
    url = make_store(tmp_path, store_url)
    log = tmp_path / "server.log"
    with serving(tmp_path, url, log) as (base, _):
        for _ in range(3):  # the one-pass 2026-07-28 get
            assert "Hello Ann!" in str(render_as(base, BOB, "greet", "billing", {"who": "Ann"}))
        for _ in range(2):
            assert "Salaries" in str(render_as(base, CAROL, "salaries", "hr-app"))
        with httpx.Client(timeout=30) as http:  # a legacy session: its initialize names the client
            headers = start_session(http, f"{base}/mcp", headers=dict(BOB))
            succeeded(http.post(f"{base}/mcp", json=rpc("prompts/get", {"name": "greet", "arguments": {"who": "Bo"}}),
                                headers={**POST_HEADERS, **headers}))
        shown = wait_for_usage(base, CAROL, lambda s: totals(s) == {"greet": 4, "salaries": 2})
        assert totals(shown) == {"greet": 4, "salaries": 2}, shown
        greet = next(entry for entry in shown["prompts"] if entry["prompt"] == "greet")
        rows = {(row["version"], row["label"], row["arm"], row["client"]): row["renders"] for row in greet["hours"]}
        assert rows == {(1, "production", "", "billing"): 3, (1, "production", "", CLIENT["name"]): 1}
        assert greet["last"] == greet["hours"][0]["hour"]
        # bob may not read salaries: its usage is as absent to him as a prompt that does not exist
        assert totals(usage(base, BOB).json()) == {"greet": 4}
        hidden, missing = usage(base, BOB, prompt="salaries"), usage(base, BOB, prompt="nothing")
        assert hidden.status_code == missing.status_code == 404
        assert hidden.json()["error"].replace("salaries", "X") == missing.json()["error"].replace("nothing", "X")
        assert totals(usage(base, CAROL, prompt="salaries").json()) == {"salaries": 2}
        assert usage(base, CAROL, since="soon").status_code == 400
    audit = [line for line in log.read_text().splitlines() if "prompts/get principal=" in line]
    assert any("principal=bob prompt='greet' version=1 label=production outcome=ok" in line for line in audit), audit
    assert any("principal=carol prompt='salaries' version=1 label=production" in line for line in audit), audit


def test_a_rollouts_renders_are_counted_by_arm_and_version(tmp_path: Path, store_url: str) -> None:
    """During a rollout of version 3 to half the keys, the renders of a key inside it count on arm "rollout"
    and version 3, those of a key outside on arm "label" and the label's version 1: the usage of a rollout."""
    url = make_store(tmp_path, store_url)
    (tmp_path / "lib" / "greet.md").write_text(GREET_1.replace("Hello", "Howdy"))  # a rollout keeps the arguments
    pd("publish", str(tmp_path / "lib"), "--store", url, "-m", "howdy", "--author", "root")
    with serving(tmp_path, url) as (base, _):
        with Store(url) as opened:
            rollout = opened.governance.start_rollout("production", "greet", 3, 5000, author="t")
        inside = next(f"k{n}" for n in range(10_000) if bucket(rollout.id, f"key:k{n}") < 5000)
        outside = next(f"k{n}" for n in range(10_000) if bucket(rollout.id, f"key:k{n}") >= 5000)
        key = "promptdeck.dev/rollout-key"
        # the replica follows the store: a probe (counted apart) renders until the rollout is seen
        deadline = time.monotonic() + 60
        while "Howdy Ann" not in str(render_as(base, BOB, "greet", "probe", {"who": "Ann"}, {key: inside})):
            assert time.monotonic() < deadline, "the rollout was never served"
            time.sleep(0.2)
        for _ in range(3):
            assert "Howdy Ann" in str(render_as(base, BOB, "greet", "app", {"who": "Ann"}, {key: inside}))
        for _ in range(2):
            assert "Hello Ann" in str(render_as(base, BOB, "greet", "app", {"who": "Ann"}, {key: outside}))

        def by_app(shown: dict[str, Any]) -> dict[tuple[int, str, str], int]:
            rows = [row for entry in shown["prompts"] for row in entry["hours"] if row["client"] == "app"]
            return {(row["version"], row["label"], row["arm"]): row["renders"] for row in rows}

        expected = {(3, "production", "rollout"): 3, (1, "production", "label"): 2}
        shown = wait_for_usage(base, CAROL, lambda s: by_app(s) == expected)
        assert by_app(shown) == expected, shown


def test_a_prompt_used_as_a_tool_is_counted_as_its_render(tmp_path: Path) -> None:
    url = make_store(tmp_path)
    tokens = tmp_path / "tokens"
    tokens.write_text("\n".join((WRITER, READER, HR)) + "\n")
    with http_server("", "--store", url, "--label", "production", "--token-file", str(tokens),
                     "--tools") as endpoint:
        base = endpoint.removesuffix("/mcp")
        message = modern.request(1, "tools/call", {"name": "greet", "arguments": {"who": "Ann"}},
                                 meta={CLIENT_INFO_KEY: {"name": "tool-user", "version": "1"}})
        with httpx.Client(timeout=30, headers=BOB) as http:
            answered = http.post(endpoint, json=message, headers=modern.headers_for(message))
        assert "Hello Ann!" in answered.text, answered.text
        shown = wait_for_usage(base, BOB, lambda s: totals(s) == {"greet": 1})
        [greet] = shown["prompts"]
        assert [(r["version"], r["label"], r["client"], r["renders"]) for r in greet["hours"]] == \
            [(1, "production", "tool-user", 1)]


def test_what_was_counted_is_written_when_the_server_stops(tmp_path: Path) -> None:
    from promptdeck.sources.store.connection import Connection
    from promptdeck.sources.store.usage import read

    url = make_store(tmp_path)
    tokens = tmp_path / "tokens"
    tokens.write_text("\n".join((WRITER, READER, HR)) + "\n")
    with http_server("", "--store", url, "--label", "production", "--token-file", str(tokens)) as endpoint:
        assert "Hello Ann!" in str(render_as(endpoint.removesuffix("/mcp"), BOB, "greet", "quick", {"who": "Ann"}))
    with Connection(url) as db:  # stopped well within the writer's first 10 seconds
        assert [(key.client, n) for key, n in read(db, 0)] == [("quick", 1)]
