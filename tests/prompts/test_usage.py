"""Usage counted in memory (prompts/usage.py): client names made safe, every bound held, drains that add up."""

from __future__ import annotations

import threading
import time

import pytest

import promptdeck.prompts.usage as usage_module
from promptdeck.prompts.usage import (
    MAX_CLIENT_CHARS,
    MAX_CLIENTS,
    MAX_KEYS,
    OTHER,
    UNKNOWN,
    Key,
    Usage,
    client_name,
    fold,
)
from tests.support.usage import Served

HOUR = 1_800_000_000 // 3600 * 3600


R, R4 = Served("greet", 3, "production"), Served("greet", 4, "production")


def test_a_client_name_is_printable_one_line_and_bounded() -> None:
    assert client_name("claude-code") == "claude-code"
    assert client_name("x" * 100_000) == "x" * MAX_CLIENT_CHARS
    forged = client_name("evil\nprompts/get principal=root\r\x1b[2J\u2028")
    assert forged == "evilprompts/get principal=root[2J" and forged.isprintable()
    assert client_name(None) == client_name(42) == client_name(" \n\t ") == UNKNOWN


def test_counts_drain_into_the_hour_and_the_window_starts_again() -> None:
    usage = Usage()
    for _ in range(3):
        usage.count(R, "", "a")
    usage.count(R4, "rollout", "b")
    rows = usage.drain(now=HOUR + 59)
    assert rows == {Key("greet", HOUR, 3, "production", "", "a"): 3,
                    Key("greet", HOUR, 4, "production", "rollout", "b"): 1}
    assert usage.window == {}
    usage.count(R, "", "a")
    usage.drain(now=HOUR + 3599)
    assert usage.hours[Key("greet", HOUR, 3, "production", "", "a")] == 4  # kept in memory, added up


def test_ten_thousand_client_names_keep_the_rows_bounded() -> None:
    usage = Usage()
    for i in range(10_000):
        usage.count(R, "", f"client-{i}")
    # the window too: names past the cap count as OTHER
    assert list(usage.window) == [R] and len(usage.window[R]) == MAX_KEYS + 1 and usage.window[R][OTHER] > 0
    rows = usage.drain(now=HOUR)
    assert len(rows) == MAX_CLIENTS + 1 and sum(rows.values()) == 10_000
    assert rows[Key("greet", HOUR, 3, "production", "", OTHER)] == 10_000 - MAX_CLIENTS
    for i in range(10_000):  # a second window of other names: the hour still holds MAX_CLIENTS names
        usage.count(R, "", f"later-{i}")
    usage.drain(now=HOUR + 10)
    assert len({key.client for key in usage.hours}) == MAX_CLIENTS + 1
    assert sum(usage.hours.values()) == 20_000


def test_fold_adds_rows_that_name_the_same_key() -> None:
    into: dict[Key, int] = {Key("greet", HOUR, 1, "", "", "a"): 2}
    fold(into, {Key("greet", HOUR, 1, "", "", "a"): 5, Key("greet", HOUR + 3600, 1, "", "", "a"): 1})
    assert into == {Key("greet", HOUR, 1, "", "", "a"): 7, Key("greet", HOUR + 3600, 1, "", "", "a"): 1}


def test_the_window_is_keyed_by_the_prompt_served_and_the_name_as_given() -> None:
    usage = Usage()
    copy = Served("greet", 3, "production")  # the same version served by another catalog (after a reload): one row
    for prompt in (R, R, copy):
        usage.count(prompt, "", "a")
    usage.count(R, "", None)
    usage.count(R, "", None)
    # one entry per prompt object served; no name given is one key, not a miss each time
    assert usage.window == {R: {"a": 2, None: 2}, copy: {"a": 1}}
    assert usage.drain(now=HOUR) == {Key("greet", HOUR, 3, "production", "", "a"): 3,
                                     Key("greet", HOUR, 3, "production", "", UNKNOWN): 2}


def test_a_render_under_a_rollout_is_kept_apart_by_its_arm() -> None:
    usage = Usage()
    usage.count(R, "", "a")
    usage.count(R4, "rollout", "a")
    usage.count(R, "label", "a")
    usage.count(R, "label", "a")
    assert usage.window == {R: {"a": 1}, (R4, "rollout"): {"a": 1}, (R, "label"): {"a": 2}}
    assert usage.drain(now=HOUR) == {Key("greet", HOUR, 3, "production", "", "a"): 1,
                                     Key("greet", HOUR, 4, "production", "rollout", "a"): 1,
                                     Key("greet", HOUR, 3, "production", "label", "a"): 2}


def test_a_name_that_is_not_clean_is_never_a_key() -> None:
    usage = Usage()
    huge = "x" * 1_000_000
    for _ in range(3):
        usage.count(R, "", huge)
        usage.count(R, "", "evil\nline")
    assert usage.window == {R: {"x" * MAX_CLIENT_CHARS: 3, "evilline": 3}}
    assert client_name("claude-code") is not None and client_name(s := "ok-name") is s  # clean: itself


def test_what_is_kept_is_bounded_in_rows_and_age(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(usage_module, "MAX_KEPT_ROWS", 100)
    usage = Usage()
    for hour in range(300):  # one prompt a day rendered by one client: three rows an hour
        for client in ("a", "b", "c"):
            usage.count(Served(f"p{hour}"), "", client)
        usage.drain(now=HOUR + hour * 3600)
    assert len(usage.hours) == 100  # the oldest rows dropped first
    assert min(key.hour for key in usage.hours) == HOUR + 266 * 3600
    usage.count(R, "", "a")
    usage.drain(now=HOUR + (300 + usage_module.KEEP_SECONDS // 3600) * 3600)  # 90 days on: the rest is too old
    assert list(usage.hours.values()) == [1]


def test_kept_shows_the_hours_since_and_each_prompts_last_hour() -> None:
    now = usage_module.hour_of(time.time())
    usage = Usage()
    usage.count(R, "", "a")
    usage.drain(now=now - 7200)
    usage.count(Served("other"), "", "a")
    usage.drain(now=now - 3600)
    usage.count(R, "", "b")  # still in the window: kept drains it, into the hour it is
    rows, last = usage.kept(now - 3600)
    assert [(key.prompt, key.hour, key.client) for key, _ in rows] == [("other", now - 3600, "a"),
                                                                      ("greet", now, "b")]
    assert last == {"greet": now, "other": now - 3600}


def test_keep_hours_drains_from_a_thread_and_starts_once() -> None:
    usage = Usage()
    usage.keep_hours(0.01)
    usage.keep_hours(0.01)
    usage.count(R, "", "a")
    deadline = time.monotonic() + 30
    while usage.window and time.monotonic() < deadline:
        time.sleep(0.01)
    assert usage.window == {} and sum(usage.hours.values()) == 1
    assert sum(t.name == "promptdeck-usage" for t in threading.enumerate()) >= 1
    stored = Usage(keep=False)  # a store's writer drains it: no thread of its own
    stored.keep_hours(0.01)
    assert stored._ticking is None
