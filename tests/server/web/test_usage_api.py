"""``/api/usage`` (server/web/usage_api.py) over a real ``serve --http``: a folder server answers from the counts
it keeps in memory, in ``/api/store/usage``'s shape, with each principal's sight; a store server answers
exactly what its ``/api/store/usage`` does (issue 41)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import promptdeck.prompts.usage as usage_module
from promptdeck.server.app import PromptServer
from promptdeck.server.http.app import create_app
from tests.support.store_api import BOB, CAROL, make_store, serving
from tests.support.usage import ALICE_AUTH, BOB_AUTH, folder_server, render_as, totals, usage, wait_for_usage

API = "/api/usage"


def test_a_folder_server_shows_its_renders_by_client_with_each_principals_sight(tmp_path: Path) -> None:
    with folder_server(tmp_path) as base:
        for _ in range(3):
            assert "Hello Ann!" in str(render_as(base, BOB_AUTH, "greet", "billing", {"who": "Ann"}))
        assert "Hello Bo!" in str(render_as(base, ALICE_AUTH, "greet", "support", {"who": "Bo"}))
        for _ in range(2):
            assert "Salaries" in str(render_as(base, ALICE_AUTH, "payroll", "hr-app"))

        answer = usage(base, ALICE_AUTH, API)
        assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store", answer.text
        shown = answer.json()
        assert totals(shown) == {"greet": 4, "payroll": 2}
        greet = shown["prompts"][0]
        rows: dict[tuple[int, str, str, str], int] = {}
        for row in greet["hours"]:  # summed over hours: the renders may straddle the turn of one
            key = (row["version"], row["label"], row["arm"], row["client"])
            rows[key] = rows.get(key, 0) + row["renders"]
        assert rows == {(0, "", "", "billing"): 3, (0, "", "", "support"): 1}  # a folder's: no version, no label
        assert greet["last"] == max(row["hour"] for row in greet["hours"]) and shown["since"] <= greet["last"]
        last = {entry["prompt"]: entry["last"] for entry in shown["prompts"]}
        # asked again, the same: what a drain took is kept, not lost
        assert totals(usage(base, ALICE_AUTH, API).json()) == {"greet": 4, "payroll": 2}

        # bob may not see payroll: neither in the whole answer nor asked by name (404 as for a prompt not there)
        assert totals(usage(base, BOB_AUTH, API).json()) == {"greet": 4}
        hidden, missing = usage(base, BOB_AUTH, API, prompt="payroll"), usage(base, BOB_AUTH, API, prompt="nothing")
        assert hidden.status_code == missing.status_code == 404
        assert hidden.json()["error"].replace("payroll", "X") == missing.json()["error"].replace("nothing", "X")

        assert totals(usage(base, ALICE_AUTH, API, prompt="payroll").json()) == {"payroll": 2}
        assert usage(base, ALICE_AUTH, API, prompt="quiet").json()["prompts"] == []  # never rendered
        assert usage(base, ALICE_AUTH, API, since="soon").status_code == 400
        assert totals(usage(base, ALICE_AUTH, API, since="1h").json()) == {"greet": 4, "payroll": 2}
        # rendered before since: listed with no renders since, and when it last was
        later = usage(base, ALICE_AUTH, API, since=str(max(last.values()) + 3600)).json()
        assert {e["prompt"]: (e["renders"], e["last"]) for e in later["prompts"]} == \
            {"greet": (0, last["greet"]), "payroll": (0, last["payroll"])}
        assert usage(base, {"authorization": "Bearer wrong-token-0123456789"}, API).status_code == 401


def test_a_store_server_answers_what_its_store_usage_answers(tmp_path: Path) -> None:
    with serving(tmp_path, make_store(tmp_path)) as (base, _):
        assert "Hello Ann!" in str(render_as(base, BOB, "greet", "billing", {"who": "Ann"}))
        assert "Salaries" in str(render_as(base, CAROL, "salaries", "hr-app"))
        shown = wait_for_usage(base, CAROL, lambda s: totals(s) == {"greet": 1, "salaries": 1}, route=API)
        assert totals(shown) == {"greet": 1, "salaries": 1}, shown
        for who in (BOB, CAROL):
            for params in ({}, {"prompt": "greet"}, {"since": "1h"}):
                assert usage(base, who, API, **params).json() == usage(base, who, **params).json()
        assert totals(usage(base, BOB, API).json()) == {"greet": 1}
        hidden, store = usage(base, BOB, API, prompt="salaries"), usage(base, BOB, prompt="salaries")
        assert hidden.status_code == store.status_code == 404 and hidden.json() == store.json()
        assert usage(base, CAROL, API, since="soon").status_code == 400


def test_a_folder_servers_renders_are_kept_in_the_hour_they_were_made(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Drained every ``DRAIN_SECONDS`` once the HTTP app is made, not only when asked: a drain counts the window
    in the hour it runs, so renders left in the window until someone asks would be shown in that later hour."""
    monkeypatch.setattr(usage_module, "DRAIN_SECONDS", 0.01)
    (tmp_path / "greet.md").write_text("Hello!\n")
    server = PromptServer()
    server.add_folder(str(tmp_path))
    served = server.catalog.get("greet")
    assert served is not None
    create_app(server, ui=True, watch=False)
    server.usage.count(served, "", "billing")
    deadline = time.monotonic() + 30
    while server.usage.window and time.monotonic() < deadline:
        time.sleep(0.01)
    [(key, renders)] = server.usage.hours.items()
    assert (key.prompt, key.client, renders) == ("greet", "billing", 1)
    assert key.hour == int(time.time()) // 3600 * 3600 or key.hour == int(time.time()) // 3600 * 3600 - 3600
