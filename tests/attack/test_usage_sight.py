"""``/api/usage`` (server/web/usage_api.py) against a principal looking for what it may not see: the usage of a
prompt hidden from it by scopes is in none of its answers (whatever it asks: every prompt, one, since any time),
on a folder server (counts in memory) and on a store server (counts in the store), and asking for the prompt by
name is answered as for a prompt that does not exist (issue 41)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.store_api import BOB, CAROL, make_store, serving
from tests.support.usage import ALICE_AUTH, BOB_AUTH, folder_server, render_as, totals, usage, wait_for_usage

API = "/api/usage"
ASKS: list[dict[str, str]] = [{}, {"since": "1h"}, {"since": "0"}, {"since": "2w"}, {"prompt": "greet"}]


def never_named(base: str, headers: dict[str, str], hidden: str, shown: str) -> None:
    """Every answer ``headers`` gets holds ``shown``'s usage (when asked for all) and nothing of ``hidden``."""
    for params in ASKS:
        answer = usage(base, headers, API, **params)
        assert answer.status_code == 200, answer.text
        assert shown in totals(answer.json())
        assert hidden not in json.dumps(answer.json()).lower(), (params, answer.text)
    refused, unknown = usage(base, headers, API, prompt=hidden), usage(base, headers, API, prompt="nowhere")
    assert refused.status_code == unknown.status_code == 404
    assert refused.json()["error"].replace(hidden, "X") == unknown.json()["error"].replace("nowhere", "X")


def test_a_folder_servers_hidden_prompt_usage_is_never_shown(tmp_path: Path) -> None:
    with folder_server(tmp_path) as base:
        render_as(base, ALICE_AUTH, "payroll", "payroll-app")
        render_as(base, BOB_AUTH, "greet", "billing", {"who": "Ann"})
        assert totals(usage(base, ALICE_AUTH, API).json()) == {"greet": 1, "payroll": 1}  # it was counted
        never_named(base, BOB_AUTH, "payroll", "greet")


def test_a_store_servers_hidden_prompt_usage_is_never_shown(tmp_path: Path) -> None:
    with serving(tmp_path, make_store(tmp_path)) as (base, _):
        render_as(base, CAROL, "salaries", "salaries-app")
        render_as(base, BOB, "greet", "billing", {"who": "Ann"})
        shown = wait_for_usage(base, CAROL, lambda s: totals(s) == {"greet": 1, "salaries": 1}, route=API)
        assert totals(shown) == {"greet": 1, "salaries": 1}  # it was counted
        never_named(base, BOB, "salaries", "greet")
