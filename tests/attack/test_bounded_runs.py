"""Test runs that would not end (issue 38, finding 5): tests holding fifty slow regular expressions, posted to
``/api/store/check`` of a real ``promptdeck serve --http --store`` on SQLite and PostgreSQL. A reader may not
run them; a writer's run stops when its client goes away (the store slots are free again at once) and when
the server gets SIGTERM (it exits promptly); ``check`` refuses a pattern that backtracks catastrophically."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from promptdeck.prompts.testcases import parse_tests
from tests.support.bounded_runs import WRITERS, serving

READER = {"authorization": "Bearer bob-token-0123456789"}
#: A pattern the check's probes do not reach (its literal parts are single characters, apart), which takes
#: the whole search timeout on the rendered text: the runs below are long only while the run is not bounded.
SLOW = r"x[0-9]y[0-9]z(a|aa)*$"
SLOW_TEXT = ("---\ntests:\n  - vars: {}\n    assert:\n"
             + "".join(f"      - {{type: regex, value: '{SLOW}'}}\n" for _ in range(50))
             + "---\nx1y2z" + "a" * 40 + "!\n")


def check(api: str, who: dict[str, str], timeout: float) -> httpx.Response:
    return httpx.post(api + "/check", json={"prompt": "greet", "text": SLOW_TEXT}, headers=who, timeout=timeout)


def fill_the_slots(api: str, answers: list[httpx.Response | Exception], timeout: float) -> list[threading.Thread]:
    """Four slow checks (two writers, two each: every store slot), each in a thread, all running on return: a
    third writer's overview is refused with 503. (A check refused because that overview held a slot for a
    moment is sent again.)"""

    def one(who: dict[str, str]) -> None:
        try:
            while (answer := check(api, who, timeout)).status_code in (429, 503):
                time.sleep(0.05)
            answers.append(answer)
        except httpx.HTTPError as exc:
            answers.append(exc)

    threads = [threading.Thread(target=one, args=(WRITERS[name],)) for name in ("ann", "ann", "cat", "cat")]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while httpx.get(api, headers=WRITERS["dan"], timeout=10).status_code != 503:
        assert time.monotonic() < deadline and not answers, answers
        time.sleep(0.05)
    return threads


def test_a_reader_may_not_run_tests(tmp_path: Path, store_url: str) -> None:
    with serving(tmp_path, store_url) as (api, _):
        started = time.monotonic()
        answer = check(api, READER, timeout=60)
        assert answer.status_code == 200 and answer.json()["problems"] == []
        tests = answer.json()["tests"]
        assert tests["report"] is None and tests["notRun"] == "running tests needs the scope store:write"
        assert len(tests["cases"][0]["assert"]) == 50
        assert time.monotonic() - started < 10  # nothing ran: no search of 50 slow patterns
        tested = httpx.get(api + "/tests", params={"prompt": "greet"}, headers=READER, timeout=30).json()
        assert tested == {"prompt": "greet", "tests": None}


def test_the_slots_are_free_once_the_clients_leave(tmp_path: Path, store_url: str) -> None:
    """Four writers' checks fill the store's slots and their clients leave: the runs stop, so another writer
    is served within seconds, not when fifty searches of half a second each are over."""
    with serving(tmp_path, store_url) as (api, _):
        answers: list[httpx.Response | Exception] = []
        threads = fill_the_slots(api, answers, timeout=3)  # each client gives up after 3 s and closes
        for thread in threads:
            thread.join(60)
        gone = time.monotonic()
        assert len(answers) == 4 and all(isinstance(a, httpx.ReadTimeout) for a in answers), answers
        while (status := httpx.get(api, headers=WRITERS["dan"], timeout=10).status_code) != 200:
            assert status == 503 and time.monotonic() - gone < 10, "the runs went on after their clients left"
            time.sleep(0.05)
        # The writer is not blocked by the runs of those who left: a save goes through.
        saved = httpx.post(api + "/publish", json={"prompt": "greet", "text": "Hello again!\n"},
                           headers=WRITERS["dan"], timeout=30)
        assert saved.status_code == 200, saved.text


def test_sigterm_stops_the_runs_and_the_server_promptly(tmp_path: Path, store_url: str) -> None:
    with serving(tmp_path, store_url) as (api, proc):
        answers: list[httpx.Response | Exception] = []
        threads = fill_the_slots(api, answers, timeout=120)
        stopped = time.monotonic()
        proc.terminate()
        proc.wait(60)
        took = time.monotonic() - stopped
        for thread in threads:
            thread.join(30)
        assert took < 8, f"the server took {took:.1f} s to stop"  # uvicorn's grace alone is 10 s
        finished = [a for a in answers if isinstance(a, httpx.Response)]
        for answer in finished:  # those answered before the server closed: the cases left, not run
            case = answer.json()["tests"]["report"]["prompts"][0]["cases"][0]
            assert case["passed"] is False
            said = [case.get("problem", "")] + [a["message"] for a in case["asserts"]]
            assert any(line.startswith("not run: the test run was stopped") for line in said), said


def test_check_probes_are_bounded_per_prompt() -> None:
    """A file of many slow patterns is refused without probing each for its full time."""
    raw = [{"vars": {}, "assert": [{"type": "regex", "value": f"^(a|aa)*$(?#{i})"} for i in range(50)]}]
    started = time.monotonic()
    tests, problems = parse_tests(raw, [])
    assert tests is None and len(problems) == 50
    assert time.monotonic() - started < 15  # 3 s of probing, and each search's timeout overshooting a little
    assert "backtracks catastrophically" in problems[0][0]
    assert "not checked" in problems[-1][0]
